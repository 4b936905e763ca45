//! The monolithic method: the whole model in HiGHS, started from the
//! rounding heuristic's plan.

use super::model::{build, solve_built, Mode};
use super::{
    heuristic, relaxation, total, Method, MilpError, Problem, Settings, Solution, SolveStatus,
};

/// Steps: (1) the LP relaxation; (2) a whole-number plan by rounding it
/// ([`heuristic::round`]), with reserved counts re-set a few times to the
/// level where one more reserved GPU would cost more than the on-demand hours
/// it saves; (3) the full MILP, started from the best such plan, closes the
/// gap. The heuristic plan is returned if the full MILP finds none better in
/// its time limit.
///
/// The lower bound: on the bare model, the larger of the LP relaxation's
/// and the one HiGHS's stopping rule proves when it stops at the gap; when
/// HiGHS starts from the heuristic's plan, the LP relaxation's alone: HiGHS
/// has then been seen to stop as "optimal" above a cheaper feasible plan
/// (two slots, two tiers: 62.8 USD where 62 USD was feasible; see
/// `docs/model.md` §4).
pub(super) fn solve(input: &Problem, settings: &Settings) -> Result<Solution, MilpError> {
    let lp = relaxation::solve(input, settings)?;
    let lp_bound = lp.objective_usd - 1e-6 * (1.0 + lp.objective_usd.abs());
    let with_lp_bound = |mut s: Solution| {
        s.lower_bound_usd = s.lower_bound_usd.max(lp_bound);
        s.method = Method::Monolithic;
        if s.status == SolveStatus::GapLimit
            && total(input, &s) - s.lower_bound_usd <= 1e-6 * (1.0 + total(input, &s).abs())
        {
            s.status = SolveStatus::Optimal;
        }
        s
    };
    // Started from a plan, HiGHS's own stopping claim is not trusted: the
    // status says what the LP bound proves.
    let lp_bound_only = |mut s: Solution| {
        s.lower_bound_usd = lp_bound;
        s.method = Method::Monolithic;
        let cost = total(input, &s);
        if s.status != SolveStatus::TimeLimit
            && cost - lp_bound > settings.mip_gap * cost.abs() + 1e-6
        {
            s.status = SolveStatus::Unproven;
        }
        s
    };
    // The rounding heuristic knows no purchase unit, minimum rental or
    // tier rule: with one in force HiGHS starts from the bare model.
    let bare = !settings.warm_start || input.has_purchase_rules();
    if bare {
        let bare = Mode {
            integer: true,
            fixed_reserved: None,
            warm_start: None,
        };
        return solve_built(input, settings, build(input, settings, bare)?).map(with_lp_bound);
    }
    let warm = heuristic::best_rounding(input, settings, &lp.values);
    let full = build(
        input,
        settings,
        Mode {
            integer: true,
            fixed_reserved: None,
            warm_start: warm.as_ref(),
        },
    )?;
    match solve_built(input, settings, full) {
        Ok(best) => match &warm {
            Some(w) if total(input, w) < total(input, &best) - 1e-9 => {
                Ok(lp_bound_only(Solution {
                    status: best.status,
                    ..w.clone()
                }))
            }
            _ => Ok(lp_bound_only(best)),
        },
        Err(MilpError::Solver(_)) if warm.is_some() => Ok(lp_bound_only(Solution {
            status: SolveStatus::TimeLimit,
            ..warm.expect("checked")
        })),
        Err(e) => Err(e),
    }
}

/// The whole model in HiGHS with the reserved counts fixed to `reserved`.
pub(super) fn with_reserved(
    input: &Problem,
    settings: &Settings,
    reserved: &[u32],
) -> Result<Solution, MilpError> {
    let mode = Mode {
        integer: true,
        fixed_reserved: Some(reserved),
        warm_start: None,
    };
    let mut solved = solve_built(input, settings, build(input, settings, mode)?)?;
    solved.method = Method::Monolithic;
    Ok(solved)
}
