//! The command line: `planner solve`, `planner trace stats|synth|shape`,
//! `planner bench`. Parses arguments, runs the library, prints or writes the
//! result only once it is complete, and maps errors to exit codes.

use crate::error::{PlannerError, EXIT_OK};
use crate::goodput::{CostBasis, LimitSource, SloLimits};
use crate::plan_file::PlanFile;
use crate::progress::Progress;
use crate::report::{self, Format};
use crate::scenario::VerifySlots;
use crate::shape::read_rate_curve;
use crate::solve::SolveOptions;
use crate::traces::stats::accumulate;
use crate::traces::synth::{weekly_curve, write_trace, SynthSpec};
use crate::traces::{read_all, ReaderOptions, TraceFormat};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Capacity planner for LLM inference serving.
///
/// Reads a TOML scenario (GPU types and prices, the served model, per-tier
/// TTFT/TPOT limits, an optional per-token API, demand from real request
/// traces) and chooses, with a MILP, how many GPUs of which type to reserve,
/// how many to rent per slot, which configuration serves each tier, and what
/// to send to the API, at minimum cost. Per-replica capacity comes from a
/// simulation of continuous batching on the traces' own lengths and
/// burstiness, and every plan is replayed against the traces before it is
/// printed.
///
/// Exit codes: 0 success, 2 invalid input, 3 no plan meets the scenario,
/// 4 solver or I/O failure.
#[derive(Debug, Parser)]
#[command(
    name = "planner",
    version,
    about,
    long_about,
    after_help = "Start with: planner solve scenarios/peak.toml"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Choose the cheapest plan that meets every tier's SLO at peak.
    ///
    /// Example: planner solve scenarios/peak.toml --format json --out plan.json
    Solve(SolveArgs),
    /// Read, summarise and generate request traces.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// Replay a scenario's traces against a plan in the simulator.
    ///
    /// Discrete-event simulation of continuous batching on every replica the
    /// plan runs, slot by slot; reports per tier attainment of both latency
    /// limits, TTFT/TPOT percentiles, goodput and the cost per 1,000 SLO-met
    /// output tokens. Example:
    /// planner solve scenarios/peak.toml --plan-out plan.json &&
    /// planner simulate scenarios/peak.toml --plan plan.json
    Simulate(SimulateArgs),
    /// Count goodput and the cost of SLO-met output in a per-request log.
    ///
    /// A request meets the SLO when TTFT ≤ --ttft-ms and TPOT ≤ --tpot-ms,
    /// with TPOT = (e2e − TTFT) / (output tokens − 1); a one-token answer has
    /// no gap between tokens and meets any TPOT limit. Goodput output tokens
    /// are the output tokens of the requests meeting both. Example:
    /// planner goodput results.csv --ttft-ms 500 --tpot-ms 50
    /// --cost-per-hour 60000 --currency KRW
    Goodput(GoodputArgs),
    /// Compare per-replica capacity by the queueing model and the simulator.
    ///
    /// For every configuration and tier of the scenario: the requests/s one
    /// replica sustains under the tier's SLO by the closed-form queueing model
    /// and by bisection in the replay simulator, and which limit binds.
    Capacity(CapacityArgs),
    /// Time the pipeline's stages on a scenario (wall-clock, repeated).
    Bench(BenchArgs),
    /// Compare the latency model with published throughput or measured kernels.
    ///
    /// Prints, per published point (TensorRT-LLM tables, MLPerf v4.1; FP8),
    /// the model's predicted output tokens/s for the same GPUs and lengths and
    /// the error; with --kernels, the per-operator and per-layer error against
    /// Vidur's measured kernel timings before and after fitting the GPU
    /// profiles' efficiency factors and fixed time.
    Calibrate(CalibrateArgs),
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Folder holding gpus/ and models/.
    #[arg(long, default_value = "profiles")]
    pub profiles: PathBuf,
    /// Instead, compare the roofline with measured kernel timings (Vidur
    /// profiling data: compute/, network/, legacy/) and fit its efficiency
    /// factors.
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = "data/vidur-profiling")]
    pub kernels: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct SolveArgs {
    /// The scenario file (TOML); see docs/scenario-format.md.
    pub scenario: PathBuf,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Write HiGHS's log to this file.
    #[arg(long)]
    pub solver_log: Option<PathBuf>,
    /// Also write the chosen plan (GPUs, replicas per slot, API shares) to
    /// this file, for `planner simulate --plan`.
    #[arg(long, value_name = "PLAN.json")]
    pub plan_out: Option<PathBuf>,
    /// Recompute simulated capacities instead of reading them from the cache
    /// ($PLANNER_CACHE_DIR, else ~/.cache/planner).
    #[arg(long)]
    pub no_cache: bool,
}

