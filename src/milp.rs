//! The optimiser: a MILP over planning slots (good_lp + HiGHS).
//!
//! Sets: GPU types `g`, tiers `k`, configuration options `c ∈ C[k]` (each on one
//! GPU type with `p[c]` GPUs per replica and capacity `mu[c]` requests/s per
//! replica under tier `k`'s SLO), slots `t`.
//!
//! Variables: `reserved[g]` (integer GPUs, the same in every slot),
//! `on_demand[g,t]` (GPUs rented in slot `t`), `replicas[k,c,t]` (integer),
//! `api[k,t]` ∈ [0, 1] (share of the tier's slot traffic sent to the API).
//!
//! Constraints: `coverage[k,t]`: Σ_c mu[c] replicas[k,c,t] + peak[k,t] api[k,t]
//! ≥ peak[k,t]; `gpus[g,t]`: Σ_{k, c on g} p[c] replicas[k,c,t] ≤ reserved[g] +
//! on_demand[g,t]; `quota[g,t]`: reserved[g] + on_demand[g,t] ≤ max_gpus[g];
//! `api_rate[t]`: Σ_k api[k,t] peak[k,t] tokens[k] × 60 ≤ api tokens/min.
//!
//! Objective: Σ_g reserved[g] × reserved price × horizon hours + Σ_{g,t}
//! on_demand[g,t] × on-demand price × slot hours + Σ_{k,t} api[k,t] ×
//! mean[k,t] × slot seconds × API price per request.

use good_lp::solvers::highs::highs;
use good_lp::{
    constraint, variable, Expression, ProblemVariables, ResolutionError, Solution, SolutionStatus,
    SolverModel, Variable, WithInitialSolution,
};

/// One GPU type as the MILP sees it.
#[derive(Debug, Clone)]
pub struct GpuType {
    pub id: String,
    pub reserved_usd_per_gpu_hour: Option<f64>,
    pub on_demand_usd_per_gpu_hour: Option<f64>,
    pub max_gpus: Option<u32>,
}

/// One way to serve a tier: a configuration and its per-replica capacity.
#[derive(Debug, Clone)]
pub struct ConfigOption {
    /// Index into [`MilpInput::gpus`].
    pub gpu: usize,
    pub gpus_per_replica: u32,
    /// Requests/s one replica sustains under the tier's SLO.
    pub max_rps: f64,
}

/// API terms for one tier.
#[derive(Debug, Clone, Copy)]
pub struct ApiTerms {
    /// USD per request of the tier's mean lengths.
    pub usd_per_request: f64,
    /// Input plus output tokens per request (for the rate limit).
    pub tokens_per_request: f64,
}

/// One tier's demand and options.
#[derive(Debug, Clone)]
pub struct TierInput {
    pub name: String,
    /// Requests/s to cover in each slot.
    pub peak_rps: Vec<f64>,
    /// Mean requests/s in each slot (for API cost).
    pub mean_rps: Vec<f64>,
    pub options: Vec<ConfigOption>,
    /// `None` when the tier may not use the API.
    pub api: Option<ApiTerms>,
}

/// Everything the MILP needs.
#[derive(Debug, Clone)]
pub struct MilpInput {
    pub slot_hours: f64,
    pub gpus: Vec<GpuType>,
    pub tiers: Vec<TierInput>,
    pub api_max_tokens_per_minute: Option<f64>,
    pub mip_gap: f64,
    pub time_limit_s: f64,
    pub threads: u32,
    /// Where HiGHS writes its log (`None`: no log).
    pub log_file: Option<std::path::PathBuf>,
}

impl MilpInput {
    fn slots(&self) -> usize {
        self.tiers
            .iter()
            .map(|t| t.peak_rps.len())
            .max()
            .unwrap_or(0)
    }

    fn horizon_hours(&self) -> f64 {
        self.slots() as f64 * self.slot_hours
    }
}

/// How the solver ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SolveStatus {
    /// Proven optimal (within HiGHS's tolerances).
    Optimal,
    /// Stopped at the requested relative gap.
    GapLimit,
    /// Stopped at the time limit with a feasible plan.
    TimeLimit,
}

