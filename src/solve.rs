//! The `solve` pipeline: scenario → demand → capacity → MILP → plan.

use crate::baselines;
use crate::capacity::{self, CapacityEntry, Verdict};
use crate::demand::{self, Demand};
use crate::error::PlannerError;
use crate::milp::{self, ApiTerms, ConfigOption, GpuType, MilpError, MilpInput, TierInput};
use crate::plan::Round;
use crate::plan::{
    total_output_tokens, ConfigUse, CostBreakdown, DemandSummary, GpuPrice, ModelSummary, Plan,
    Prices, Questions, SolverSummary, TierPlan,
};
use crate::plan_file::PlanFile;
use crate::progress::Progress;
use crate::replay::{self, Verification};
use crate::report::group_thousands;
use crate::scenario::{self, CapacitySource, Scenario, VerifySlots};
use crate::simcap;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Speed-up factor used to answer "does a faster chip change the GPU count?".
pub const SPEEDUP_FACTOR: f64 = 1.25;

/// How to run the pipeline.
#[derive(Debug, Clone)]
pub struct SolveOptions {
    pub progress: Progress,
    /// Where HiGHS writes its log, if anywhere.
    pub solver_log: Option<PathBuf>,
    /// Start the MILP from the rounding heuristic's plan (the default).
    pub warm_start: bool,
    /// Where simulated capacities are cached; `None` recomputes them.
    pub cache_dir: Option<PathBuf>,
}

impl SolveOptions {
    /// Defaults: no log, warm start on, the given progress bars.
    pub fn new(progress: Progress) -> Self {
        SolveOptions {
            progress,
            solver_log: None,
            warm_start: true,
            cache_dir: simcap::default_cache_dir(),
        }
    }
}

/// Reads the scenario at `path` and solves it.
pub fn solve_file(path: &Path, options: &SolveOptions) -> Result<Plan, PlannerError> {
    let scenario = scenario::load(path)?;
    solve(&scenario, options)
}

/// Solves a validated scenario: capacity per configuration, the MILP, then
/// (unless `simulation.verify = "off"`) a replay of the traces against the
/// plan; a tier that misses its attainment target has its capacity
/// coefficients multiplied by [`tightening`] and the MILP is solved again,
/// up to `simulation.max_rounds` rounds in all.
pub fn solve(scenario: &Scenario, options: &SolveOptions) -> Result<Plan, PlannerError> {
    let progress = options.progress;
    let verify = scenario.simulation.verify != VerifySlots::Off;
    let (demand, requests) = demand::build_keeping(scenario, progress, verify)?;
    let capacity = capacity_table(scenario, &demand, options);
    check_servable(scenario, &demand, &capacity)?;
    let replay = verify.then(|| replay::traces(scenario, &demand, requests));
    let mut factors = vec![1.0; scenario.tiers.len()];
    let mut rounds = Vec::new();
    loop {
        let tightened = tighten(&capacity, &factors);
        let mut plan = solve_once(scenario, &demand, tightened, &factors, options)?;
        let Some(replay) = &replay else {
            return Ok(plan);
        };
        let plan_file = PlanFile::of(&plan, scenario.planning.slot_minutes);
        let v = replay::verify(
            scenario,
            &demand,
            &plan_file,
            replay,
            scenario.simulation.verify,
            progress,
        );
        let failing: Vec<usize> = scenario
            .tiers
            .iter()
            .enumerate()
            .filter(|(_, t)| !v.tiers[&t.name].meets_target)
            .map(|(k, _)| k)
            .collect();
        rounds.push(Round {
            round: rounds.len() as u32 + 1,
            total_cost_usd: plan.total_cost_usd,
            capacity_factor: named(scenario, &factors),
            attainment: scenario
                .tiers
                .iter()
                .map(|t| (t.name.clone(), v.tiers[&t.name].attainment))
                .collect(),
        });
        if failing.is_empty() || rounds.len() as u32 >= scenario.simulation.max_rounds {
            plan.questions.slo_met = slo_met_answer(scenario, &v);
            plan.questions.cost_basis = cost_basis_answer(&v);
            plan.verification = Some(v);
            plan.rounds = rounds;
            return Ok(plan);
        }
        for k in failing {
            let tier = &scenario.tiers[k];
            let attainment = v.tiers[&tier.name].attainment;
            factors[k] *= tightening(
                attainment,
                tier.percentile / 100.0,
                scenario.simulation.tighten_factor,
            );
        }
    }
}