#[derive(Debug, Args)]
pub struct CapacityArgs {
    /// The scenario whose configurations and tiers are evaluated.
    pub scenario: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Recompute simulated capacities instead of reading the cache.
    #[arg(long)]
    pub no_cache: bool,
    /// No progress bars.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// The scenario whose traces are replayed.
    pub scenario: PathBuf,
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
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Where and how a report is written.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write the report to this file instead of standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// No progress bars and no timing line on standard error.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Slots `simulate` replays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SlotChoice {
    All,
    Sample,
}

#[derive(Debug, Args)]
pub struct GoodputArgs {
    /// Per-request results: CSV `arrival_s,ttft_ms,e2e_ms,output_tokens[,tier]`
    /// or vLLM benchmark-serving JSON (`ttfts`, `itls`, `output_lens`).
    pub log: PathBuf,
    /// TTFT limit in ms (with --tpot-ms; or take the limits from --scenario).
    #[arg(long)]
    pub ttft_ms: Option<f64>,
    /// TPOT limit in ms.
    #[arg(long)]
    pub tpot_ms: Option<f64>,
    /// Take each tier's limits from this scenario (the log's `tier` column
    /// names the tiers).
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// Cost of the serving fleet per hour, in --currency.
    #[arg(long)]
    pub cost_per_hour: Option<f64>,
    /// Seconds the cost is paid for (default: first arrival to last
    /// completion; for vLLM JSON its `duration`).
    #[arg(long)]
    pub duration_s: Option<f64>,
    /// Label of the cost's currency.
    #[arg(long, default_value = "USD")]
    pub currency: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Arrival and length statistics of a trace (Azure CSV or Mooncake JSONL).
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
}

/// Trace format names for the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Auto,
    Azure,
    Mooncake,
}

impl FormatArg {
    fn to_format(self) -> Option<TraceFormat> {
        match self {
            FormatArg::Auto => None,
            FormatArg::Azure => Some(TraceFormat::Azure),
            FormatArg::Mooncake => Some(TraceFormat::Mooncake),
        }
    }
}

#[derive(Debug, Args)]
pub struct StatsArgs {
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

#[derive(Debug, Args)]
pub struct SynthArgs {
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
pub struct ShapeArgs {
    /// A ServeGen rate file, or a folder of them.
    pub input: PathBuf,
    /// Where to write the summed curve (ServeGen format).
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The scenario to time.
    pub scenario: PathBuf,
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
    /// Recompute simulated capacities instead of reading the cache.
    #[arg(long)]
    pub no_cache: bool,
}

/// Runs the command line and returns the exit code.
pub fn main_with_exit_code() -> i32 {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            eprintln!("error: {e}");
            e.exit_code()
        }
    }
}

/// Runs one parsed command.
pub fn run(cli: Cli) -> Result<(), PlannerError> {
    match cli.command {
        Command::Solve(args) => solve(args),
        Command::Trace(TraceCommand::Stats(args)) => stats(args),
        Command::Trace(TraceCommand::Synth(args)) => synth(args),
        Command::Trace(TraceCommand::Shape(args)) => shape(args),
        Command::Bench(args) => bench(args),
        Command::Simulate(args) => simulate(args),
        Command::Capacity(args) => capacity(args),
        Command::Goodput(args) => goodput(args),
        Command::Calibrate(args) => calibrate(args),
    }
}

