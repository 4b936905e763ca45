//! The `solve` pipeline: scenario → demand → capacity → MILP → plan → replay,
//! re-solved with tighter capacity while a tier misses its target.

use crate::capacity::{self, CapacityEntry, Verdict};
use crate::demand::{self, Demand};
use crate::error::PlannerError;
use crate::milp::{self, MilpError};
use crate::plan::{Plan, Round};
use crate::plan_file::PlanFile;
use crate::progress::Progress;
use crate::replay;
use crate::scenario::{self, CapacitySource, Scenario, VerifySlots};
use crate::simcap;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod assemble;
mod feasibility;
mod input;

use assemble::{assemble, cost_basis_answer, slo_met_answer};
use feasibility::{check_servable, explain_infeasible};
use input::milp_input;

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
