//! Building the MILP in good_lp and reading HiGHS's answer back as whole
//! GPUs and replicas. The names follow `docs/model.md`.

use super::{MilpError, MilpInput, MilpSolution, SolveStatus, TierInput};
use good_lp::solvers::highs::{highs, HighsProblem};
use good_lp::{
    constraint, variable, Expression, ProblemVariables, ResolutionError, Solution, SolutionStatus,
    SolverModel, Variable, WithInitialSolution,
};

/// The variables of one built model.
pub(super) struct Built {
    pub problem: HighsProblem,
    pub reserved: Vec<Option<Variable>>,
    /// `[k][c][t]`
    pub replicas: Vec<Vec<Vec<Option<Variable>>>>,
    /// `[k][t]`
    pub api: Vec<Vec<Option<Variable>>>,
}

/// How to build the model.
#[derive(Clone, Copy)]
pub(super) struct Mode<'a> {
    /// `false`: the LP relaxation.
    pub integer: bool,
    /// Reserved GPUs fixed to these counts.
    pub fixed_reserved: Option<&'a [u32]>,
    /// A feasible solution to start from.
    pub warm_start: Option<&'a MilpSolution>,
}

pub(super) fn map_error(e: ResolutionError) -> MilpError {
    match e {
        ResolutionError::Infeasible => MilpError::Infeasible,
        other => MilpError::Solver(other.to_string()),
    }
}

pub(super) fn build(input: &MilpInput, mode: Mode<'_>) -> Result<Built, MilpError> {
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
        // With a good plan to start from, HiGHS's own primal heuristics mostly
        // spend time the bound needs (measured in docs/benchmarks.md).
        problem = problem
            .with_initial_solution(initial)
            .set_option("mip_heuristic_run_rins", false)
            .set_option("mip_heuristic_run_rens", false)
            .set_option("mip_heuristic_run_root_reduced_cost", false)
            .set_option("mip_heuristic_run_zi_round", false)
            .set_option("mip_heuristic_run_shifting", false);
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
                    covered.add_mul(option.rps(t), v);
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
/// Σ_c ⌈mu[c,t]/m⌉ replicas[c,t] ≥ ⌈peak/m⌉ holds for any m > 0; one cut per
/// distinct option capacity m. They tell the LP relaxation that replicas come
/// whole, which it otherwise ignores. (Valid only without the continuous API
/// share in the row.)
fn add_rounding_cuts(
    problem: &mut HighsProblem,
    tier: &TierInput,
    replicas: &[Vec<Option<Variable>>],
    t: usize,
    peak: f64,
) {
    let mut divisors: Vec<f64> = tier.options.iter().map(|o| o.rps(t)).collect();
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
                lhs.add_mul((option.rps(t) / m - 1e-9).ceil(), v);
            }
        }
        problem.add_constraint(constraint!(lhs >= rhs));
    }
}

/// Solves a built model and rounds its answer to whole GPUs and replicas.
pub(super) fn solve_built(input: &MilpInput, built: Built) -> Result<MilpSolution, MilpError> {
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
    let api_share: Vec<Vec<f64>> = api
        .iter()
        .map(|tier| {
            tier.iter()
                .map(|v| v.map_or(0.0, |v| solution.value(v).clamp(0.0, 1.0)))
                .collect()
        })
        .collect();
    let mut plan = MilpSolution {
        reserved: reserved_n,
        on_demand: vec![vec![0; input.gpus.len()]; slots],
        replicas: replicas_n,
        api: api_share,
        status,
    };
    // Rented GPUs: what the whole replicas occupy beyond the reserved ones.
    for t in 0..slots {
        for g in 0..input.gpus.len() {
            plan.on_demand[t][g] = plan.gpus_used(input, g, t).saturating_sub(plan.reserved[g]);
        }
    }
    Ok(plan)
}
