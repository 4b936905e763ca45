//! Costs in the units buyers compare: USD per 1M tokens (input and output
//! together, and output alone) per tier and in total, beside what the
//! per-token API would charge for the same tokens, and USD per 1,000 output
//! tokens.
//!
//! A tier's cost is its own API spend plus a share of the plan's GPU spend
//! (reserved and on-demand, idle reserved hours included). The share is the
//! tier's GPU-hours occupied (replicas × GPUs per replica × slot length),
//! each valued at its GPU type's hourly price (reserved where offered, else
//! on demand), over the same sum for all tiers; so the tiers' costs add up to
//! the plan's total.

use crate::demand::summary::DemandSummary;
use crate::money::prices::Prices;
use crate::plan::Plan;
use serde::Serialize;
use std::collections::BTreeMap;

/// One tier's (or all tiers') cost per token.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UnitCost {
    /// Cost allocated to the tier over the horizon.
    pub cost_usd: f64,
    /// Input (prompt) tokens over the horizon.
    pub input_tokens: f64,
    /// Output (generated) tokens over the horizon.
    pub output_tokens: f64,
    /// cost / (input + output tokens) × 1e6.
    pub usd_per_million_tokens: f64,
    /// cost / output tokens × 1e6: all cost charged to the output.
    pub usd_per_million_output_tokens: f64,
    /// cost / output tokens × 1e3 (the mission's unit; all output tokens,
    /// whether or not their request met the SLO).
    pub usd_per_1k_output_tokens: f64,
    /// What the API would charge for the same input and output tokens at
    /// its list prices (its rate limit and the tiers' permission ignored);
    /// `None` without an API offer.
    pub api_usd_for_same_tokens: Option<f64>,
    /// That API charge per 1M input + output tokens.
    pub api_usd_per_million_tokens: Option<f64>,
    /// That API charge per 1M output tokens.
    pub api_usd_per_million_output_tokens: Option<f64>,
}

/// Per-token costs of a plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UnitCosts {
    /// Tier → its per-token costs.
    pub tiers: BTreeMap<String, UnitCost>,
    /// All tiers together.
    pub total: UnitCost,
}

fn per(amount: f64, tokens: f64, unit: f64) -> f64 {
    if tokens > 0.0 {
        amount / tokens * unit
    } else {
        0.0
    }
}

fn unit_cost(
    cost_usd: f64,
    input_tokens: f64,
    output_tokens: f64,
    api: Option<(f64, f64)>,
) -> UnitCost {
    let api_usd =
        api.map(|(usd_in, usd_out)| (input_tokens * usd_in + output_tokens * usd_out) / 1e6);
    UnitCost {
        cost_usd,
        input_tokens,
        output_tokens,
        usd_per_million_tokens: per(cost_usd, input_tokens + output_tokens, 1e6),
        usd_per_million_output_tokens: per(cost_usd, output_tokens, 1e6),
        usd_per_1k_output_tokens: per(cost_usd, output_tokens, 1e3),
        api_usd_for_same_tokens: api_usd,
        api_usd_per_million_tokens: api_usd.map(|a| per(a, input_tokens + output_tokens, 1e6)),
        api_usd_per_million_output_tokens: api_usd.map(|a| per(a, output_tokens, 1e6)),
    }
}

