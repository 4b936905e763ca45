//! Solving over the commitment term when demand grows ([`crate::money::growth`]):
//! the reserved counts from the term's MILP, the horizon's plan with them.

use super::input::{least_equivalent_shares, milp_input, Sizing};
use crate::capacity::CapacityEntry;
use crate::demand::Demand;
use crate::milp::{self, MilpError, Problem, Settings, Solution, SolveStatus};
use crate::money::growth::{
    HorizonOnly, Renewal, TermFactor, TermProjection, MAX_TERM_SLOTS_DECOMPOSED,
    MAX_TERM_SLOTS_WHOLE,
};
use crate::money::stages::{self, Stage};
use crate::scenario::Scenario;
use std::collections::BTreeMap;
use std::time::Instant;

/// Share of `planning.time_limit_s` the horizon's MILP alone may use, solved
/// first when the term's MILP is built (its plan sets the months' factors).
const ALONE_SHARE: f64 = 1.0 / 6.0;
/// Share of `planning.time_limit_s` the term's MILP may use; the two smaller
/// solves that follow share what is left.
const TERM_MILP_SHARE: f64 = 0.5;

/// One stage of the term ([`crate::money::stages`]) and its MILP input.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct StageInput {
    pub stage: Stage,
    pub input: Problem,
}

/// The term's stages (one without renewals) and their MILP inputs.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Term {
    pub stages: Vec<StageInput>,
    /// With renewals, one reservation held for the whole term instead: the
    /// cheaper of the two is kept.
    pub held: Option<StageInput>,
    /// Per tier, the factor the rounds reached and the one the term's
    /// months are sized with (`input::least_equivalent_shares`).
    pub factors: Vec<(f64, f64)>,
    /// The horizon's MILP solved alone (`None` where it has no plan: the
    /// term's solve then reports why).
    pub alone: Option<Solution>,
}

impl Term {
    /// The first stage's MILP: the reservations the horizon's plan holds.
    pub(super) fn first(&self) -> &Problem {
        &self.stages[0].input
    }

    /// The term's months.
    pub(super) fn months(&self) -> u32 {
        self.stages.iter().map(|s| s.stage.growth.months).sum()
    }

    /// Slots of every stage's MILP together.
    pub(super) fn slots(&self) -> usize {
        self.stages.iter().map(|s| s.input.slots()).sum()
    }
}

/// The demand capacity is sized for: with growth, the horizon's peaks × the
/// term's busiest month's factor, so the fleets reach that month's peak.
pub(super) fn sizing_demand(scenario: &Scenario, demand: &Demand) -> Option<Demand> {
    let stages = Stage::all(scenario, demand.slots, MAX_TERM_SLOTS_DECOMPOSED)?;
    let factor = Stage::peak_factor(&stages);
    if factor == 1.0 {
        return None;
    }
    let mut sizing = demand.clone();
    for tier in &mut sizing.tiers {
        for rps in &mut tier.peak_rps {
            *rps *= factor;
        }
    }
    Some(sizing)
}

/// The stage's GPU prices: reserved as the stage buys it
/// (`Stage::reserved_usd_per_gpu_hour`), on-demand and spot with the
/// yearly decline.
fn priced(scenario: &Scenario, stage: &Stage, input: &mut Problem) {
    for g in &mut input.gpus {
        let Some(offer) = scenario.gpus.iter().find(|o| o.id == g.id) else {
            continue;
        };
        if g.reserved_usd_per_gpu_hour.is_some() {
            g.reserved_usd_per_gpu_hour = stage.reserved_usd_per_gpu_hour(offer);
        }
        if let Some(usd) = g.on_demand_usd_per_gpu_hour.as_mut() {
            *usd *= stage.price_factor;
        }
        if let Some(spot) = g.spot.as_mut() {
            spot.usd_per_gpu_hour *= stage.price_factor;
        }
    }
}

