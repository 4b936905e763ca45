//! Costs in the units buyers compare: USD per 1M tokens (input and output
//! together, and output alone) per tier and in total, beside what the
//! per-token API would charge for the same tokens, and USD per 1,000 output
//! tokens.
//!
//! A tier's cost is its own API spend plus a share of the plan's GPU spend
//! (reserved and on-demand, idle reserved hours included), split where it is
//! spent: each GPU type's spend in each slot (its reserved GPUs at the
//! reserved price and its rented ones at the on-demand price) goes to the
//! tiers occupying that type in that slot, by their GPUs there; a type's
//! reserved hours that no tier occupies go to the tiers that use the type,
//! by their GPU-hours on it over the horizon; spot GPUs are each tier's own,
//! at the spot price times the share of hours granted. The shares are then
//! scaled to the plan's GPU spend, so the tiers' costs add up to its total; a
//! tier that runs only on GPUs no other tier touches bears their cost alone.

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
    let valued = gpu_spend_by_tier(plan, prices);
    // Per tier: (API spend, valued GPU spend, input tokens, output tokens).
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
        let tier_valued = valued.get(name.as_str()).copied().unwrap_or(0.0);
        parts.insert(name, (api_usd, tier_valued, input_tokens, output_tokens));
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

/// Each tier's GPU spend at the scenario's prices, split where it is spent
/// (the module's rule): per GPU type and slot, that slot's spend on the type
/// by the tiers' GPUs there; a type's reserved hours no tier occupies by the
/// tiers' GPU-hours on it; spot GPUs at their price times availability.
fn gpu_spend_by_tier<'p>(plan: &'p Plan, prices: &Prices) -> BTreeMap<&'p str, f64> {
    let h = plan.slot_hours;
    let price = |gpu: &str| prices.gpus.get(gpu);
    // (type, slot) → (tier, GPUs) occupying it; (type, tier) → GPU-hours.
    let mut occupied: BTreeMap<(&str, usize), Vec<(&str, f64)>> = BTreeMap::new();
    let mut hours_on: BTreeMap<&str, BTreeMap<&str, f64>> = BTreeMap::new();
    let mut spend: BTreeMap<&str, f64> = BTreeMap::new();
    for (name, tier) in &plan.tiers {
        let name = name.as_str();
        spend.insert(name, 0.0);
        for c in &tier.configurations {
            let gpu = c.config.gpu_type.as_str();
            for (t, &n) in c.replicas_by_slot.iter().enumerate() {
                let gpus = f64::from(n * c.gpus_per_replica);
                if gpus > 0.0 {
                    occupied.entry((gpu, t)).or_default().push((name, gpus));
                    *hours_on.entry(gpu).or_default().entry(name).or_default() += gpus * h;
                }
            }
            let spot_gpu_hours: f64 = c
                .spot_replicas_by_slot
                .iter()
                .map(|&n| f64::from(n * c.gpus_per_replica))
                .sum::<f64>()
                * h;
            if let Some(s) = price(gpu).and_then(|p| p.spot) {
                *spend.entry(name).or_default() +=
                    spot_gpu_hours * s.availability * s.usd_per_gpu_hour;
            }
        }
    }
    let slots = plan.on_demand.len().max(
        plan.tiers
            .values()
            .flat_map(|t| t.configurations.iter().map(|c| c.replicas_by_slot.len()))
            .max()
            .unwrap_or(0),
    );
    let mut types: Vec<&str> = plan.reserved.keys().map(String::as_str).collect();
    types.extend(hours_on.keys().copied());
    types.sort_unstable();
    types.dedup();
    for gpu in types {
        let p = price(gpu);
        let reserved = f64::from(plan.reserved.get(gpu).copied().unwrap_or(0));
        let reserved_usd = p.and_then(|p| p.reserved_usd_per_gpu_hour).unwrap_or(0.0);
        let on_demand_usd = p.and_then(|p| p.on_demand_usd_per_gpu_hour).unwrap_or(0.0);
        let users = hours_on.get(gpu);
        let mut idle_usd = 0.0;
        for t in 0..slots {
            let rented = f64::from(
                plan.on_demand
                    .get(t)
                    .and_then(|m| m.get(gpu))
                    .copied()
                    .unwrap_or(0),
            );
            let slot_usd = (reserved * reserved_usd + rented * on_demand_usd) * h;
            match occupied.get(&(gpu, t)) {
                Some(here) => {
                    let all: f64 = here.iter().map(|(_, g)| g).sum();
                    for &(name, gpus) in here {
                        *spend.entry(name).or_default() += slot_usd * gpus / all;
                    }
                }
                None => idle_usd += slot_usd,
            }
        }
        // Reserved hours no tier occupies: the type's users bear them.
        if let Some(users) = users {
            let all: f64 = users.values().sum();
            for (&name, &hours) in users {
                *spend.entry(name).or_default() += idle_usd * hours / all;
            }
        }
    }
    spend
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
