//! Solving over the commitment term when demand grows ([`crate::money::growth`]):
//! the reserved counts from the term's MILP, the horizon's plan with them.

use super::input::milp_input;
use super::SolveOptions;
use crate::capacity::CapacityEntry;
use crate::demand::Demand;
use crate::milp::{self, Method, MilpError, MilpInput, MilpSolution, SolveStatus};
use crate::money::growth::{
    HorizonOnly, TermGrowth, TermProjection, MAX_TERM_SLOTS_DECOMPOSED, MAX_TERM_SLOTS_WHOLE,
};
use crate::scenario::Scenario;
use std::time::Instant;

/// Share of `planning.time_limit_s` the term's MILP may use; the three
/// smaller solves that follow share what is left.
const TERM_MILP_SHARE: f64 = 0.5;

/// The term's growth and its MILP input.
pub(super) struct Term {
    pub growth: TermGrowth,
    pub input: MilpInput,
}

/// The demand capacity is sized for: with growth, the horizon's peaks × the
/// term's busiest month's factor, so the fleets reach that month's peak.
pub(super) fn sizing_demand(scenario: &Scenario, demand: &Demand) -> Option<Demand> {
    let growth = TermGrowth::of(scenario, demand.slots, MAX_TERM_SLOTS_DECOMPOSED)?;
    let mut sizing = demand.clone();
    for tier in &mut sizing.tiers {
        for rps in &mut tier.peak_rps {
            *rps *= growth.peak_factor();
        }
    }
    Some(sizing)
}

/// The term's MILP beside the horizon's `horizon` (built from the same
/// capacity, factors and GPU shares); `None` without growth. Each period is
/// a block no minimum rental or deadline crosses.
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
    let (mut input, _) = milp_input(
        scenario,
        &term_demand,
        capacity,
        (factors, &shares),
        options,
    );
    input.block_slots = Some(demand.slots);
    Some(Term { growth, input })
}

/// The solve over the term, as the plan reports it.
pub(super) struct TermSolved {
    /// The horizon (month 1) with the term's reserved counts.
    pub horizon: MilpSolution,
    pub projection: TermProjection,
    /// The term's status: what its lower bound proves of its cost.
    pub status: SolveStatus,
}

fn within(input: &MilpInput, time_limit_s: f64) -> MilpInput {
    MilpInput {
        time_limit_s: time_limit_s.max(1.0),
        ..input.clone()
    }
}

/// The term's MILP; the horizon alone, and the term priced with the
/// reserved counts it would choose; the cheaper of the two reservations
/// over the term is kept, and the horizon (month 1) is solved again with it.
/// `planning.time_limit_s` bounds the four solves together: half for the
/// term's MILP, the rest shared by the others.
pub(super) fn solve(
    horizon: &MilpInput,
    term: &Term,
    slots: usize,
) -> Result<TermSolved, MilpError> {
    let clock = Instant::now();
    let limit_s = horizon.time_limit_s;
    let left_s = |share: f64| (limit_s - clock.elapsed().as_secs_f64()) * share;
    let over_term = milp::solve(&within(&term.input, limit_s * TERM_MILP_SHARE))?;
    let alone = milp::solve(&within(horizon, left_s(1.0 / 3.0)))?;
    let same = alone.reserved == over_term.reserved;
    let alone_over_term = if same {
        None
    } else {
        milp::solve_with_reserved(&within(&term.input, left_s(0.5)), &alone.reserved).ok()
    };
    let cost = |s: &MilpSolution| milp::total(&term.input, s);
    let chosen = match &alone_over_term {
        Some(a) if cost(a) < cost(&over_term) - 1e-9 => a,
        _ => &over_term,
    };
    let plan = milp::solve_with_reserved(&within(horizon, left_s(1.0)), &chosen.reserved)?;
    let mut projection = term.growth.project(
        (&term.input, chosen),
        slots,
        Some((horizon, &plan)),
        over_term.lower_bound_usd,
    );
    projection.horizon_only = Some(HorizonOnly {
        reserved: horizon
            .gpus
            .iter()
            .zip(&alone.reserved)
            .map(|(g, &n)| (g.id.clone(), n))
            .collect(),
        same_reservations: alone.reserved == chosen.reserved,
        horizon_usd: milp::total(horizon, &alone),
        term_usd: match &alone_over_term {
            Some(a) => {
                term.growth
                    .project((&term.input, a), slots, None, f64::NEG_INFINITY)
                    .total_usd
            }
            None => projection.total_usd,
        },
    });
    let gap = projection.proven_gap;
    let status = if gap <= 1e-6 {
        SolveStatus::Optimal
    } else if gap <= horizon.mip_gap + 1e-9 {
        SolveStatus::GapLimit
    } else if over_term.status == SolveStatus::TimeLimit {
        SolveStatus::TimeLimit
    } else {
        SolveStatus::Unproven
    };
    Ok(TermSolved {
        horizon: plan,
        projection,
        status,
    })
}