/// The MILP's answer, rounded to whole GPUs and replicas.
#[derive(Debug, Clone, PartialEq)]
pub struct MilpSolution {
    /// `reserved[g]`.
    pub reserved: Vec<u32>,
    /// `on_demand[t][g]`: GPUs rented beyond the reserved ones.
    pub on_demand: Vec<Vec<u32>>,
    /// `replicas[k][c][t]`.
    pub replicas: Vec<Vec<Vec<u32>>>,
    /// `api[k][t]`: share of the slot's traffic sent to the API.
    pub api: Vec<Vec<f64>>,
    pub status: SolveStatus,
}

/// Why no solution came back.
#[derive(Debug, Clone, PartialEq)]
pub enum MilpError {
    Infeasible,
    Solver(String),
}

/// Cost of a solution, in USD, from its whole numbers (not the solver's floats).
pub fn cost_usd(input: &MilpInput, s: &MilpSolution) -> (f64, f64, f64) {
    let horizon = input.horizon_hours();
    let reserved: f64 = input
        .gpus
        .iter()
        .zip(&s.reserved)
        .map(|(g, &n)| f64::from(n) * g.reserved_usd_per_gpu_hour.unwrap_or(0.0) * horizon)
        .sum();
    let on_demand: f64 = s
        .on_demand
        .iter()
        .map(|slot| {
            input
                .gpus
                .iter()
                .zip(slot)
                .map(|(g, &n)| {
                    f64::from(n) * g.on_demand_usd_per_gpu_hour.unwrap_or(0.0) * input.slot_hours
                })
                .sum::<f64>()
        })
        .sum();
    let api: f64 = input
        .tiers
        .iter()
        .zip(&s.api)
        .map(|(tier, shares)| match tier.api {
            None => 0.0,
            Some(terms) => shares
                .iter()
                .zip(&tier.mean_rps)
                .map(|(share, mean)| {
                    share * mean * input.slot_hours * 3600.0 * terms.usd_per_request
                })
                .sum(),
        })
        .sum();
    (reserved, on_demand, api)
}

/// The variables of one built model.
struct Built {
    problem: good_lp::solvers::highs::HighsProblem,
    reserved: Vec<Option<Variable>>,
    /// `[k][c][t]`
    replicas: Vec<Vec<Vec<Option<Variable>>>>,
    /// `[k][t]`
    api: Vec<Vec<Option<Variable>>>,
}

/// How to build the model.
#[derive(Clone, Copy)]
struct Mode<'a> {
    /// `false`: the LP relaxation.
    integer: bool,
    /// Reserved GPUs fixed to these counts.
    fixed_reserved: Option<&'a [u32]>,
    /// A feasible solution to start from.
    warm_start: Option<&'a MilpSolution>,
}

/// Solves the MILP.
///
/// Steps: (1) a feasible plan by a heuristic — with reserved counts fixed,
/// every slot is a small independent MILP; starting from the LP relaxation's
/// reserved counts and from none, the counts are re-set to the level where one
/// more reserved GPU would cost more than the on-demand hours it saves, and
/// the slots re-solved, a few times; (2) the full MILP starts from the best
/// such plan and closes the gap. The heuristic plan is returned if the full
/// MILP finds none better in its time limit.
pub fn solve(input: &MilpInput) -> Result<MilpSolution, MilpError> {
    let relaxed = build(
        input,
        Mode {
            integer: false,
            fixed_reserved: None,
            warm_start: None,
        },
    )?;
    let reserved_vars = relaxed.reserved.clone();
    let lp = relaxed.problem.solve().map_err(map_error)?;
    let from_lp: Vec<u32> = reserved_vars
        .iter()
        .map(|v| v.map_or(0, |v| lp.value(v).round().max(0.0) as u32))
        .collect();
    let mut warm: Option<MilpSolution> = None;
    for start in [from_lp, vec![0; input.gpus.len()]] {
        let mut reserved = start;
        for _ in 0..HEURISTIC_ROUNDS {
            let Some(plan) = per_slot_solution(input, &reserved) else {
                break;
            };
            let next = reserved_levels(input, &plan);
            if warm
                .as_ref()
                .is_none_or(|w| total(input, &plan) < total(input, w))
            {
                warm = Some(plan);
            }
            if next == reserved {
                break;
            }
            reserved = next;
        }
    }
    let full = build(
        input,
        Mode {
            integer: true,
            fixed_reserved: None,
            warm_start: warm.as_ref(),
        },
    )?;
    match solve_built(input, full) {
        Ok(best) => match &warm {
            Some(w) if total(input, w) < total(input, &best) - 1e-9 => Ok(w.clone()),
            _ => Ok(best),
        },
        Err(MilpError::Solver(_)) if warm.is_some() => Ok(warm.expect("checked")),
        Err(e) => Err(e),
    }
}

