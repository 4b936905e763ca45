//! The chosen plan with its costs and the inputs that produced it, in the form
//! the reports print (text) and serialise (JSON).

pub mod file;
pub mod schedule;

use crate::capacity::CapacityEntry;
use crate::demand::{Demand, TierDemand};
use crate::milp::{Method, SolveStatus};
use crate::money::baselines::Baseline;
use crate::profiles::precision::Precision;
use crate::replay::verification::Verification;
use crate::scenario::ApiOffer;
use serde::Serialize;
use std::collections::BTreeMap;

/// Everything `planner solve` reports. Field names are the JSON keys.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub scenario: String,
    /// Tiers whose replay missed their attainment target, in words; empty
    /// when every target was met (or the replay was switched off).
    pub missed_targets: Vec<String>,
    pub model: ModelSummary,
    pub total_cost_usd: f64,
    pub cost_per_month_usd: f64,
    pub horizon_hours: f64,
    pub slot_hours: f64,
    pub costs: CostBreakdown,
    /// GPU type → reserved GPUs (held for the whole horizon).
    pub reserved: BTreeMap<String, u32>,
    /// Per slot: GPU type → GPUs rented on demand beyond the reserved ones.
    pub on_demand: Vec<BTreeMap<String, u32>>,
    /// Per slot: GPU type → spot GPUs requested (absent when none are).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spot: Option<Vec<BTreeMap<String, u32>>>,
    /// Per tier: configurations used and shares.
    pub tiers: BTreeMap<String, TierPlan>,
    /// Per tier: the latency promise the plan keeps.
    pub slo: BTreeMap<String, crate::scenario::Tier>,
    /// Share of all requests over the horizon sent to the API.
    pub api_share: f64,
    /// Total cost over all output tokens of the horizon, per 1,000.
    pub cost_per_1k_output_tokens_usd: f64,
    /// Output tokens over the horizon (mean rates × slot length × mean output).
    pub output_tokens: f64,
    /// USD per 1M tokens per tier and in total, beside the API's price for
    /// the same tokens.
    pub unit_costs: crate::money::unit_costs::UnitCosts,
    /// What the reserved GPUs commit to, in USD per year.
    pub commitment: crate::money::commitment::Commitment,
    /// Mean traffic served on GPUs over the SLO capacity paid for (0-1).
    pub gpu_utilisation: f64,
    /// Reserved GPU-hours no replica occupies, with and without the
    /// deadline tiers' replicas (present when a tier has a deadline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_reserved: Option<IdleReserved>,
    pub baselines: BTreeMap<String, Baseline>,
    pub solver: SolverSummary,
    pub demand_method: String,
    pub demand: BTreeMap<String, DemandSummary>,
    pub capacity: BTreeMap<String, Vec<CapacityEntry>>,
    pub prices: Prices,
    pub questions: Questions,
    /// The replay of the traces against this plan (absent when switched off).
    pub verification: Option<Verification>,
    /// Solve-and-replay rounds, the last being this plan.
    pub rounds: Vec<Round>,
    /// The scenario solved again with some tiers kept off the API, when the
    /// rounds had to tighten a tier that sends traffic to it (see
    /// [`WithoutApi`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub without_api: Option<WithoutApi>,
}

/// A tier whose plan sends part of its traffic to the API runs smaller
/// fleets, which pool its bursts less than the figures they were sized from
/// assumed; when the replay rounds had to tighten such a tier, the scenario
/// is solved again with it kept off the API (its fleets then carry all of its
/// traffic), and the cheaper of the two plans that meets every target is
/// returned.
#[derive(Debug, Clone, Serialize)]
pub struct WithoutApi {
    /// The tiers kept off the API.
    pub tiers: Vec<String>,
    /// What the plan without the API for them costs over the horizon.
    pub total_cost_usd: f64,
    /// Whether its replay met every tier's target.
    pub meets_targets: bool,
    /// What the plan with the API (as the scenario allows it) costs.
    pub with_api_total_cost_usd: f64,
    /// Whether its replay met every tier's target.
    pub with_api_meets_targets: bool,
    /// The rounds of the plan that is not this one.
    pub other_rounds: Vec<Round>,
    /// Whether this plan is the one without the API.
    pub chosen: bool,
}

/// Reserved GPU-hours left idle by the plan.
#[derive(Debug, Clone, Serialize)]
pub struct IdleReserved {
    /// Σ over slots and GPU types of (reserved − GPUs the replicas occupy,
    /// at least 0) × slot hours.
    pub gpu_hours: f64,
    /// The same with the deadline tiers' replicas taken out of the plan:
    /// the difference is what the batch volume fills.
    pub gpu_hours_without_deadline_tiers: f64,
}

/// One solve-and-replay round.
#[derive(Debug, Clone, Serialize)]
pub struct Round {
    pub round: u32,
    pub total_cost_usd: f64,
    /// Per tier: the factor its capacity coefficients were multiplied by.
    pub capacity_factor: BTreeMap<String, f64>,
    /// Per tier: attainment on replay.
    pub attainment: BTreeMap<String, f64>,
}

/// The served model.
#[derive(Debug, Clone, Serialize)]
pub struct ModelSummary {
    pub id: String,
    pub name: String,
    pub precision: String,
}

