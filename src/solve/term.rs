//! Solving over the commitment term when demand grows ([`crate::growth`]):
//! the reserved counts from the term's MILP, the horizon's plan with them.

use super::input::milp_input;
use super::SolveOptions;
use crate::capacity::CapacityEntry;
use crate::demand::Demand;
use crate::growth::{
    HorizonOnly, TermGrowth, TermProjection, MAX_TERM_SLOTS_DECOMPOSED, MAX_TERM_SLOTS_WHOLE,
};
use crate::milp::{self, Method, MilpError, MilpInput, MilpSolution};
use crate::scenario::Scenario;

/// The term's growth and its MILP input.
pub(super) struct Term {
    pub growth: TermGrowth,
    pub input: MilpInput,
}

/// The demand capacity is sized for: with growth, the horizon repeated over
/// the term, so the fleets reach the busiest month's peak.
pub(super) fn sizing_demand(scenario: &Scenario, demand: &Demand) -> Option<Demand> {
    TermGrowth::of(scenario, demand.slots, MAX_TERM_SLOTS_DECOMPOSED).map(|g| g.expand(demand))
}

/// The term's MILP beside the horizon's `horizon` (built from the same
/// capacity, factors and GPU shares); `None` without growth.
pub(super) fn term_input(
    scenario: &Scenario,
    demand: &Demand,
    capacity: &[Vec<CapacityEntry>],
    (factors, gpu_share): (&[f64], &[Vec<f64>]),
    options: &SolveOptions,
    horizon: &MilpInput,
) -> Option<Term> {
    let max_slots = if horizon.method != Method::Monolithic && horizon.decomposable() {
        MAX_TERM_SLOTS_DECOMPOSED
    } else {
        MAX_TERM_SLOTS_WHOLE
    };
    let growth = TermGrowth::of(scenario, demand.slots, max_slots)?;
    let term_demand = growth.expand(demand);
    let shares = growth.repeat(gpu_share);
    let (input, _) = milp_input(
        scenario,
        &term_demand,
        capacity,
        (factors, &shares),
        options,
    );
    Some(Term { growth, input })
}

/// The term's MILP, then the horizon (month 0) solved again with the term's
/// reserved counts fixed. The horizon's solution carries the term's status,
/// and a lower bound that puts it at the term's proven relative gap. The
/// projection compares the term with the reserved counts the horizon alone
/// would choose.
pub(super) fn solve(
    horizon: &MilpInput,
    term: &Term,
    slots: usize,
) -> Result<(MilpSolution, TermProjection), MilpError> {
    let over_term = milp::solve(&term.input)?;
    let mut plan = milp::solve_with_reserved(horizon, &over_term.reserved)?;
    let mut projection = term.growth.project(&term.input, &over_term, slots);
    plan.status = over_term.status;
    plan.method = over_term.method;
    plan.lower_bound_usd = milp::total(horizon, &plan) * (1.0 - projection.proven_gap);
    let alone = milp::solve(horizon)?;
    if alone.reserved != over_term.reserved {
        if let Ok(priced) = milp::solve_with_reserved(&term.input, &alone.reserved) {
            projection.horizon_only = Some(HorizonOnly {
                reserved: horizon
                    .gpus
                    .iter()
                    .zip(&alone.reserved)
                    .map(|(g, &n)| (g.id.clone(), n))
                    .collect(),
                total_usd: term.growth.project(&term.input, &priced, slots).total_usd,
            });
        }
    }
    Ok((plan, projection))
}