fn solve(args: SolveArgs) -> Result<(), PlannerError> {
    let mut options = SolveOptions {
        solver_log: args.solver_log.clone(),
        ..SolveOptions::new(Progress::new(args.output.quiet))
    };
    if args.no_cache {
        options.cache_dir = None;
    }
    let scenario = crate::scenario::load(&args.scenario)?;
    let plan = crate::solve::solve(&scenario, &options)?;
    let text = match args.output.format {
        Format::Text => report::text::render(&plan),
        Format::Json => report::json::render(&plan),
    };
    if let Some(path) = &args.plan_out {
        let file = PlanFile::of(&plan, scenario.planning.slot_minutes);
        emit(&report::json::render(&file), Some(path))?;
    }
    emit(&text, args.output.out.as_deref())
}

fn capacity(args: CapacityArgs) -> Result<(), PlannerError> {
    let progress = Progress::new(args.quiet);
    let scenario = crate::scenario::load(&args.scenario)?;
    let demand = crate::demand::build(&scenario, progress)?;
    let cache = if args.no_cache {
        None
    } else {
        crate::simcap::default_cache_dir()
    };
    let analytic = crate::capacity::evaluate_all(
        &scenario.gpus,
        &scenario.model,
        &scenario.tiers,
        &demand.tiers,
    );
    let simulated =
        crate::simcap::evaluate_all(&scenario, &demand.tiers, cache.as_deref(), progress);
    let names: Vec<String> = scenario.tiers.iter().map(|t| t.name.clone()).collect();
    let pairs = report::capacity_text::pair(&names, &analytic, &simulated);
    let text = match args.format {
        Format::Text => report::capacity_text::render(&scenario.name, &pairs),
        Format::Json => report::json::render(&pairs),
    };
    emit(&text, None)
}

fn simulate(args: SimulateArgs) -> Result<(), PlannerError> {
    let progress = Progress::new(args.output.quiet);
    let mut scenario = crate::scenario::load(&args.scenario)?;
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
            crate::replay::verify_range(&scenario, &demand, &plan, &replay, range, progress, |_| {})
        }
        (Some(range), Some(path)) => {
            let names: Vec<&str> = scenario.tiers.iter().map(|t| t.name.as_str()).collect();
            let mut log = RequestLog::create(path)?;
            let v = crate::replay::verify_range(
                &scenario,
                &demand,
                &plan,
                &replay,
                range,
                progress,
                |c| log.write(c, &names),
            );
            log.finish()?;
            v
        }
    };
    let wall_s = started.elapsed().as_secs_f64();
    if !args.output.quiet {
        eprintln!(
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
            report::verification_text::render(&v, &[])
        ),
        Format::Json => report::json::render(&serde_json::json!({
            "scenario": scenario.name,
            "plan": args.plan.display().to_string(),
            "verification": v,
        })),
    };
    emit(&text, args.output.out.as_deref())
}

/// The per-request CSV of `simulate --requests-out`, written to a temporary
/// file and renamed into place only when complete.
struct RequestLog {
    path: PathBuf,
    tmp: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
    error: Option<std::io::Error>,
}

impl RequestLog {
    fn create(path: &Path) -> Result<Self, PlannerError> {
        let tmp = tmp_path(path);
        let io = |source| PlannerError::Io {
            path: tmp.clone(),
            source,
        };
        let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp).map_err(io)?);
        writeln!(out, "arrival_s,ttft_ms,e2e_ms,output_tokens,tier").map_err(io)?;
        Ok(RequestLog {
            path: path.to_path_buf(),
            tmp,
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
        let result = match self.error.take() {
            Some(e) => Err(e),
            None => self.out.flush(),
        }
        .and_then(|()| std::fs::rename(&self.tmp, &self.path));
        result.map_err(|source| {
            let _ = std::fs::remove_file(&self.tmp);
            PlannerError::Io {
                path: self.path.clone(),
                source,
            }
        })
    }
}

