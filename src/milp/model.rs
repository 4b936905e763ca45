//! Building the MILP in good_lp and reading HiGHS's answer back as whole
//! GPUs and replicas. The names follow `docs/model.md`.

use super::links::{add_link_constraints, LinkVars};
use super::slot_rules::SlotVars;
use super::vars::{arrivals_in, replica_bound, serves_in, Vars};
use super::{Method, MilpError, Problem, Purchase, Settings, Solution, SolveStatus, TierInput};
use good_lp::solvers::highs::{highs, HighsProblem};
use good_lp::{
    constraint, constraint::ConstraintReference, variable, Expression, ProblemVariables,
    ResolutionError, Solution as _, SolutionStatus, SolverModel, Variable, WithInitialSolution,
};

/// The variables of one built model.
pub(super) struct Built {
    pub problem: HighsProblem,
    /// In purchase units.
    pub reserved: Vec<Option<Variable>>,
    /// `[t][g]`, in purchase units.
    pub on_demand: Vec<Vec<Option<Variable>>>,
    /// `[k][c][t]`
    pub replicas: Vec<Vec<Vec<Option<Variable>>>>,
    /// `[k][t]`
    pub api: Vec<Vec<Option<Variable>>>,
    /// The objective, to evaluate a solution by.
    pub objective: Expression,
    /// `gpus[g,t]` rows, `[t][g]` (their duals price a GPU in a slot).
    pub gpu_rows: Vec<Vec<ConstraintReference>>,
    /// `[k][c][t]`
    pub spot: Vec<Vec<Vec<Option<Variable>>>>,
}

/// How to build the model.
#[derive(Clone, Copy)]
pub(super) struct Mode<'a> {
    /// `false`: the LP relaxation.
    pub integer: bool,
    /// Reserved GPUs fixed to these counts.
    pub fixed_reserved: Option<&'a [u32]>,
    /// A feasible solution to start from.
    pub warm_start: Option<&'a Solution>,
}

pub(super) fn map_error(e: ResolutionError) -> MilpError {
    match e {
        ResolutionError::Infeasible => MilpError::Infeasible,
        other => MilpError::Solver(other.to_string()),
    }
}

