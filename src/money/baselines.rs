//! Simple alternatives to the optimised plan, each the same MILP under the
//! same rules (purchase units, minimum rentals, quotas, tier rules, the
//! tiers' API permission and the API's rate limit) with one choice taken
//! away: everything to the API, no reservation, reservations only, or one
//! GPU type. They are priced once per solve on the capacity search's own
//! figures (before the replay's corrections), so that they depend on the
//! demand and the offers alone, not on the path the plan's rounds took.

use crate::base::numbers::usd;
use crate::milp::{self, ApiTerms, MilpError, Problem, Settings, Solution, SolveStatus};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The cost of one alternative.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Baseline {
    /// `None` when the alternative cannot serve the demand.
    pub total_cost_usd: Option<f64>,
    /// What the alternative is and what it buys (or why it cannot serve).
    pub description: String,
    /// `each-model-alone`: each model's own plan cost, by model (`None`
    /// where that model alone cannot be served); empty otherwise.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub parts: BTreeMap<String, Option<f64>>,
}

impl Baseline {
    /// An alternative without parts.
    pub fn new(total_cost_usd: Option<f64>, description: String) -> Self {
        Baseline {
            total_cost_usd,
            description,
            parts: BTreeMap::new(),
        }
    }
}

/// The models of a pooled fleet as the alternatives see them: each model's
/// name and the indices of the tiers it serves.
pub(crate) type ModelTiers = [(String, Vec<usize>)];

/// The prefix of the restricted problems that plan one model alone.
const ALONE: &str = "model:";

/// Seconds each alternative's MILP may take: they are comparisons, so one
/// that stops early says at what proven gap.
pub(crate) const TIME_LIMIT_S: f64 = 10.0;

/// One alternative: its name, what it is, and the problem it solves.
struct Restricted {
    name: String,
    what: String,
    problem: Problem,
}

/// All baselines, keyed by name: the GPU alternatives as restrictions of
/// `input` (the plan's problem), everything to the API on `api[k]`, tier
/// `k`'s API terms where the scenario lets it use the API. `fewest`: each
/// alternative reserves the fewest GPUs its gap accepts, as the plan does
/// (`planning.reserve_fewest_within_gap`, [`milp::fewest_reserved_if`]), so
/// that a restriction is priced by the plan's rules.
pub(crate) fn compute(
    input: &Problem,
    api: &[Option<ApiTerms>],
    models: &ModelTiers,
    settings: &Settings,
    fewest: bool,
) -> BTreeMap<String, Baseline> {
    // The alternatives are priced, not proven: a stalled decomposed
    // search is reported as it stands, without branching.
    let settings = Settings {
        time_limit_s: settings.time_limit_s.min(TIME_LIMIT_S),
        log_file: None,
        branch_prices: 0,
        ..settings.clone()
    };
    let mut out = BTreeMap::new();
    let mut stated = input.clone();
    for (tier, terms) in stated.tiers.iter_mut().zip(api) {
        tier.api = *terms;
    }
    out.insert("all-api".to_string(), all_api(&stated));

    let mut restricted = vec![
        Restricted {
            name: "all-on-demand".into(),
            what: "no reservation".into(),
            problem: without(input, |g| g.reserved_usd_per_gpu_hour = None),
        },
        Restricted {
            name: "all-reserved-for-peak".into(),
            what: "reserved GPUs for every slot's peak, nothing rented, nothing to the API".into(),
            problem: {
                let mut p = without(input, |g| {
                    g.on_demand_usd_per_gpu_hour = None;
                    g.spot = None;
                });
                for tier in &mut p.tiers {
                    tier.api = None;
                }
                p
            },
        },
    ];
    for (g, gpu) in input.gpus.iter().enumerate() {
        let mut p = input.clone();
        for (h, other) in p.gpus.iter_mut().enumerate() {
            if h != g {
                other.reserved_usd_per_gpu_hour = None;
                other.on_demand_usd_per_gpu_hour = None;
                other.spot = None;
            }
        }
        for tier in &mut p.tiers {
            tier.options.retain(|o| o.gpu == g);
        }
        restricted.push(Restricted {
            name: gpu.id.clone(),
            what: format!("only {}", gpu.id),
            problem: p,
        });
    }
    // A pooled fleet: each model planned alone on its own tiers, with the
    // same offers, rules and figures.
    if models.len() > 1 {
        for (name, tiers) in models {
            let mut p = input.clone();
            p.tiers = tiers.iter().map(|&k| input.tiers[k].clone()).collect();
            restricted.push(Restricted {
                name: format!("{ALONE}{name}"),
                what: format!("{name} alone"),
                problem: p,
            });
        }
    }
    let solved = crate::base::parallel::map_in_order(&restricted, |r| {
        let s = milp::solve(&r.problem, &settings)?;
        Ok(milp::fewest_reserved_if(
            fewest,
            &r.problem,
            settings.mip_gap,
            s,
        ))
    });
    let mut alone: Vec<(String, Baseline)> = Vec::new();
    let mut best_single: Option<Baseline> = None;
    let mut none_single = Vec::new();
    for (r, solved) in restricted.iter().zip(solved) {
        let baseline = match solved {
            Some(Ok(s)) => priced(r, &s, settings.mip_gap),
            Some(Err(MilpError::Infeasible)) => Baseline {
                total_cost_usd: None,
                description: format!(
                    "{}: cannot cover every slot under the plan's rules (purchase units, quotas, tier rules)",
                    r.what
                ),
                parts: BTreeMap::new(),
            },
            Some(Err(MilpError::Solver(msg))) => Baseline {
                total_cost_usd: None,
                description: format!("{}: the solver failed ({msg})", r.what),
                parts: BTreeMap::new(),
            },
            None => Baseline {
                total_cost_usd: None,
                description: format!("{}: the solver failed", r.what),
                parts: BTreeMap::new(),
            },
        };
        if let Some(model) = r.name.strip_prefix(ALONE) {
            alone.push((model.to_string(), baseline));
        } else if r.name == "all-on-demand" || r.name == "all-reserved-for-peak" {
            out.insert(r.name.clone(), baseline);
        } else if baseline.total_cost_usd.is_none() {
            none_single.push(r.name.clone());
        } else if best_single.as_ref().is_none_or(|b| {
            baseline.total_cost_usd.unwrap_or(f64::INFINITY)
                < b.total_cost_usd.unwrap_or(f64::INFINITY)
        }) {
            best_single = Some(baseline);
        }
    }
    if !alone.is_empty() {
        out.insert("each-model-alone".into(), each_model_alone(&alone));
    }
    out.insert(
        "best-single-gpu-type".into(),
        best_single.unwrap_or_else(|| Baseline {
            total_cost_usd: None,
            description: format!(
                "no single GPU type covers every slot under the plan's rules ({} tried)",
                none_single.join(", ")
            ),
            parts: BTreeMap::new(),
        }),
    );
    out
}

