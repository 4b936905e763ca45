//! The four questions every plan answers (see the mission), as facts: the
//! numbers and configurations behind each answer. `report` turns them into
//! sentences; questions 2 and 3 are answered by the replay's findings
//! (`verification`) themselves.

use crate::capacity::Config;
use serde::Serialize;

/// The facts behind the four answers.
#[derive(Debug, Clone, Serialize)]
pub struct Questions {
    /// 1. At which lengths, model and quality was the capacity obtained? One
    ///    entry per tier.
    pub capacity_basis: Vec<CapacityBasis>,
    /// 4. Does a speed-up change the number of GPUs? One entry per speed
    ///    factor and configuration running at a tier's busiest slot.
    pub speedup: Vec<Speedup>,
    /// The plan's reservation and cost at each speed factor.
    pub speed_plans: Vec<SpeedPlan>,
}

/// The plan at another speed of the GPU types it runs: the MILP solved
/// again on their figures scaled by the probes' replica ratio (not replayed).
#[derive(Debug, Clone, Serialize)]
pub struct SpeedPlan {
    /// FLOPS and bandwidth × (1 + this); negative for a slow-down.
    pub faster_by: f64,
    /// The GPU types scaled.
    pub gpu_types: Vec<String>,
    pub reserved: std::collections::BTreeMap<String, u32>,
    pub total_cost_usd: f64,
    /// `total_cost_usd` over the plan's, less 1.
    pub vs_plan: f64,
}

/// How one tier's capacity was obtained.
#[derive(Debug, Clone, Serialize)]
pub struct CapacityBasis {
    pub tier: String,
    /// The served model's name.
    pub model: String,
    /// In a pooled fleet, the index of the tier's `[[models]]` entry (what
    /// its keys are named by).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_entry: Option<usize>,
    pub input_tokens_mean: f64,
    pub input_tokens_p99: u64,
    pub output_tokens_mean: f64,
    pub output_tokens_p99: u64,
    /// Arrival CV within minutes, as the capacity search ran it.
    pub within_minute_cv: f64,
    /// The tier's limits: p`percentile` TTFT ≤ `ttft_ms`, TPOT ≤ `tpot_ms`.
    pub percentile: f64,
    pub ttft_ms: f64,
    pub tpot_ms: f64,
    /// The configurations the plan runs for the tier (empty: none on GPUs).
    pub runs: Vec<Config>,
    /// Beside each of `runs`, the share of the sampled prompt tokens its
    /// capacity search found in a replica's prefix cache (`None`: no prefix
    /// caching counted).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prefix_shares: Vec<Option<f64>>,
}

/// What a faster GPU would change for one configuration at its tier's
/// busiest slot.
#[derive(Debug, Clone, Serialize)]
pub struct Speedup {
    pub tier: String,
    /// [`Config::label`] of the configuration.
    pub config: String,
    /// Replicas the plan runs there, and GPUs per replica.
    pub replicas: u32,
    pub gpus_per_replica: u32,
    /// The speed tried: FLOPS and bandwidth × (1 + this); negative for a
    /// slow-down.
    pub faster_by: f64,
    /// Replicas the same traffic needs with it; `null` when, slowed, no
    /// fleet of the configuration keeps the tier's limits.
    pub replicas_after: Option<u32>,
}

/// A configuration whose speed-up question is asked: the capacity entry
/// (its index in the round's table), the replicas it runs at the tier's
/// busiest slot, and the requests/s the plan credits them with there,
/// before the replay rounds' factor.
#[derive(Debug, Clone)]
pub struct SpeedupCase {
    pub tier: usize,
    pub entry: usize,
    pub replicas: u32,
    pub gpus_per_replica: u32,
    pub served_rps: f64,
}