/// Rounds of the reserved-level heuristic per starting point.
const HEURISTIC_ROUNDS: usize = 4;

/// For each GPU type, the reserved count that suits `plan`'s usage: the
/// largest R such that the slots using at least R GPUs, rented on demand,
/// would cost more than reserving the R-th GPU for the whole horizon.
fn reserved_levels(input: &MilpInput, plan: &MilpSolution) -> Vec<u32> {
    let slots = input.slots();
    let horizon = input.horizon_hours();
    input
        .gpus
        .iter()
        .enumerate()
        .map(|(g, gpu)| {
            let Some(reserved_price) = gpu.reserved_usd_per_gpu_hour else {
                return 0;
            };
            let mut usage: Vec<u32> = (0..slots)
                .map(|t| plan.reserved[g] + plan.on_demand[t][g])
                .collect();
            usage.sort_unstable_by(|a, b| b.cmp(a));
            let Some(on_demand_price) = gpu.on_demand_usd_per_gpu_hour else {
                return usage.first().copied().unwrap_or(0);
            };
            // usage[i] is the (i+1)-th largest: reserving level R saves the
            // on-demand price in every slot whose usage is at least R.
            let mut level = 0;
            for r in 1..=usage.first().copied().unwrap_or(0) {
                let slots_using = usage.iter().take_while(|&&u| u >= r).count() as f64;
                if slots_using * on_demand_price * input.slot_hours >= reserved_price * horizon {
                    level = r;
                } else {
                    break;
                }
            }
            level
        })
        .collect()
}

fn total(input: &MilpInput, s: &MilpSolution) -> f64 {
    let (r, o, a) = cost_usd(input, s);
    r + o + a
}

fn map_error(e: ResolutionError) -> MilpError {
    match e {
        ResolutionError::Infeasible => MilpError::Infeasible,
        other => MilpError::Solver(other.to_string()),
    }
}

/// With `reserved` fixed, solves every slot on its own; `None` when a slot is
/// infeasible with those counts (quotas) or a solve fails.
fn per_slot_solution(input: &MilpInput, reserved: &[u32]) -> Option<MilpSolution> {
    let slots = input.slots();
    let mut whole = MilpSolution {
        reserved: reserved.to_vec(),
        on_demand: Vec::with_capacity(slots),
        replicas: input
            .tiers
            .iter()
            .map(|t| vec![Vec::with_capacity(slots); t.options.len()])
            .collect(),
        api: input
            .tiers
            .iter()
            .map(|_| Vec::with_capacity(slots))
            .collect(),
        status: SolveStatus::Optimal,
    };
    for t in 0..slots {
        let mut one = input.clone();
        one.mip_gap = 0.0;
        for tier in &mut one.tiers {
            tier.peak_rps = vec![tier.peak_rps.get(t).copied().unwrap_or(0.0)];
            tier.mean_rps = vec![tier.mean_rps.get(t).copied().unwrap_or(0.0)];
        }
        let built = build(
            &one,
            Mode {
                integer: true,
                fixed_reserved: Some(reserved),
                warm_start: None,
            },
        )
        .ok()?;
        let slot = solve_built(&one, built).ok()?;
        whole.on_demand.push(slot.on_demand[0].clone());
        for (k, tier) in slot.replicas.iter().enumerate() {
            for (c, per_slot) in tier.iter().enumerate() {
                whole.replicas[k][c].push(per_slot[0]);
            }
            whole.api[k].push(slot.api[k][0]);
        }
        if slot.status != SolveStatus::Optimal {
            whole.status = slot.status;
        }
    }
    Some(whole)
}

