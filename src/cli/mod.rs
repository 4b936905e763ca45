//! The command line: one file per command group (`plan`: solve, capacity,
//! bench; `simulate`; `goodput`; `trace`: stats, synth, shape, aggregate; `calibrate`;
//! `perf`).
//! Parses arguments, runs the library, prints or writes the result only once
//! it is complete, and maps errors to exit codes.

use crate::base::error::{PlannerError, EXIT_OK};
use crate::report::Format;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

mod args;
mod calibrate;
mod calibrate_runs;
mod disaggregated_arg;
mod engine_arg;
mod goodput;
mod layout_arg;
pub(crate) mod output;
mod perf;
mod plan;
mod predict;
mod simulate;
mod speculative_arg;
mod sweep;
mod trace;
mod trace_aggregate;

pub(crate) use calibrate::CalibrateArgs;
pub(crate) use goodput::GoodputArgs;
pub(crate) use perf::PerfArgs;
pub(crate) use plan::{BenchArgs, CapacityArgs, SolveArgs};
pub(crate) use predict::PredictArgs;
pub(crate) use simulate::SimulateArgs;
pub(crate) use sweep::SweepArgs;
pub(crate) use trace::TraceCommand;

/// Capacity planner for LLM inference serving.
///
/// Reads a TOML scenario (GPU types and prices, the served model — or the
/// several models of one pooled fleet, `[[models]]` — per-tier TTFT/TPOT
/// limits, an optional per-token API, demand from real request traces) and
/// chooses, with a MILP, how many GPUs of which type to reserve,
/// how many to rent per slot, which configuration serves each tier, and what
/// to send to the API, at minimum cost. Capacity comes from simulating fleets
/// of 1…N replicas behind the router, with continuous batching on the
/// traces' own lengths and burstiness, and every plan is replayed against the
/// traces before it is printed.
///
/// Exit codes: 0 success, 2 invalid input, 3 no plan meets the scenario,
/// 4 solver or I/O failure, 5 the plan's own replay misses a tier's target
/// (`solve --accept-miss` exits 0).
#[derive(Debug, Parser)]
#[command(
    name = "planner",
    version,
    about,
    long_about,
    after_help = "Start with: planner solve scenarios/peak.toml"
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Choose the cheapest plan that meets every tier's SLO at peak.
    ///
    /// Example: planner solve scenarios/peak.toml --format json --out plan.json
    Solve(SolveArgs),
    /// Solve the scenario for every combination of swept values, with break-evens.
    ///
    /// Each `--set KEY=V1,V2,…` is an axis; every combination is a variant,
    /// solved like `planner solve --set` (variants share the capacity cache).
    /// One row per variant: total cost, cost per month, the reservation
    /// commitment per year, reserved GPUs by type, peak rented GPUs, API
    /// share, cost per 1M tokens per tier and replayed attainment. Where a
    /// decision (a tier to the API, a GPU type reserved) changes between
    /// neighbouring numeric values, the break-even is narrowed by bisection.
    /// Example: planner sweep scenarios/peak.toml
    /// --set api.usd_per_million_output_tokens=0.4,0.6,0.88 --set demand[1].scale=2,4
    Sweep(SweepArgs),
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
    /// Compare one replica's capacity by the queueing model and the simulator, and show the fleet step functions.
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
    /// Predict the time of one engine step and its parts.
    ///
    /// The step is P prompt tokens of one new sequence (--prefill P; the step
    /// completes the prompt, so it yields one logit) plus B sequences
    /// decoding one token each at C tokens of context (--decode B --context
    /// C), on one replica of --tp × --attention-dp GPUs running --engine.
    /// The figures are predictions (docs/model.md §2, §2.1, §2.2), not
    /// measurements: weight GEMMs, a mixture of experts' expert GEMMs (the
    /// experts the step touches, on the busiest GPU) and all-to-all,
    /// attention, all-reduces and the fixed GPU time per layer are GPU time,
    /// and a mixture's per-expert set-up on a step without a captured graph
    /// is a floor under it;
    /// the engine's CPU time per step overlaps the GPU's step where the
    /// engine schedules asynchronously (`cpu_overlaps_gpu` in its profile:
    /// vLLM, SGLang and TensorRT-LLM as shipped) and adds to it otherwise
    /// (the eager `--engine roofline`). Examples:
    /// planner perf --model llama-3.1-8b --gpu h200 --decode 256 --context 2000;
    /// planner perf --model deepseek-v3 --gpu h200 --tp 8 --ep 8 --precision fp8 --engine sglang --decode 64 --context 1000
    Perf(PerfArgs),
    /// Predict the benchmark `vllm bench serve` would measure on one replica
    /// or one disaggregated unit.
    ///
    /// A closed-loop client (--max-concurrency N: every prompt queued at time
    /// 0 behind N slots, as vLLM's client does) or an open-loop one
    /// (--request-rate R, a Poisson process; inf sends all at once) against
    /// one replica of --tp × --attention-dp GPUs (--ep for a mixture of
    /// experts) running --engine (CUDA graphs, custom all-reduce, overlapped
    /// CPU, the engine's scheduler, docs/model.md §2.1, §2.2), simulated step
    /// by step; with --prefill-workers and --decode-workers, against a unit
    /// of that many prefill and decode workers behind a router, each prompt's
    /// KV cache moved between them (docs/model.md §4.3). Prints vLLM's summary; --format json
    /// writes the keys of its --save-result file, which `planner goodput`
    /// reads. A list --max-concurrency 1,2,4,...,512 with --ttft-ms and
    /// --tpot-ms names the highest concurrency at which the limits still hold.
    /// Example: planner predict --model qwen3-32b --gpu h100-sxm --tp 2
    /// --max-concurrency 1,2,4,8,16,32,64 --ttft-ms 500 --tpot-ms 30
    Predict(Box<PredictArgs>),
}

