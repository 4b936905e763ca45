//! Simple alternatives to the optimised plan, priced on the same demand and
//! capacity figures, so the savings show: everything to the API, everything
//! on demand, everything reserved for the peak, and the best single GPU type.

use crate::milp::Problem;
use serde::Serialize;
use std::collections::BTreeMap;

/// The cost of one alternative.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Baseline {
    /// `None` when the alternative cannot serve the demand.
    pub total_cost_usd: Option<f64>,
    /// What the alternative is, and its GPU type when it has one.
    pub description: String,
}

/// GPUs of type `g` needed in slot `t`, each tier on its own replicas of its
/// best option on `g`; `None` when some tier with demand has no option on `g`.
fn gpus_needed(input: &Problem, g: usize, t: usize) -> Option<u32> {
    input.tiers.iter().try_fold(0u32, |sum, tier| {
        let peak = tier.peak_rps.get(t).copied().unwrap_or(0.0);
        if peak <= 0.0 {
            return Some(sum);
        }
        let best = tier
            .options
            .iter()
            .filter(|o| o.gpu == g)
            .map(|o| (peak / o.rps(t) - 1e-9).ceil() as u32 * o.gpus_per_replica)
            .min()?;
        Some(sum + best)
    })
}

/// All baselines, keyed by name. `api_usd_per_request[k]` is the API price of
/// tier `k`'s mean request (whether or not the tier may use the API).
pub(crate) fn compute(
    input: &Problem,
    api_usd_per_request: &[Option<f64>],
) -> BTreeMap<String, Baseline> {
    let slots = input
        .tiers
        .iter()
        .map(|t| t.peak_rps.len())
        .max()
        .unwrap_or(0);
    let horizon = slots as f64 * input.slot_hours;
    let mut out = BTreeMap::new();

    let api_total: Option<f64> =
        input
            .tiers
            .iter()
            .zip(api_usd_per_request)
            .try_fold(0.0, |sum, (tier, price)| {
                Some(
                    sum + tier.mean_rps.iter().sum::<f64>() * input.slot_hours * 3600.0 * (*price)?,
                )
            });
    out.insert(
        "all-api".into(),
        Baseline {
            total_cost_usd: api_total,
            description: "every request sent to the per-token API at its list price (ignores its rate limit and the tiers' API permission)".into(),
        },
    );

    let on_demand: Option<f64> = (0..slots).try_fold(0.0, |sum, t| {
        let slot: Option<f64> = input.tiers.iter().try_fold(0.0, |s, tier| {
            let peak = tier.peak_rps.get(t).copied().unwrap_or(0.0);
            if peak <= 0.0 {
                return Some(s);
            }
            let best = tier
                .options
                .iter()
                .filter_map(|o| {
                    let price = input.gpus[o.gpu].on_demand_usd_per_gpu_hour?;
                    Some((peak / o.rps(t) - 1e-9).ceil() * f64::from(o.gpus_per_replica) * price)
                })
                .fold(None, |m: Option<f64>, c| Some(m.map_or(c, |m| m.min(c))))?;
            Some(s + best)
        });
        Some(sum + slot? * input.slot_hours)
    });
    out.insert(
        "all-on-demand".into(),
        Baseline {
            total_cost_usd: on_demand,
            description:
                "no reservation: each slot rents the cheapest on-demand GPUs that cover it".into(),
        },
    );

    let mut best_reserved: Option<(f64, String, u32)> = None;
    let mut best_single: Option<(f64, String, u32)> = None;
    for (g, gpu) in input.gpus.iter().enumerate() {
        let Some(needs) = (0..slots)
            .map(|t| gpus_needed(input, g, t))
            .collect::<Option<Vec<u32>>>()
        else {
            continue;
        };
        let peak = needs.iter().copied().max().unwrap_or(0);
        if gpu.max_gpus.is_some_and(|m| peak > m) {
            continue;
        }
        if let Some(price) = gpu.reserved_usd_per_gpu_hour {
            let cost = f64::from(peak) * price * horizon;
            if best_reserved.as_ref().is_none_or(|b| cost < b.0) {
                best_reserved = Some((cost, gpu.id.clone(), peak));
            }
        }
        // Reserve R, rent the rest: the optimum R is one of the slot needs.
        let mut candidates: Vec<u32> = needs.clone();
        candidates.push(0);
        for r in candidates {
            let reserved_cost = match gpu.reserved_usd_per_gpu_hour {
                Some(price) => f64::from(r) * price * horizon,
                None if r == 0 => 0.0,
                None => continue,
            };
            let rented: Option<f64> = needs.iter().try_fold(0.0, |s, &n| {
                let extra = n.saturating_sub(r);
                if extra == 0 {
                    Some(s)
                } else {
                    Some(s + f64::from(extra) * gpu.on_demand_usd_per_gpu_hour? * input.slot_hours)
                }
            });
            if let Some(rented) = rented {
                let cost = reserved_cost + rented;
                if best_single.as_ref().is_none_or(|b| cost < b.0) {
                    best_single = Some((cost, gpu.id.clone(), r));
                }
            }
        }
    }
    out.insert(
        "all-reserved-for-peak".into(),
        Baseline {
            total_cost_usd: best_reserved.as_ref().map(|b| b.0),
            description: match &best_reserved {
                Some((_, id, n)) => format!("{n} reserved {id} GPUs, enough for the busiest slot, the cheapest such type; nothing rented"),
                None => "no single reservable GPU type covers every slot".into(),
            },
        },
    );
    out.insert(
        "best-single-gpu-type".into(),
        Baseline {
            total_cost_usd: best_single.as_ref().map(|b| b.0),
            description: match &best_single {
                Some((_, id, r)) => format!("only {id}: {r} reserved, the rest rented per slot (best reservation level for that type)"),
                None => "no single GPU type covers every slot".into(),
            },
        },
    );
    if input.has_purchase_rules() {
        for name in [
            "all-on-demand",
            "all-reserved-for-peak",
            "best-single-gpu-type",
        ] {
            if let Some(b) = out.get_mut(name) {
                b.description.push_str(UNRULED);
            }
        }
    }
    out
}

