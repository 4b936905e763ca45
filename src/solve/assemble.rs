//! A solved MILP turned into the plan: costs, shares, utilisation, and the
//! facts the capacity questions are answered from.

use super::questions::{CapacityBasis, SpeedupCase};
use crate::capacity::{CapacityEntry, Config};
use crate::demand::summary::total_output_tokens;
use crate::demand::Demand;
use crate::milp::{self, Problem, Settings, SolveStatus};
use crate::money::growth::TermProjection;
use crate::plan::{
    ConfigUse, CostBreakdown, IdleReserved, ModelSummary, Plan, SolverSummary, TierPlan,
};
use crate::scenario::Scenario;
use std::collections::BTreeMap;

/// One solved MILP: the problem, its settings and solution, the capacity
/// table and factors it was built from, and with growth the term's status
/// and projection (whose bound and gap the plan then reports).
pub(super) struct Solved<'a> {
    pub problem: &'a Problem,
    pub settings: &'a Settings,
    pub solution: &'a milp::Solution,
    pub capacity: &'a [Vec<CapacityEntry>],
    pub factors: &'a [f64],
    pub term: Option<(SolveStatus, &'a TermProjection)>,
}

/// A solved MILP as a plan, with the facts of the capacity questions.
pub(super) struct Assembled {
    pub plan: Plan,
    pub capacity_basis: Vec<CapacityBasis>,
    pub speedup: Vec<SpeedupCase>,
}

