//! Solving over the commitment term when demand grows ([`crate::money::growth`]):
//! the reserved counts from the term's MILP, the horizon's plan with them.

use super::input::{least_equivalent_shares, milp_input, Sizing};
use crate::capacity::CapacityEntry;
use crate::demand::Demand;
use crate::milp::{self, MilpError, Problem, Settings, Solution, SolveStatus};
use crate::money::growth::{
    HorizonOnly, TermFactor, TermGrowth, TermProjection, MAX_TERM_SLOTS_DECOMPOSED,
    MAX_TERM_SLOTS_WHOLE,
};
use crate::scenario::Scenario;
use std::time::Instant;

/// Share of `planning.time_limit_s` the horizon's MILP alone may use, solved
/// first when the term's MILP is built (its plan sets the months' factors).
const ALONE_SHARE: f64 = 1.0 / 6.0;
/// Share of `planning.time_limit_s` the term's MILP may use; the two smaller
/// solves that follow share what is left.
const TERM_MILP_SHARE: f64 = 0.5;

/// The term's growth and its MILP input.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Term {
    pub growth: TermGrowth,
    pub input: Problem,
    /// Per tier, the factor the rounds reached and the one the term's
    /// months are sized with (`input::least_equivalent_shares`).
    pub factors: Vec<(f64, f64)>,
    /// The horizon's MILP solved alone (`None` where it has no plan: the
    /// term's solve then reports why).
    pub alone: Option<Solution>,
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

/// The term's MILP beside the horizon's `horizon` (the MILP of `sizing`,
/// from the same capacity and GPU shares); `None` without growth. Each
/// period is a block no minimum rental or deadline crosses. The horizon is
/// solved alone first, and the months are sized at each tier's least
/// equivalent factor (`input::least_equivalent_shares`): the factor that
/// keeps that plan, without the part of the rounds' factor the replay could
/// not tell from it (the rounds' own where the horizon has no plan).
pub(super) fn term_input(
    scenario: &Scenario,
    demand: &Demand,
    capacity: &[Vec<CapacityEntry>],
    sizing: Sizing<'_>,
    horizon: (&Problem, &Settings),
) -> Option<Term> {
    let (horizon, settings) = horizon;
    let max_slots = match milp::method::chosen(horizon, settings.method).name() {
        milp::Method::Decomposed => MAX_TERM_SLOTS_DECOMPOSED,
        _ => MAX_TERM_SLOTS_WHOLE,
    };
    let growth = TermGrowth::of(scenario, demand.slots, max_slots)?;
    let alone = milp::solve(
        horizon,
        &settings.within(settings.time_limit_s * ALONE_SHARE),
    )
    .ok();
    let months: Vec<f64> = match &alone {
        Some(plan) => least_equivalent_shares(scenario, demand, capacity, sizing, (horizon, plan))
            .iter()
            .zip(sizing.factors)
            .map(|(s, f)| f * s)
            .collect(),
        None => sizing.factors.to_vec(),
    };
    let term_demand = growth.expand(demand);
    let shares = growth.repeat(sizing.gpu_share);
    let window_factors = growth.repeat(sizing.window_factors);
    let mut input = milp_input(
        scenario,
        &term_demand,
        capacity,
        Sizing {
            factors: &months,
            window_factors: &window_factors,
            gpu_share: &shares,
        },
    );
    input.block_slots = Some(demand.slots);
    Some(Term {
        growth,
        input,
        factors: sizing.factors.iter().copied().zip(months).collect(),
        alone,
    })
}

/// The solve over the term, as the plan reports it.
pub(super) struct TermSolved {
    /// The horizon (month 1) with the term's reserved counts.
    pub horizon: Solution,
    pub projection: TermProjection,
    /// The term's status: what its lower bound proves of its cost.
    pub status: SolveStatus,
}

