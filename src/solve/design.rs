//! The draw the plan is sized on, and the draw that checks it.
//!
//! The rounds size the plan on one draw of the traffic: the capacity
//! figures and every round's replay are simulations of
//! `simulation.capacity_seed` (common random numbers for every candidate,
//! round and replay seed). `simulation.seed` draws the replay that checks
//! the plan. When the two seeds are the same (the default) the last round's
//! replay is that check, as it always was. When they differ, the plan the
//! rounds return is replayed with `simulation.seed` over every slot (as the
//! rounds replay it) and that replay is the one reported: a plan checked on
//! traffic it was not fitted to. If it misses a target there, the plan is
//! sized again on that seed's own replays (the rounds once more, with both
//! draws the same) and the report says so (`outcome::DesignCheck`). So a
//! change of `simulation.seed` alone asks whether the purchase holds on
//! another draw of the traffic, and leaves it as it is wherever it does;
//! the band over design draws is `simulation.seed_band`'s, which draws both
//! seeds anew.

use super::candidates;
use super::outcome::{missed_targets, DesignCheck};
use super::record::WithoutApi;
use super::rounds::{Finished, Shared};
use crate::base::error::PlannerError;
use crate::plan::file::PlanFile;
use crate::replay;
use crate::scenario::{Scenario, VerifySlots};

/// `scenario` with its replays drawn from the design seed
/// (`simulation.capacity_seed`): what the rounds size the plan on.
pub(super) fn design_scenario(scenario: &Scenario) -> Scenario {
    let mut design = scenario.clone();
    design.simulation.seed = scenario.simulation.capacity_seed;
    design
}

/// Whether the plan is sized on another draw than the one that checks it.
pub(super) fn apart(scenario: &Scenario) -> bool {
    scenario.simulation.seed != scenario.simulation.capacity_seed
}

/// `designed` (the rounds' result on the design seed's replays) checked
/// with `scenario`'s own seed: replayed over every slot from `shared`, whose
/// traces and slot replays are that seed's. The plan returned with its
/// check, or, where it missed, the rounds run again on this seed's
/// replays.
pub(super) fn check(
    scenario: &Scenario,
    designed: (Finished, Option<WithoutApi>),
    shared: Shared<'_>,
) -> Result<(Finished, Option<WithoutApi>, DesignCheck), PlannerError> {
    let (mut chosen, without_api) = designed;
    let traces = shared
        .replay
        .expect("a plan is checked on another draw only when it is replayed");
    let mut on_seed = chosen.scenario.clone();
    on_seed.simulation.seed = scenario.simulation.seed;
    let plan_file = PlanFile::of(&chosen.trial.plan, on_seed.planning.slot_minutes);
    let options = shared.options;
    let v = options.timings.time(
        || {
            format!(
                "the plan checked on seed {}: every slot replayed",
                scenario.simulation.seed
            )
        },
        || match on_seed.simulation.verify {
            VerifySlots::Sample => {
                replay::verify_every_slot(
                    &on_seed,
                    shared.demand,
                    &plan_file,
                    traces,
                    shared.slot_replays,
                    options.progress,
                )
                .0
            }
            mode => replay::verify_with(
                &on_seed,
                shared.demand,
                &plan_file,
                traces,
                mode,
                shared.slot_replays,
                options.progress,
            ),
        },
    );
    let missed = missed_targets(&on_seed, Some(&v));
    let check = DesignCheck {
        design_seed: scenario.simulation.capacity_seed,
        seed: scenario.simulation.seed,
        met: missed.is_empty(),
        design_total_cost_usd: chosen.trial.plan.total_cost_usd,
        missed,
    };
    if check.met {
        chosen.scenario = on_seed;
        chosen.trial.verification = Some(v);
        return Ok((chosen, without_api, check));
    }
    let (chosen, without_api) = options.timings.time(
        || {
            format!(
                "sized again on seed {}'s replays (the design seed's plan missed there)",
                scenario.simulation.seed
            )
        },
        || candidates::run(scenario, shared),
    )?;
    Ok((chosen, without_api, check))
}

#[cfg(test)]
mod tests {
    use super::{check, design_scenario};
    use crate::base::progress::Progress;
    use crate::replay::slots::SlotReplays;
    use crate::solve::candidates;
    use crate::solve::rounds::{self, Shared};
    use crate::solve::test_options;

    /// The tiny scenario with `scale` times its traffic, checked with seed
    /// 2 and sized on capacity seed 1; the plan designed on `design_scale`
    /// times that traffic.
    fn checked(scale: f64, design_scale: f64) -> (rounds::Finished, super::DesignCheck, f64) {
        let mut scenario = crate::scenario::tiny_fixture();
        scenario.simulation.seed = 2;
        scenario.demand[0].scale *= scale;
        let options = test_options();
        let (demand, requests) =
            crate::demand::build_keeping(&scenario, Progress::hidden(), true).unwrap();
        let traces = crate::replay::traces(&scenario, &demand, requests);
        let replays = SlotReplays::default();
        let shared = Shared {
            demand: &demand,
            replay: Some(&traces),
            slot_replays: &replays,
            options: &options,
        };
        let mut design = design_scenario(&scenario);
        design.demand[0].scale *= design_scale;
        let (design_demand, design_requests) =
            crate::demand::build_keeping(&design, Progress::hidden(), true).unwrap();
        let design_traces = crate::replay::traces(&design, &design_demand, design_requests);
        let design_replays = SlotReplays::default();
        let designed = candidates::run(
            &design,
            Shared {
                demand: &design_demand,
                replay: Some(&design_traces),
                slot_replays: &design_replays,
                options: &options,
            },
        )
        .unwrap();
        let design_usd = designed.0.trial.plan.total_cost_usd;
        let (chosen, _, check) = check(&scenario, designed, shared).unwrap();
        (chosen, check, design_usd)
    }

    fn meets(f: &rounds::Finished) -> bool {
        let v = f.trial.verification.as_ref().expect("replayed");
        v.tiers.values().all(|t| t.meets_target)
    }

    #[test]
    fn a_plan_that_meets_on_the_checking_seed_is_returned_with_that_seeds_replay() {
        let (chosen, check, design_usd) = checked(1.0, 1.0);
        assert!(check.met, "{check:?}");
        assert!(check.missed.is_empty());
        assert_eq!((check.design_seed, check.seed), (1, 2));
        assert_eq!(chosen.trial.plan.total_cost_usd, design_usd);
        assert_eq!(check.design_total_cost_usd, design_usd);
        assert_eq!(chosen.scenario.simulation.seed, 2);
        assert_eq!(chosen.trial.verification.as_ref().unwrap().seed, 2);
        assert!(meets(&chosen));
    }

    #[test]
    fn a_plan_that_misses_on_the_checking_seed_is_sized_again_on_it() {
        // Sized for a thousandth of the traffic (one replica for six
        // requests, which then face 6,000 in two minutes), the plan cannot
        // meet: the check says where it missed, and the plan returned is the
        // rounds' on the checking seed's replays, which meets.
        let (chosen, check, design_usd) = checked(1000.0, 0.001);
        assert!(!check.met);
        assert!(!check.missed.is_empty(), "{check:?}");
        assert_eq!(check.design_total_cost_usd, design_usd);
        assert!(meets(&chosen));
        assert_eq!(chosen.scenario.simulation.seed, 2);
        assert!(chosen.trial.plan.total_cost_usd > design_usd);
    }
}