fn build(input: &MilpInput, mode: Mode<'_>) -> Result<Built, MilpError> {
    let slots = input.slots();
    let horizon = input.horizon_hours();
    let mut vars = ProblemVariables::new();
    let mut objective = Expression::with_capacity(input.gpus.len() * (slots + 1));
    let mut initial: Vec<(Variable, f64)> = Vec::new();
    let int = |def: good_lp::VariableDefinition| if mode.integer { def.integer() } else { def };
    let reserved: Vec<Option<Variable>> = input
        .gpus
        .iter()
        .enumerate()
        .map(|(g, gpu)| {
            gpu.reserved_usd_per_gpu_hour.map(|price| {
                let def = match mode.fixed_reserved {
                    Some(fixed) => variable().min(f64::from(fixed[g])).max(f64::from(fixed[g])),
                    None => {
                        let def = int(variable()).min(0);
                        match gpu.max_gpus {
                            Some(max) => def.max(f64::from(max)),
                            None => def,
                        }
                    }
                };
                let v = vars.add(def);
                objective.add_mul(price * horizon, v);
                if let Some(w) = mode.warm_start {
                    initial.push((v, f64::from(w.reserved[g])));
                }
                v
            })
        })
        .collect();
    let on_demand: Vec<Vec<Option<Variable>>> = (0..slots)
        .map(|t| {
            input
                .gpus
                .iter()
                .enumerate()
                .map(|(g, gpu)| {
                    gpu.on_demand_usd_per_gpu_hour.map(|price| {
                        let v = vars.add(variable().min(0));
                        objective.add_mul(price * input.slot_hours, v);
                        if let Some(w) = mode.warm_start {
                            initial.push((v, f64::from(w.on_demand[t][g])));
                        }
                        v
                    })
                })
                .collect()
        })
        .collect();
    let replicas: Vec<Vec<Vec<Option<Variable>>>> = input
        .tiers
        .iter()
        .enumerate()
        .map(|(k, tier)| {
            (0..tier.options.len())
                .map(|c| {
                    (0..slots)
                        .map(|t| {
                            (tier.peak_rps.get(t).copied().unwrap_or(0.0) > 0.0).then(|| {
                                let v = vars.add(int(variable()).min(0));
                                if let Some(w) = mode.warm_start {
                                    initial.push((v, f64::from(w.replicas[k][c][t])));
                                }
                                v
                            })
                        })
                        .collect()
                })
                .collect()
        })
        .collect();
    let api: Vec<Vec<Option<Variable>>> = input
        .tiers
        .iter()
        .enumerate()
        .map(|(k, tier)| {
            (0..slots)
                .map(|t| {
                    let terms = tier.api?;
                    let peak = tier.peak_rps.get(t).copied().unwrap_or(0.0);
                    (peak > 0.0).then(|| {
                        let v = vars.add(variable().min(0).max(1));
                        let mean = tier.mean_rps.get(t).copied().unwrap_or(0.0);
                        objective
                            .add_mul(mean * input.slot_hours * 3600.0 * terms.usd_per_request, v);
                        if let Some(w) = mode.warm_start {
                            initial.push((v, w.api[k][t]));
                        }
                        v
                    })
                })
                .collect()
        })
        .collect();

    let mut problem = vars
        .minimise(objective)
        .using(highs)
        .set_threads(input.threads)
        .set_option("random_seed", 0)
        .set_option("output_flag", false)
        .set_time_limit(input.time_limit_s);
    problem = problem
        .set_mip_rel_gap(input.mip_gap as f32)
        .map_err(|e| MilpError::Solver(e.to_string()))?;
    if let Some(log) = &input.log_file {
        problem = problem
            .set_option("output_flag", true)
            .set_option("log_to_console", false)
            .set_option("log_file", log.display().to_string().as_str());
    }
    if !initial.is_empty() {
        problem = problem.with_initial_solution(initial);
    }

    for (k, tier) in input.tiers.iter().enumerate() {
        for t in 0..slots {
            let peak = tier.peak_rps.get(t).copied().unwrap_or(0.0);
            if peak <= 0.0 {
                continue;
            }
            let mut covered = Expression::with_capacity(tier.options.len() + 1);
            for (c, option) in tier.options.iter().enumerate() {
                if let Some(v) = replicas[k][c][t] {
                    covered.add_mul(option.max_rps, v);
                }
            }
            if let Some(v) = api[k][t] {
                covered.add_mul(peak, v);
            }
            problem.add_constraint(constraint!(covered >= peak));
            if mode.integer && api[k][t].is_none() {
                add_rounding_cuts(&mut problem, tier, &replicas[k], t, peak);
            }
        }
    }
    for t in 0..slots {
        for (g, gpu) in input.gpus.iter().enumerate() {
            let mut used = Expression::with_capacity(8);
            for (k, tier) in input.tiers.iter().enumerate() {
                for (c, option) in tier.options.iter().enumerate() {
                    if option.gpu == g {
                        if let Some(v) = replicas[k][c][t] {
                            used.add_mul(f64::from(option.gpus_per_replica), v);
                        }
                    }
                }
            }
            let mut owned = Expression::with_capacity(2);
            if let Some(r) = reserved[g] {
                owned.add_mul(1.0, r);
            }
            if let Some(o) = on_demand[t][g] {
                owned.add_mul(1.0, o);
            }
            if let Some(max) = gpu.max_gpus {
                problem.add_constraint(constraint!(owned.clone() <= f64::from(max)));
            }
            problem.add_constraint(constraint!(used <= owned));
        }
        if let Some(limit) = input.api_max_tokens_per_minute {
            let mut tokens = Expression::with_capacity(input.tiers.len());
            for (k, tier) in input.tiers.iter().enumerate() {
                if let (Some(v), Some(terms)) = (api[k][t], tier.api) {
                    tokens.add_mul(tier.peak_rps[t] * terms.tokens_per_request * 60.0, v);
                }
            }
            problem.add_constraint(constraint!(tokens <= limit));
        }
    }
    Ok(Built {
        problem,
        reserved,
        replicas,
        api,
    })
}

