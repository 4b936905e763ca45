//! `planner simulate`: a plan replayed against the scenario's traces.

use super::{emit, finite, OutputArgs};
use crate::base::error::PlannerError;
use crate::base::progress::Progress;
use crate::cli::output::{Output, Outputs};
use crate::plan::file::PlanFile;
use crate::report::{self, Format};
use crate::scenario::VerifySlots;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, Args)]
pub(crate) struct SimulateArgs {
    /// The scenario whose traces are replayed.
    pub scenario: PathBuf,
    /// Change one value of the scenario, as for `solve --set` (repeatable):
    /// give the same changes as the solve that wrote the plan.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// The plan to replay against, as written by `planner solve --plan-out`.
    #[arg(long, value_name = "PLAN.json")]
    pub plan: PathBuf,
    /// Which slots to replay: every slot in one continuous run, or the
    /// sample `solve` verifies (each tier's most loaded slot, the busiest,
    /// four evenly spaced).
    #[arg(long, value_enum, default_value_t = SlotChoice::All)]
    pub slots: SlotChoice,
    /// Replay only this slot (0-based), from an empty fleet.
    #[arg(long, conflicts_with = "slots")]
    pub slot: Option<usize>,
    /// Also write every request completed on a replica to this CSV
    /// (`arrival_s,ttft_ms,e2e_ms,output_tokens,tier`, the log format
    /// `planner goodput` reads). Not with `--slots sample`.
    #[arg(long, value_name = "FILE.csv")]
    pub requests_out: Option<PathBuf>,
    /// Seed of the replay's random draws (default: the scenario's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Exit 0 even when the replay misses a tier's target (by default that
    /// exits 5 after writing the report, whose tier lines say MISSES TARGET).
    #[arg(long)]
    pub accept_miss: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Slots `simulate` replays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SlotChoice {
    All,
    Sample,
}

pub(super) fn simulate(args: &SimulateArgs) -> Result<(), PlannerError> {
    let mut outputs = Outputs::prepare([
        Output::optional("--out", args.output.out.as_deref()),
        Output::optional("--requests-out", args.requests_out.as_deref()),
    ])?;
    let progress = Progress::new(args.output.quiet);
    let overrides = super::plan::parse_overrides(&args.set)?;
    let mut scenario = crate::scenario::load_with(&args.scenario, &overrides)?;
    if let Some(seed) = args.seed {
        scenario.simulation.seed = seed;
    }
    let plan = PlanFile::read(&args.plan)?;
    let (demand, requests) = crate::demand::build_keeping(&scenario, progress, true)?;
    let problems = plan.check(&scenario, demand.slots, &args.plan);
    if !problems.is_empty() {
        return Err(PlannerError::Plan(problems));
    }
    let replay = crate::replay::traces(&scenario, &demand, requests);
    let mode = match args.slots {
        SlotChoice::All => VerifySlots::All,
        SlotChoice::Sample => VerifySlots::Sample,
    };
    let range = match (args.slot, mode) {
        (Some(t), _) if t >= demand.slots => {
            return Err(PlannerError::Usage(format!(
                "--slot {t} is past the last slot ({})",
                demand.slots.saturating_sub(1)
            )))
        }
        (Some(t), _) => Some(t..t + 1),
        (None, VerifySlots::Sample) => None,
        (None, _) => Some(0..demand.slots),
    };
    let started = Instant::now();
    let v = match (range, &args.requests_out) {
        (None, Some(_)) => {
            return Err(PlannerError::Usage(
                "--requests-out needs one continuous replay: use --slots all or --slot N".into(),
            ))
        }
        (None, None) => crate::replay::verify(&scenario, &demand, &plan, &replay, mode, progress),
        (Some(range), None) => {
            crate::replay::verify_range(&scenario, &demand, &plan, &replay, range, progress, None)
        }
        (Some(range), Some(path)) => {
            let names: Vec<&str> = scenario.tiers.iter().map(|t| t.name.as_str()).collect();
            let mut log = RequestLog::create(outputs.writer("--requests-out")?, path)?;
            let v = crate::replay::verify_range(
                &scenario,
                &demand,
                &plan,
                &replay,
                range,
                progress,
                Some(&mut |c| log.write(c, &names)),
            );
            log.finish()?;
            v
        }
    };
    finite(&v)?;
    let wall_s = started.elapsed().as_secs_f64();
    if !args.output.quiet {
        note!(
            "replayed {} requests in {wall_s:.2} s ({:.0} requests/s, {} events)",
            v.requests,
            v.requests as f64 / wall_s.max(1e-9),
            v.events
        );
    }
    let text = match args.output.format {
        Format::Text => format!(
            "planner simulate: {} against {}\n\n{}",
            args.scenario.display(),
            args.plan.display(),
            report::verification_text::render(&v, &[], None)
        ),
        Format::Json => report::json::render(&serde_json::json!({
            "scenario": scenario.name,
            "plan": args.plan.display().to_string(),
            "verification": v,
        })),
    };
    if outputs.has("--out") {
        outputs.write_text("--out", &text)?;
        outputs.commit()?;
    } else {
        outputs.commit()?;
        emit(&text)?;
    }
    let misses = report::sentences::missed_targets(&crate::solve::outcome::missed_targets(
        &scenario,
        Some(&v),
    ));
    if !misses.is_empty() && !args.accept_miss {
        return Err(PlannerError::ReplayMissed(misses));
    }
    Ok(())
}

/// The per-request CSV of `simulate --requests-out`, streamed into the
/// output's temporary file; the first write error is kept and reported at the end.
struct RequestLog<'a, W: Write> {
    path: PathBuf,
    out: &'a mut W,
    error: Option<std::io::Error>,
}

impl<'a, W: Write> RequestLog<'a, W> {
    fn create(out: &'a mut W, path: &Path) -> Result<Self, PlannerError> {
        writeln!(out, "arrival_s,ttft_ms,e2e_ms,output_tokens,tier").map_err(|source| {
            PlannerError::Io {
                path: path.to_path_buf(),
                source,
            }
        })?;
        Ok(RequestLog {
            path: path.to_path_buf(),
            out,
            error: None,
        })
    }

    /// Full precision, so that `planner goodput` reproduces the simulator's
    /// verdicts exactly.
    fn write(&mut self, c: &crate::sim::Completed, tiers: &[&str]) {
        if self.error.is_none() {
            if let Err(e) = writeln!(
                self.out,
                "{},{},{},{},{}",
                c.arrival_s,
                c.ttft_ms,
                c.e2e_ms,
                c.output_tokens,
                tiers[usize::from(c.tier)]
            ) {
                self.error = Some(e);
            }
        }
    }

    fn finish(mut self) -> Result<(), PlannerError> {
        match self.error.take() {
            Some(source) => Err(PlannerError::Io {
                path: self.path.clone(),
                source,
            }),
            None => Ok(()),
        }
    }
}