/// Where and how a report is written.
#[derive(Debug, Args)]
pub(crate) struct OutputArgs {
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

/// Runs the command line and returns the exit code.
pub fn main_with_exit_code() -> i32 {
    output::install_signal_cleanup();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            note!("error: {e}");
            e.exit_code()
        }
    }
}

/// Runs one parsed command.
pub(crate) fn run(cli: Cli) -> Result<(), PlannerError> {
    match cli.command {
        Command::Solve(args) => plan::solve(&args),
        Command::Sweep(args) => sweep::sweep(&args),
        Command::Trace(TraceCommand::Stats(args)) => trace::stats(&args),
        Command::Trace(TraceCommand::Synth(args)) => trace::synth(&args),
        Command::Trace(TraceCommand::Shape(args)) => trace::shape(&args),
        Command::Trace(TraceCommand::Aggregate(args)) => trace_aggregate::aggregate(&args),
        Command::Bench(args) => plan::bench(&args),
        Command::Simulate(args) => simulate::simulate(&args),
        Command::Capacity(args) => plan::capacity(&args),
        Command::Goodput(args) => goodput::goodput(&args),
        Command::Calibrate(args) => {
            calibrate::profiles_present(&args)?;
            if args.runs.is_empty() {
                calibrate::calibrate(&args)
            } else {
                calibrate_runs::calibrate_runs(&args)
            }
        }
        Command::Perf(args) => perf::perf(&args),
        Command::Predict(args) => predict::predict(&args),
    }
}

/// Refuses a result holding a non-finite figure, or a negative cost or
/// latency, before anything is printed or written.
fn finite<T: serde::Serialize + ?Sized>(result: &T) -> Result<(), PlannerError> {
    crate::base::finite::check(result).map_err(PlannerError::Figure)
}

/// Writes a finished report to standard output.
fn emit(text: &str) -> Result<(), PlannerError> {
    crate::cli::output::emit_stdout(text)
}
