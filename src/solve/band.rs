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
        // Options whose configuration cannot keep the tier's limits at the
        // edge leave the MILP.
        tier.options
            .retain(|o| !matches!(probed.get(&(k, o.entry)), Some(None)));
        for option in &mut tier.options {
            let entry = &capacity[k][option.entry];
            let (group, error) = group_error(chosen, entry);
            let scale = match (probed.get(&(k, option.entry)), by_group.get(&group), error) {
                (Some(Some((now, after))), _, _) | (_, Some((now, after)), _) => {
                    f64::from(*now) / f64::from(*after)
                }
                // A measured group the plan does not run: its requests/s
                // over the slower steps, to first order.
                (_, None, Some((ttft, tpot))) => 1.0 / (1.0 + ttft.max(tpot)),
                (_, None, None) => 1.0,
            };
            for rps in &mut option.rps_by_slot {
                *rps *= scale;
            }
        }
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
