//! The decomposed method. The slots are linked only by the reserved counts:
//! with those fixed, every slot is a small problem of its own, solved exactly
//! ([`super::slot_search`]). So the reserved counts are decided by an outer
//! search ([`super::outer_search`]) and the optimum is bounded from below by
//! the Lagrangian bound ([`super::lagrangian`]), which is at least the LP
//! relaxation's. The plan is the cheapest candidate priced; its proven gap
//! is (cost − bound) / cost.
//!
//! Steps: (1) the LP relaxation (bound, reserved counts to start from, and
//! GPU prices to start the multipliers at); (2) candidates from the LP's
//! reserved counts rounded down and up, and from none, each re-levelled;
//! (3) subgradient rounds on the multipliers, each re-levelling from the
//! slots' own usage, until the gap is within `mip_gap`, the steps stall or
//! [`ROUNDS`] are done; (4) while the gap is open, moves of one GPU type's
//! reserved count at a time, then more subgradient rounds; (5) while it is
//! still open, branching on the reserved counts ([`reserved_bound`]), up
//! to [`BRANCH_PRICES`] candidates priced.

use super::lagrangian;
use super::outer_search::OuterSearch;
use super::reserved_bound;
use super::{relaxation, Method, MilpError, Problem, Settings, Solution, SolveStatus};
use std::time::Instant;

/// Most subgradient rounds.
pub(crate) const ROUNDS: usize = 60;

/// Re-levelling rounds per starting point.
const RELEVEL_ROUNDS: usize = 4;

/// Rounds without a better bound before the step size halves.
const PATIENCE: usize = 3;

/// Most passes over the slots the branching on reserved counts makes
/// ([`reserved_bound`]; `Settings::branch_prices`).
pub(crate) const BRANCH_PRICES: usize = 600;

pub(crate) fn solve(input: &Problem, settings: &Settings) -> Result<Solution, MilpError> {
    let clock = Instant::now();
    let in_time = || clock.elapsed().as_secs_f64() < settings.time_limit_s;
    let lp = relaxation::solve(input, settings)?;
    let mut lower = lp.objective_usd - 1e-6 * (1.0 + lp.objective_usd.abs());
    let mut search = OuterSearch::new(input);
    let floor: Vec<u32> = lp
        .values
        .reserved
        .iter()
        .map(|r| (r + 1e-6).floor().max(0.0) as u32)
        .collect();
    let ceil: Vec<u32> = lp
        .values
        .reserved
        .iter()
        .map(|r| (r - 1e-6).ceil().max(0.0) as u32)
        .collect();
    let closed = |lower: f64, search: &OuterSearch| {
        let upper = search.best_usd();
        upper.is_finite() && upper - lower <= settings.mip_gap * upper.abs() + 1e-6
    };
    for start in [floor, ceil, vec![0; input.gpus.len()]] {
        if closed(lower, &search) {
            break;
        }
        search.relevel(&start, RELEVEL_ROUNDS, |s| !closed(lower, s));
    }
    let mut lambda = lagrangian::initial(input, &lp);
    let mut theta = 1.0;
    let mut rounds = 0;
    let mut searched_locally = false;
    while rounds < ROUNDS && !closed(lower, &search) && in_time() {
        let mut stall = 0;
        while rounds < ROUNDS && !closed(lower, &search) && in_time() && theta >= 1e-3 {
            rounds += 1;
            let Some(dual) = lagrangian::evaluate(input, &lambda)? else {
                break;
            };
            if dual.bound_usd > lower + 1e-9 * lower.abs() {
                lower = dual.bound_usd;
                stall = 0;
            } else {
                stall += 1;
                if stall >= PATIENCE {
                    theta /= 2.0;
                    stall = 0;
                }
            }
            let suggested =
                super::heuristic::levels_for_usage(input, |t, g| dual.slots[t].gpus_used[g]);
            search.relevel(&suggested, 2, |s| !closed(lower, s));
            let target = search.best_usd();
            let target = if target.is_finite() {
                target
            } else {
                lower * 1.05 + 1.0
            };
            match lagrangian::step(input, &lambda, &dual, target, theta) {
                Some(next) => lambda = next,
                None => break,
            }
        }
        if closed(lower, &search) || searched_locally || !in_time() {
            break;
        }
        // The bound has stalled: look around the best reserved counts.
        searched_locally = true;
        search.local_search(4, |s| in_time() && !closed(lower, s));
        theta = 0.5;
    }
    if settings.branch_prices > 0 && search.best().is_some() && !closed(lower, &search) && in_time()
    {
        // The Lagrangian bound stalled above the gap: branch on the
        // reserved counts (the cheapest plan may improve on the way).
        let proved = reserved_bound::branch(
            &mut search,
            &lambda,
            settings.mip_gap,
            settings.branch_prices,
            in_time,
        );
        lower = lower.max(proved.lower_bound_usd);
    }
    let Some((reserved, priced)) = search.best().cloned() else {
        // No candidate covers every slot: the reserved counts the quotas
        // allow cannot, so neither can any plan.
        return Err(MilpError::Infeasible);
    };
    let lower = lower.min(priced.cost_usd);
    let gap_usd = priced.cost_usd - lower;
    let status = if gap_usd <= 1e-6 * (1.0 + priced.cost_usd.abs()) {
        SolveStatus::Optimal
    } else if gap_usd <= settings.mip_gap * priced.cost_usd.abs() + 1e-6 {
        SolveStatus::GapLimit
    } else if !in_time() {
        SolveStatus::TimeLimit
    } else {
        SolveStatus::Unproven
    };
    Ok(assemble(input, reserved, &priced.slots, status, lower))
}

/// The cheapest plan with the reserved counts fixed to `reserved`: every
/// slot solved exactly, so it is optimal for those counts.
pub(crate) fn with_reserved(input: &Problem, reserved: &[u32]) -> Result<Solution, MilpError> {
    let mut search = OuterSearch::new(input);
    let cost_usd = search.price(reserved).ok_or(MilpError::Infeasible)?;
    let (reserved, priced) = search.best().cloned().ok_or(MilpError::Infeasible)?;
    Ok(assemble(
        input,
        reserved,
        &priced.slots,
        SolveStatus::Optimal,
        cost_usd,
    ))
}

/// The whole plan from the slots' plans.
fn assemble(
    input: &Problem,
    reserved: Vec<u32>,
    slots: &[super::slot_search::SlotPlan],
    status: SolveStatus,
    lower_bound_usd: f64,
) -> Solution {
    // GPUs used beyond the reserved ones, in whole purchase units.
    let on_demand = slots
        .iter()
        .map(|p| {
            p.gpus_used
                .iter()
                .zip(&reserved)
                .zip(&input.gpus)
                .map(|((&u, &r), g)| {
                    let unit = g.purchase.unit_gpus.max(1);
                    u.saturating_sub(r).div_ceil(unit) * unit
                })
                .collect()
        })
        .collect();
    let replicas: Vec<Vec<Vec<u32>>> = input
        .tiers
        .iter()
        .enumerate()
        .map(|(k, tier)| {
            (0..tier.options.len())
                .map(|c| slots.iter().map(|p| p.replicas[k][c]).collect())
                .collect()
        })
        .collect();
    let api = (0..input.tiers.len())
        .map(|k| slots.iter().map(|p| p.api[k]).collect())
        .collect();
    let spot = Solution::no_spot(&replicas);
    Solution {
        reserved,
        on_demand,
        replicas,
        api,
        spot,
        status,
        lower_bound_usd,
        method: Method::Decomposed,
    }
}