/// Appended to the GPU alternatives' descriptions when the scenario has
/// purchase units, minimum rentals or tier rules, which they do not follow
/// (so they may cost less than a plan that does).
pub(crate) const UNRULED: &str =
    "; priced without the purchase units, minimum rentals and tier rules the plan follows";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::milp::{ConfigOption, GpuType, Purchase, TierInput, TierRules};

    #[test]
    fn single_type_reserves_the_best_level() {
        let input = Problem {
            slot_hours: 1.0,
            gpus: vec![GpuType {
                id: "a".into(),
                reserved_usd_per_gpu_hour: Some(1.0),
                on_demand_usd_per_gpu_hour: Some(3.0),
                max_gpus: None,
                purchase: Purchase::default(),
                spot: None,
            }],
            tiers: vec![TierInput {
                name: "t".into(),
                peak_rps: vec![1.0, 1.0, 1.0, 4.0],
                mean_rps: vec![1.0; 4],
                options: vec![ConfigOption::uniform(0, 1, 1.0, 4)],
                api: None,
                rules: TierRules::default(),
            }],
            api_max_tokens_per_minute: None,
            block_slots: None,
        };
        let b = compute(&input, &[Some(0.5)]);
        // Needs 1,1,1,4: reserve 1 (4 $) + rent 3 for one hour (9 $) = 13 $.
        assert_eq!(b["best-single-gpu-type"].total_cost_usd, Some(13.0));
        assert_eq!(b["all-reserved-for-peak"].total_cost_usd, Some(16.0));
        assert_eq!(b["all-on-demand"].total_cost_usd, Some(21.0));
        assert_eq!(b["all-api"].total_cost_usd, Some(4.0 * 3600.0 * 0.5));
    }
}