/// The term's MILPs beside the horizon's `horizon` (the MILP of `sizing`,
/// from the same capacity and GPU shares), one per stage; `None` without
/// growth or renewals. Each period is a block no minimum rental or deadline
/// crosses. The horizon is solved alone first, and the months are sized at
/// each tier's least equivalent factor (`input::least_equivalent_shares`):
/// the factor that keeps that plan, without the part of the rounds' factor
/// the replay could not tell from it (the rounds' own where the horizon has
/// no plan).
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
    let stages = Stage::all(scenario, demand.slots, max_slots)?;
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
    let input_of = |stage: Stage| {
        let growth = &stage.growth;
        let shares = growth.repeat(sizing.gpu_share);
        let window_factors = growth.repeat(sizing.window_factors);
        let mut input = milp_input(
            scenario,
            &growth.expand(demand),
            capacity,
            Sizing {
                factors: &months,
                window_factors: &window_factors,
                gpu_share: &shares,
            },
        );
        input.block_slots = Some(demand.slots);
        priced(scenario, &stage, &mut input);
        StageInput { stage, input }
    };
    let held = Stage::held(scenario, demand.slots, max_slots).map(input_of);
    let stages = stages.into_iter().map(input_of).collect();
    Some(Term {
        stages,
        held,
        factors: sizing.factors.iter().copied().zip(months).collect(),
        alone,
    })
}

/// The solve over the term, as the plan reports it.
pub(super) struct TermSolved {
    /// The horizon (month 1) with the first stage's reserved counts.
    pub horizon: Solution,
    pub projection: TermProjection,
    /// The term's status: what its lower bound proves of its cost.
    pub status: SolveStatus,
}

/// One stage solved: the reservation kept and its projection, and the
/// cost of the horizon alone's reservation over the stage.
struct StageSolved {
    chosen: Solution,
    projection: TermProjection,
    alone_usd: f64,
    timed_out: bool,
}

/// Stage `st`'s MILP within `limit_s`; the horizon alone's counts `alone`
/// priced over it within `alone_limit_s`; the cheaper kept.
fn solve_stage(
    st: &StageInput,
    settings: &Settings,
    (limit_s, alone_limit_s): (f64, f64),
    alone: &Solution,
    slots: usize,
) -> Result<StageSolved, MilpError> {
    let over_stage = milp::solve(&st.input, &settings.within(limit_s))?;
    let alone_over_stage = if alone.reserved == over_stage.reserved {
        None
    } else {
        milp::solve_with_reserved(&st.input, &settings.within(alone_limit_s), &alone.reserved).ok()
    };
    let cost = |sol: &Solution| milp::total(&st.input, sol);
    let chosen = match &alone_over_stage {
        Some(a) if cost(a) < cost(&over_stage) - 1e-9 => a.clone(),
        _ => over_stage.clone(),
    };
    let projection = |sol: &Solution, bound: f64| {
        st.stage
            .growth
            .project((&st.input, sol), slots, None, bound)
    };
    let alone_usd = match &alone_over_stage {
        Some(a) => projection(a, f64::NEG_INFINITY).total_usd,
        None => projection(&chosen, f64::NEG_INFINITY).total_usd,
    };
    Ok(StageSolved {
        projection: projection(&chosen, over_stage.lower_bound_usd),
        chosen,
        alone_usd,
        timed_out: over_stage.status == SolveStatus::TimeLimit,
    })
}

