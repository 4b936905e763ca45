//! `planner solve`, `planner capacity` and `planner bench`.

use super::{emit, finite};
use crate::base::error::PlannerError;
use crate::base::progress::Progress;
use crate::cli::output::{Output, Outputs};
use crate::plan::file::PlanFile;
use crate::report::{self, Format, ReportFormat};
use crate::scenario::Override;
use crate::solve::SolveOptions;
use clap::Args;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Debug, Args)]
pub(crate) struct SolveArgs {
    /// The scenario file (TOML); see docs/scenario-format.md.
    pub scenario: PathBuf,
    /// Change one value of the scenario for this run (repeatable), e.g.
    /// `--set api.usd_per_million_output_tokens=0.6 --set demand[1].scale=6`
    /// (a pooled fleet's models: `--set 'models[1].api.usd_per_million_input_tokens=0.2'`,
    /// `models[*]` for every one); checked like the file.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Output format: text, JSON, the per-slot schedule as CSV, or one
    /// self-contained HTML page with charts.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
    /// Write the report to this file instead of standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// No progress bars and no timing line on standard error.
    #[arg(long, short)]
    pub quiet: bool,
    /// Write HiGHS's log to this file.
    #[arg(long)]
    pub solver_log: Option<PathBuf>,
    /// Also write the chosen plan (GPUs, replicas per slot, API shares) to
    /// this file, for `planner simulate --plan`.
    #[arg(long, value_name = "PLAN.json")]
    pub plan_out: Option<PathBuf>,
    /// Recompute simulated capacities and slot replays instead of reading them from the cache
    /// ($PLANNER_CACHE_DIR, else $XDG_CACHE_HOME/planner, else ~/.cache/planner).
    #[arg(long)]
    pub no_cache: bool,
    /// Exit 0 even when the plan's own replay misses a tier's target (by
    /// default that exits 5 after writing the report, which opens with the
    /// miss).
    #[arg(long)]
    pub accept_miss: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CapacityArgs {
    /// The scenario whose configurations and tiers are evaluated.
    pub scenario: PathBuf,
    /// Change one value of the scenario, as for `solve --set` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Recompute simulated capacities instead of reading the cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Only this tier (by name).
    #[arg(long)]
    pub tier: Option<String>,
    /// Only configurations on this GPU type (by id).
    #[arg(long)]
    pub gpu: Option<String>,
    /// No progress bars.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// The scenario to time.
    pub scenario: PathBuf,
    /// Change one value of the scenario for the timed runs (repeatable), as
    /// `solve --set` does: times a what-if, e.g. `--set gpus[3].max_gpus=16`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// How many times to run the whole pipeline.
    #[arg(long, default_value_t = 3)]
    pub repeat: u32,
    /// Hand HiGHS the bare model, without the heuristic's starting plan (to
    /// measure what the warm start buys).
    #[arg(long)]
    pub no_warm_start: bool,
    /// Write HiGHS's log to this file.
    #[arg(long)]
    pub solver_log: Option<PathBuf>,
    /// Recompute simulated capacities and slot replays instead of reading the cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Solve the MILP by this method instead of the scenario's
    /// `planning.milp_method`: auto, monolithic or decomposed.
    #[arg(long, value_parser = parse_milp_method)]
    pub milp_method: Option<crate::milp::Method>,
}

fn parse_milp_method(s: &str) -> Result<crate::milp::Method, String> {
    use crate::milp::Method;
    match s {
        "auto" => Ok(Method::Auto),
        "monolithic" => Ok(Method::Monolithic),
        "decomposed" => Ok(Method::Decomposed),
        other => Err(format!(
            "unknown MILP method `{other}`; accepted: auto, monolithic, decomposed"
        )),
    }
}

pub(super) fn solve(args: &SolveArgs) -> Result<(), PlannerError> {
    let mut outputs = Outputs::prepare([
        Output::optional("--out", args.out.as_deref()),
        Output::optional("--plan-out", args.plan_out.as_deref()),
        Output::optional("--solver-log", args.solver_log.as_deref()),
    ])?;
    let solver_log = if outputs.has("--solver-log") {
        Some(outputs.temp_path("--solver-log")?)
    } else {
        None
    };
    let mut options = SolveOptions {
        solver_log,
        ..SolveOptions::new(Progress::new(args.quiet))
    };
    if args.no_cache {
        options.cache_dir = None;
    }
    let overrides = parse_overrides(&args.set)?;
    let scenario = crate::scenario::load_with(&args.scenario, &overrides)?;
    for warning in scenario.unused_prefix_models() {
        note!("warning: {warning}");
    }
    let outcome = crate::solve::solve(&scenario, &options)?;
    finite(&outcome)?;
    let text = match args.format {
        ReportFormat::Text => report::text::render(&outcome),
        ReportFormat::Json => report::json::render(&outcome),
        ReportFormat::Csv => report::schedule_csv::render(&outcome),
        ReportFormat::Html => report::html::plan_page::render(&outcome),
    };
    if outputs.has("--plan-out") {
        let file = PlanFile::of(&outcome.plan, scenario.planning.slot_minutes);
        outputs.write_text("--plan-out", &report::json::render(&file))?;
    }
    if outputs.has("--out") {
        outputs.write_text("--out", &text)?;
        outputs.commit()?;
    } else {
        outputs.commit()?;
        emit(&text)?;
    }
    let misses = report::sentences::misses(&outcome);
    if !misses.is_empty() && !args.accept_miss {
        return Err(PlannerError::TargetMissed(misses));
    }
    Ok(())
}

/// Parses every `--set KEY=VALUE`; all malformed ones are reported together.
pub(super) fn parse_overrides(args: &[String]) -> Result<Vec<Override>, PlannerError> {
    let mut overrides = Vec::new();
    let mut errors = Vec::new();
    for arg in args {
        match Override::parse(arg) {
            Ok(o) if overrides.iter().any(|p: &Override| p.key == o.key) => errors.push(format!(
                "--set `{arg}`: `{}` is set twice; give it once (to try several values, use `planner sweep --set {}=V1,V2,…`)",
                o.key, o.key
            )),
            Ok(o) => overrides.push(o),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(overrides)
    } else {
        Err(PlannerError::Usage(errors.join("\n")))
    }
}

/// `Ok` unless `flag`'s `value` is given and not one of `known` (the
/// scenario's `what`, listed as its `plural`).
fn one_of(
    flag: &str,
    value: Option<&str>,
    known: &[&str],
    what: &str,
    plural: &str,
) -> Result<(), PlannerError> {
    match value {
        Some(v) if !known.contains(&v) => Err(PlannerError::Usage(format!(
            "{flag} `{v}` is not {what} of the scenario; its {plural}: {}",
            known.join(", ")
        ))),
        _ => Ok(()),
    }
}

pub(super) fn capacity(args: &CapacityArgs) -> Result<(), PlannerError> {
    let progress = Progress::new(args.quiet);
    let overrides = parse_overrides(&args.set)?;
    let scenario = crate::scenario::load_with(&args.scenario, &overrides)?;
    let tiers: Vec<&str> = scenario.tiers.iter().map(|x| x.name.as_str()).collect();
    one_of("--tier", args.tier.as_deref(), &tiers, "a tier", "tiers")?;
    let gpus: Vec<&str> = scenario.gpus.iter().map(|x| x.id.as_str()).collect();
    one_of("--gpu", args.gpu.as_deref(), &gpus, "a GPU type", "types")?;
    let demand = crate::demand::build(&scenario, progress)?;
    let cache = if args.no_cache {
        None
    } else {
        crate::capacity::simulated::default_cache_dir()
    };
    let analytic = crate::capacity::evaluate_all(&scenario, &demand.tiers);
    let need: Vec<f64> = demand
        .tiers
        .iter()
        .map(|d| d.peak_rps.iter().fold(0.0_f64, |m, &r| m.max(r)))
        .collect();
    let simulated = crate::capacity::simulated::evaluate_all(
        &scenario,
        &demand.tiers,
        &need,
        cache.as_deref(),
        progress,
        &crate::base::timings::Timings::default(),
    );
    let names: Vec<String> = scenario.tiers.iter().map(|t| t.name.clone()).collect();
    let mut pairs = report::capacity_text::pair(&names, &analytic, &simulated, |entry| {
        let c = &entry.config;
        let (e, basis) = scenario.gpus[entry.gpu]
            .engine
            .as_ref()?
            .profile
            .error_basis(&c.gpu_type, c.precision)?;
        let (ttft, tpot) = e.band();
        Some(report::capacity_text::MeasuredBand { ttft, tpot, basis })
    });
    if let Some(t) = &args.tier {
        pairs.retain(|name, _| name == t);
    }
    if let Some(g) = &args.gpu {
        for rows in pairs.values_mut() {
            rows.retain(|r| r.config.split(' ').next() == Some(g.as_str()));
        }
    }
    finite(&pairs)?;
    let text = match args.format {
        Format::Text => report::capacity_text::render(&scenario.name, &pairs),
        Format::Json => report::json::render(&pairs),
    };
    emit(&text)
}

pub(super) fn bench(args: &BenchArgs) -> Result<(), PlannerError> {
    let mut outputs =
        Outputs::prepare([Output::optional("--solver-log", args.solver_log.as_deref())])?;
    let solver_log = if outputs.has("--solver-log") {
        Some(outputs.temp_path("--solver-log")?)
    } else {
        None
    };
    let overrides = parse_overrides(&args.set)?;
    let mut lines = Vec::new();
    for i in 0..args.repeat.max(1) {
        let t0 = Instant::now();
        let mut scenario = crate::scenario::load_with(&args.scenario, &overrides)?;
        if let Some(method) = args.milp_method {
            scenario.planning.milp_method = method;
        }
        let t1 = Instant::now();
        let demand = crate::demand::build(&scenario, Progress::hidden())?;
        let t2 = Instant::now();
        let options = SolveOptions {
            solver_log: solver_log.clone(),
            warm_start: !args.no_warm_start,
            cache_dir: if args.no_cache {
                None
            } else {
                crate::capacity::simulated::default_cache_dir()
            },
            ..SolveOptions::new(Progress::hidden())
        };
        let milp = crate::solve::first_round(&scenario, &demand, &options)?;
        let t3 = Instant::now();
        let first = milp.solve();
        let t4 = Instant::now();
        let first = match &first {
            Ok(s) => {
                let cost = crate::milp::total(&milp.problem, s);
                format!(
                    "{:?}, {:?}, {:.2} USD, proven gap {:.3}%",
                    s.method,
                    s.status,
                    cost,
                    (cost - s.lower_bound_usd) / cost * 100.0
                )
            }
            Err(e) => format!("{e:?}"),
        };
        options.timings.take();
        let outcome = crate::solve::solve(&scenario, &options)?;
        let plan = &outcome.plan;
        let t5 = Instant::now();
        let stages = options.timings.take();
        lines.push(format!(
            "run {}: load {:.3} s, demand {:.3} s, capacity {:.3} s, first round's MILP {:.3} s ({first}), full solve (demand + capacity + MILP + replay rounds + report data) {:.3} s; {} slots, {} integer variables, status {:?}, {:?} method, proven gap {:.3}%, {} replayed round(s), total {:.2} USD",
            i + 1,
            (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64(),
            (t3 - t2).as_secs_f64(),
            (t4 - t3).as_secs_f64(),
            (t5 - t4).as_secs_f64(),
            demand.slots,
            plan.solver.integer_variables,
            plan.solver.status,
            plan.solver.method,
            plan.solver.proven_gap * 100.0,
            outcome.rounds.len().max(1),
            plan.total_cost_usd
        ));
        lines
            .push("  the full solve's stages (wall time, in the order they finished; a round whose MILP found the fleets of the round before is timed here but, with nothing new to replay, neither replayed nor counted):".to_string());
        lines.extend(stage_lines(&stages, Some((t5 - t4).as_secs_f64())));
    }
    outputs.commit()?;
    emit(&(lines.join("\n") + "\n"))
}

/// The lines of `stages` (in the order they finished), each stage followed
/// by its parts, indented beneath it, the names padded to one width; with
/// `whole_s`, the time of the whole that no stage holds (parts are inside
/// their stage, so only stages count) as a last line.
fn stage_lines(stages: &[crate::base::timings::Stage], whole_s: Option<f64>) -> Vec<String> {
    let width = stages.iter().map(|s| s.name.len() + 2).max().unwrap_or(0);
    let row = |name: &str, seconds: f64| format!("    {name:<width$}  {seconds:>8.3} s");
    let line = |indent: &str, s: &crate::base::timings::Stage| {
        row(&format!("{indent}{}", s.name), s.seconds)
    };
    let mut lines = Vec::new();
    let mut parts = Vec::new();
    for s in stages {
        if s.part {
            parts.push(s);
            continue;
        }
        lines.push(line("", s));
        lines.extend(parts.drain(..).map(|p| line("  ", p)));
    }
    lines.extend(parts.into_iter().map(|p| line("  ", p)));
    if let Some(whole_s) = whole_s {
        let staged: f64 = stages.iter().filter(|s| !s.part).map(|s| s.seconds).sum();
        lines.push(row("(not in a stage)", (whole_s - staged).max(0.0)));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::stage_lines;
    use crate::base::timings::Stage;

    #[test]
    fn a_stage_is_printed_before_the_parts_that_finished_before_it() {
        let stage = |name: &str, seconds, part| Stage {
            name: name.into(),
            seconds,
            part,
        };
        let lines = stage_lines(
            &[
                stage("screen", 1.0, true),
                stage("fleets", 2.5, true),
                stage("capacity", 3.75, false),
                stage("round 1", 0.5, false),
            ],
            None,
        );
        assert_eq!(
            lines,
            [
                "    capacity       3.750 s",
                "      screen       1.000 s",
                "      fleets       2.500 s",
                "    round 1        0.500 s",
            ]
        );
    }
}
