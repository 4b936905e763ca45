//! The confidence band's pessimistic edge of a plan: every configuration the
//! plan runs at a tier's busiest slot simulated again with its steps slower
//! by the measured error of its engine's profile on its GPU and precision
//! (steps with prompt tokens by the TTFT error, decode-only steps by the
//! TPOT error: `EngineProfile::errors`), and the plan's MILP solved again
//! with every option's requests/s scaled by the replicas the plan runs over
//! the replicas the slower steps need. Priced by the MILP, not replayed,
//! like question 4's speeds (`docs/model.md` §5).

use super::questions::SpeedupCase;
use super::rounds::Finished;
use super::SolveOptions;
use crate::capacity::probe::{replicas_on, slowed};
use crate::demand::Demand;
use crate::money::band::{BandConfiguration, BandEdge};
use crate::profiles::engine::StepSlowdown;
use std::collections::{BTreeMap, BTreeSet};

/// The `<engine> <GPU> <precision>` group of capacity entry `entry`, and
/// its measured (TTFT, TPOT) errors if any run measured them.
fn group_error(
    finished: &Finished,
    entry: &crate::capacity::CapacityEntry,
) -> (String, Option<(f64, f64)>) {
    let (group, error) = group_basis(finished, entry);
    (group, error.map(|(e, _)| e))
}

/// The (TTFT, TPOT) band of the engine of capacity entry `entry` over all
/// its runs (`errors.all`), if any run measured it: what a group no run
/// measured is slowed by at the edge when the plan does not run it.
fn engine_error(finished: &Finished, entry: &crate::capacity::CapacityEntry) -> Option<(f64, f64)> {
    let engine = finished.scenario.gpus[entry.gpu].engine.as_ref()?;
    engine
        .profile
        .errors
        .get("all")
        .map(crate::profiles::engine::MeasuredError::band)
}

/// The (TTFT, TPOT) errors of a group and the runs they rest on.
type Basis = ((f64, f64), String);

/// [`group_error`] with the runs it rests on.
fn group_basis(
    finished: &Finished,
    entry: &crate::capacity::CapacityEntry,
) -> (String, Option<Basis>) {
    let offer = &finished.scenario.gpus[entry.gpu];
    let c = &entry.config;
    let group = format!("{} {} {}", c.engine, c.gpu_type, c.precision);
    let error = offer
        .engine
        .as_ref()
        .and_then(|e| e.profile.error_basis(&c.gpu_type, c.precision))
        .map(|(e, basis)| (e.band(), basis));
    (group, error)
}

/// What the edge's probe found of a configuration the plan runs.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Probed {
    /// The plan does not run it: not probed.
    No,
    /// No fleet of it keeps the tier's limits at the edge.
    CannotKeep,
    /// Its replicas now and at the edge.
    Replicas(u32, u32),
}

/// An option's requests/s at the edge over its figures', or `None` when it
/// leaves the edge's MILP. `probed`: what the probe of its own
/// configuration found; `group`: the replicas now and at the edge summed
/// over its group's probed configurations; `error`: its group's measured
/// error; `engine`: its engine's error over all its runs.
fn edge_scale(
    probed: Probed,
    group: Option<(u32, u32)>,
    error: Option<(f64, f64)>,
    engine: Option<(f64, f64)>,
) -> Option<f64> {
    // To first order: 1 / (1 + the larger of the TTFT and TPOT errors).
    let first_order = |(ttft, tpot): (f64, f64)| 1.0 / (1.0 + f64::max(ttft, tpot));
    match (probed, group, error) {
        (Probed::CannotKeep, _, _) => None,
        (Probed::Replicas(now, after), _, _) | (Probed::No, Some((now, after)), _) => {
            Some(f64::from(now) / f64::from(after))
        }
        // A group the plan does not run: by its own measured error or, where
        // no run measured it, its engine's over all its runs.
        (Probed::No, None, Some(e)) => Some(first_order(e)),
        (Probed::No, None, None) => engine.map(first_order),
    }
}