pub(super) fn assemble(scenario: &Scenario, demand: &Demand, solved: &Solved<'_>) -> Assembled {
    let Solved {
        problem: input,
        settings,
        solution,
        capacity,
        factors,
        term,
    } = *solved;
    let (reserved_usd, on_demand_usd, api_usd) = milp::cost_usd(input, solution);
    let spot_usd = milp::spot_usd(input, solution);
    let total = reserved_usd + on_demand_usd + api_usd + spot_usd;
    let spot_yield = |gpu: usize| input.gpus[gpu].spot.map_or(0.0, |s| s.yield_share);
    let horizon_hours = demand.horizon_hours();
    let output_tokens = total_output_tokens(demand);
    let mut tiers = BTreeMap::new();
    let mut busy_gpu_hours = 0.0;
    let mut api_requests = 0.0;
    let mut all_requests = 0.0;
    for (k, tier) in input.tiers.iter().enumerate() {
        let total_mean: f64 = tier.mean_rps.iter().sum();
        let api_weighted: f64 = solution.api[k]
            .iter()
            .zip(&tier.mean_rps)
            .map(|(a, m)| a * m)
            .sum();
        api_requests += api_weighted;
        all_requests += total_mean;
        // Requests/s the replicas of each slot can carry; configuration c's
        // share of a slot's GPU-served traffic is its part of that capacity.
        let capacity_by_slot: Vec<f64> = (0..tier.mean_rps.len())
            .map(|t| {
                tier.options
                    .iter()
                    .zip(&solution.replicas[k])
                    .zip(&solution.spot[k])
                    .map(|((o, replicas), spot)| {
                        (f64::from(replicas[t]) + spot_yield(o.gpu) * f64::from(spot[t])) * o.rps(t)
                    })
                    .sum()
            })
            .collect();
        // Requests/s served on GPUs in each slot: what arrives there, less
        // the API's share; a deadline tier's volume spread over its slots in
        // proportion to the capacity the plan runs there.
        let arriving_on_gpus: Vec<f64> = (0..tier.mean_rps.len())
            .map(|t| tier.mean_rps[t] * (1.0 - solution.api[k][t]))
            .collect();
        let on_gpus_by_slot: Vec<f64> = if tier.rules.deadline_slots.is_some() {
            let volume: f64 = arriving_on_gpus.iter().sum();
            let capacity: f64 = capacity_by_slot.iter().sum();
            capacity_by_slot
                .iter()
                .map(|c| {
                    if capacity > 0.0 {
                        volume * c / capacity
                    } else {
                        0.0
                    }
                })
                .collect()
        } else {
            arriving_on_gpus
        };
        let mut configurations = Vec::new();
        for (c, option) in tier.options.iter().enumerate() {
            let replicas = &solution.replicas[k][c];
            let spot = &solution.spot[k][c];
            if replicas.iter().chain(spot).all(|&n| n == 0) {
                continue;
            }
            let yield_share = spot_yield(option.gpu);
            let effective = |t: usize| f64::from(replicas[t]) + yield_share * f64::from(spot[t]);
            let entry = &capacity[k][option.entry];
            // What one replica of a fleet of `n` sustains by the simulated
            // figures (`figure`, the rate one replica is benchmarked at): the
            // step function's figure, not the slot's demand over its
            // replicas; where a fleet this small sustains nothing (a
            // configuration whose replicas only serve pooled), the rate the
            // MILP planned per replica in the slot. The plan reads it × the
            // replay rounds' factor (`sustained`: a fleet carries its peak
            // statistic's demand ÷ the factor, not a replica running faster).
            let figure = |n: u32, t: usize| match &entry.fleet {
                Some(f) if n > 0 && f.capacity_rps(n) > 0.0 => f.capacity_rps(n) / f64::from(n),
                _ => option.rps(t) / factors[k],
            };
            let sustained = |n: u32, t: usize| figure(n, t) * factors[k];
            let mut served = 0.0;
            for (t, &capacity_t) in capacity_by_slot.iter().enumerate() {
                if capacity_t <= 0.0 {
                    continue;
                }
                let fraction = effective(t) * option.rps(t) / capacity_t;
                let on_gpus_rps = on_gpus_by_slot[t] * fraction;
                served += on_gpus_rps;
                busy_gpu_hours += on_gpus_rps / sustained(replicas[t] + spot[t], t)
                    * f64::from(option.gpus_per_replica)
                    * input.slot_hours;
            }
            // The router's weight: what one replica sustains in the slot
            // where this configuration runs its largest fleet.
            let busiest = (0..replicas.len())
                .max_by_key(|&t| (replicas[t] + spot[t], std::cmp::Reverse(t)))
                .unwrap_or(0);
            let any_spot = spot.iter().any(|&n| n > 0);
            configurations.push(ConfigUse {
                label: entry.config.label(),
                config: entry.config.clone(),
                gpus_per_replica: option.gpus_per_replica,
                rps_per_replica: figure(replicas[busiest] + spot[busiest], busiest),
                rps_per_replica_by_slot: option.rps_by_slot.clone(),
                share: if total_mean > 0.0 {
                    served / total_mean
                } else {
                    0.0
                },
                replicas_by_slot: replicas.clone(),
                spot_replicas_by_slot: if any_spot { spot.clone() } else { Vec::new() },
                spot_yield_share: any_spot.then_some(yield_share),
            });
        }
        tiers.insert(
            tier.name.clone(),
            TierPlan {
                model: scenario.pooled().then(|| scenario.model_of(k).name.clone()),
                configurations,
                capacity_factor: factors[k],
                api_share: if total_mean > 0.0 {
                    api_weighted / total_mean
                } else {
                    0.0
                },
                api_share_by_slot: solution.api[k].clone(),
            },
        );
    }
    let provisioned_gpu_hours: f64 = solution
        .reserved
        .iter()
        .map(|&r| f64::from(r) * horizon_hours)
        .sum::<f64>()
        + solution
            .on_demand
            .iter()
            .flatten()
            .map(|&o| f64::from(o) * input.slot_hours)
            .sum::<f64>()
        + granted_spot_gpu_hours(input, solution);
    let spot_by_slot = spot_gpus_by_slot(input, solution);
    let idle_reserved = input
        .tiers
        .iter()
        .any(|t| t.rules.deadline_slots.is_some())
        .then(|| idle_reserved_gpu_hours(input, solution));
    let integer_variables = integer_variables(input);
    // No plan costs less than nothing: a bound the solver's tolerances put
    // a hair below 0 (a plan of almost no cost) is 0.
    let lower_bound_usd = solution.lower_bound_usd.min(total).max(0.0);
    let (status, lower_bound_usd, proven_gap, term_months) = match term {
        // Status, bound and gap are the term's: the horizon's plan holds
        // reservations sized for months to come.
        Some((status, projection)) => (
            status,
            projection.lower_bound_usd,
            projection.proven_gap,
            Some(projection.months),
        ),
        None => (
            solution.status,
            lower_bound_usd,
            if total > 0.0 {
                ((total - solution.lower_bound_usd.max(0.0)) / total).max(0.0)
            } else {
                0.0
            },
            None,
        ),
    };
    let plan = Plan {
        scenario: scenario.name.clone(),
        model: if scenario.pooled() {
            ModelSummary {
                id: "pool".into(),
                name: scenario
                    .models
                    .iter()
                    .map(|m| m.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                precision: "per model".into(),
                speculative: None,
            }
        } else {
            model_summary(&scenario.models[0])
        },
        models: if scenario.pooled() {
            scenario
                .models
                .iter()
                .map(|m| (m.name.clone(), model_summary(m)))
                .collect()
        } else {
            BTreeMap::new()
        },
        total_cost_usd: total,
        cost_per_month_usd: total / horizon_hours * crate::base::units::HOURS_PER_MONTH,
        horizon_hours,
        slot_hours: input.slot_hours,
        costs: CostBreakdown {
            reserved_usd,
            on_demand_usd,
            api_usd,
            spot_usd,
        },
        reserved: input
            .gpus
            .iter()
            .zip(&solution.reserved)
            .map(|(g, &n)| (g.id.clone(), n))
            .collect(),
        on_demand: solution
            .on_demand
            .iter()
            .map(|slot| {
                input
                    .gpus
                    .iter()
                    .zip(slot)
                    .filter(|(_, &n)| n > 0)
                    .map(|(g, &n)| (g.id.clone(), n))
                    .collect()
            })
            .collect(),
        spot: spot_by_slot,
        tiers,
        api_share: if all_requests > 0.0 {
            api_requests / all_requests
        } else {
            0.0
        },
        cost_per_1k_output_tokens_usd: if output_tokens > 0.0 {
            total / output_tokens * 1000.0
        } else {
            0.0
        },
        output_tokens,
        gpu_utilisation: if provisioned_gpu_hours > 0.0 {
            busy_gpu_hours / provisioned_gpu_hours
        } else {
            0.0
        },
        idle_reserved,
        solver: SolverSummary {
            status,
            method: solution.method,
            lower_bound_usd,
            proven_gap,
            mip_gap_tolerance: settings.mip_gap,
            time_limit_s: settings.time_limit_s,
            threads: settings.threads,
            integer_variables,
            slots: demand.slots,
            term_months,
        },
        operations: None,
    };
    Assembled {
        plan,
        capacity_basis: capacity_basis(scenario, demand, solved),
        speedup: speedup_cases(solved),
    }
}

/// Per tier, how its capacity was obtained: its lengths and limits, and the
/// configurations the plan runs for it.
fn capacity_basis(scenario: &Scenario, demand: &Demand, solved: &Solved<'_>) -> Vec<CapacityBasis> {
    scenario
        .tiers
        .iter()
        .zip(&demand.tiers)
        .enumerate()
        .map(|(k, (tier, d))| {
            let runs: Vec<Config> = solved.problem.tiers[k]
                .options
                .iter()
                .enumerate()
                .filter(|(c, _)| solved.solution.replicas[k][*c].iter().any(|&n| n > 0))
                .map(|(_, o)| solved.capacity[k][o.entry].config.clone())
                .collect();
            let shares: Vec<Option<f64>> = runs
                .iter()
                .map(|c| {
                    let model = scenario.tier_model(tier);
                    let offer = model.gpus.iter().find(|g| g.id == c.gpu_type)?;
                    crate::capacity::simulated::sampled_prefix_share(scenario, model, offer, c, d)
                })
                .collect();
            CapacityBasis {
                tier: tier.name.clone(),
                model: scenario.tier_model(tier).profile.name.clone(),
                model_entry: scenario.pooled().then_some(tier.model),
                input_tokens_mean: d.input_tokens.mean,
                input_tokens_p99: d.input_tokens.p99,
                output_tokens_mean: d.output_tokens.mean,
                output_tokens_p99: d.output_tokens.p99,
                within_minute_cv: d.within_minute_cv,
                percentile: tier.percentile,
                ttft_ms: tier.ttft_ms,
                tpot_ms: tier.tpot_ms,
                runs,
                prefix_shares: if shares.iter().all(Option::is_none) {
                    Vec::new()
                } else {
                    shares
                },
            }
        })
        .collect()
}

/// Per tier, each configuration running at its busiest slot (the last of
/// equally busy ones), with the requests/s the plan credits its replicas
/// with there before the replay rounds' factor.
fn speedup_cases(solved: &Solved<'_>) -> Vec<SpeedupCase> {
    let mut out = Vec::new();
    for (k, tier) in solved.problem.tiers.iter().enumerate() {
        let Some(busiest) =
            (0..tier.peak_rps.len()).max_by(|&a, &b| tier.peak_rps[a].total_cmp(&tier.peak_rps[b]))
        else {
            continue;
        };
        for (c, option) in tier.options.iter().enumerate() {
            let n = solved.solution.replicas[k][c][busiest];
            if n == 0 {
                continue;
            }
            out.push(SpeedupCase {
                tier: k,
                entry: option.entry,
                replicas: n,
                gpus_per_replica: option.gpus_per_replica,
                served_rps: f64::from(n) * option.rps(busiest) / solved.factors[k],
            });
        }
    }
    out
}

/// Reserved GPU-hours no replica occupies, with every tier's replicas and
/// with the deadline tiers' taken out.
fn idle_reserved_gpu_hours(input: &Problem, solution: &milp::Solution) -> IdleReserved {
    let idle = |with_deadline_tiers: bool| -> f64 {
        (0..input.slots())
            .map(|t| {
                input
                    .gpus
                    .iter()
                    .enumerate()
                    .map(|(g, _)| {
                        let used: u32 = input
                            .tiers
                            .iter()
                            .zip(&solution.replicas)
                            .filter(|(tier, _)| {
                                with_deadline_tiers || tier.rules.deadline_slots.is_none()
                            })
                            .flat_map(|(tier, replicas)| {
                                tier.options
                                    .iter()
                                    .zip(replicas)
                                    .filter(|(o, _)| o.gpu == g)
                                    .map(|(o, n)| o.gpus_per_replica * n[t])
                            })
                            .sum();
                        f64::from(solution.reserved[g].saturating_sub(used))
                    })
                    .sum::<f64>()
                    * input.slot_hours
            })
            .sum()
    };
    IdleReserved {
        gpu_hours: idle(true),
        gpu_hours_without_deadline_tiers: idle(false),
    }
}

/// Spot GPU-hours granted over the horizon: requested × availability.
fn granted_spot_gpu_hours(input: &Problem, solution: &milp::Solution) -> f64 {
    input
        .tiers
        .iter()
        .zip(&solution.spot)
        .flat_map(|(tier, per_option)| tier.options.iter().zip(per_option))
        .map(|(o, per_slot)| {
            let availability = input.gpus[o.gpu].spot.map_or(0.0, |s| s.availability);
            let requested: u32 = per_slot.iter().sum();
            f64::from(requested * o.gpus_per_replica) * availability * input.slot_hours
        })
        .sum()
}

/// Per slot, GPU type → spot GPUs requested; `None` when the plan uses none.
fn spot_gpus_by_slot(
    input: &Problem,
    solution: &milp::Solution,
) -> Option<Vec<BTreeMap<String, u32>>> {
    let by_slot: Vec<BTreeMap<String, u32>> = (0..input.slots())
        .map(|t| {
            let mut gpus: BTreeMap<String, u32> = BTreeMap::new();
            for (tier, per_option) in input.tiers.iter().zip(&solution.spot) {
                for (o, per_slot) in tier.options.iter().zip(per_option) {
                    if per_slot[t] > 0 {
                        *gpus.entry(input.gpus[o.gpu].id.clone()).or_default() +=
                            per_slot[t] * o.gpus_per_replica;
                    }
                }
            }
            gpus
        })
        .collect();
    by_slot.iter().any(|s| !s.is_empty()).then_some(by_slot)
}

/// Integer variables of the model: `reserved[g]`, `replicas[k,c,t]`, and with
/// purchase rules whole `on_demand[g,t]` units, `spot[k,c,t]`, `runs[k,c,t]`
/// and `uses[k,c]` (as `milp::model::build` declares them).
fn integer_variables(input: &Problem) -> usize {
    let slots = input.slots();
    let serving = |t: &milp::TierInput| {
        if t.rules.deadline_slots.is_some() {
            slots
        } else {
            t.peak_rps.iter().filter(|&&r| r > 0.0).count()
        }
    };
    let reserved = input
        .gpus
        .iter()
        .filter(|g| g.reserved_usd_per_gpu_hour.is_some())
        .count();
    let whole_on_demand = input
        .gpus
        .iter()
        .filter(|g| {
            g.on_demand_usd_per_gpu_hour.is_some() && g.purchase != milp::Purchase::default()
        })
        .count()
        * slots;
    let per_tier: usize = input
        .tiers
        .iter()
        .map(|t| {
            let replicas = t.options.len() * serving(t);
            let spot = if t.rules.spot_allowed {
                t.options
                    .iter()
                    .filter(|o| input.gpus[o.gpu].spot.is_some())
                    .count()
                    * serving(t)
            } else {
                0
            };
            let runs = if t.rules.headroom_replicas > 0 {
                replicas
            } else {
                0
            };
            let uses = if t.rules.max_configurations.is_some() {
                t.options.len()
            } else {
                0
            };
            replicas + spot + runs + uses
        })
        .sum();
    reserved + whole_on_demand + per_tier
}

/// What the plan says of one served model: its profile, the precisions
/// its configurations may run at, and its speculative decoding.
fn model_summary(model: &crate::scenario::ServedModel) -> ModelSummary {
    ModelSummary {
        id: model.id.clone(),
        name: model.profile.name.clone(),
        precision: model.precision.map_or_else(
            || {
                let mut offered: Vec<&str> = Vec::new();
                for g in &model.gpus {
                    for p in &g.precision {
                        if !offered.contains(&p.as_str()) {
                            offered.push(p.as_str());
                        }
                    }
                }
                if offered == ["bf16", "fp8"] || offered.is_empty() {
                    "chosen per configuration (bf16 or fp8)".to_string()
                } else if offered.len() == 1 {
                    offered[0].to_string()
                } else {
                    format!("chosen per configuration: {}", offered.join(" or "))
                }
            },
            |p| p.to_string(),
        ),
        speculative: model.speculative.clone(),
    }
}
