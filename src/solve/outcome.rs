//! What `planner solve` returns: the plan and everything computed from it —
//! its cost per token, commitment and alternatives, the replay's findings,
//! the rounds that led to it, the facts behind the four questions — with the
//! inputs it was made on. Its serialisation is the JSON document of `solve
//! --format json` ([`OUTCOME_FORMAT`]).

use super::questions::Questions;
use super::record::{Round, WithoutApi};
use crate::capacity::CapacityEntry;
use crate::demand::summary::DemandSummary;
use crate::money::baselines::Baseline;
use crate::money::commitment::Commitment;
use crate::money::prices::Prices;
use crate::money::purchase::Purchase;
use crate::money::unit_costs::UnitCosts;
use crate::plan::launch::RunCommands;
use crate::plan::Plan;
use crate::replay::verification::Verification;
use crate::scenario::{Scenario, Tier};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::collections::BTreeMap;

/// Version of the JSON document `planner solve --format json` writes.
pub const OUTCOME_FORMAT: u32 = 1;

/// A solved scenario: the plan and what follows from it.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// What to sign for: reserve, rent, API, per year, deployment.
    pub purchase: Purchase,
    /// The MILP the plan solves (the seed band prices other reservations
    /// on it).
    pub(crate) milp: std::sync::Arc<super::RoundMilp>,
    pub plan: Plan,
    /// The scenario's tiers in its order (the reports list them so; not
    /// part of the document, whose maps are ordered by name).
    pub tier_order: Vec<String>,
    /// Tiers whose replay missed their attainment target; empty when every
    /// target was met (or the replay was switched off).
    pub missed_targets: Vec<MissedTarget>,
    /// Per tier: the latency promise the plan keeps.
    pub slo: BTreeMap<String, Tier>,
    /// USD per 1M tokens per tier and in total, beside the API's price for
    /// the same tokens.
    pub unit_costs: UnitCosts,
    /// What the reserved GPUs commit to, in USD per year (and over the term).
    pub commitment: Commitment,
    /// The simple alternatives, priced on fleets sized for the whole peak.
    pub baselines: BTreeMap<String, Baseline>,
    /// How the per-slot demand was built, in words.
    pub demand_method: String,
    pub demand: BTreeMap<String, DemandSummary>,
    /// Per tier: the capacity table the MILP read.
    pub capacity: BTreeMap<String, Vec<CapacityEntry>>,
    pub prices: Prices,
    pub questions: Questions,
    /// The replay of the traces against this plan (absent when switched off).
    pub verification: Option<Verification>,
    /// With `simulation.seed` apart from `simulation.capacity_seed`: the
    /// plan sized on the design seed's replays, checked on the replay's.
    pub design_check: Option<DesignCheck>,
    /// The reservation run on the days set aside (`[check] days`).
    pub held_out: Option<super::check::HeldOut>,
    /// Solve-and-replay rounds of the candidate this plan came from.
    pub rounds: Vec<Round>,
    /// The scenario solved again with some tiers kept off the API, when the
    /// rounds had to tighten a tier that sends traffic to it.
    pub without_api: Option<WithoutApi>,
    /// The scenario solved again with no disaggregated unit offered, when
    /// the plan with them deployed one (`solve::units`).
    pub without_units: Option<super::units::WithoutUnits>,
    /// Per tier and configuration: the engine's launch command and the
    /// benchmark that checks one replica's capacity figure.
    pub how_to_run: Vec<RunCommands>,
}

/// The plan sized on one seed's replays, checked on another's
/// (`super::design`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DesignCheck {
    /// The seed of the capacity figures and of the rounds' replays
    /// (`simulation.capacity_seed`).
    pub design_seed: u64,
    /// The seed of the replay that checked the plan (`simulation.seed`).
    pub seed: u64,
    /// Whether the plan sized on the design seed's replays met every target
    /// (every window) on this seed's replay.
    pub met: bool,
    /// That plan's cost over the horizon, USD.
    pub design_total_cost_usd: f64,
    /// Where it missed on this seed's replay (empty when it met); the plan
    /// returned was then sized again on this seed's replays.
    pub missed: Vec<MissedTarget>,
}

