//! A round's trial: its MILP solved (the horizon's, or with growth the
//! term's and the horizon with its reservations) and assembled into a plan;
//! and the alternatives, priced once per solve.

use super::assemble::{assemble, Solved};
use super::feasibility::explain_infeasible;
use super::input::{milp_input, Sizing};
use super::operations;
use super::rounds::{Candidate, RoundMilp, Shared, Trial};
use super::term;
use super::SolveOptions;
use crate::base::error::PlannerError;
use crate::demand::Demand;
use crate::milp::{self, MilpError};
use crate::money::baselines::{self, Baseline};
use crate::scenario::Scenario;
use std::collections::BTreeMap;

impl Candidate {
    /// The round's MILP solved and assembled into a trial.
    pub(super) fn solve(
        &self,
        shared: Shared<'_>,
        milp: &RoundMilp,
    ) -> Result<Trial, PlannerError> {
        let (scenario, demand, options) = (&self.scenario, shared.demand, shared.options);
        let started = std::time::Instant::now();
        let spinner = options.progress.spinner(&match &milp.term {
            None => format!(
                "solving the MILP ({} slots, time limit {} s)",
                demand.slots, milp.settings.time_limit_s
            ),
            Some(t) => format!(
                "solving the MILP over the {}-month term ({} slots, time limit {} s)",
                t.months(),
                t.slots(),
                milp.settings.time_limit_s
            ),
        });
        let solved = match &milp.term {
            None => milp::solve(&milp.problem, &milp.settings).map(|s| (s, None)),
            Some(t) => term::solve(&milp.problem, &milp.settings, t, demand.slots)
                .map(|s| (s.horizon, Some((s.status, s.projection)))),
        };
        spinner.finish_and_clear();
        options
            .timings
            .record(self.stage("MILP")(), started.elapsed().as_secs_f64());
        let (solution, term) = solved.map_err(|e| match e {
            MilpError::Infeasible => PlannerError::Infeasible(match &milp.term {
                None => explain_infeasible(scenario, demand),
                Some(t) => term::infeasible(scenario, t),
            }),
            MilpError::Solver(msg) => PlannerError::Solver(msg),
        })?;
        // The price for complexity, on the horizon's MILP (with growth the
        // term's reservations hold, and the solution stands as solved).
        let started = std::time::Instant::now();
        let (deployments, labels) =
            operations::deployments_of(scenario, &self.capacity, &milp.problem);
        let start: Vec<Vec<bool>> = milp
            .problem
            .tiers
            .iter()
            .enumerate()
            .map(|(k, t)| {
                t.options
                    .iter()
                    .map(|o| !self.ruled_out.contains(&(k, o.entry)))
                    .collect()
            })
            .collect();
        let (solution, pruned) = if term.is_none() {
            let (s, p) = milp::deployments::prune(
                &milp.problem,
                &milp.settings,
                solution,
                &deployments,
                &start,
            )
            .map_err(|e| match e {
                MilpError::Infeasible => {
                    PlannerError::Infeasible(explain_infeasible(scenario, demand))
                }
                MilpError::Solver(msg) => PlannerError::Solver(msg),
            })?;
            // Of the reservations the gap accepts, the fewest GPUs.
            let s = milp::fewest_reserved_if(
                scenario.planning.reserve_fewest_within_gap,
                &milp.problem,
                milp.settings.mip_gap,
                s,
            );
            (s, Some(p))
        } else {
            (solution, None)
        };
        options.timings.record(
            self.stage("deployments priced")(),
            started.elapsed().as_secs_f64(),
        );
        let mut assembled = assemble(
            scenario,
            demand,
            &Solved {
                problem: &milp.problem,
                settings: &milp.settings,
                solution: &solution,
                capacity: &self.capacity,
                factors: &self.factors,
                term: term.as_ref().map(|(status, p)| (*status, p)),
            },
        );
        if let Some(pruned) = &pruned {
            assembled.plan.operations = Some(operations::operations(
                scenario,
                &assembled.plan,
                &deployments,
                &labels,
                pruned,
            ));
        }
        let ruled_out = pruned.as_ref().map_or_else(Default::default, |p| {
            milp.problem
                .tiers
                .iter()
                .enumerate()
                .flat_map(|(k, t)| {
                    t.options
                        .iter()
                        .zip(&p.allowed[k])
                        .filter(|(_, &ok)| !ok)
                        .map(move |(o, _)| (k, o.entry))
                })
                .collect()
        });
        Ok(Trial {
            ruled_out,
            plan: assembled.plan,
            term: term.map(|(_, p)| p),
            capacity: self.capacity.clone(),
            capacity_basis: assembled.capacity_basis,
            speedup: assembled.speedup,
            verification: None,
            milp: std::sync::Arc::new(milp.clone()),
            factors: self.factors.clone(),
            window_factors: self.window_factors.clone(),
            gpu_share: self.gpu_share.clone(),
            window_factor_min: self
                .window_factors
                .iter()
                .map(|w| w.iter().copied().fold(1.0, f64::min))
                .collect(),
        })
    }
}

/// The alternatives to the plan, each the plan's own MILP with one choice
/// taken away ([`baselines`]), priced once per solve on the chosen trial's
/// problem: its capacity table, factors, window factors and GPU shares, and
/// its tiers' access to the API (a tier the rounds kept off the API stays
/// off it, as in the plan), without the options the price for complexity
/// ruled out of the plan (`Trial::ruled_out`: the plan is the optimum of
/// that problem, not of the one with every option). Being restrictions of
/// the plan's problem, none costs less than the plan beyond the MILP's gap.
/// Everything to the API is priced on the API terms the stated scenario
/// gives each tier.
pub(super) fn alternatives(
    stated: &Scenario,
    demand: &Demand,
    options: &SolveOptions,
    trial: &Trial,
) -> BTreeMap<String, Baseline> {
    let sizing = Sizing {
        factors: &trial.factors,
        window_factors: &trial.window_factors,
        gpu_share: &trial.gpu_share,
    };
    options.timings.time(
        || "alternatives priced".into(),
        || {
            let stated_api: Vec<_> = milp_input(stated, demand, &trial.capacity, sizing)
                .tiers
                .iter()
                .map(|t| t.api)
                .collect();
            let models: Vec<(String, Vec<usize>)> = stated
                .models
                .iter()
                .enumerate()
                .map(|(m, model)| {
                    let tiers = (0..stated.tiers.len())
                        .filter(|&k| stated.tiers[k].model == m)
                        .collect();
                    (model.name.clone(), tiers)
                })
                .collect();
            let mut problem = trial.milp.problem.clone();
            for (k, tier) in problem.tiers.iter_mut().enumerate() {
                tier.options
                    .retain(|o| !trial.ruled_out.contains(&(k, o.entry)));
            }
            baselines::compute(
                &problem,
                &stated_api,
                &models,
                &trial.milp.settings,
                stated.planning.reserve_fewest_within_gap,
            )
        },
    )
}
