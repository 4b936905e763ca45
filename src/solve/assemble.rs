//! A solved MILP turned into the reported plan: costs, shares, utilisation,
//! baselines and the answers to the four questions.

use super::input::api_usd_per_request;
use super::{SolveOptions, SPEEDUP_FACTOR};
use crate::base::numbers::group_thousands;
use crate::capacity::simulated;
use crate::capacity::{self, CapacityEntry, Verdict};
use crate::demand::Demand;
use crate::milp::{self, MilpInput};
use crate::plan::{
    total_output_tokens, ConfigUse, CostBreakdown, DemandSummary, GpuPrice, IdleReserved,
    ModelSummary, Plan, Prices, Questions, SolverSummary, TierPlan,
};
use crate::profiles::precision::Precision;
use crate::replay::verification::Verification;
use crate::scenario::{CapacitySource, Scenario};
use std::collections::BTreeMap;

/// The API price of each tier's mean request (whether or not the tier may
/// use the API).
pub(super) fn api_prices(scenario: &Scenario, demand: &Demand) -> Vec<Option<f64>> {
    demand
        .tiers
        .iter()
        .map(|d| api_usd_per_request(scenario, d))
        .collect()
}

pub(super) fn assemble(
    scenario: &Scenario,
    demand: &Demand,
    capacity: Vec<Vec<CapacityEntry>>,
    input: &MilpInput,
    option_entries: &[Vec<usize>],
    solution: &milp::MilpSolution,
    (factors, options): (&[f64], &SolveOptions),
) -> Plan {
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
            let entry = &capacity[k][option_entries[k][c]];
            // What one replica of a fleet of `n` sustains: the step function's
            // figure (not the slot's demand over its replicas); where a fleet
            // this small sustains nothing (a configuration whose replicas only
            // serve pooled), the rate the MILP planned per replica in the slot.
            let sustained = |n: u32, t: usize| match &entry.fleet {
                Some(f) if n > 0 && f.capacity_rps(n) > 0.0 => {
                    f.capacity_rps(n) / f64::from(n) * factors[k]
                }
                _ => option.rps(t),
            };
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
                config: entry.config.label(),
                gpu_type: entry.config.gpu_type.clone(),
                tensor_parallel: entry.config.tensor_parallel,
                max_batch: entry.config.max_batch,
                max_batched_tokens: entry.config.max_batched_tokens,
                precision: entry.config.precision,
                gpus_per_replica: option.gpus_per_replica,
                rps_per_replica: sustained(replicas[busiest] + spot[busiest], busiest),
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
                configurations,
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
    let mut plan = Plan {
        scenario: scenario.name.clone(),
        missed_targets: Vec::new(),
        model: ModelSummary {
            id: scenario.model.id.clone(),
            name: scenario.model.profile.name.clone(),
            precision: scenario.model.precision.map_or_else(
                || "chosen per configuration (bf16 or fp8)".to_string(),
                |p| p.to_string(),
            ),
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
        slo: scenario
            .tiers
            .iter()
            .map(|t| (t.name.clone(), t.clone()))
            .collect(),
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
        unit_costs: Default::default(),
        commitment: Default::default(),
        gpu_utilisation: if provisioned_gpu_hours > 0.0 {
            busy_gpu_hours / provisioned_gpu_hours
        } else {
            0.0
        },
        idle_reserved,
        // The caller prices the alternatives (on fleets for the whole peak).
        baselines: BTreeMap::new(),
        solver: SolverSummary {
            status: solution.status,
            method: solution.method,
            lower_bound_usd: solution.lower_bound_usd.min(total),
            proven_gap: if total > 0.0 {
                ((total - solution.lower_bound_usd) / total).max(0.0)
            } else {
                0.0
            },
            mip_gap_tolerance: input.mip_gap,
            time_limit_s: input.time_limit_s,
            threads: input.threads,
            integer_variables,
            slots: demand.slots,
            term_months: None,
        },
        demand_method: demand.method.clone(),
        demand: demand
            .tiers
            .iter()
            .map(|t| (t.tier.clone(), DemandSummary::of(t)))
            .collect(),
        questions: questions(
            scenario,
            demand,
            &capacity,
            input,
            option_entries,
            solution,
            (factors, options),
        ),
        capacity: scenario
            .tiers
            .iter()
            .map(|t| t.name.clone())
            .zip(capacity)
            .collect(),
        prices: Prices {
            gpus: scenario
                .gpus
                .iter()
                .map(|g| {
                    (
                        g.id.clone(),
                        GpuPrice {
                            reserved_usd_per_gpu_hour: g.reserved_usd_per_gpu_hour,
                            reserved_term: g.reserved_term.clone(),
                            reserved_offer: g.reserved_offer,
                            on_demand_usd_per_gpu_hour: g.on_demand_usd_per_gpu_hour,
                            max_gpus: g.max_gpus,
                            source: g.price_source.clone(),
                            spot: g.spot,
                        },
                    )
                })
                .collect(),
            api: scenario.api.clone(),
        },
        verification: None,
        rounds: Vec::new(),
        without_api: None,
    };
    plan.unit_costs = crate::money::unit_costs::of(&plan);
    plan.commitment =
        crate::money::commitment::of(&plan.reserved, &plan.prices.gpus, plan.horizon_hours);
    plan.commitment.term_months = scenario.commitment_term_months;
    plan.commitment.term = scenario
        .commitment_term_months
        .and_then(|months| crate::money::commitment::over_term(&plan, months));
    plan
}

pub(super) fn replicas_and_gpus(replicas: u32, gpus_per_replica: u32) -> String {
    let plural = |n: u32, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "{} ({})",
        plural(replicas, "replica"),
        plural(replicas * gpus_per_replica, "GPU")
    )
}