fn goodput(args: GoodputArgs) -> Result<(), PlannerError> {
    let usage = |m: &str| PlannerError::Usage(m.to_string());
    let log = crate::goodput::read_log(&args.log)?;
    let tiers = match (&args.scenario, args.ttft_ms, args.tpot_ms) {
        (Some(path), None, None) => Some(crate::scenario::load(path)?.tiers),
        (None, Some(_), Some(_)) => None,
        (Some(_), _, _) => return Err(usage("give either --scenario or --ttft-ms with --tpot-ms, not both")),
        _ => return Err(usage("give the limits: --ttft-ms and --tpot-ms, or --scenario with tiers named in the log's `tier` column")),
    };
    for (name, value) in [
        ("--ttft-ms", args.ttft_ms),
        ("--tpot-ms", args.tpot_ms),
        ("--cost-per-hour", args.cost_per_hour),
        ("--duration-s", args.duration_s),
    ] {
        if value.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
            return Err(PlannerError::Usage(format!(
                "{name} must be a positive number"
            )));
        }
    }
    let limits = match tiers {
        None => LimitSource::Fixed(SloLimits {
            ttft_ms: args.ttft_ms.unwrap_or(0.0),
            tpot_ms: args.tpot_ms.unwrap_or(0.0),
        }),
        Some(tiers) => LimitSource::Tiers(tiers),
    };
    limits.check(&log).map_err(PlannerError::Usage)?;
    let (duration_s, duration_text) = match (
        args.duration_s,
        crate::goodput::span_s(&log),
        log.duration_s,
    ) {
        (Some(d), _, _) => (d, format!("{d} s (--duration-s)")),
        (None, Some(d), _) => (d, format!("{d:.3} s, first arrival to last completion")),
        (None, None, Some(d)) => (d, format!("{d:.3} s, the benchmark's `duration`")),
        (None, None, None) => (
            0.0,
            "unknown: the log has no arrival times; give --duration-s".into(),
        ),
    };
    let cost = match args.cost_per_hour {
        Some(cost_per_hour) if duration_s > 0.0 => Some(CostBasis {
            cost_per_hour,
            duration_s,
        }),
        Some(_) => return Err(usage(
            "--cost-per-hour needs a duration: this log has no arrival times, so give --duration-s",
        )),
        None => None,
    };
    let r = crate::goodput::report(
        &log,
        &args.log.display().to_string(),
        &limits,
        (duration_s, duration_text),
        cost,
        &args.currency,
    );
    let text = match args.format {
        Format::Text => report::goodput_text::render(&r),
        Format::Json => report::json::render(&r),
    };
    emit(&text, None)
}

fn stats(args: StatsArgs) -> Result<(), PlannerError> {
    let options = ReaderOptions {
        format: args.trace_format.to_format(),
        skip_bad_rows: args.skip_bad_rows,
    };
    let (_, summary, acc) = accumulate(&args.file, options, Progress::new(args.quiet))?;
    if let Some((line, why)) = &summary.first_skipped {
        eprintln!(
            "warning: skipped {} bad rows; the first, line {line}: {why}",
            summary.skipped_rows
        );
    }
    let s = acc.summary(summary.skipped_rows);
    let text = match args.format {
        Format::Text => report::trace_text::render(&args.file.display().to_string(), &s),
        Format::Json => report::json::render(&s),
    };
    emit(&text, None)
}