/// A tier whose replay missed its target: the figures its sentence is made of.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MissedTarget {
    pub tier: String,
    /// Share (0-1) of its GPU-served requests that met both limits.
    pub attainment: f64,
    /// Its requests the replay served on GPUs (0: none ran on a replica,
    /// so the attainment is of no request).
    pub served_requests: u64,
    /// The tier's percentile, its target in percent.
    pub percentile: f64,
    pub ttft_ms: f64,
    pub tpot_ms: f64,
    /// Its worst complete window (`tiers[].slo_window`) when that window
    /// is below the target (a tier can meet over the replay and miss a day).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst_window: Option<crate::replay::verification::Window>,
}

/// The tiers of `scenario` whose replay in `verification` missed its target.
pub fn missed_targets(
    scenario: &Scenario,
    verification: Option<&Verification>,
) -> Vec<MissedTarget> {
    let Some(v) = verification else {
        return Vec::new();
    };
    scenario
        .tiers
        .iter()
        .filter_map(|t| {
            let r = &v.tiers[&t.name];
            (!r.meets_target).then(|| MissedTarget {
                tier: t.name.clone(),
                attainment: r.attainment,
                served_requests: r.served_requests,
                percentile: t.percentile,
                ttft_ms: t.ttft_ms,
                tpot_ms: t.tpot_ms,
                worst_window: r.worst_window.filter(|w| w.complete && !w.meets_target),
            })
        })
        .collect()
}

impl Serialize for Outcome {
    /// The plan's fields and the derived ones, in the document's key order.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let p = &self.plan;
        let mut m = serializer.serialize_map(None)?;
        m.serialize_entry("outcome_format", &OUTCOME_FORMAT)?;
        m.serialize_entry("scenario", &p.scenario)?;
        m.serialize_entry("missed_targets", &self.missed_targets)?;
        m.serialize_entry("purchase", &self.purchase)?;
        m.serialize_entry("model", &p.model)?;
        if !p.models.is_empty() {
            m.serialize_entry("models", &p.models)?;
        }
        m.serialize_entry("total_cost_usd", &p.total_cost_usd)?;
        m.serialize_entry("cost_per_month_usd", &p.cost_per_month_usd)?;
        m.serialize_entry("horizon_hours", &p.horizon_hours)?;
        m.serialize_entry("slot_hours", &p.slot_hours)?;
        m.serialize_entry("costs", &p.costs)?;
        m.serialize_entry("reserved", &p.reserved)?;
        m.serialize_entry("on_demand", &p.on_demand)?;
        if let Some(spot) = &p.spot {
            m.serialize_entry("spot", spot)?;
        }
        m.serialize_entry("tiers", &p.tiers)?;
        m.serialize_entry("slo", &self.slo)?;
        m.serialize_entry("api_share", &p.api_share)?;
        m.serialize_entry(
            "cost_per_1k_output_tokens_usd",
            &p.cost_per_1k_output_tokens_usd,
        )?;
        m.serialize_entry("output_tokens", &p.output_tokens)?;
        m.serialize_entry("unit_costs", &self.unit_costs)?;
        m.serialize_entry("commitment", &self.commitment)?;
        m.serialize_entry("gpu_utilisation", &p.gpu_utilisation)?;
        if let Some(idle) = &p.idle_reserved {
            m.serialize_entry("idle_reserved", idle)?;
        }
        if let Some(ops) = &p.operations {
            m.serialize_entry("operations", ops)?;
        }
        m.serialize_entry("baselines", &self.baselines)?;
        m.serialize_entry("solver", &p.solver)?;
        m.serialize_entry("demand_method", &self.demand_method)?;
        m.serialize_entry("demand", &self.demand)?;
        m.serialize_entry("capacity", &self.capacity)?;
        m.serialize_entry("prices", &self.prices)?;
        m.serialize_entry("questions", &self.questions)?;
        m.serialize_entry("verification", &self.verification)?;
        if let Some(check) = &self.design_check {
            m.serialize_entry("design_check", check)?;
        }
        if let Some(h) = &self.held_out {
            m.serialize_entry("held_out", h)?;
        }
        m.serialize_entry("rounds", &self.rounds)?;
        if let Some(w) = &self.without_api {
            m.serialize_entry("without_api", w)?;
        }
        if let Some(w) = &self.without_units {
            m.serialize_entry("without_units", w)?;
        }
        m.serialize_entry("how_to_run", &self.how_to_run)?;
        m.end()
    }
}