pub(super) fn questions(
    scenario: &Scenario,
    demand: &Demand,
    capacity: &[Vec<CapacityEntry>],
    input: &MilpInput,
    option_entries: &[Vec<usize>],
    solution: &milp::MilpSolution,
    (factors, options): (&[f64], &SolveOptions),
) -> Questions {
    let capacity_basis = scenario
        .tiers
        .iter()
        .zip(&demand.tiers)
        .enumerate()
        .map(|(k, (tier, d))| {
            let mut runs: Vec<String> = Vec::new();
            let mut fp8 = false;
            for (c, _) in input.tiers[k].options.iter().enumerate() {
                if solution.replicas[k][c].iter().all(|&n| n == 0) {
                    continue;
                }
                let config = &capacity[k][option_entries[k][c]].config;
                fp8 |= config.precision == Precision::Fp8;
                runs.push(format!(
                    "{} with chunks of {} tokens in {}",
                    config.label(),
                    config.max_batched_tokens,
                    config.precision.as_str().to_uppercase()
                ));
            }
            let quality = if fp8 {
                "FP8 weights change the answers (usually slightly): whether that quality is acceptable is yours to decide, and FP8 can be ruled out with `model.precision = \"bf16\"`"
            } else {
                "BF16 weights: the served model's own answer quality"
            };
            format!(
                "{}: {} on the tier's own lengths (input mean {:.0}, p99 {}; output mean {:.0}, p99 {}), within-minute arrival CV {:.2}, p{} TTFT ≤ {} ms and TPOT ≤ {} ms, fleets sized by simulating n replicas behind the router; runs {}; {}",
                tier.name,
                scenario.model.profile.name,
                d.input_tokens.mean,
                d.input_tokens.p99,
                d.output_tokens.mean,
                d.output_tokens.p99,
                d.within_minute_cv,
                tier.percentile,
                tier.ttft_ms,
                tier.tpot_ms,
                if runs.is_empty() { "nothing on GPUs".to_string() } else { runs.join(", ") },
                quality
            )
        })
        .collect();
    let mut speedup = Vec::new();
    for (k, tier) in input.tiers.iter().enumerate() {
        let Some(busiest) =
            (0..tier.peak_rps.len()).max_by(|&a, &b| tier.peak_rps[a].total_cmp(&tier.peak_rps[b]))
        else {
            continue;
        };
        for (c, option) in tier.options.iter().enumerate() {
            let n = solution.replicas[k][c][busiest];
            if n == 0 {
                continue;
            }
            let entry = &capacity[k][option_entries[k][c]];
            let offer = &scenario.gpus[entry.config.gpu];
            let mut faster = offer.clone();
            faster.profile.bf16_tflops *= SPEEDUP_FACTOR;
            faster.profile.fp8_tflops = faster.profile.fp8_tflops.map(|f| f * SPEEDUP_FACTOR);
            faster.profile.memory_bandwidth_tb_s *= SPEEDUP_FACTOR;
            let (tier_k, demand_k) = (&scenario.tiers[k], &demand.tiers[k]);
            // What the plan credits this configuration with at the busiest
            // slot, before the replay rounds' factor.
            let served = f64::from(n) * option.rps(busiest) / factors[k];
            let after = match scenario.simulation.capacity {
                CapacitySource::Simulated => simulated::fleet(
                    &simulated::Setting::of(scenario, options.cache_dir.as_deref()),
                    &faster,
                    &entry.config,
                    tier_k,
                    demand_k,
                    served,
                    None,
                )
                .map_or(n, |f| f.replicas_needed(served).min(n)),
                CapacitySource::Analytic => {
                    match capacity::evaluate(
                        &faster,
                        &scenario.model,
                        &entry.config,
                        tier_k,
                        demand_k,
                    )
                    .verdict
                    {
                        Verdict::Serves(s) => ((served / s.max_rps) - 1e-9).ceil() as u32,
                        Verdict::Cannot { .. } => n,
                    }
                }
            };
            speedup.push(format!(
                "{} on {}: {} at the busiest slot; with {:.0}% more FLOPS and bandwidth the same traffic needs {}{}",
                tier.name,
                entry.config.label(),
                replicas_and_gpus(n, option.gpus_per_replica),
                (SPEEDUP_FACTOR - 1.0) * 100.0,
                replicas_and_gpus(after, option.gpus_per_replica),
                if after == n { " — no change: whole replicas absorb the gain" } else { "" }
            ));
        }
    }
    Questions {
        capacity_basis,
        slo_met: "not measured yet: this plan sizes every slot so that each tier's percentile TTFT and TPOT limits hold under the queueing model; counting the requests and output tokens that met both limits needs the trace replay against the plan".into(),
        cost_basis: "cost per 1,000 output tokens divides the plan's total cost by all output tokens of the horizon; the cost per 1,000 SLO-met output tokens needs the replay's count of requests meeting both limits, which this plan does not report yet".into(),
        speedup,
    }
}