/// The sum of each model's plan made alone: what a buyer who plans every
/// model separately and adds the reservations up would pay.
fn each_model_alone(alone: &[(String, Baseline)]) -> Baseline {
    let parts: BTreeMap<String, Option<f64>> = alone
        .iter()
        .map(|(m, b)| (m.clone(), b.total_cost_usd))
        .collect();
    let total = parts.values().copied().sum::<Option<f64>>();
    let each: Vec<String> = alone
        .iter()
        .map(|(m, b)| match b.total_cost_usd {
            Some(c) => format!("{} ({})", b.description, usd(c)),
            None => format!("{m}: {}", b.description),
        })
        .collect();
    Baseline {
        total_cost_usd: total,
        description: format!(
            "each model planned on its own GPUs and the plans added up: {}",
            each.join("; ")
        ),
        parts,
    }
}

/// `input` with every GPU type changed by `change`.
fn without(input: &Problem, change: impl Fn(&mut milp::GpuType)) -> Problem {
    let mut p = input.clone();
    p.gpus.iter_mut().for_each(change);
    p
}

/// Everything to the API at its list price: only when every tier with
/// demand may use it and the busiest slot stays within its rate limit.
fn all_api(input: &Problem) -> Baseline {
    let what = "every request sent to the per-token API at its list price";
    let refused: Vec<&str> = input
        .tiers
        .iter()
        .filter(|t| t.api.is_none() && t.peak_rps.iter().any(|&r| r > 0.0))
        .map(|t| t.name.as_str())
        .collect();
    if !refused.is_empty() {
        return Baseline {
            total_cost_usd: None,
            description: format!(
                "{what}: cannot, as tier{} {} may not use the API (api_allowed = false)",
                if refused.len() > 1 { "s" } else { "" },
                refused.join(", ")
            ),
            parts: BTreeMap::new(),
        };
    }
    if let Some(limit) = input.api_max_tokens_per_minute {
        let busiest = (0..input.slots())
            .map(|t| {
                input
                    .tiers
                    .iter()
                    .filter_map(|tier| {
                        Some(milp::arrivals_in(tier, t) * tier.api?.tokens_per_request * 60.0)
                    })
                    .sum::<f64>()
            })
            .fold(0.0, f64::max);
        if busiest > limit * (1.0 + 1e-9) {
            return Baseline {
                total_cost_usd: None,
                description: format!(
                    "{what}: its rate limit of {limit:.0} tokens a minute is below the busiest slot's {busiest:.0}"
                ),
                parts: BTreeMap::new(),
            };
        }
    }
    let cost: f64 = input
        .tiers
        .iter()
        .filter_map(|tier| {
            let terms = tier.api?;
            Some(
                tier.mean_rps.iter().sum::<f64>()
                    * input.slot_hours
                    * 3600.0
                    * terms.usd_per_request,
            )
        })
        .sum();
    Baseline {
        total_cost_usd: Some(cost),
        description: what.into(),
        parts: BTreeMap::new(),
    }
}