/// The factor a failing tier's capacity figures are multiplied by:
/// `tighten_factor` once, and once more for every further doubling of the
/// miss rate over the allowed one ((1 − attainment) / (1 − target)), so a
/// tier far from its target moves faster.
pub fn tightening(attainment: f64, target: f64, tighten_factor: f64) -> f64 {
    let allowed = (1.0 - target).max(1e-6);
    let excess = ((1.0 - attainment) / allowed).max(1.0);
    let steps = excess.log2().ceil().max(1.0);
    tighten_factor.powf(steps)
}

/// Per tier, every configuration's capacity, from the source the scenario
/// names (`simulation.capacity`).
pub fn capacity_table(
    scenario: &Scenario,
    demand: &Demand,
    options: &SolveOptions,
) -> Vec<Vec<CapacityEntry>> {
    match scenario.simulation.capacity {
        CapacitySource::Simulated => simcap::evaluate_all(
            scenario,
            &demand.tiers,
            options.cache_dir.as_deref(),
            options.progress,
        ),
        CapacitySource::Analytic => capacity::evaluate_all(
            &scenario.gpus,
            &scenario.model,
            &scenario.tiers,
            &demand.tiers,
        ),
    }
}

/// One MILP solve on the given capacity table, assembled into a plan.
fn solve_once(
    scenario: &Scenario,
    demand: &Demand,
    capacity: Vec<Vec<CapacityEntry>>,
    factors: &[f64],
    options: &SolveOptions,
) -> Result<Plan, PlannerError> {
    let (input, option_entries) = milp_input(scenario, demand, &capacity, options);
    let spinner = options.progress.spinner(&format!(
        "solving the MILP ({} slots, time limit {} s)",
        demand.slots, input.time_limit_s
    ));
    let solved = milp::solve(&input);
    spinner.finish_and_clear();
    let solution = solved.map_err(|e| match e {
        MilpError::Infeasible => PlannerError::Infeasible(explain_infeasible(scenario, demand)),
        MilpError::Solver(msg) => PlannerError::Solver(msg),
    })?;
    Ok(assemble(
        scenario,
        demand,
        capacity,
        &input,
        &option_entries,
        &solution,
        (factors, options),
    ))
}

/// The capacity table with each tier's requests/s per replica multiplied by
/// its factor.
fn tighten(capacity: &[Vec<CapacityEntry>], factors: &[f64]) -> Vec<Vec<CapacityEntry>> {
    capacity
        .iter()
        .zip(factors)
        .map(|(entries, &f)| {
            entries
                .iter()
                .cloned()
                .map(|mut e| {
                    if let Verdict::Serves(s) = &mut e.verdict {
                        s.max_rps *= f;
                    }
                    e
                })
                .collect()
        })
        .collect()
}

fn named(scenario: &Scenario, values: &[f64]) -> BTreeMap<String, f64> {
    scenario
        .tiers
        .iter()
        .zip(values)
        .map(|(t, &v)| (t.name.clone(), v))
        .collect()
}

