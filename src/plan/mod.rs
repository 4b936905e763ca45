//! The plan: what the optimiser chose — GPUs reserved for the horizon and
//! rented slot by slot, the configurations that serve each tier with their
//! replicas, the API's share — and what that costs. What a report says of
//! it besides (cost per token, the commitment, the alternatives, the
//! replay's findings) is computed from it by `money` and `replay`; [`file`]
//! is its form on disk.

pub(crate) mod file;
pub(crate) mod launch;
mod operations;
pub(crate) mod switches;

pub(crate) use operations::{DeploymentRun, Operations};

use crate::capacity::Config;
use crate::milp::{Method, SolveStatus};
use serde::Serialize;
use std::collections::BTreeMap;

/// The decision and its own costs.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The scenario's `name`.
    pub scenario: String,
    /// The served model; for a pooled fleet, the pool (`models` names each).
    pub model: ModelSummary,
    /// Per model of a pooled fleet, by its id (empty with one model).
    pub models: BTreeMap<String, ModelSummary>,
    pub total_cost_usd: f64,
    pub cost_per_month_usd: f64,
    pub horizon_hours: f64,
    pub slot_hours: f64,
    pub costs: CostBreakdown,
    /// GPU type → reserved GPUs (held for the whole horizon).
    pub reserved: BTreeMap<String, u32>,
    /// Per slot: GPU type → GPUs rented on demand beyond the reserved ones.
    pub on_demand: Vec<BTreeMap<String, u32>>,
    /// Per slot: GPU type → spot GPUs requested (`None` when none are).
    pub spot: Option<Vec<BTreeMap<String, u32>>>,
    /// Per tier: configurations used and shares.
    pub tiers: BTreeMap<String, TierPlan>,
    /// Share of all requests over the horizon sent to the API.
    pub api_share: f64,
    /// Total cost over all output tokens of the horizon, per 1,000.
    pub cost_per_1k_output_tokens_usd: f64,
    /// Output tokens over the horizon (mean rates × slot length × mean output).
    pub output_tokens: f64,
    /// Mean traffic served on GPUs over the SLO capacity paid for (0-1).
    pub gpu_utilisation: f64,
    /// Reserved GPU-hours no replica occupies, with and without the
    /// deadline tiers' replicas (present when a tier has a deadline).
    pub idle_reserved: Option<IdleReserved>,
    pub solver: SolverSummary,
    /// The deployments and vendors under the scenario's price for
    /// complexity (`None` until a round prices them).
    pub operations: Option<Operations>,
}

impl Plan {
    /// Whether `other` holds the same GPUs and replicas and sends the same
    /// shares to the API in every slot.
    pub fn same_fleets(&self, other: &Plan) -> bool {
        let fleets = |p: &Plan| {
            p.tiers
                .iter()
                .map(|(name, t)| {
                    let configs: Vec<(String, Vec<u32>)> = t
                        .configurations
                        .iter()
                        .map(|c| (c.label.clone(), c.replicas_by_slot.clone()))
                        .collect();
                    (name.clone(), configs, t.api_share_by_slot.clone())
                })
                .collect::<Vec<_>>()
        };
        self.reserved == other.reserved
            && self.on_demand == other.on_demand
            && fleets(self) == fleets(other)
    }

    /// Most replicas (all configurations together) `tier` holds in any slot.
    pub fn max_replicas(&self, tier: &str) -> u32 {
        let Some(t) = self.tiers.get(tier) else {
            return 0;
        };
        let slots = t
            .configurations
            .iter()
            .map(|c| c.replicas_by_slot.len())
            .max()
            .unwrap_or(0);
        (0..slots)
            .map(|s| t.configurations.iter().map(|c| c.replicas_by_slot[s]).sum())
            .max()
            .unwrap_or(0)
    }

    /// Per slot, the share of `tier`'s peak the plan serves on GPUs.
    pub fn gpu_share(&self, tier: &str) -> Vec<f64> {
        self.tiers[tier]
            .api_share_by_slot
            .iter()
            .map(|a| 1.0 - a)
            .collect()
    }
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

/// The served model.
#[derive(Debug, Clone, Serialize)]
pub struct ModelSummary {
    pub id: String,
    pub name: String,
    pub precision: String,
    /// The speculative decoding searched beside running without
    /// (`[model] speculative`), with where its acceptance rate comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speculative: Option<crate::scenario::SpeculativeChoice>,
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

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// How one tier is served.
#[derive(Debug, Clone, Serialize)]
pub struct TierPlan {
    /// The model the tier serves, in a pooled fleet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub configurations: Vec<ConfigUse>,
    /// The replay rounds' factor the tier's figures were read with: its
    /// fleets are sized for the demand divided by it (1 before any round
    /// moved it; slots of windows that missed carry a further factor).
    pub capacity_factor: f64,
    /// Share of the tier's requests over the horizon sent to the API.
    pub api_share: f64,
    pub api_share_by_slot: Vec<f64>,
}

/// One configuration serving a tier.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigUse {
    /// [`Config::label`].
    #[serde(rename = "config")]
    pub label: String,
    #[serde(flatten)]
    pub config: Config,
    pub gpus_per_replica: u32,
    /// Requests/s one replica sustains in the configuration's largest fleet
    /// by the simulated figures (the fleet step function at that size over
    /// its replicas, before the replay rounds' factor: what a benchmark of
    /// one replica is asked for; the router's weight).
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