/// Each stage's MILP; the horizon alone (solved when the term's MILP was
/// built), and each stage priced with the reserved counts it would choose;
/// per stage the cheaper of the two reservations is kept. With renewals,
/// one reservation held for the whole term is solved too, and the cheaper
/// of renewing and holding is kept. The horizon (month 1) is solved again
/// with the first reservation's counts. `planning.time_limit_s` bounds the
/// solves together: a sixth for the horizon alone, half for the stages'
/// MILPs, the rest shared by the others.
pub(super) fn solve(
    horizon: &Problem,
    settings: &Settings,
    term: &Term,
    slots: usize,
) -> Result<TermSolved, MilpError> {
    let clock = Instant::now();
    let limit_s = settings.time_limit_s * (1.0 - ALONE_SHARE);
    let left_s = |share: f64| (limit_s - clock.elapsed().as_secs_f64()) * share;
    let alone = match &term.alone {
        Some(alone) => alone.clone(),
        None => milp::solve(horizon, &settings.within(left_s(1.0 / 4.0)))?,
    };
    let count = (term.stages.len() + usize::from(term.held.is_some())) as f64;
    let milp_s = settings.time_limit_s * TERM_MILP_SHARE / count;
    let mut solved = Vec::with_capacity(term.stages.len());
    for (s, st) in term.stages.iter().enumerate() {
        let alone_s = left_s(0.5 / (count - s as f64));
        solved.push(solve_stage(st, settings, (milp_s, alone_s), &alone, slots)?);
    }
    let counts = |sol: &Solution| -> BTreeMap<String, u32> {
        horizon
            .gpus
            .iter()
            .zip(&sol.reserved)
            .map(|(g, &n)| (g.id.clone(), n))
            .collect()
    };
    let renewed_usd: f64 = solved.iter().map(|s| s.projection.total_usd).sum();
    let renewed_bound: f64 = solved.iter().map(|s| s.projection.lower_bound_usd).sum();
    let held = match &term.held {
        Some(h) => Some(solve_stage(
            h,
            settings,
            (milp_s, left_s(0.5)),
            &alone,
            slots,
        )?),
        None => None,
    };
    let held_usd = held.as_ref().map(|h| h.projection.total_usd);
    let held_bound = held.as_ref().map(|h| h.projection.lower_bound_usd);
    // Holding one reservation is kept only when it is cheaper.
    let (stages, solved): (Vec<&StageInput>, Vec<StageSolved>) = match (held, &term.held) {
        (Some(h), Some(input)) if h.projection.total_usd < renewed_usd - 1e-9 => {
            (vec![input], vec![h])
        }
        _ => (term.stages.iter().collect(), solved),
    };
    let mut solved = solved;
    let plan = milp::solve_with_reserved(
        horizon,
        &settings.within(left_s(1.0)),
        &solved[0].chosen.reserved,
    )?;
    // Month 1 alone in the first period: the horizon's own plan prices it.
    let first = stages[0];
    if first.stage.growth.periods[0].months == 1 && first.stage.price_factor == 1.0 {
        solved[0].projection = first.stage.growth.project(
            (&first.input, &solved[0].chosen),
            slots,
            Some((horizon, &plan)),
            solved[0].projection.lower_bound_usd,
        );
    }
    let mut projection = stages::combine(
        stages
            .iter()
            .zip(&solved)
            .map(|(st, s)| (&st.stage, s.projection.clone(), counts(&s.chosen)))
            .collect(),
        stages[0].stage.renewed,
    );
    projection.renewal = held_usd.map(|held_usd| Renewal {
        renewed_usd,
        held_usd,
        renewed: stages[0].stage.renewed,
    });
    // The cheapest term is either way: no plan costs less than the lower
    // of the two bounds.
    if let Some(held_bound) = held_bound {
        let bound = renewed_bound.min(held_bound).min(projection.total_usd);
        projection.lower_bound_usd = bound;
        projection.proven_gap = if projection.total_usd > 0.0 {
            ((projection.total_usd - bound) / projection.total_usd).max(0.0)
        } else {
            0.0
        };
    }
    projection.horizon_only = Some(HorizonOnly {
        reserved: counts(&alone),
        same_reservations: solved.iter().all(|s| s.chosen.reserved == alone.reserved),
        horizon_usd: milp::total(horizon, &alone),
        term_usd: solved.iter().map(|s| s.alone_usd).sum(),
    });
    projection.factors = first
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
    } else if solved.iter().any(|s| s.timed_out) {
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
        t.months(),
        scenario.commitment_monthly_growth,
        Stage::peak_factor(t.stages.iter().map(|s| &s.stage)),
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
                let month_one = &term.first().tiers[k].options[c].rps_by_slot[..horizon.slots()];
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