/// Chvátal–Gomory cuts of a tier's coverage row: for integer replicas,
/// Σ_c ⌈mu[c]/m⌉ replicas[c] ≥ ⌈peak/m⌉ holds for any m > 0; one cut per
/// distinct option capacity m. They tell the LP relaxation that replicas come
/// whole, which it otherwise ignores. (Valid only without the continuous API
/// share in the row.)
fn add_rounding_cuts(
    problem: &mut good_lp::solvers::highs::HighsProblem,
    tier: &TierInput,
    replicas: &[Vec<Option<Variable>>],
    t: usize,
    peak: f64,
) {
    let mut divisors: Vec<f64> = tier.options.iter().map(|o| o.max_rps).collect();
    divisors.sort_by(f64::total_cmp);
    divisors.dedup();
    for m in divisors {
        let rhs = (peak / m - 1e-9).ceil();
        if rhs <= 1.0 {
            continue;
        }
        let mut lhs = Expression::with_capacity(tier.options.len());
        for (c, option) in tier.options.iter().enumerate() {
            if let Some(v) = replicas[c][t] {
                lhs.add_mul((option.max_rps / m - 1e-9).ceil(), v);
            }
        }
        problem.add_constraint(constraint!(lhs >= rhs));
    }
}

/// Solves a built model and rounds its answer to whole GPUs and replicas.
fn solve_built(input: &MilpInput, built: Built) -> Result<MilpSolution, MilpError> {
    let Built {
        problem,
        reserved,
        replicas,
        api,
        ..
    } = built;
    let slots = input.slots();
    let solution = problem.solve().map_err(map_error)?;
    let status = match solution.status() {
        SolutionStatus::Optimal => SolveStatus::Optimal,
        SolutionStatus::GapLimit => SolveStatus::GapLimit,
        SolutionStatus::TimeLimit => SolveStatus::TimeLimit,
    };
    let whole = |v: Option<Variable>| v.map_or(0, |v| solution.value(v).round().max(0.0) as u32);
    let reserved_n: Vec<u32> = reserved.iter().map(|&v| whole(v)).collect();
    let replicas_n: Vec<Vec<Vec<u32>>> = replicas
        .iter()
        .map(|tier| {
            tier.iter()
                .map(|opt| opt.iter().map(|&v| whole(v)).collect())
                .collect()
        })
        .collect();
    let on_demand_n: Vec<Vec<u32>> = (0..slots)
        .map(|t| {
            (0..input.gpus.len())
                .map(|g| {
                    let used: u32 = input
                        .tiers
                        .iter()
                        .enumerate()
                        .flat_map(|(k, tier)| {
                            let replicas_n = &replicas_n;
                            tier.options
                                .iter()
                                .enumerate()
                                .filter(move |(_, o)| o.gpu == g)
                                .map(move |(c, o)| o.gpus_per_replica * replicas_n[k][c][t])
                        })
                        .sum();
                    used.saturating_sub(reserved_n[g])
                })
                .collect()
        })
        .collect();
    let api_share: Vec<Vec<f64>> = api
        .iter()
        .map(|tier| {
            tier.iter()
                .map(|v| v.map_or(0.0, |v| solution.value(v).clamp(0.0, 1.0)))
                .collect()
        })
        .collect();
    Ok(MilpSolution {
        reserved: reserved_n,
        on_demand: on_demand_n,
        replicas: replicas_n,
        api: api_share,
        status,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny(peaks: Vec<f64>) -> MilpInput {
        MilpInput {
            slot_hours: 1.0,
            gpus: vec![
                GpuType {
                    id: "big".into(),
                    reserved_usd_per_gpu_hour: Some(2.0),
                    on_demand_usd_per_gpu_hour: Some(4.0),
                    max_gpus: None,
                },
                GpuType {
                    id: "small".into(),
                    reserved_usd_per_gpu_hour: Some(0.6),
                    on_demand_usd_per_gpu_hour: Some(1.0),
                    max_gpus: Some(6),
                },
            ],
            tiers: vec![TierInput {
                name: "t".into(),
                mean_rps: peaks.clone(),
                peak_rps: peaks,
                options: vec![
                    ConfigOption {
                        gpu: 0,
                        gpus_per_replica: 2,
                        max_rps: 5.0,
                    },
                    ConfigOption {
                        gpu: 1,
                        gpus_per_replica: 1,
                        max_rps: 1.2,
                    },
                ],
                api: None,
            }],
            api_max_tokens_per_minute: None,
            mip_gap: 0.0,
            time_limit_s: 30.0,
            threads: 1,
            log_file: None,
        }
    }

    /// Brute force over reserved counts and per-slot replica counts.
    fn brute_force(input: &MilpInput) -> f64 {
        let tier = &input.tiers[0];
        let horizon = tier.peak_rps.len() as f64 * input.slot_hours;
        let mut best = f64::INFINITY;
        for r0 in 0..=8u32 {
            for r1 in 0..=6u32 {
                let mut total = f64::from(r0) * 2.0 * horizon + f64::from(r1) * 0.6 * horizon;
                for &peak in &tier.peak_rps {
                    let mut slot_best = f64::INFINITY;
                    for n0 in 0..=6u32 {
                        for n1 in 0..=6u32 {
                            if f64::from(n0) * 5.0 + f64::from(n1) * 1.2 < peak - 1e-9
                                || r1 + (n1.saturating_sub(r1)) > 6
                            {
                                continue;
                            }
                            let od = f64::from((2 * n0).saturating_sub(r0)) * 4.0
                                + f64::from(n1.saturating_sub(r1)) * 1.0;
                            slot_best = slot_best.min(od);
                        }
                    }
                    total += slot_best * input.slot_hours;
                }
                best = best.min(total);
            }
        }
        best
    }

    #[test]
    fn optimum_equals_brute_force() {
        for peaks in [
            vec![3.0, 11.0, 6.5],
            vec![0.5, 0.5, 9.0, 2.0],
            vec![14.0, 13.0, 1.0],
        ] {
            let input = tiny(peaks.clone());
            let s = solve(&input).unwrap();
            let (r, o, a) = cost_usd(&input, &s);
            let expected = brute_force(&input);
            assert!(
                (r + o + a - expected).abs() < 1e-6,
                "peaks {peaks:?}: milp {} vs brute force {expected}",
                r + o + a
            );
        }
    }

    #[test]
    fn api_takes_traffic_when_cheaper_and_respects_the_rate_limit() {
        let mut input = tiny(vec![1.0, 1.0]);
        input.tiers[0].api = Some(ApiTerms {
            usd_per_request: 0.0001,
            tokens_per_request: 1000.0,
        });
        let s = solve(&input).unwrap();
        assert!(
            s.api[0].iter().all(|&a| (a - 1.0).abs() < 1e-6),
            "{:?}",
            s.api
        );
        // At most 30,000 tokens/min = 0.5 requests/s may go to the API.
        input.api_max_tokens_per_minute = Some(30_000.0);
        let s = solve(&input).unwrap();
        assert!(s.api[0].iter().all(|&a| a <= 0.5 + 1e-6), "{:?}", s.api);
    }

    #[test]
    fn quota_can_make_it_infeasible() {
        let mut input = tiny(vec![100.0]);
        input.gpus[0].max_gpus = Some(2);
        assert_eq!(solve(&input), Err(MilpError::Infeasible));
    }
}