/// Where the money goes.
#[derive(Debug, Clone, Serialize)]
pub struct CostBreakdown {
    pub reserved_usd: f64,
    pub on_demand_usd: f64,
    pub api_usd: f64,
    /// Granted spot GPUs × spot price (absent when no spot GPU is used).
    #[serde(skip_serializing_if = "is_zero")]
    pub spot_usd: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// How one tier is served.
#[derive(Debug, Clone, Serialize)]
pub struct TierPlan {
    pub configurations: Vec<ConfigUse>,
    /// Share of the tier's requests over the horizon sent to the API.
    pub api_share: f64,
    pub api_share_by_slot: Vec<f64>,
}

/// One configuration serving a tier.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigUse {
    pub config: String,
    pub gpu_type: String,
    pub tensor_parallel: u32,
    pub max_batch: u32,
    /// Chunked-prefill budget: most tokens per engine step.
    pub max_batched_tokens: u32,
    pub precision: Precision,
    pub gpus_per_replica: u32,
    /// Requests/s one replica sustains in the configuration's largest fleet
    /// (the fleet step function at that size over its replicas; the
    /// router's weight).
    pub rps_per_replica: f64,
    /// Per slot, the requests/s each replica covers there (`mu[c,t]`: the
    /// slot's rate over the replicas the fleet step function says it needs).
    pub rps_per_replica_by_slot: Vec<f64>,
    /// Share of the tier's requests over the horizon this configuration serves.
    pub share: f64,
    pub replicas_by_slot: Vec<u32>,
    /// Per slot, spot replicas requested (empty when none are).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub spot_replicas_by_slot: Vec<u32>,
    /// Expected share of a requested spot replica's capacity over a slot:
    /// availability × uptime before an interruption (absent without spot).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spot_yield_share: Option<f64>,
}

/// The solver's status and settings.
#[derive(Debug, Clone, Serialize)]
pub struct SolverSummary {
    pub status: SolveStatus,
    /// How the MILP was solved: `monolithic` or `decomposed`.
    pub method: Method,
    /// A proven lower bound on the optimum's cost, USD.
    pub lower_bound_usd: f64,
    /// (cost − lower bound) / cost: how far from the optimum the plan is
    /// proven to be at most.
    pub proven_gap: f64,
    pub mip_gap_tolerance: f64,
    pub time_limit_s: f64,
    pub threads: u32,
    pub integer_variables: usize,
    pub slots: usize,
    /// Set when the MILP was solved over a growing commitment term of this
    /// many months: `status`, `lower_bound_usd` and `proven_gap` are then the
    /// term's cost's (`commitment.growth.total_usd`), not the horizon's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub term_months: Option<u32>,
}

/// Demand the optimiser used for one tier.
#[derive(Debug, Clone, Serialize)]
pub struct DemandSummary {
    pub peak_rps: Vec<f64>,
    pub mean_rps: Vec<f64>,
    pub input_tokens_per_s: Vec<f64>,
    pub output_tokens_per_s: Vec<f64>,
    #[serde(flatten)]
    pub tier: TierDemand,
}

/// Prices the optimiser used.
#[derive(Debug, Clone, Serialize)]
pub struct Prices {
    pub gpus: BTreeMap<String, GpuPrice>,
    pub api: Option<ApiOffer>,
}

/// Prices of one GPU type.
#[derive(Debug, Clone, Serialize)]
pub struct GpuPrice {
    pub reserved_usd_per_gpu_hour: Option<f64>,
    pub reserved_term: String,
    /// The reserved offer bought, when the scenario lists several
    /// (`reserved_usd_per_gpu_hour` is then its effective price).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserved_offer: Option<crate::scenario::reserved_offer::ChosenOffer>,
    pub on_demand_usd_per_gpu_hour: Option<f64>,
    pub max_gpus: Option<u32>,
    pub source: String,
    /// Spot terms, if the type is offered as spot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spot: Option<crate::scenario::SpotOffer>,
}

/// The four questions every plan answers (see the mission).
#[derive(Debug, Clone, Serialize)]
pub struct Questions {
    /// At which lengths, model and quality was the capacity obtained?
    pub capacity_basis: Vec<String>,
    /// How many requests and output tokens met both latency limits?
    pub slo_met: String,
    /// Cost over all output tokens, and over SLO-met output tokens.
    pub cost_basis: String,
    /// Does a speed-up change the number of GPUs?
    pub speedup: Vec<String>,
}

impl DemandSummary {
    /// The demand figures of one tier.
    pub fn of(t: &TierDemand) -> Self {
        let scale = |v: &[f64], f: f64| v.iter().map(|x| x * f).collect();
        DemandSummary {
            input_tokens_per_s: scale(&t.mean_rps, t.input_tokens.mean),
            output_tokens_per_s: scale(&t.mean_rps, t.output_tokens.mean),
            peak_rps: t.peak_rps.clone(),
            mean_rps: t.mean_rps.clone(),
            tier: t.clone(),
        }
    }
}

/// Output tokens of all tiers over the horizon.
pub fn total_output_tokens(demand: &Demand) -> f64 {
    demand
        .tiers
        .iter()
        .map(|t| t.output_tokens_total(demand.slot_hours()))
        .sum()
}