/// The plan at the band's pessimistic edge; `None` when the plan runs no
/// configuration on GPUs.
pub(super) fn edge(chosen: &Finished, demand: &Demand, options: &SolveOptions) -> Option<BandEdge> {
    let scenario = &chosen.scenario;
    let cases: &[SpeedupCase] = &chosen.trial.speedup;
    if cases.is_empty() {
        return None;
    }
    let capacity = &chosen.trial.capacity;
    // Each configuration's fleets at the edge, on its own core.
    let configurations: Vec<BandConfiguration> =
        crate::base::parallel::map_in_order(cases, |case| {
            let entry = &capacity[case.tier][case.entry];
            let (_, basis) = group_basis(chosen, entry);
            let error = basis.as_ref().map(|b| b.0);
            let replicas_at_edge = match error {
                None => Some(case.replicas),
                Some((ttft, tpot)) => {
                    let offer = slowed(
                        &scenario.model_of(case.tier).gpus[entry.gpu],
                        StepSlowdown {
                            prompt: 1.0 + ttft,
                            decode: 1.0 + tpot,
                        },
                    );
                    let serving = super::serving(chosen, demand, case);
                    replicas_on(
                        scenario,
                        &serving,
                        &offer,
                        false,
                        options.cache_dir.as_deref(),
                    )
                }
            };
            BandConfiguration {
                tier: scenario.tiers[case.tier].name.clone(),
                config: entry.config.label(),
                ttft_error: error.map(|e| e.0),
                tpot_error: error.map(|e| e.1),
                error_basis: basis.map(|b| b.1),
                replicas: case.replicas,
                replicas_at_edge,
            }
        })
        .into_iter()
        .map(|c| c.expect("a configuration at the band's edge panicked"))
        .collect();
    let mut not_measured = BTreeSet::new();
    // Per probed configuration (tier, entry): replicas now and at the edge;
    // per group, the sums, for the options of the group no probe ran.
    let mut probed: BTreeMap<(usize, usize), Option<(u32, u32)>> = BTreeMap::new();
    let mut by_group: BTreeMap<String, (u32, u32)> = BTreeMap::new();
    for (case, c) in cases.iter().zip(&configurations) {
        let (group, error) = group_error(chosen, &capacity[case.tier][case.entry]);
        if error.is_none() {
            not_measured.insert(group.clone());
        }
        let ratio = c.replicas_at_edge.map(|after| (c.replicas, after.max(1)));
        probed.insert((case.tier, case.entry), ratio);
        if let Some((now, after)) = ratio {
            let g = by_group.entry(group).or_default();
            g.0 += now;
            g.1 += after;
        }
    }
    let milp = &chosen.trial.milp;
    let mut problem = milp.problem.clone();
    for (k, tier) in problem.tiers.iter_mut().enumerate() {
        // Per option, what its requests/s are scaled by at the edge; `None`
        // when it leaves the MILP: its configuration cannot keep the tier's
        // limits at the edge, or nothing measured how far its steps may be
        // off (a GPU no run measured, on an engine with no runs at all, that
        // the plan does not run: the edge cannot move the purchase onto it
        // at the speed its figures promise).
        let scales: Vec<Option<f64>> = tier
            .options
            .iter()
            .map(|option| {
                let entry = &capacity[k][option.entry];
                let (group, error) = group_error(chosen, entry);
                let found = match probed.get(&(k, option.entry)) {
                    None => Probed::No,
                    Some(None) => Probed::CannotKeep,
                    Some(Some((now, after))) => Probed::Replicas(*now, *after),
                };
                let engine = engine_error(chosen, entry);
                edge_scale(found, by_group.get(&group).copied(), error, engine)
            })
            .collect();
        let mut scales = scales.into_iter();
        tier.options.retain_mut(|option| {
            let Some(scale) = scales.next().flatten() else {
                return false;
            };
            for rps in &mut option.rps_by_slot {
                *rps *= scale;
            }
            true
        });
    }
    let fewest = chosen.scenario.planning.reserve_fewest_within_gap;
    let (reserved, usd) = super::levels::what_if(&problem, &milp.settings, fewest)?;
    Some(BandEdge {
        configurations,
        reserved,
        total_cost_usd: usd,
        vs_plan: usd / chosen.trial.plan.total_cost_usd - 1.0,
        not_measured: not_measured.into_iter().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::{edge_scale, Probed};

    /// At the edge a configuration the plan runs scales by its replicas now
    /// over its replicas there; one it does not run, by its group's measured
    /// error or, where no run measured its GPU, its engine's over all runs;
    /// and with neither, it leaves the MILP, so the edge cannot move the
    /// purchase onto a GPU at the speed its figures promise.
    #[test]
    fn the_edge_never_moves_onto_an_unmeasured_gpu_at_full_speed() {
        let none = None;
        let no = Probed::No;
        let run = Probed::Replicas(2, 4);
        assert_eq!(edge_scale(run, None, None, none), Some(0.5));
        assert_eq!(
            edge_scale(Probed::CannotKeep, Some((2, 3)), None, none),
            None
        );
        assert_eq!(edge_scale(no, Some((3, 4)), None, none), Some(0.75));
        assert_eq!(edge_scale(no, None, Some((0.25, 0.1)), none), Some(0.8));
        assert_eq!(edge_scale(no, None, None, Some((0.1, 0.25))), Some(0.8));
        assert_eq!(edge_scale(no, None, None, none), None);
    }
}