/// The per-token costs of `plan`, from its schedule and the demand and
/// prices it was made on.
pub(crate) fn of(
    plan: &Plan,
    demand: &BTreeMap<String, DemandSummary>,
    prices: &Prices,
) -> UnitCosts {
    let slot_s = plan.slot_hours * 3600.0;
    let api_of = |tier: &str| {
        prices.api_for(tier).map(|a| {
            (
                a.usd_per_million_input_tokens,
                a.usd_per_million_output_tokens,
            )
        })
    };
    // Everything that is not API spend is GPU spend.
    let gpu_usd = plan.total_cost_usd - plan.costs.api_usd;
    let hourly = |gpu: &str| {
        prices.gpus.get(gpu).map_or(0.0, |p| {
            p.reserved_usd_per_gpu_hour
                .or(p.on_demand_usd_per_gpu_hour)
                .unwrap_or(0.0)
        })
    };
    // Per tier: (API spend, valued GPU-hours, input tokens, output tokens).
    let mut parts: BTreeMap<&str, (f64, f64, f64, f64)> = BTreeMap::new();
    for (name, tier) in &plan.tiers {
        let Some(d) = demand.get(name) else {
            continue;
        };
        let requests: f64 = d.mean_rps.iter().sum::<f64>() * slot_s;
        let input_tokens = requests * d.tier.input_tokens.mean;
        let output_tokens = requests * d.tier.output_tokens.mean;
        let api_requests: f64 = tier
            .api_share_by_slot
            .iter()
            .zip(&d.mean_rps)
            .map(|(share, rps)| share * rps * slot_s)
            .sum();
        let api_usd = api_of(name).map_or(0.0, |(usd_in, usd_out)| {
            api_requests * (d.tier.input_tokens.mean * usd_in + d.tier.output_tokens.mean * usd_out)
                / 1e6
        });
        let valued_gpu_hours: f64 = tier
            .configurations
            .iter()
            .map(|c| {
                let replica_hours: f64 = c
                    .replicas_by_slot
                    .iter()
                    .map(|&n| f64::from(n))
                    .sum::<f64>()
                    * plan.slot_hours;
                let spot_gpu_hours: f64 = c
                    .spot_replicas_by_slot
                    .iter()
                    .map(|&n| f64::from(n * c.gpus_per_replica))
                    .sum::<f64>()
                    * plan.slot_hours;
                let spot_value = prices
                    .gpus
                    .get(&c.config.gpu_type)
                    .and_then(|p| p.spot)
                    .map_or(0.0, |s| {
                        spot_gpu_hours * s.availability * s.usd_per_gpu_hour
                    });
                replica_hours * f64::from(c.gpus_per_replica) * hourly(&c.config.gpu_type)
                    + spot_value
            })
            .sum();
        parts.insert(
            name,
            (api_usd, valued_gpu_hours, input_tokens, output_tokens),
        );
    }
    let all_valued: f64 = parts.values().map(|p| p.1).sum();
    let tier_count = parts.len().max(1) as f64;
    let tiers: BTreeMap<String, UnitCost> = parts
        .iter()
        .map(|(name, &(api_usd, valued, input_tokens, output_tokens))| {
            // GPU spend with no GPU-hours to follow (nothing occupied) is
            // split evenly, so the tiers still add up to the total.
            let gpu_share = if all_valued > 0.0 {
                valued / all_valued
            } else {
                1.0 / tier_count
            };
            let cost = api_usd + gpu_usd * gpu_share;
            (
                name.to_string(),
                unit_cost(cost, input_tokens, output_tokens, api_of(name)),
            )
        })
        .collect();
    let input: f64 = tiers.values().map(|t| t.input_tokens).sum();
    let output: f64 = tiers.values().map(|t| t.output_tokens).sum();
    // The API's price for every tier's tokens: each at its model's API.
    let mut total = unit_cost(plan.total_cost_usd, input, output, None);
    let same: Option<f64> = tiers.values().map(|t| t.api_usd_for_same_tokens).sum();
    if let Some(a) = same.filter(|_| !tiers.is_empty()) {
        total.api_usd_for_same_tokens = Some(a);
        total.api_usd_per_million_tokens = Some(per(a, input + output, 1e6));
        total.api_usd_per_million_output_tokens = Some(per(a, output, 1e6));
    }
    UnitCosts { tiers, total }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_divide_the_same_cost_by_different_token_counts() {
        // 1,000 USD for 1e9 input and 2e8 output tokens; API at 0.5 / 1.5.
        let u = unit_cost(1000.0, 1e9, 2e8, Some((0.5, 1.5)));
        assert!((u.usd_per_million_tokens - 1000.0 / 1200.0).abs() < 1e-12);
        assert!((u.usd_per_million_output_tokens - 5.0).abs() < 1e-12);
        assert!((u.usd_per_1k_output_tokens - 0.005).abs() < 1e-12);
        assert_eq!(u.api_usd_for_same_tokens, Some(500.0 + 300.0));
        assert!((u.api_usd_per_million_tokens.unwrap() - 800.0 / 1200.0).abs() < 1e-12);
        assert!((u.api_usd_per_million_output_tokens.unwrap() - 4.0).abs() < 1e-12);
    }

    #[test]
    fn no_tokens_no_division_by_zero() {
        let u = unit_cost(10.0, 0.0, 0.0, None);
        assert_eq!(u.usd_per_million_tokens, 0.0);
        assert_eq!(u.api_usd_for_same_tokens, None);
    }
}