fn slo_met_answer(scenario: &Scenario, v: &Verification) -> String {
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

fn cost_basis_answer(v: &Verification) -> String {
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

/// Fails when a tier with demand has neither a configuration that meets its
/// SLO nor the API, naming the best figures any configuration reaches.
fn check_servable(
    scenario: &Scenario,
    demand: &Demand,
    capacity: &[Vec<CapacityEntry>],
) -> Result<(), PlannerError> {
    let mut unserved = Vec::new();
    for (k, tier) in scenario.tiers.iter().enumerate() {
        let serves = capacity[k]
            .iter()
            .any(|e| matches!(e.verdict, Verdict::Serves(_)));
        let api = scenario.api.is_some() && tier.api_allowed;
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
        unserved.push(format!(
            "tier `{}` cannot be served: {detail}. Relax the tier's limits, offer a faster GPU type or larger tensor-parallel degrees, or allow the API for this tier",
            tier.name
        ));
    }
    if unserved.is_empty() {
        Ok(())
    } else {
        Err(PlannerError::Infeasible(unserved.join("\n")))
    }
}

fn explain_infeasible(scenario: &Scenario, demand: &Demand) -> String {
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

/// Keeps, per tier and GPU type, the configurations not dominated by one
/// with no more GPUs per replica and at least as much capacity per GPU.
fn non_dominated(entries: &[CapacityEntry]) -> Vec<usize> {
    let serving: Vec<(usize, u32, f64, usize)> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match &e.verdict {
            Verdict::Serves(s) => Some((i, e.gpus_per_replica, s.max_rps, e.config.gpu)),
            Verdict::Cannot { .. } => None,
        })
        .collect();
    serving
        .iter()
        .filter(|&&(i, p, mu, g)| {
            !serving.iter().any(|&(j, q, nu, h)| {
                j != i
                    && h == g
                    && q <= p
                    && nu / f64::from(q) >= mu / f64::from(p)
                    && (q < p || nu / f64::from(q) > mu / f64::from(p) || j < i)
            })
        })
        .map(|&(i, ..)| i)
        .collect()
}

fn api_usd_per_request(scenario: &Scenario, d: &crate::demand::TierDemand) -> Option<f64> {
    scenario.api.as_ref().map(|a| {
        (d.input_tokens.mean * a.usd_per_million_input_tokens
            + d.output_tokens.mean * a.usd_per_million_output_tokens)
            / 1e6
    })
}

/// The MILP's input, and for each tier the capacity-entry index of each option.
fn milp_input(
    scenario: &Scenario,
    demand: &Demand,
    capacity: &[Vec<CapacityEntry>],
    options: &SolveOptions,
) -> (MilpInput, Vec<Vec<usize>>) {
    let gpus = scenario
        .gpus
        .iter()
        .map(|g| GpuType {
            id: g.id.clone(),
            reserved_usd_per_gpu_hour: g.reserved_usd_per_gpu_hour,
            on_demand_usd_per_gpu_hour: g.on_demand_usd_per_gpu_hour,
            max_gpus: g.max_gpus,
        })
        .collect();
    let mut option_entries = Vec::new();
    let tiers = scenario
        .tiers
        .iter()
        .enumerate()
        .map(|(k, tier)| {
            let d = &demand.tiers[k];
            let kept = non_dominated(&capacity[k]);
            let options = kept
                .iter()
                .map(|&i| {
                    let e = &capacity[k][i];
                    let Verdict::Serves(s) = &e.verdict else {
                        unreachable!("only serving entries are kept")
                    };
                    ConfigOption {
                        gpu: e.config.gpu,
                        gpus_per_replica: e.gpus_per_replica,
                        max_rps: s.max_rps,
                    }
                })
                .collect();
            option_entries.push(kept);
            let api = if tier.api_allowed {
                api_usd_per_request(scenario, d).map(|usd| ApiTerms {
                    usd_per_request: usd,
                    tokens_per_request: d.input_tokens.mean + d.output_tokens.mean,
                })
            } else {
                None
            };
            TierInput {
                name: tier.name.clone(),
                peak_rps: d.peak_rps.clone(),
                mean_rps: d.mean_rps.clone(),
                options,
                api,
            }
        })
        .collect();
    let input = MilpInput {
        slot_hours: demand.slot_hours(),
        gpus,
        tiers,
        api_max_tokens_per_minute: scenario.api.as_ref().and_then(|a| a.max_tokens_per_minute),
        mip_gap: scenario.planning.mip_gap,
        time_limit_s: scenario.planning.time_limit_s,
        threads: scenario.planning.threads,
        log_file: options.solver_log.clone(),
        warm_start: options.warm_start,
    };
    (input, option_entries)
}

fn assemble(
    scenario: &Scenario,
    demand: &Demand,
    capacity: Vec<Vec<CapacityEntry>>,
    input: &MilpInput,
    option_entries: &[Vec<usize>],
    solution: &milp::MilpSolution,
    (factors, options): (&[f64], &SolveOptions),
) -> Plan {
    let (reserved_usd, on_demand_usd, api_usd) = milp::cost_usd(input, solution);
    let total = reserved_usd + on_demand_usd + api_usd;
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
                    .map(|(o, replicas)| f64::from(replicas[t]) * o.max_rps)
                    .sum()
            })
            .collect();
        let mut configurations = Vec::new();
        for (c, option) in tier.options.iter().enumerate() {
            let replicas = &solution.replicas[k][c];
            if replicas.iter().all(|&n| n == 0) {
                continue;
            }
            let mut served = 0.0;
            for (t, &capacity_t) in capacity_by_slot.iter().enumerate() {
                if capacity_t <= 0.0 {
                    continue;
                }
                let fraction = f64::from(replicas[t]) * option.max_rps / capacity_t;
                let on_gpus_rps = tier.mean_rps[t] * (1.0 - solution.api[k][t]) * fraction;
                served += on_gpus_rps;
                busy_gpu_hours += on_gpus_rps / option.max_rps
                    * f64::from(option.gpus_per_replica)
                    * input.slot_hours;
            }
            let entry = &capacity[k][option_entries[k][c]];
            configurations.push(ConfigUse {
                config: entry.config.label(),
                gpu_type: entry.config.gpu_type.clone(),
                tensor_parallel: entry.config.tensor_parallel,
                max_batch: entry.config.max_batch,
                gpus_per_replica: option.gpus_per_replica,
                rps_per_replica: option.max_rps,
                share: if total_mean > 0.0 {
                    served / total_mean
                } else {
                    0.0
                },
                replicas_by_slot: replicas.clone(),
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
            .sum::<f64>();
    let api_prices: Vec<Option<f64>> = demand
        .tiers
        .iter()
        .map(|d| api_usd_per_request(scenario, d))
        .collect();
    let integer_variables = input
        .gpus
        .iter()
        .filter(|g| g.reserved_usd_per_gpu_hour.is_some())
        .count()
        + input
            .tiers
            .iter()
            .map(|t| t.options.len() * t.peak_rps.iter().filter(|&&r| r > 0.0).count())
            .sum::<usize>();
    Plan {
        scenario: scenario.name.clone(),
        model: ModelSummary {
            id: scenario.model.id.clone(),
            name: scenario.model.profile.name.clone(),
            precision: scenario.model.precision.clone(),
        },
        total_cost_usd: total,
        cost_per_month_usd: total / horizon_hours * 730.0,
        horizon_hours,
        slot_hours: input.slot_hours,
        costs: CostBreakdown {
            reserved_usd,
            on_demand_usd,
            api_usd,
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
        gpu_utilisation: if provisioned_gpu_hours > 0.0 {
            busy_gpu_hours / provisioned_gpu_hours
        } else {
            0.0
        },
        baselines: baselines::compute(input, &api_prices),
        solver: SolverSummary {
            status: solution.status,
            mip_gap_tolerance: input.mip_gap,
            time_limit_s: input.time_limit_s,
            threads: input.threads,
            integer_variables,
            slots: demand.slots,
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
                            on_demand_usd_per_gpu_hour: g.on_demand_usd_per_gpu_hour,
                            max_gpus: g.max_gpus,
                            source: g.price_source.clone(),
                        },
                    )
                })
                .collect(),
            api: scenario.api.clone(),
        },
        verification: None,
        rounds: Vec::new(),
    }
}