/// A solved alternative: its cost and what it buys.
fn priced(r: &Restricted, s: &Solution, mip_gap: f64) -> Baseline {
    let p = &r.problem;
    let cost = milp::total(p, s);
    let mut bought: Vec<String> = Vec::new();
    for (g, gpu) in p.gpus.iter().enumerate() {
        let reserved = s.reserved.get(g).copied().unwrap_or(0);
        let rented = s
            .on_demand
            .iter()
            .map(|slot| slot.get(g).copied().unwrap_or(0))
            .max()
            .unwrap_or(0);
        match (reserved, rented) {
            (0, 0) => {}
            (n, 0) => bought.push(format!("{n} {} reserved", gpu.id)),
            (0, m) => bought.push(format!("up to {m} {} rented", gpu.id)),
            (n, m) => bought.push(format!("{n} {} reserved and up to {m} rented", gpu.id)),
        }
    }
    let spot: u32 = (0..p.slots())
        .map(|t| {
            s.spot
                .iter()
                .zip(&p.tiers)
                .flat_map(|(by_option, tier)| {
                    by_option
                        .iter()
                        .zip(&tier.options)
                        .map(move |(n, o)| n.get(t).copied().unwrap_or(0) * o.gpus_per_replica)
                })
                .sum::<u32>()
        })
        .max()
        .unwrap_or(0);
    if spot > 0 {
        bought.push(format!("up to {spot} spot GPUs requested"));
    }
    let (mut api_requests, mut requests) = (0.0, 0.0);
    for (tier, shares) in p.tiers.iter().zip(&s.api) {
        for (share, mean) in shares.iter().zip(&tier.mean_rps) {
            api_requests += share * mean;
            requests += mean;
        }
    }
    if api_requests > 0.0 {
        let share = api_requests / requests * 100.0;
        bought.push(if share < 0.05 {
            "under 0.1% of requests to the API".to_string()
        } else {
            format!("{share:.1}% of requests to the API")
        });
    }
    let mut description = format!("{}: {}", r.what, bought.join(", "));
    let gap = if cost > 0.0 {
        (cost - s.lower_bound_usd) / cost
    } else {
        0.0
    };
    if s.status != SolveStatus::Optimal && gap > mip_gap + 1e-9 {
        let _ = write!(
            description,
            " (the solver stopped within {:.1}% of the optimum, {} at most lower)",
            gap * 100.0,
            usd(cost - s.lower_bound_usd)
        );
    }
    Baseline {
        total_cost_usd: Some(cost),
        description,
        parts: BTreeMap::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::milp::{ConfigOption, GpuType, Purchase, TierInput, TierRules};

    /// One GPU type (reserved 1, on demand 3 USD an hour) and one tier
    /// needing 1, 1, 1 and 4 replicas of one GPU over four one-hour slots.
    fn one_type() -> Problem {
        Problem {
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
        }
    }

    /// Each tier's API terms as the problem states them.
    fn api_of(input: &Problem) -> Vec<Option<ApiTerms>> {
        input.tiers.iter().map(|t| t.api).collect()
    }

    fn settings() -> Settings {
        Settings::exact(10.0)
    }

    /// Alternatives take the plan's rule: of the reservations the gap
    /// accepts, the fewest GPUs. Two-GPU replicas, 4, 4, 3 and 2 of them,
    /// 1 USD an hour reserved and 2 on demand: reserving 8 or 6 GPUs costs
    /// 32 USD, 4 costs 36 (within a gap of 15%), 2 costs 44.
    #[test]
    fn alternatives_reserve_the_fewest_gpus_their_gap_accepts() {
        let mut p = one_type();
        p.gpus[0].on_demand_usd_per_gpu_hour = Some(2.0);
        p.tiers[0].peak_rps = vec![4.0, 4.0, 3.0, 2.0];
        p.tiers[0].options = vec![ConfigOption::uniform(0, 2, 1.0, 4)];
        let loose = Settings {
            mip_gap: 0.15,
            ..settings()
        };
        let reserved = |b: &BTreeMap<String, Baseline>| {
            let d = &b["best-single-gpu-type"].description;
            let n: u32 = d
                .split(": ")
                .nth(1)
                .and_then(|rest| rest.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("{d}"));
            n
        };
        let solver = compute(&p, &[None], &[], &loose, false);
        let fewest = compute(&p, &[None], &[], &loose, true);
        assert!(reserved(&fewest) <= reserved(&solver));
        assert_eq!(reserved(&fewest), 4, "{fewest:?}");
    }

    #[test]
    fn single_type_reserves_the_best_level() {
        let b = compute(&one_type(), &[None], &[], &settings(), true);
        // Needs 1,1,1,4: reserve 1 (4 $) + rent 3 for one hour (9 $) = 13 $.
        assert_eq!(b["best-single-gpu-type"].total_cost_usd, Some(13.0));
        assert_eq!(b["all-reserved-for-peak"].total_cost_usd, Some(16.0));
        assert_eq!(b["all-on-demand"].total_cost_usd, Some(21.0));
        // The tier may not use the API: the all-API alternative says so.
        assert_eq!(b["all-api"].total_cost_usd, None);
        assert!(b["all-api"]
            .description
            .contains("tier t may not use the API"));
    }

    #[test]
    fn purchase_units_apply_to_every_alternative() {
        let mut input = one_type();
        input.gpus[0].purchase.unit_gpus = 2;
        let b = compute(&input, &api_of(&input), &[], &settings(), true);
        // Whole pairs: reserve 2 (8 $) and rent a pair for the last hour
        // (6 $); renting only: pairs of 2, 2, 2, 4 GPUs (30 $).
        assert_eq!(b["best-single-gpu-type"].total_cost_usd, Some(14.0));
        assert_eq!(b["all-reserved-for-peak"].total_cost_usd, Some(16.0));
        assert_eq!(b["all-on-demand"].total_cost_usd, Some(30.0));
        // A quota below the peak leaves the reservation-only alternative
        // without a fleet, with the reason.
        input.gpus[0].max_gpus = Some(2);
        let b = compute(&input, &api_of(&input), &[], &settings(), true);
        assert_eq!(b["all-reserved-for-peak"].total_cost_usd, None);
        assert!(b["all-reserved-for-peak"]
            .description
            .contains("cannot cover"));
    }

    #[test]
    fn the_api_is_used_where_the_tier_may_and_its_rate_limit_holds() {
        let mut input = one_type();
        // 0.0001 USD a request: 0.36 USD an hour at 1 request/s, cheaper
        // than any GPU.
        input.tiers[0].api = Some(ApiTerms {
            usd_per_request: 0.0001,
            tokens_per_request: 1_000.0,
        });
        let b = compute(&input, &api_of(&input), &[], &settings(), true);
        let api = 4.0 * 0.36;
        let close = |x: Option<f64>| (x.unwrap() - api).abs() < 1e-9;
        assert!(close(b["all-api"].total_cost_usd), "{b:?}");
        assert!(close(b["best-single-gpu-type"].total_cost_usd), "{b:?}");
        assert!(close(b["all-on-demand"].total_cost_usd), "{b:?}");
        // Reservations only: nothing to the API.
        assert_eq!(b["all-reserved-for-peak"].total_cost_usd, Some(16.0));
        // A rate limit below the busiest slot (4 requests/s × 1,000 tokens
        // × 60) refuses the all-API alternative, naming both figures.
        input.api_max_tokens_per_minute = Some(100_000.0);
        let b = compute(&input, &api_of(&input), &[], &settings(), true);
        assert_eq!(b["all-api"].total_cost_usd, None);
        assert!(
            b["all-api"].description.contains("100000")
                && b["all-api"].description.contains("240000"),
            "{}",
            b["all-api"].description
        );
    }

    #[test]
    fn no_alternative_costs_less_than_the_unrestricted_optimum() {
        let mut input = one_type();
        input.gpus.push(GpuType {
            id: "b".into(),
            reserved_usd_per_gpu_hour: Some(1.5),
            on_demand_usd_per_gpu_hour: Some(2.0),
            max_gpus: Some(3),
            purchase: Purchase {
                unit_gpus: 1,
                min_rental_slots: 2,
            },
            spot: None,
        });
        input.tiers[0]
            .options
            .push(ConfigOption::uniform(1, 1, 1.5, 4));
        let optimum = milp::total(&input, &milp::solve(&input, &settings()).unwrap());
        let b = compute(&input, &api_of(&input), &[], &settings(), true);
        for (name, alternative) in &b {
            if let Some(cost) = alternative.total_cost_usd {
                assert!(cost >= optimum - 1e-9, "{name}: {cost} < {optimum}");
            }
        }
        assert!(b["best-single-gpu-type"].total_cost_usd.unwrap() > optimum);
    }
}
