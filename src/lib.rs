//! `planner`: a capacity planner for LLM inference serving.
//!
//! The pipeline, one folder per stage, each reading only the stages above it
//! in this list:
//!
//! 0. `base`: errors and exit codes, accepted ranges, the finite check,
//!    text and TOML files, statistics, parallel work, progress, numbers.
//! 1. `profiles`: GPU and model profiles (`profiles/*.toml`).
//! 2. [`traces`]: request traces (Azure CSV, Mooncake JSONL, BurstGPT), their
//!    statistics, rate curves and the aggregate demand tables.
//! 3. [`perf`]: the step model (prefill, decode and mixed engine steps; runs
//!    of decode steps in closed form), its roofline ceiling and its fit to
//!    measured kernel timings.
//! 4. `sim`: the discrete-event simulator of continuous batching.
//! 5. `milp`: the optimiser (good_lp + HiGHS) over its own sets and prices.
//! 6. [`scenario`]: the declarative TOML scenario, validated.
//! 7. `demand`: per-tier, per-slot arrival rates from the traces, and the
//!    workloads the replay runs.
//! 8. `capacity`: per configuration and tier, what one replica and fleets of
//!    1…N replicas sustain under the tier's SLO (by simulation or queueing),
//!    checked against published throughput.
//! 9. `plan`: the decision the optimiser made, the plan file and the
//!    schedule slot by slot.
//! 10. `money`: the alternatives, cost per token, commitment and growth.
//! 11. `replay`: the plan replayed against the traces, and goodput of
//!     measured logs.
//! 12. [`solve`]: stages 6-11 in order, re-solved while a tier misses.
//! 13. `sweep`: a grid of `--set` variants solved, with break-evens.
//! 14. [`report`]: text, JSON, CSV and HTML.
//! 15. `cli`: the command-line front end ([`main_with_exit_code`]).
//!
//! A library user loads a scenario ([`scenario::load`]), solves it
//! ([`solve::solve`]) into an [`solve::Outcome`], and renders it
//! ([`report`]); [`traces`] reads request traces and aggregates, [`perf`]
//! predicts engine steps.

/// `eprintln!` that ignores a standard error closed or failing under it: a
/// note on standard error must not turn a finished command into a panic
/// (`planner simulate … 2>&1 >/dev/null | head -1`).
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub(crate) mod base;
pub(crate) mod capacity;
pub(crate) mod cli;
pub(crate) mod demand;
pub(crate) mod milp;
pub(crate) mod money;
pub mod perf;
pub(crate) mod plan;
pub(crate) mod profiles;
pub(crate) mod replay;
pub mod report;
pub mod scenario;
pub(crate) mod sim;
pub mod solve;
pub(crate) mod sweep;
pub mod traces;

pub use base::error::{
    PlannerError, EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_INFEASIBLE, EXIT_OK, EXIT_TARGET_MISSED,
};
pub use base::located::Problem;
pub use cli::main_with_exit_code;