fn synth(args: SynthArgs) -> Result<(), PlannerError> {
    let bad = |m: String| PlannerError::Usage(m);
    if !(args.cv > 0.0 && args.cv.is_finite()) {
        return Err(bad(format!("--cv must be positive, got {}", args.cv)));
    }
    if !(args.mean_rps > 0.0 && args.mean_rps.is_finite()) {
        return Err(bad(format!(
            "--mean-rps must be positive, got {}",
            args.mean_rps
        )));
    }
    if args.days == 0 {
        return Err(bad("--days must be at least 1".into()));
    }
    let start =
        crate::traces::timestamp::parse_timestamp(format!("{} 00:00:00", args.start).as_bytes())
            .ok_or_else(|| {
                bad(format!(
                    "--start must be a date YYYY-MM-DD, got `{}`",
                    args.start
                ))
            })?;
    let lengths: Vec<(u32, u32)> = read_all(&args.lengths_from, ReaderOptions::default())?
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
            crate::shape::RateCurve {
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
    let tmp = tmp_path(&args.out);
    let io = |e| PlannerError::Io {
        path: args.out.clone(),
        source: e,
    };
    let file = std::fs::File::create(&tmp).map_err(io)?;
    let mut writer = std::io::BufWriter::with_capacity(1 << 20, file);
    let n = write_trace(&spec, &mut writer, |f| {
        bar.set_position((f * 1000.0) as u64)
    })
    .map_err(io)?;
    writer.flush().map_err(io)?;
    drop(writer);
    std::fs::rename(&tmp, &args.out).map_err(io)?;
    bar.finish_and_clear();
    eprintln!("wrote {n} requests to {}", args.out.display());
    Ok(())
}

fn shape(args: ShapeArgs) -> Result<(), PlannerError> {
    let curve = read_rate_curve(&args.input)?;
    write_atomically(&args.out, &curve.to_servegen_csv())?;
    eprintln!(
        "summed {} client series into {} windows of {} s: {}",
        curve.clients,
        curve.rate_rps.len(),
        curve.window_s,
        args.out.display()
    );
    Ok(())
}

fn bench(args: BenchArgs) -> Result<(), PlannerError> {
    let mut lines = Vec::new();
    for i in 0..args.repeat.max(1) {
        let t0 = Instant::now();
        let scenario = crate::scenario::load(&args.scenario)?;
        let t1 = Instant::now();
        let demand = crate::demand::build(&scenario, Progress::hidden())?;
        let t2 = Instant::now();
        let options = SolveOptions {
            solver_log: args.solver_log.clone(),
            warm_start: !args.no_warm_start,
            cache_dir: if args.no_cache {
                None
            } else {
                crate::simcap::default_cache_dir()
            },
            ..SolveOptions::new(Progress::hidden())
        };
        crate::solve::capacity_table(&scenario, &demand, &options);
        let t3 = Instant::now();
        let plan = crate::solve::solve(&scenario, &options)?;
        let t4 = Instant::now();
        lines.push(format!(
            "run {}: load {:.3} s, demand {:.3} s, capacity {:.3} s, full solve (demand + capacity + MILP + replay rounds + report data) {:.3} s; {} slots, {} integer variables, status {:?}, {} round(s), total {:.2} USD",
            i + 1,
            (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64(),
            (t3 - t2).as_secs_f64(),
            (t4 - t3).as_secs_f64(),
            demand.slots,
            plan.solver.integer_variables,
            plan.solver.status,
            plan.rounds.len().max(1),
            plan.total_cost_usd
        ));
    }
    emit(&(lines.join("\n") + "\n"), None)
}

fn calibrate(args: CalibrateArgs) -> Result<(), PlannerError> {
    if let Some(dir) = &args.kernels {
        let c = crate::kernels::calibrate(dir, &args.profiles)?;
        let text = match args.format {
            Format::Json => report::json::render(&c),
            Format::Text => report::kernels_text::render(&c),
        };
        return emit(&text, None);
    }
    let points = crate::calibrate::compare(&args.profiles)?;
    let cache = crate::simcap::default_cache_dir();
    let (ratios, server) = crate::calibrate::compare_mlperf(&args.profiles, cache.as_deref())?;
    let text = match args.format {
        Format::Json => report::json::render(&serde_json::json!({
            "published_points": points,
            "mlperf_ratios": ratios,
            "mlperf_server_over_offline": server,
        })),
        Format::Text => report::calibration_text::render(&points, &ratios, &server),
    };
    emit(&text, None)
}

fn tmp_path(out: &Path) -> PathBuf {
    let mut name = out
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".partial");
    out.with_file_name(name)
}

fn write_atomically(path: &Path, text: &str) -> Result<(), PlannerError> {
    let tmp = tmp_path(path);
    let io = |e| PlannerError::Io {
        path: path.to_path_buf(),
        source: e,
    };
    std::fs::write(&tmp, text).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)
}

/// Writes the finished output to `out` (atomically) or standard output; a
/// closed pipe is not an error.
fn emit(text: &str, out: Option<&Path>) -> Result<(), PlannerError> {
    match out {
        Some(path) => write_atomically(path, text),
        None => {
            let mut stdout = std::io::stdout().lock();
            match stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(PlannerError::Io {
                    path: PathBuf::from("<stdout>"),
                    source: e,
                }),
                _ => Ok(()),
            }
        }
    }
}