fn replicas_and_gpus(replicas: u32, gpus_per_replica: u32) -> String {
    let plural = |n: u32, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "{} ({})",
        plural(replicas, "replica"),
        plural(replicas * gpus_per_replica, "GPU")
    )
}

fn questions(
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
        .map(|(tier, d)| {
            format!(
                "{}: {} at {} on the tier's own lengths (input mean {:.0}, p99 {}; output mean {:.0}, p99 {}), within-minute arrival CV {:.2}, p{} TTFT ≤ {} ms and TPOT ≤ {} ms; answer quality is that of the served model, the same on every GPU type",
                tier.name,
                scenario.model.profile.name,
                scenario.model.precision.to_uppercase(),
                d.input_tokens.mean,
                d.input_tokens.p99,
                d.output_tokens.mean,
                d.output_tokens.p99,
                d.within_minute_cv,
                tier.percentile,
                tier.ttft_ms,
                tier.tpot_ms
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
            let (gpu, tp, b) = (
                entry.config.gpu,
                entry.config.tensor_parallel,
                entry.config.max_batch,
            );
            let (tier_k, demand_k) = (&scenario.tiers[k], &demand.tiers[k]);
            let sped = match scenario.simulation.capacity {
                CapacitySource::Simulated => simcap::evaluate(
                    &simcap::Setting::of(scenario, options.cache_dir.as_deref()),
                    &faster,
                    gpu,
                    (tp, b),
                    tier_k,
                    demand_k,
                ),
                CapacitySource::Analytic => {
                    capacity::evaluate(&faster, gpu, &scenario.model, tp, b, tier_k, demand_k)
                }
            };
            let served = f64::from(n) * option.max_rps;
            let after = match sped.verdict {
                Verdict::Serves(s) => ((served / (s.max_rps * factors[k])) - 1e-9).ceil() as u32,
                Verdict::Cannot { .. } => n,
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

#[cfg(test)]
mod tests {
    use super::tightening;

    #[test]
    fn tightening_grows_with_the_miss_rate() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // Up to twice the allowed misses: one step.
        assert!(close(tightening(0.985, 0.99, 0.9), 0.9));
        // 3.25% missed against 1% allowed: two doublings, two steps.
        assert!(close(tightening(0.9675, 0.99, 0.9), 0.81));
        // 7.1% missed: three steps.
        assert!(close(tightening(0.929, 0.99, 0.9), 0.729));
        assert!(close(tightening(0.0, 0.99, 0.9), 0.9f64.powi(7)));
    }
}