pub(super) fn slo_met_answer(scenario: &Scenario, v: &Verification) -> String {
    let tiers: Vec<String> = scenario
        .tiers
        .iter()
        .map(|t| {
            let r = &v.tiers[&t.name];
            format!(
                "{}: {} of {} GPU-served requests met both limits ({:.2}%, target {:.0}%){}, {} output tokens SLO-met",
                t.name,
                group_thousands(r.met_both as i64),
                group_thousands((r.served_requests + r.unserved_requests) as i64),
                r.attainment * 100.0,
                r.target * 100.0,
                if r.api_requests > 0 {
                    format!(", plus {} sent to the API", group_thousands(r.api_requests as i64))
                } else {
                    String::new()
                },
                group_thousands(r.goodput_output_tokens as i64)
            )
        })
        .collect();
    format!("on replay of {}: {}", v.method, tiers.join("; "))
}

pub(super) fn cost_basis_answer(v: &Verification) -> String {
    let tiers: Vec<String> = v
        .tiers
        .iter()
        .map(|(name, r)| {
            format!(
                "{name} {:.4} USD per 1,000 output tokens, {:.4} per 1,000 SLO-met output tokens",
                r.cost_per_1k_output_tokens_usd, r.cost_per_1k_goodput_tokens_usd
            )
        })
        .collect();
    format!(
        "over the replayed slots, each slot's GPU spend allocated to tiers by the GPUs they occupy, plus their API spend: {}",
        tiers.join("; ")
    )
}

/// Reserved GPU-hours no replica occupies, with every tier's replicas and
/// with the deadline tiers' taken out.
fn idle_reserved_gpu_hours(input: &MilpInput, solution: &milp::MilpSolution) -> IdleReserved {
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
fn granted_spot_gpu_hours(input: &MilpInput, solution: &milp::MilpSolution) -> f64 {
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
    input: &MilpInput,
    solution: &milp::MilpSolution,
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
fn integer_variables(input: &MilpInput) -> usize {
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
