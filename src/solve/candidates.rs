//! The candidates whose rounds a solve runs: the scenario as it stands,
//! then, when its plan sends a tier to the API, the scenario with those
//! tiers kept off it; and which of their plans is returned, with the
//! comparison (`without_api`). `docs/model.md` §5, the `kept-off-api` move.

use super::record::{Move, Rule, WithoutApi};
use super::rounds::{Candidate, Finished, Reached, Shared};
use super::term;
use crate::base::error::PlannerError;
use crate::scenario::Scenario;

/// Runs the candidates of `scenario` to their stops and returns the plan
/// chosen among them, with the comparison when a second candidate ran.
pub(super) fn run(
    scenario: &Scenario,
    shared: Shared<'_>,
) -> Result<(Finished, Option<WithoutApi>), PlannerError> {
    let first = Candidate::start(scenario.clone(), shared, "plan")?;
    let first_table = first.capacity.clone();
    let (first, reached) = to_the_end(first, shared)?;
    let next = kept_off_api(&first);
    if next.is_empty() {
        return Ok(compare(vec![first]));
    }
    let mut kept_off = scenario.clone();
    for &k in &next {
        kept_off.tiers[k].api_allowed = false;
    }
    // Without the API the GPU quotas may not cover the tier: then the plan
    // with the API stands.
    let candidate = || {
        let sizing = term::sizing_demand(&kept_off, shared.demand);
        Candidate::with_table(
            kept_off.clone(),
            shared,
            "kept off the API",
            sizing,
            first_table.clone(),
        )
    };
    // The kept-off tiers start at factor 1 (their factor was measured on
    // fleets that carried the API's leftover share); where the first
    // candidate's rounds had moved it, the candidate also goes on from
    // there, and the cheaper of the two that meets is the one compared.
    let mut starts = vec![next.clone()];
    if next.iter().any(|&k| reached.factors[k] != 1.0) {
        starts.push(Vec::new());
    }
    // The two starts side by side, each on a core (each candidate's own
    // work is deterministic; the cheaper is taken in the starts' order).
    let finished = crate::base::parallel::map_in_order(&starts, |reset| {
        let c = candidate().ok()?;
        to_the_end(c.starting_from(reached.clone(), reset), shared)
            .ok()
            .map(|(f, _)| f)
    });
    let mut best: Option<Finished> = None;
    for f in finished
        .into_iter()
        .filter_map(|f| f.expect("a candidate kept off the API panicked"))
    {
        if best.as_ref().is_none_or(|b| f.replaces(b)) {
            best = Some(f);
        }
    }
    Ok(compare(std::iter::once(first).chain(best).collect()))
}

/// A candidate's rounds to their stop: the candidate finished, and where
/// its rules left the factors.
fn to_the_end(
    mut candidate: Candidate,
    shared: Shared<'_>,
) -> Result<(Finished, Reached), PlannerError> {
    loop {
        if let Some(stop) = candidate.step(shared)? {
            let reached = candidate.reached();
            return Ok((candidate.finish(stop), reached));
        }
    }
}

/// The tiers of a finished candidate that send traffic to the API: the
/// scenario is solved again with them kept off it, whether or not the rounds
/// tightened them, so that the plan returned is the cheaper of the two that
/// meet (a what-if that makes the API cheaper then never returns a dearer
/// plan than the one without it).
fn kept_off_api(done: &Finished) -> Vec<usize> {
    if done.rounds.is_empty() {
        return Vec::new();
    }
    let plan = &done.trial.plan;
    done.scenario
        .tiers
        .iter()
        .enumerate()
        .filter(|(_, t)| plan.tiers.get(&t.name).is_some_and(|p| p.api_share > 0.0))
        .map(|(k, _)| k)
        .collect()
}

/// The candidate returned: the kept-off-the-API one when it meets every
/// target and the first does not or costs more; the first records the move
/// that started the second.
fn compare(mut finished: Vec<Finished>) -> (Finished, Option<WithoutApi>) {
    let other = (finished.len() > 1).then(|| finished.remove(1));
    let mut plan = finished.remove(0);
    let Some(other) = other else {
        return (plan, None);
    };
    let kept: Vec<String> = plan
        .scenario
        .tiers
        .iter()
        .zip(&other.scenario.tiers)
        .filter(|(a, b)| a.api_allowed && !b.api_allowed)
        .map(|(a, _)| a.name.clone())
        .collect();
    // The factor each kept tier's rounds went on from.
    let went_on_from = |name: &String| {
        other
            .rounds
            .first()
            .and_then(|r| r.capacity_factor.get(name).copied())
            .unwrap_or(1.0)
    };
    if let Some(last) = plan.rounds.last_mut() {
        for name in &kept {
            last.moves.push(Move {
                tier: name.clone(),
                rule: Rule::KeptOffApi,
                factor_before: last.capacity_factor.get(name).copied().unwrap_or(1.0),
                factor_after: went_on_from(name),
                attainment: last.attainment.get(name).copied().unwrap_or(0.0),
                windows: Vec::new(),
            });
        }
    }
    let meets = |f: &Finished| f.trial.meets_targets();
    let cost = |f: &Finished| f.trial.plan.total_cost_usd;
    let take = other.replaces(&plan);
    let mut without = WithoutApi {
        tiers: kept,
        total_cost_usd: cost(&other),
        meets_targets: meets(&other),
        with_api_total_cost_usd: cost(&plan),
        with_api_meets_targets: meets(&plan),
        other_rounds: Vec::new(),
        chosen: take,
    };
    let (chosen, mut not_chosen) = if take { (other, plan) } else { (plan, other) };
    without.other_rounds = std::mem::take(&mut not_chosen.rounds);
    (chosen, Some(without))
}
