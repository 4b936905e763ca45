//! One sweep variant's figures, taken from its solved plan, and the
//! decisions whose change between variants marks a break-even.

use crate::solve::outcome::MissedTarget;
use crate::solve::Outcome;
use serde::Serialize;
use std::collections::BTreeMap;

/// A swept key's value in one variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Setting {
    pub key: String,
    pub value: String,
}

/// One tier's figures in a variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowTier {
    /// Share of the tier's requests sent to the API (0-1).
    pub api_share: f64,
    /// The tier's cost per 1M input + output tokens.
    pub usd_per_million_tokens: f64,
    /// The tier's cost per 1M output tokens.
    pub usd_per_million_output_tokens: f64,
    /// Replayed attainment of both limits (0-1) of the requests served on
    /// GPUs; `None` without a replay, or when none was (all to the API).
    pub attainment: Option<f64>,
    /// Whether the replay met the tier's target; `None` without a replay.
    pub meets_target: Option<bool>,
}

/// The figures of one solved variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    pub total_cost_usd: f64,
    pub cost_per_month_usd: f64,
    /// Reserved GPUs × reserved price × 8,760 h.
    pub commitment_usd_per_year: f64,
    /// GPU type → reserved GPUs (every type of the scenario).
    pub reserved: BTreeMap<String, u32>,
    /// GPU type → most GPUs rented on demand in any slot.
    pub peak_on_demand: BTreeMap<String, u32>,
    /// Share of all requests sent to the API.
    pub api_share: f64,
    /// Cost per 1M input + output tokens, all tiers.
    pub usd_per_million_tokens: f64,
    pub tiers: BTreeMap<String, RowTier>,
    /// Tiers whose replay missed the target.
    pub missed_targets: Vec<MissedTarget>,
    /// The cost over the commitment term, when the variant states one:
    /// with `[commitment] monthly_growth` the projection's total, else the
    /// horizon's cost per month × the term's months (the pattern repeated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub term_usd: Option<f64>,
}

impl Figures {
    /// The figures of a solved plan.
    pub fn of(outcome: &Outcome) -> Figures {
        let plan = &outcome.plan;
        let peak_on_demand = plan
            .reserved
            .keys()
            .map(|gpu| {
                let peak = plan
                    .on_demand
                    .iter()
                    .map(|slot| slot.get(gpu).copied().unwrap_or(0))
                    .max()
                    .unwrap_or(0);
                (gpu.clone(), peak)
            })
            .collect();
        let tiers = plan
            .tiers
            .iter()
            .map(|(name, t)| {
                let unit = outcome.unit_costs.tiers.get(name);
                let replay = outcome
                    .verification
                    .as_ref()
                    .and_then(|v| v.tiers.get(name));
                (
                    name.clone(),
                    RowTier {
                        api_share: t.api_share,
                        usd_per_million_tokens: unit.map_or(0.0, |u| u.usd_per_million_tokens),
                        usd_per_million_output_tokens: unit
                            .map_or(0.0, |u| u.usd_per_million_output_tokens),
                        attainment: replay
                            .filter(|r| r.served_requests > 0)
                            .map(|r| r.attainment),
                        meets_target: replay.map(|r| r.meets_target),
                    },
                )
            })
            .collect();
        Figures {
            total_cost_usd: plan.total_cost_usd,
            cost_per_month_usd: plan.cost_per_month_usd,
            commitment_usd_per_year: outcome.commitment.usd_per_year,
            reserved: plan.reserved.clone(),
            peak_on_demand,
            api_share: plan.api_share,
            usd_per_million_tokens: outcome.unit_costs.total.usd_per_million_tokens,
            tiers,
            missed_targets: outcome.missed_targets.clone(),
            term_usd: match (&outcome.commitment.growth, outcome.commitment.term_months) {
                (Some(g), _) => Some(g.total_usd),
                (None, Some(months)) => Some(plan.cost_per_month_usd * f64::from(months)),
                (None, None) => None,
            },
        }
    }

    /// The decisions a buyer reads off a plan, each with whether it holds:
    /// per tier, whether some (≥ 1%) and whether most (≥ 50%) of its
    /// requests go to the API; per GPU type, whether any is reserved.
    pub fn decisions(&self) -> Vec<(Decision, bool)> {
        let mut out = Vec::new();
        for (tier, t) in &self.tiers {
            out.push((Decision::ApiAny(tier.clone()), t.api_share >= API_ANY));
            out.push((Decision::ApiMost(tier.clone()), t.api_share >= API_MOST));
        }
        for (gpu, &n) in &self.reserved {
            out.push((Decision::Reserve(gpu.clone()), n > 0));
        }
        out
    }
}

/// Share of a tier's requests from which it "sends some" to the API (1%:
/// a share a buyer would notice, above a plan's stray slots).
pub(crate) const API_ANY: f64 = 0.01;
/// Share of a tier's requests from which it "sends most" to the API.
pub(crate) const API_MOST: f64 = 0.5;

/// A yes-or-no choice of a plan.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", content = "subject", rename_all = "kebab-case")]
pub enum Decision {
    /// The tier sends at least 1% of its requests to the API.
    ApiAny(String),
    /// The tier sends at least half of its requests to the API.
    ApiMost(String),
    /// The plan reserves GPUs of this type.
    Reserve(String),
}

impl Decision {
    /// The decision in words, as it reads when it holds.
    pub fn describe(&self, holds: bool) -> String {
        match (self, holds) {
            (Decision::ApiAny(t), true) => {
                format!("`{t}` sends 1% or more of its requests to the API")
            }
            (Decision::ApiAny(t), false) => {
                format!("`{t}` sends less than 1% of its requests to the API")
            }
            (Decision::ApiMost(t), true) => format!("`{t}` sends most of its requests to the API"),
            (Decision::ApiMost(t), false) => {
                format!("`{t}` serves most of its requests on GPUs")
            }
            (Decision::Reserve(g), true) => format!("reserving {g} pays"),
            (Decision::Reserve(g), false) => format!("no {g} is reserved"),
        }
    }
}

/// One variant of a sweep: its settings and its figures, or why it has none.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepRow {
    pub settings: Vec<Setting>,
    /// `None` when the variant could not be solved (see `error`).
    pub figures: Option<Figures>,
    /// Why the variant has no plan (no plan meets it, or the solver failed).
    pub error: Option<String>,
}
