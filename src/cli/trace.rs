//! `planner trace stats|synth|shape`.

use super::args::FormatArg;
use super::{emit, finite};
use crate::base::bounds::Bound;
use crate::base::error::PlannerError;
use crate::base::progress::Progress;
use crate::cli::output::{Output, Outputs};
use crate::report::{self, Format};
use crate::traces::shape::read_rate_curve;
use crate::traces::stats::accumulate;
use crate::traces::synth::{weekly_curve, write_trace, SynthSpec};
use crate::traces::{read_all, ReaderOptions, TraceFormat};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

#[derive(Debug, Subcommand)]
pub(crate) enum TraceCommand {
    /// Arrival and length statistics of a trace (Azure CSV, BurstGPT CSV or
    /// Mooncake JSONL).
    ///
    /// Windows are clock-aligned in UTC; empty windows count as zero.
    Stats(StatsArgs),
    /// Write a seeded synthetic trace in the Azure 2024 format.
    ///
    /// Arrivals follow a rate curve (a ServeGen file or folder with --shape,
    /// else a built-in weekly cycle) with gamma interarrival times of the given
    /// CV; (input, output) lengths are resampled from a real trace.
    /// Defaults give one week at 27.8 requests/s: about 16.8 million rows.
    Synth(SynthArgs),
    /// Sum a folder of ServeGen per-client rate files into one curve file.
    Shape(ShapeArgs),
    /// Aggregate demand tables (per tier: minutes with each second's
    /// arrivals, length histograms, length pairs, the length sample, and the
    /// sampled requests' prefix reuse when a Mooncake trace names its
    /// prompts' blocks) of per-request traces, in one streaming pass.
    ///
    /// Memory grows with the minutes spanned, not the rows (the sample holds
    /// 16,384 requests a tier; a Mooncake trace's requests are kept for its
    /// blocks). A scenario naming the tables with `aggregate` gets the
    /// capacity figures its traces give, prefix-cache hits included. The same
    /// tables come from sql/aggregate.sql (and sql/prefixes.sql) on a
    /// warehouse; docs/aggregate-format.md.
    /// Example: planner trace aggregate chat=data/mooncake/conversation_trace.jsonl --out agg
    Aggregate(super::trace_aggregate::AggregateArgs),
}

