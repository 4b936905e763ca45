//! `planner sweep`: the scenario solved over a grid of `--set` values.

use super::emit;
use crate::base::error::PlannerError;
use crate::base::progress::Progress;
use crate::cli::output::{Output, Outputs};
use crate::report::{self, ReportFormat};
use crate::solve::SolveOptions;
use crate::sweep::{Grid, SweepOptions};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[allow(clippy::struct_excessive_bools)] // independent command-line switches
pub(crate) struct SweepArgs {
    /// The scenario file (TOML); see docs/scenario-format.md.
    pub scenario: PathBuf,
    /// A key and its values, `KEY=V1,V2,…` (repeatable; several keys make a
    /// grid of every combination). One value sets the key in every variant.
    /// Keys as for `solve --set`, e.g. `api.usd_per_million_output_tokens=0.5,0.7,0.9`.
    #[arg(long = "set", value_name = "KEY=V1,V2,…", required = true)]
    pub set: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
    /// Write the report to this file instead of standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Solves per break-even to narrow it by bisection (0: the swept
    /// neighbours only).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub bisect: u32,
    /// Run a grid of more than 1,000 variants (each is a full solve).
    #[arg(long)]
    pub allow_large_grid: bool,
    /// Recompute simulated capacities and slot replays instead of reading them from the cache.
    #[arg(long)]
    pub no_cache: bool,
    /// No line per variant on standard error.
    #[arg(long, short)]
    pub quiet: bool,
    /// Exit 0 even when some variant's plan misses its replay (exit 5
    /// otherwise, after writing the report that marks them MISS).
    #[arg(long)]
    pub accept_miss: bool,
}

pub(super) fn sweep(args: &SweepArgs) -> Result<(), PlannerError> {
    let grid = Grid::parse(&args.set, args.allow_large_grid)?;
    // A key with one value is set in every variant, not swept.
    let (fixed_axes, swept): (Vec<_>, Vec<_>) =
        grid.axes.into_iter().partition(|a| a.values.len() == 1);
    let fixed: Vec<_> = fixed_axes.iter().map(|a| a.at(&a.values[0])).collect();
    let grid = Grid { axes: swept };
    let mut outputs = Outputs::prepare([Output::optional("--out", args.out.as_deref())])?;
    let mut solve = SolveOptions::new(Progress::hidden());
    // A row is a variant's plan and cost: question 4 is not shown.
    solve.speed_questions = false;
    if args.no_cache {
        solve.cache_dir = None;
    }
    let options = SweepOptions {
        solve,
        bisect_steps: args.bisect,
        lines: !args.quiet,
    };
    let t0 = std::time::Instant::now();
    let result = crate::sweep::run(&args.scenario, &fixed, &grid, &options)?;
    if !args.quiet {
        note!(
            "sweep: {} variants and {} bisection solves in {:.1} s",
            result.rows.len(),
            result.bisection_solves(),
            t0.elapsed().as_secs_f64()
        );
    }
    let text = match args.format {
        ReportFormat::Text => report::sweep_text::render(&result),
        ReportFormat::Json => report::json::render(&result),
        ReportFormat::Csv => report::sweep_csv::render(&result),
        ReportFormat::Html => report::html::sweep_page::render(&result),
    };
    if outputs.has("--out") {
        outputs.write_text("--out", &text)?;
        outputs.commit()?;
    } else {
        outputs.commit()?;
        emit(&text)?;
    }
    // A variant whose plan misses its own replay is not a success.
    let missed: Vec<String> = result
        .rows
        .iter()
        .filter_map(|r| {
            let f = r.figures.as_ref()?;
            (!f.missed_targets.is_empty()).then(|| {
                let label: Vec<String> = r
                    .settings
                    .iter()
                    .map(|s| format!("{}={}", s.key, s.value))
                    .collect();
                format!(
                    "variant {} ({})",
                    label.join(" "),
                    report::sentences::missed_targets(&f.missed_targets).join("; ")
                )
            })
        })
        .collect();
    if missed.is_empty() || args.accept_miss {
        Ok(())
    } else {
        Err(PlannerError::TargetMissed(missed))
    }
}
