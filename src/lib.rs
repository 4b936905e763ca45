//! `planner`: a capacity planner for LLM inference serving.
//!
//! The pipeline, one module per stage:
//!
//! 1. [`scenario`] reads and validates a declarative TOML scenario and the
//!    [`profiles`] it names (GPUs, models).
//! 2. [`traces`] streams request traces (Azure CSV, Mooncake JSONL) and computes
//!    their statistics; [`shape`] reads ServeGen rate curves.
//! 3. [`demand`] turns traces (and an optional rate curve) into per-tier,
//!    per-slot peak arrival rates.
//! 4. [`perf`] is the roofline latency model (prefill, decode and mixed engine
//!    steps; runs of decode steps in closed form), calibrated by [`kernels`]
//!    against measured kernel timings and by [`calibrate`] against published
//!    throughput.
//! 5. [`simcap`] finds, per configuration and tier, the highest arrival rate one
//!    replica, and then fleets of 1…N replicas behind the router
//!    ([`fleet_capacity`]), sustain while the tier's attainment target holds, by
//!    bisection in the simulator, never above the [`roofline`] ceiling;
//!    [`capacity`] is the closed-form queueing alternative.
//! 6. [`milp`] chooses reserved and on-demand GPUs, configurations and the API
//!    share at minimum cost (good_lp + HiGHS).
//! 7. [`plan`] assembles the chosen plan with its costs; [`baselines`] prices the
//!    simple alternatives; [`unit_costs`] states its cost per token and
//!    [`commitment`] what its reservations commit to per year; [`plan_file`] writes and reads plans.
//! 8. [`replay`] replays the traces against a plan in [`sim`], the discrete-event
//!    simulator of continuous batching, and reports attainment and goodput as a
//!    [`verification`], which the plan carries.
//! 9. [`report`] renders results as text or JSON; [`goodput`] counts goodput
//!    in measured per-request logs.
//!
//! [`solve`] runs stages 1-9 in order, re-solving with tighter capacity when a
//! tier misses its target on replay; [`cli`] is the command-line front end.

pub mod aggregate;
pub mod baselines;
pub mod bounds;
pub mod calibrate;
pub mod capacity;
pub mod cli;
pub mod commitment;
pub mod demand;
pub mod demand_source;
pub mod error;
pub mod finite;
pub mod fleet_capacity;
pub mod goodput;
pub mod growth;
pub mod kernels;
pub mod milp;
pub mod output;
pub mod parallel;
pub mod perf;
pub mod plan;
pub mod plan_file;
pub mod precision;
pub mod profiles;
pub mod progress;
pub mod replay;
pub mod report;
pub mod reserved_offer;
pub mod roofline;
pub mod scenario;
pub mod schedule;
pub mod shape;
pub mod sim;
pub mod simcap;
pub mod solve;
pub mod stats;
pub mod sweep;
#[cfg(test)]
mod testing;
pub mod text;
pub mod traces;
pub mod unit_costs;
pub mod verification;