pub(super) fn build(
    input: &Problem,
    settings: &Settings,
    mode: Mode<'_>,
) -> Result<Built, MilpError> {
    let slots = input.slots();
    let horizon = input.horizon_hours();
    let mut vars = ProblemVariables::new();
    let mut objective = Expression::with_capacity(input.gpus.len() * (slots + 1));
    let mut initial: Vec<(Variable, f64)> = Vec::new();
    let int = |def: good_lp::VariableDefinition| if mode.integer { def.integer() } else { def };
    // `reserved[g]` and `on_demand[g,t]` count purchase units of
    // `unit[g]` GPUs.
    let reserved: Vec<Option<Variable>> = input
        .gpus
        .iter()
        .enumerate()
        .map(|(g, gpu)| {
            let unit = f64::from(gpu.purchase.unit_gpus);
            gpu.reserved_usd_per_gpu_hour.map(|price| {
                let def = if let Some(fixed) = mode.fixed_reserved {
                    let units = (f64::from(fixed[g]) / unit).ceil();
                    variable().min(units).max(units)
                } else {
                    let def = int(variable()).min(0);
                    match gpu.max_gpus {
                        Some(max) => def.max((f64::from(max) / unit).floor()),
                        None => def,
                    }
                };
                let v = vars.add(def);
                objective.add_mul(price * unit * horizon, v);
                if let Some(w) = mode.warm_start {
                    initial.push((v, f64::from(w.reserved[g]) / unit));
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
                    let unit = f64::from(gpu.purchase.unit_gpus);
                    // Whole units once a unit holds several GPUs or a rental
                    // outlasts its slot; otherwise whole replicas make the
                    // count whole already.
                    let whole = gpu.purchase != Purchase::default();
                    gpu.on_demand_usd_per_gpu_hour.map(|price| {
                        let def = variable().min(0);
                        let v = vars.add(if whole { int(def) } else { def });
                        objective.add_mul(price * unit * input.slot_hours, v);
                        if let Some(w) = mode.warm_start {
                            initial.push((v, f64::from(w.on_demand[t][g]) / unit));
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
                            serves_in(tier, t).then(|| {
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
                    let demand = arrivals_in(tier, t);
                    (demand > 0.0).then(|| {
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
    // `spot[k,c,t]`: requested spot replicas, paid for the share granted.
    let spot: Vec<Vec<Vec<Option<Variable>>>> = input
        .tiers
        .iter()
        .map(|tier| {
            tier.options
                .iter()
                .map(|option| {
                    (0..slots)
                        .map(|t| {
                            let terms = input.gpus[option.gpu].spot?;
                            (tier.rules.spot_allowed && serves_in(tier, t)).then(|| {
                                let v = vars.add(int(variable()).min(0));
                                objective.add_mul(
                                    f64::from(option.gpus_per_replica)
                                        * terms.availability
                                        * terms.usd_per_gpu_hour
                                        * input.slot_hours,
                                    v,
                                );
                                v
                            })
                        })
                        .collect()
                })
                .collect()
        })
        .collect();
    let core = Vars {
        reserved,
        on_demand,
        replicas,
        api,
        spot,
    };
    let links = LinkVars::add(input, &core, &mut vars, mode.integer);
    let slot_vars = SlotVars::add(input, &core, &mut vars, mode.integer);

    let objective_kept = objective.clone();
    let mut problem = vars
        .minimise(objective)
        .using(highs)
        .set_threads(settings.threads)
        .set_option("random_seed", 0)
        .set_option("output_flag", false)
        .set_time_limit(settings.time_limit_s);
    problem = problem
        .set_mip_rel_gap(settings.mip_gap as f32)
        .map_err(|e| MilpError::Solver(e.to_string()))?;
    if !mode.integer {
        problem = problem.set_option("presolve", "off");
    }
    if let Some(nodes) = settings.node_limit {
        problem = problem.set_option("mip_max_nodes", i32::try_from(nodes).unwrap_or(i32::MAX));
    }
    if let Some(log) = &settings.log_file {
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
    let mut gpu_rows = Vec::with_capacity(slots);
    for t in 0..slots {
        gpu_rows.push(add_slot_constraints(
            &mut problem,
            input,
            &core,
            &slot_vars,
            t,
            mode.integer,
        ));
    }
    add_link_constraints(&mut problem, input, &core, &links);
    let Vars {
        reserved,
        on_demand,
        replicas,
        api,
        spot,
    } = core;
    Ok(Built {
        problem,
        reserved,
        on_demand,
        replicas,
        api,
        objective: objective_kept,
        gpu_rows,
        spot,
    })
}

impl Vars {
    /// What tier `k`'s replicas cover in slot `t`: Σ_c mu[c,t]
    /// replicas[k,c,t] + Σ_c yield[g(c)] mu[c,t] spot[k,c,t].
    pub(super) fn replica_capacity(&self, input: &Problem, k: usize, t: usize) -> Expression {
        let tier = &input.tiers[k];
        let mut covered = Expression::with_capacity(2 * tier.options.len() + 1);
        for (c, option) in tier.options.iter().enumerate() {
            if let Some(r) = self.replicas[k][c][t] {
                covered.add_mul(option.rps(t), r);
            }
            if let (Some(s), Some(terms)) = (self.spot[k][c][t], input.gpus[option.gpu].spot) {
                covered.add_mul(terms.yield_share * option.rps(t), s);
            }
        }
        covered
    }
}

/// The rows of slot `t` alone: `coverage[k,t]` of every tier without a
/// deadline (with its rounding cuts and `headroom[k,c,t]` rows), `gpus[g,t]`,
/// `quota[g,t]` and `api_rate[t]`.
fn add_slot_constraints(
    problem: &mut HighsProblem,
    input: &Problem,
    v: &Vars,
    slot_vars: &SlotVars,
    t: usize,
    integer: bool,
) -> Vec<ConstraintReference> {
    let mut gpu_rows = Vec::with_capacity(input.gpus.len());
    for (k, tier) in input.tiers.iter().enumerate() {
        let peak = tier.peak_rps.get(t).copied().unwrap_or(0.0);
        if peak <= 0.0 || tier.rules.deadline_slots.is_some() {
            continue;
        }
        let mut covered = v.replica_capacity(input, k, t);
        if let Some(a) = v.api[k][t] {
            covered.add_mul(peak, a);
        }
        let headroom = f64::from(tier.rules.headroom_replicas);
        if headroom > 0.0 {
            for (c, option) in tier.options.iter().enumerate() {
                if let (Some(z), Some(r)) = (slot_vars.runs[k][c][t], v.replicas[k][c][t]) {
                    let most = replica_bound(tier, c, t);
                    problem.add_constraint(constraint!(r <= most * z));
                    let mut after_loss = covered.clone();
                    after_loss.add_mul(-headroom * option.rps(t), z);
                    problem.add_constraint(constraint!(after_loss >= peak));
                }
            }
        }
        problem.add_constraint(constraint!(covered >= peak));
        let has_spot = v.spot[k].iter().any(|s| s[t].is_some());
        if integer && v.api[k][t].is_none() && !has_spot {
            add_rounding_cuts(problem, tier, &v.replicas[k], t, peak);
        }
    }
    for (g, gpu) in input.gpus.iter().enumerate() {
        let unit = f64::from(gpu.purchase.unit_gpus);
        let mut used = Expression::with_capacity(8);
        for (k, tier) in input.tiers.iter().enumerate() {
            for (c, option) in tier.options.iter().enumerate() {
                if option.gpu == g {
                    if let Some(r) = v.replicas[k][c][t] {
                        used.add_mul(f64::from(option.gpus_per_replica), r);
                    }
                }
            }
        }
        let mut owned = Expression::with_capacity(2);
        if let Some(r) = v.reserved[g] {
            owned.add_mul(unit, r);
        }
        if let Some(o) = v.on_demand[t][g] {
            owned.add_mul(unit, o);
        }
        if let Some(max) = gpu.max_gpus {
            // Requested spot GPUs count against the quota too.
            let mut held = owned.clone();
            for (k, tier) in input.tiers.iter().enumerate() {
                for (c, option) in tier.options.iter().enumerate() {
                    if let (true, Some(s)) = (option.gpu == g, v.spot[k][c][t]) {
                        held.add_mul(f64::from(option.gpus_per_replica), s);
                    }
                }
            }
            problem.add_constraint(constraint!(held <= f64::from(max)));
        }
        gpu_rows.push(problem.add_constraint(constraint!(used <= owned)));
    }
    if let Some(limit) = input.api_max_tokens_per_minute {
        let mut tokens = Expression::with_capacity(input.tiers.len());
        for (k, tier) in input.tiers.iter().enumerate() {
            if let (Some(a), Some(terms)) = (v.api[k][t], tier.api) {
                tokens.add_mul(arrivals_in(tier, t) * terms.tokens_per_request * 60.0, a);
            }
        }
        problem.add_constraint(constraint!(tokens <= limit));
    }
    gpu_rows
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
pub(super) fn solve_built(
    input: &Problem,
    settings: &Settings,
    built: Built,
) -> Result<Solution, MilpError> {
    let Built {
        problem,
        reserved,
        on_demand,
        replicas,
        api,
        objective,
        spot,
        ..
    } = built;
    let slots = input.slots();
    let solution = problem.solve().map_err(map_error)?;
    // HiGHS calls a plan optimal once its bound is within its relative gap
    // (`mip_gap`): that proves the gap, not the optimum.
    let status = match solution.status() {
        SolutionStatus::Optimal if settings.mip_gap > 0.0 => SolveStatus::GapLimit,
        SolutionStatus::Optimal => SolveStatus::Optimal,
        SolutionStatus::GapLimit => SolveStatus::GapLimit,
        SolutionStatus::TimeLimit => SolveStatus::TimeLimit,
    };
    // HiGHS stops at the gap when its bound is within `mip_gap` of its own
    // plan's objective (or 1e-6 USD of it); at the time limit it proves
    // nothing this can read back.
    let lower_bound_usd = match status {
        SolveStatus::Optimal | SolveStatus::GapLimit => {
            let objective = solution.eval(&objective);
            objective - (settings.mip_gap * objective.abs()).max(1e-6)
        }
        SolveStatus::TimeLimit | SolveStatus::Unproven => f64::NEG_INFINITY,
    };
    let whole = |v: Option<Variable>| v.map_or(0, |v| solution.value(v).round().max(0.0) as u32);
    let reserved_n: Vec<u32> = reserved
        .iter()
        .zip(&input.gpus)
        .map(|(&v, g)| whole(v) * g.purchase.unit_gpus)
        .collect();
    // `[k][c][t]` variables as whole numbers.
    let whole_by_option = |vars: &[Vec<Vec<Option<Variable>>>]| -> Vec<Vec<Vec<u32>>> {
        vars.iter()
            .map(|tier| {
                tier.iter()
                    .map(|opt| opt.iter().map(|&v| whole(v)).collect())
                    .collect()
            })
            .collect()
    };
    let replicas_n = whole_by_option(&replicas);
    let api_share: Vec<Vec<f64>> = api
        .iter()
        .map(|tier| {
            tier.iter()
                .map(|v| v.map_or(0.0, |v| solution.value(v).clamp(0.0, 1.0)))
                .collect()
        })
        .collect();
    let spot_n = whole_by_option(&spot);
    let mut plan = Solution {
        reserved: reserved_n,
        on_demand: vec![vec![0; input.gpus.len()]; slots],
        replicas: replicas_n,
        api: api_share,
        spot: spot_n,
        status,
        lower_bound_usd,
        method: Method::Monolithic,
    };
    // Rented GPUs: what the whole replicas occupy beyond the reserved ones,
    // in whole units, and never less than the model rents (a unit held
    // through its minimum rental).
    for (t, held) in on_demand.iter().enumerate() {
        for (g, gpu) in input.gpus.iter().enumerate() {
            let unit = gpu.purchase.unit_gpus;
            let needed = plan.gpus_used(input, g, t).saturating_sub(plan.reserved[g]);
            plan.on_demand[t][g] = if gpu.purchase == Purchase::default() {
                needed
            } else {
                needed.div_ceil(unit).max(whole(held[g])) * unit
            };
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{one_type, settings};
    use super::super::{solve, total};

    #[test]
    fn a_purchase_unit_buys_whole_nodes() {
        let mut input = one_type(vec![3.0, 5.0], None);
        let single = solve(&input, &settings()).unwrap();
        assert_eq!(single.on_demand, vec![vec![3], vec![5]]);
        input.gpus[0].purchase.unit_gpus = 4;
        let nodes = solve(&input, &settings()).unwrap();
        assert_eq!(nodes.on_demand, vec![vec![4], vec![8]]);
        assert!((total(&input, &nodes) - 12.0).abs() < 1e-9);
        // Reserved GPUs come in whole nodes too: one node reserved at 0.6
        // for both hours (4.8) and one rented for the second (4) beat two
        // reserved (9.6) and renting only (12).
        input.gpus[0].reserved_usd_per_gpu_hour = Some(0.6);
        let reserved = solve(&input, &settings()).unwrap();
        assert_eq!(reserved.reserved, vec![4]);
        assert_eq!(reserved.on_demand, vec![vec![0], vec![4]]);
        assert!((total(&input, &reserved) - 8.8).abs() < 1e-9);
    }
}
