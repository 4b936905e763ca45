//! `planner trace aggregate`: the aggregate demand tables of per-request
//! traces, written whole or not at all.

use super::args::FormatArg;
use crate::base::error::PlannerError;
use crate::base::progress::Progress;
use crate::cli::output::{Output, Outputs};
use crate::traces::aggregate::{
    aggregate_traces, columns, write_csv, write_parquet, PREFIXES_TABLE, TABLES,
};
use crate::traces::ReaderOptions;
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};

/// File format of the written tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TableFormat {
    Csv,
    Parquet,
}

impl TableFormat {
    fn extension(self) -> &'static str {
        match self {
            TableFormat::Csv => "csv",
            TableFormat::Parquet => "parquet",
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct AggregateArgs {
    /// Trace files, each `TIER=FILE` or `FILE` (the tier is then the file
    /// name without its extension); several files may feed one tier.
    #[arg(required = true)]
    pub traces: Vec<String>,
    /// Folder to write the minutes, lengths, pairs and sample tables into
    /// (created if missing), and the prefixes table when a Mooncake trace
    /// names its prompts' blocks (`hash_ids`).
    #[arg(long)]
    pub out: PathBuf,
    /// Table file format.
    #[arg(long, value_enum, default_value_t = TableFormat::Csv)]
    pub table_format: TableFormat,
    /// Trace format (detected from the content by default).
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub trace_format: FormatArg,
    /// Skip and count bad rows instead of stopping at the first.
    #[arg(long)]
    pub skip_bad_rows: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `TIER=FILE` or `FILE` → (tier, file).
fn tier_and_path(arg: &str) -> Result<(String, PathBuf), PlannerError> {
    let usage = |why: &str| {
        Err(PlannerError::Usage(format!(
            "`{arg}`: {why}; give TIER=TRACE (e.g. chat=data/conv.csv) or a trace whose file name is the tier"
        )))
    };
    match arg.split_once('=') {
        Some(("", _)) => usage("the tier name before `=` is empty"),
        Some((_, "")) => usage("the trace after `=` is empty"),
        Some((tier, path)) if !tier.contains(['/', '\\']) => {
            Ok((tier.to_string(), PathBuf::from(path)))
        }
        _ => {
            let path = PathBuf::from(arg);
            let stem = path
                .file_stem()
                .map_or_else(|| arg.to_string(), |s| s.to_string_lossy().into_owned());
            Ok((stem, path))
        }
    }
}

/// Checks that `dir` can take the tables before anything is read or written.
fn check_out(dir: &Path, format: TableFormat) -> Result<(), PlannerError> {
    let usage = |m: String| PlannerError::Usage(m);
    if dir.exists() && !dir.is_dir() {
        return Err(usage(format!(
            "--out {}: exists and is not a folder",
            dir.display()
        )));
    }
    let other = match format {
        TableFormat::Csv => TableFormat::Parquet,
        TableFormat::Parquet => TableFormat::Csv,
    };
    for name in TABLES.iter().chain([&PREFIXES_TABLE]) {
        let stale = dir.join(format!("{name}.{}", other.extension()));
        if stale.exists() {
            return Err(usage(format!(
                "--out {}: already holds {}, which would be read instead of or beside the new {name}.{}; remove it or choose another folder",
                dir.display(),
                stale.display(),
                format.extension()
            )));
        }
    }
    Ok(())
}

/// The option label of each table's output, for messages: the four
/// tables, then the prefixes table.
const OPTIONS: [&str; 5] = [
    "--out (minutes)",
    "--out (lengths)",
    "--out (pairs)",
    "--out (sample)",
    "--out (prefixes)",
];

/// Reads the traces and writes the tables: every table is written to a
/// temporary file first, and all are renamed into place only at the end.
fn run(args: &AggregateArgs) -> Result<(), PlannerError> {
    let format = args.table_format;
    let path_of = |name: &str| args.out.join(format!("{name}.{}", format.extension()));
    let prepare = |names: &[&str]| {
        Outputs::prepare(
            names
                .iter()
                .zip(OPTIONS)
                .map(|(name, option)| Some(Output::new(option, &path_of(name)))),
        )
    };
    // Every path checked before the traces are read.
    drop(prepare(&[TABLES.as_slice(), &[PREFIXES_TABLE]].concat())?);
    let traces: Vec<(String, PathBuf)> = args
        .traces
        .iter()
        .map(|a| tier_and_path(a))
        .collect::<Result<_, _>>()?;
    let options = ReaderOptions {
        format: args.trace_format.to_format(),
        skip_bad_rows: args.skip_bad_rows,
        max_context_tokens: None,
        drop_over_context: false,
    };
    let (agg, summary) = aggregate_traces(&traces, options, Progress::new(args.quiet))?;
    let prefixes = agg.tiers.iter().any(|t| t.prefixes.is_some());
    let mut names = TABLES.to_vec();
    if prefixes {
        names.push(PREFIXES_TABLE);
    }
    let mut outputs = prepare(&names)?;
    for (name, option) in names.iter().zip(OPTIONS) {
        let failed = |e: String| PlannerError::Io {
            path: args.out.join(format!("{name}.{}", format.extension())),
            source: std::io::Error::other(e),
        };
        match format {
            TableFormat::Csv => {
                write_csv(&agg, name, outputs.writer(option)?)
                    .map_err(|e| failed(e.to_string()))?;
            }
            TableFormat::Parquet => {
                let tmp = outputs.temp_path(option)?;
                let file = std::fs::File::create(&tmp).map_err(|e| failed(e.to_string()))?;
                write_parquet(&columns(&agg, name), file).map_err(|e| failed(e.to_string()))?;
            }
        }
    }
    outputs.commit()?;
    if !prefixes {
        // A prefixes table an earlier aggregate left here is not this one's.
        let stale = path_of(PREFIXES_TABLE);
        if stale.is_file() {
            std::fs::remove_file(&stale).map_err(|source| PlannerError::Io {
                path: stale,
                source,
            })?;
        }
    }
    let minutes: usize = agg.tiers.iter().map(|t| t.minutes.len()).sum();
    let tiers: Vec<&str> = agg.tiers.iter().map(|t| t.tier.as_str()).collect();
    let reused: Vec<&str> = agg
        .tiers
        .iter()
        .filter(|t| t.prefixes.is_some())
        .map(|t| t.tier.as_str())
        .collect();
    let prefixes_note = if reused.is_empty() {
        String::new()
    } else {
        format!(
            "; the prefixes table holds the sampled requests' prefix reuse of {}",
            reused.join(", ")
        )
    };
    note!(
        "aggregated {} requests of {} tier{} ({}) into {minutes} tier-minutes: {}{prefixes_note}",
        summary.requests,
        tiers.len(),
        if tiers.len() == 1 { "" } else { "s" },
        tiers.join(", "),
        args.out.display()
    );
    Ok(())
}

pub(super) fn aggregate(args: &AggregateArgs) -> Result<(), PlannerError> {
    check_out(&args.out, args.table_format)?;
    // The folders this run makes, deepest first: on failure they go again.
    let created: Vec<PathBuf> = args
        .out
        .ancestors()
        .take_while(|p| !p.as_os_str().is_empty() && !p.exists())
        .map(Path::to_path_buf)
        .collect();
    std::fs::create_dir_all(&args.out).map_err(|source| PlannerError::Io {
        path: args.out.clone(),
        source,
    })?;
    let result = run(args);
    if result.is_err() {
        // Only empty folders this run made; the temporaries are gone by now.
        for dir in &created {
            let _ = std::fs::remove_dir(dir);
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tier_comes_from_the_argument_or_the_file_name() {
        assert_eq!(
            tier_and_path("chat=data/a.csv").unwrap(),
            ("chat".to_string(), PathBuf::from("data/a.csv"))
        );
        assert_eq!(
            tier_and_path("data/x=y/conv.jsonl").unwrap(),
            ("conv".to_string(), PathBuf::from("data/x=y/conv.jsonl"))
        );
        // Issue: `=file` was taken as a path.
        let e = tier_and_path("=data/a.csv").unwrap_err().to_string();
        assert!(e.contains("the tier name before `=` is empty"), "{e}");
        assert!(tier_and_path("chat=").is_err());
    }
}