/// The term's MILP; the horizon alone (solved when the term's MILP was
/// built), and the term priced with the reserved counts it would choose;
/// the cheaper of the two reservations over the term is kept, and the
/// horizon (month 1) is solved again with it. `planning.time_limit_s`
/// bounds the four solves together: a sixth for the horizon alone, half for
/// the term's MILP, the rest shared by the other two.
pub(super) fn solve(
    horizon: &Problem,
    settings: &Settings,
    term: &Term,
    slots: usize,
) -> Result<TermSolved, MilpError> {
    let clock = Instant::now();
    let limit_s = settings.time_limit_s * (1.0 - ALONE_SHARE);
    let left_s = |share: f64| (limit_s - clock.elapsed().as_secs_f64()) * share;
    let over_term = milp::solve(
        &term.input,
        &settings.within(settings.time_limit_s * TERM_MILP_SHARE),
    )?;
    let alone = match &term.alone {
        Some(alone) => alone.clone(),
        None => milp::solve(horizon, &settings.within(left_s(1.0 / 3.0)))?,
    };
    let same = alone.reserved == over_term.reserved;
    let alone_over_term = if same {
        None
    } else {
        milp::solve_with_reserved(&term.input, &settings.within(left_s(0.5)), &alone.reserved).ok()
    };
    let cost = |s: &Solution| milp::total(&term.input, s);
    let chosen = match &alone_over_term {
        Some(a) if cost(a) < cost(&over_term) - 1e-9 => a,
        _ => &over_term,
    };
    let plan = milp::solve_with_reserved(horizon, &settings.within(left_s(1.0)), &chosen.reserved)?;
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
    projection.factors = term
        .input
        .tiers
        .iter()
        .zip(&term.factors)
        .map(|(t, &(rounds, months))| (t.name.clone(), TermFactor { rounds, months }))
        .collect();
    let gap = projection.proven_gap;
    let status = if gap <= 1e-6 {
        SolveStatus::Optimal
    } else if gap <= settings.mip_gap + 1e-9 {
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

/// Why the term's MILP has no plan, and what to change.
pub(super) fn infeasible(scenario: &Scenario, t: &Term) -> String {
    format!(
        "over the {}-month term growing {} a month, the busiest month carries {:.2} × the planned demand, more than the GPU quotas ({}) and the API rate limit can cover; raise `max_gpus`, add a GPU type, lower `commitment.monthly_growth` or shorten `commitment.term_months`",
        t.growth.months,
        t.growth.monthly_growth,
        t.growth.peak_factor(),
        scenario
            .gpus
            .iter()
            .map(|g| match g.max_gpus {
                Some(n) => format!("{} ≤ {n}", g.id),
                None => format!("{} unlimited", g.id),
            })
            .collect::<Vec<_>>()
            .join(", ")
    )
}

#[cfg(test)]
mod tests {
    use crate::milp;
    use crate::solve::{solve, test_options};

    #[test]
    fn the_months_are_sized_at_factors_that_keep_the_horizons_plan() {
        let mut scenario = crate::scenario::tiny_fixture();
        scenario.commitment_term_months = Some(12);
        scenario.commitment_monthly_growth = 0.05;
        let o = solve(&scenario, &test_options()).unwrap();
        let term = o.milp.term.as_ref().expect("a term with growth");
        let horizon = &o.milp.problem;
        // The horizon alone, solved once when the term's MILP was built.
        let plan = term.alone.as_ref().expect("the horizon has a plan");
        assert_eq!(
            plan,
            &milp::solve(horizon, &o.milp.settings).unwrap(),
            "the plan the months' factors keep is the horizon's own"
        );
        let mut lowered = 0;
        for (k, (tier, &(rounds, months))) in horizon.tiers.iter().zip(&term.factors).enumerate() {
            assert!(
                months > 0.0 && months <= rounds,
                "{}: {months} vs {rounds}",
                tier.name
            );
            lowered += usize::from(months < rounds);
            // Month 1 of the term is the horizon at the lowered factors: each
            // configuration the plan runs in a slot keeps its replicas there
            // (the same rate per replica); any other needs as many or more.
            for (c, option) in tier.options.iter().enumerate() {
                let month_one = &term.input.tiers[k].options[c].rps_by_slot[..horizon.slots()];
                for (t, (&at_months, &at_rounds)) in
                    month_one.iter().zip(&option.rps_by_slot).enumerate()
                {
                    if plan.replicas[k][c][t] > 0 {
                        assert_eq!(at_months, at_rounds, "{} option {c} slot {t}", tier.name);
                    } else {
                        assert!(at_months <= at_rounds, "{} option {c} slot {t}", tier.name);
                    }
                }
            }
        }
        assert!(
            lowered > 0,
            "no tier's factor sits above the fleets it gives"
        );
        let f = &o.commitment.growth.as_ref().unwrap().factors;
        assert_eq!(f.len(), horizon.tiers.len());
    }
}