#[derive(Debug, Args)]
pub(crate) struct StatsArgs {
    /// The trace file.
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
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

/// The accepted range of `trace synth`'s numeric options.
pub(super) const SYNTH_BOUNDS: &[Bound] = &[
    Bound::closed("--days", 1.0, 366.0, "days"),
    Bound::positive("--mean-rps", 100_000.0, "requests/s"),
    Bound::closed("--cv", 0.05, 10.0, ""),
];

/// Most requests a synthetic trace may hold (days × 86,400 × mean rate).
pub(super) const MAX_SYNTH_REQUESTS: f64 = 2e8;

#[derive(Debug, Args)]
pub(crate) struct SynthArgs {
    /// Where to write the trace.
    #[arg(long)]
    pub out: PathBuf,
    /// Trace whose (input, output) pairs are resampled.
    #[arg(long)]
    pub lengths_from: PathBuf,
    /// RNG seed; the same seed writes the same file.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Days to generate.
    #[arg(long, default_value_t = 7)]
    pub days: u32,
    /// Mean requests/s over the whole trace.
    #[arg(long, default_value_t = 27.8)]
    pub mean_rps: f64,
    /// Interarrival coefficient of variation (1 = Poisson).
    #[arg(long, default_value_t = 1.5)]
    pub cv: f64,
    /// ServeGen rate file or folder giving the shape (default: built-in week).
    #[arg(long)]
    pub shape: Option<PathBuf>,
    /// First day, YYYY-MM-DD (UTC).
    #[arg(long, default_value = "2024-05-10")]
    pub start: String,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ShapeArgs {
    /// A ServeGen rate file, or a folder of them.
    pub input: PathBuf,
    /// Where to write the summed curve (ServeGen format).
    #[arg(long)]
    pub out: PathBuf,
}

pub(super) fn stats(args: &StatsArgs) -> Result<(), PlannerError> {
    let options = ReaderOptions {
        format: args.trace_format.to_format(),
        skip_bad_rows: args.skip_bad_rows,
        max_context_tokens: None,
        drop_over_context: false,
    };
    let (format, summary, acc) =
        accumulate(&args.file, options, Progress::new(args.quiet)).map_err(PlannerError::Trace)?;
    if let Some((line, why)) = &summary.first_skipped {
        note!(
            "warning: skipped {} bad rows; the first, line {line}: {why}",
            summary.skipped_rows
        );
    }
    let mut s = acc.summary(summary.skipped_rows);
    if format == TraceFormat::Mooncake {
        let (prefix, skipped) =
            crate::traces::prefix::of_mooncake_file(&args.file, args.skip_bad_rows)
                .map_err(PlannerError::Trace)?;
        if skipped > 0 {
            note!("warning: {skipped} rows' `hash_ids` contradict their prompts; they were read without block hashes (no prefix hit counted for them)");
        }
        s.prefix = prefix;
    }
    finite(&s)?;
    let text = match args.format {
        Format::Text => report::trace_text::render(&args.file.display().to_string(), &s),
        Format::Json => report::json::render(&s),
    };
    emit(&text)
}

pub(super) fn synth(args: &SynthArgs) -> Result<(), PlannerError> {
    let mut outputs = Outputs::prepare([Some(Output::new("--out", &args.out))])?;
    let bad = |m: String| PlannerError::Usage(m);
    for (key, value) in [
        ("--cv", args.cv),
        ("--mean-rps", args.mean_rps),
        ("--days", f64::from(args.days)),
    ] {
        if let Some(message) = crate::base::bounds::find(SYNTH_BOUNDS, key).check(key, value) {
            return Err(bad(message));
        }
    }
    let rows = f64::from(args.days) * 86_400.0 * args.mean_rps;
    if rows > MAX_SYNTH_REQUESTS {
        return Err(bad(format!(
            "--days {} at --mean-rps {} make about {rows:.3e} requests, more than the {MAX_SYNTH_REQUESTS:e} a synthetic trace may hold (about 10 GB); lower either",
            args.days, args.mean_rps
        )));
    }
    let start = crate::traces::timestamp::parse_timestamp_checked(
        format!("{} 00:00:00", args.start).as_bytes(),
    )
    .map_err(|e| {
        bad(
            if args.start.len() == 10 && e.message != "not a timestamp" {
                format!("--start {}: {}", args.start, e.message)
            } else {
                format!("--start must be a date YYYY-MM-DD, got `{}`", args.start)
            },
        )
    })?;
    let lengths: Vec<(u32, u32)> = read_all(&args.lengths_from, ReaderOptions::default())
        .map_err(PlannerError::Trace)?
        .iter()
        .map(|r| (r.input_tokens, r.output_tokens))
        .collect();
    let curve = match &args.shape {
        Some(path) => {
            let c = read_rate_curve(path)?.truncated(u64::from(args.days) * 86_400);
            let mean = c.mean_rps();
            if mean <= 0.0 {
                return Err(bad(format!(
                    "{}: the rate curve is zero everywhere",
                    path.display()
                )));
            }
            crate::traces::shape::RateCurve {
                rate_rps: c
                    .rate_rps
                    .iter()
                    .map(|r| r / mean * args.mean_rps)
                    .collect(),
                ..c
            }
        }
        None => weekly_curve(args.days, args.mean_rps),
    };
    let spec = SynthSpec {
        seed: args.seed,
        start_epoch_s: start as i64,
        curve,
        interarrival_cv: args.cv,
        lengths,
    };
    let bar = Progress::new(args.quiet).steps("writing", 1000);
    let io = |e| PlannerError::Io {
        path: args.out.clone(),
        source: e,
    };
    let n = write_trace(&spec, outputs.writer("--out")?, |f| {
        bar.set_position((f * 1000.0) as u64);
    })
    .map_err(io)?;
    outputs.commit()?;
    bar.finish_and_clear();
    note!("wrote {n} requests to {}", args.out.display());
    Ok(())
}

pub(super) fn shape(args: &ShapeArgs) -> Result<(), PlannerError> {
    // A curve written into the folder it sums (as a .csv, which the folder's
    // reading takes) would be summed in as one more client's series by the
    // next run.
    let folder = args
        .input
        .is_dir()
        .then(|| args.input.canonicalize().ok())
        .flatten();
    let out_folder = args
        .out
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .and_then(|p| p.canonicalize().ok());
    let read_back = args.out.extension().is_some_and(|x| x == "csv");
    if read_back && folder.is_some() && folder == out_folder {
        return Err(PlannerError::Usage(format!(
            "--out {} is in the folder it reads ({}): the next run would sum it in as one more client's series; write it elsewhere",
            args.out.display(),
            args.input.display()
        )));
    }
    let mut outputs = Outputs::prepare([Some(Output::new("--out", &args.out))])?;
    let curve = read_rate_curve(&args.input)?;
    outputs.write_text("--out", &curve.to_servegen_csv())?;
    outputs.commit()?;
    note!(
        "summed {} client series into {} windows of {} s: {}",
        curve.clients,
        curve.rate_rps.len(),
        curve.window_s,
        args.out.display()
    );
    Ok(())
}
