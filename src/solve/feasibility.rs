//! Why a scenario has no plan: tiers no configuration can serve, and quotas
//! too small for the busiest slot.

use crate::base::error::PlannerError;
use crate::capacity::{CapacityEntry, Verdict};
use crate::demand::Demand;
use crate::scenario::Scenario;

/// Fails when a tier with demand has neither a configuration that meets its
/// SLO nor the API, naming the best figures any configuration reaches.
pub(super) fn check_servable(
    scenario: &Scenario,
    demand: &Demand,
    capacity: &[Vec<CapacityEntry>],
) -> Result<(), PlannerError> {
    let mut unserved = Vec::new();
    for (k, tier) in scenario.tiers.iter().enumerate() {
        let serves = capacity[k]
            .iter()
            .any(|e| matches!(e.verdict, Verdict::Serves(_)) || e.fleet.is_some());
        let api = scenario.api_of(k).is_some() && tier.api_allowed;
        let has_demand = demand.tiers[k].peak_rps.iter().any(|&r| r > 0.0);
        if serves || api || !has_demand {
            continue;
        }
        let (ttft, tpot) = capacity[k]
            .iter()
            .fold((f64::INFINITY, f64::INFINITY), |(a, b), e| {
                match &e.verdict {
                    Verdict::Cannot {
                        best_ttft_ms: Some(t),
                        best_tpot_ms: Some(p),
                        ..
                    } => (a.min(*t), b.min(*p)),
                    _ => (a, b),
                }
            });
        let detail = if ttft.is_finite() {
            format!(
                "the best any configuration reaches, even unloaded, is p{} TTFT {:.0} ms (limit {} ms) and TPOT {:.1} ms (limit {} ms)",
                tier.percentile, ttft, tier.ttft_ms, tpot, tier.tpot_ms
            )
        } else {
            let reasons: Vec<String> = capacity[k]
                .iter()
                .filter_map(|e| match &e.verdict {
                    Verdict::Cannot { reason, .. } => {
                        Some(format!("{}: {reason}", e.config.label()))
                    }
                    Verdict::Serves(_) => None,
                })
                .take(3)
                .collect();
            format!(
                "no configuration fits the model and the tier's requests ({})",
                reasons.join("; ")
            )
        };
        // The API is off for this tier: not offered, or not allowed to it.
        let api_hint = if scenario.api_of(k).is_none() && scenario.pooled() {
            "give its model's `[[models]]` entry an API offer (`[models.api]`) so that its requests can go to an API"
        } else if scenario.api_of(k).is_none() {
            "add an `[api]` table so that its requests can go to an API"
        } else {
            "allow the API for this tier (`api_allowed = true`)"
        };
        unserved.push(format!(
            "tier `{}` cannot be served: {detail}. Relax the tier's limits, offer a faster GPU type or larger tensor-parallel degrees, or {api_hint}",
            tier.name
        ));
    }
    if unserved.is_empty() {
        Ok(())
    } else {
        Err(PlannerError::Infeasible(unserved.join("\n")))
    }
}

pub(super) fn explain_infeasible(scenario: &Scenario, demand: &Demand) -> String {
    let busiest = (0..demand.slots)
        .max_by(|&a, &b| {
            let sum = |t: usize| demand.tiers.iter().map(|d| d.peak_rps[t]).sum::<f64>();
            sum(a).total_cmp(&sum(b))
        })
        .unwrap_or(0);
    let quotas: Vec<String> = scenario
        .gpus
        .iter()
        .filter_map(|g| g.max_gpus.map(|m| format!("{} ≤ {m}", g.id)))
        .collect();
    format!(
        "the GPU quotas ({}) and the API rate limit cannot cover the demand; the busiest slot is {busiest} with {}. Raise `max_gpus`, add a GPU type, or allow more API traffic",
        if quotas.is_empty() { "none".into() } else { quotas.join(", ") },
        demand.tiers.iter().map(|d| format!("{} {:.2} req/s", d.tier, d.peak_rps[busiest])).collect::<Vec<_>>().join(", ")
    )
}
