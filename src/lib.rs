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
//! 4. [`perf`] is the roofline latency model (prefill time, decode step time).
//! 5. [`capacity`] finds, per configuration and tier, the highest arrival rate one
//!    replica sustains while the tier's percentile TTFT and TPOT limits hold.
//! 6. [`milp`] chooses reserved and on-demand GPUs, configurations and the API
//!    share at minimum cost (good_lp + HiGHS).
//! 7. [`plan`] assembles the chosen plan with its costs; [`baselines`] prices the
//!    simple alternatives.
//! 8. [`report`] renders the plan as text or JSON.
//!
//! [`solve`] runs stages 1-8 in order; [`cli`] is the command-line front end.

pub mod baselines;
pub mod calibrate;
pub mod capacity;
pub mod cli;
pub mod demand;
pub mod error;
pub mod goodput;
pub mod kernels;
pub mod milp;
pub mod perf;
pub mod plan;
pub mod plan_file;
pub mod profiles;
pub mod progress;
pub mod replay;
pub mod report;
pub mod scenario;
pub mod shape;
pub mod sim;
pub mod simcap;
pub mod solve;
pub mod stats;
pub mod traces;
