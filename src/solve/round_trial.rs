//! A round's trial: its MILP solved (the horizon's, or with growth the
//! term's and the horizon with its reservations) and assembled into a plan,
//! with the alternatives priced beside it on fleets sized for the whole
//! peak.

use super::assemble::{self, assemble, Solved};
use super::feasibility::explain_infeasible;
use super::input::{milp_input, Sizing};
use super::rounds::{Candidate, RoundMilp, Shared, Trial};
use super::term;
use crate::base::error::PlannerError;
use crate::milp::{self, MilpError};
use crate::money::baselines;

impl Candidate {
    /// The round's MILP solved and assembled into a trial, with the
    /// alternatives priced on fleets sized for the whole peak.
    pub(super) fn solve(
        &self,
        shared: Shared<'_>,
        milp: &RoundMilp,
    ) -> Result<Trial, PlannerError> {
        let (scenario, demand, options) = (&self.scenario, shared.demand, shared.options);
        // The alternatives serve every request on GPUs (but all-api): they
        // are priced on fleets sized for the whole peak, not on the
        // per-replica rates of fleets sized for the share a round's GPUs
        // carry, which a small share makes low.
        let whole = vec![vec![1.0; demand.slots]; scenario.tiers.len()];
        let api_prices = assemble::api_prices(scenario, demand);
        let started = std::time::Instant::now();
        let baselines = if self.gpu_share == whole {
            baselines::compute(&milp.problem, &api_prices)
        } else {
            let sizing = Sizing {
                gpu_share: &whole,
                ..self.sizing()
            };
            baselines::compute(
                &milp_input(scenario, demand, &self.capacity, sizing),
                &api_prices,
            )
        };
        options.timings.record(
            self.stage("alternatives priced")(),
            started.elapsed().as_secs_f64(),
        );
        let started = std::time::Instant::now();
        let spinner = options.progress.spinner(&match &milp.term {
            None => format!(
                "solving the MILP ({} slots, time limit {} s)",
                demand.slots, milp.settings.time_limit_s
            ),
            Some(t) => format!(
                "solving the MILP over the {}-month term ({} slots, time limit {} s)",
                t.growth.months,
                t.input.slots(),
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
        let assembled = assemble(
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
        Ok(Trial {
            plan: assembled.plan,
            term: term.map(|(_, p)| p),
            baselines,
            capacity: self.capacity.clone(),
            capacity_basis: assembled.capacity_basis,
            speedup: assembled.speedup,
            verification: None,
            milp: std::sync::Arc::new(milp.clone()),
            factors: self.factors.clone(),
            window_factor_min: self
                .window_factors
                .iter()
                .map(|w| w.iter().copied().fold(1.0, f64::min))
                .collect(),
        })
    }
}
