//! Slots replayed one at a time, each from an empty fleet, on all cores, and
//! remembered by what decides them: the slot, the seed, and the fleet that
//! slot runs (each tier's limits and API share, each group's replica
//! count, replica, router weight and spot terms). A round that changes the
//! fleets of a few slots replays only those; the rounds of the candidate
//! kept off the API reuse every slot whose fleet they share. The traces are
//! the same for every plan of one solve, so they are not part of the key.
//!
//! A slot is replayed against the groups that run in it, in the fleet's
//! order: a group without replicas in the slot takes no request and draws no
//! random number, so leaving it out changes nothing but the index of the
//! others, which [`scatter`] restores.

use crate::base::progress::Progress;
use crate::demand::workload::TraceReplay;
use crate::sim::metrics::GroupTally;
use crate::sim::{simulate, Fleet, SimResult};
use std::collections::HashMap;
use std::sync::Mutex;

/// Single-slot replays of one solve, by key.
#[derive(Debug, Default)]
pub(crate) struct SlotReplays {
    results: Mutex<HashMap<String, SimResult>>,
}

/// How many slots a call replayed and how many it found already replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Reuse {
    pub replayed: usize,
    pub reused: usize,
}

impl SlotReplays {
    /// `slots` of `replay` replayed against `fleet`, each alone from an empty
    /// fleet (slot rows in the order of `slots`), and what was reused.
    pub(crate) fn replay(
        &self,
        fleet: &Fleet,
        slots: &[usize],
        replay: &TraceReplay,
        seed: u64,
        progress: Progress,
    ) -> (SimResult, Reuse) {
        let specs: Vec<String> = fleet
            .groups
            .iter()
            .map(|g| format!("{:?}|{:?}|{:?}", g.spec, g.spot, g.rps_per_replica))
            .collect();
        let keys: Vec<String> = slots.iter().map(|&t| key(fleet, &specs, t, seed)).collect();
        let missing: Vec<(usize, usize)> = {
            let known = self
                .results
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let mut seen = std::collections::HashSet::new();
            slots
                .iter()
                .zip(&keys)
                .enumerate()
                .filter(|(_, (_, k))| !known.contains_key(*k) && seen.insert(k.as_str()))
                .map(|(i, (&t, _))| (i, t))
                .collect()
        };
        let bar = progress.steps("replaying slots", missing.len() as u64);
        let replayed = crate::base::parallel::map_in_order(&missing, |&(_, t)| {
            let (alone, index) = slot_fleet(fleet, t);
            let r = simulate(&alone, t..t + 1, replay.slot(t), seed, |_| {});
            bar.inc(1);
            scatter(r, &index, fleet.groups.len())
        });
        bar.finish_and_clear();
        let reuse = Reuse {
            replayed: missing.len(),
            reused: slots.len() - missing.len(),
        };
        let mut results = self
            .results
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for ((i, _), r) in missing.iter().zip(replayed) {
            if let Some(r) = r {
                results.insert(keys[*i].clone(), r);
            }
        }
        for (k, &t) in keys.iter().zip(slots) {
            if !results.contains_key(k) {
                // A worker that panicked: replay the slot here.
                let (alone, index) = slot_fleet(fleet, t);
                let r = simulate(&alone, t..t + 1, replay.slot(t), seed, |_| {});
                results.insert(k.clone(), scatter(r, &index, fleet.groups.len()));
            }
        }
        let merged = super::merge(
            keys.iter().filter_map(|k| results.get(k)),
            fleet.tiers.len(),
            fleet.groups.len(),
        );
        (merged, reuse)
    }
}

/// What decides slot `t`'s replay (besides the traces): the seed, the slot
/// length and router, each tier's terms in the slot, and each group that
/// runs in it.
fn key(fleet: &Fleet, specs: &[String], t: usize, seed: u64) -> String {
    use std::fmt::Write;
    let mut k = format!("{t}|{seed}|{:?}|{:?}", fleet.slot_s, fleet.router);
    for tier in &fleet.tiers {
        let share = tier.api_share_by_slot.get(t).copied().unwrap_or(0.0);
        let _ = write!(
            k,
            "|{:?} {:?} {share:?} {:?} {:?}",
            tier.limits.ttft_ms, tier.limits.tpot_ms, tier.mean_output_tokens, tier.deadline_s
        );
    }
    for (g, spec) in fleet.groups.iter().zip(specs) {
        let n = g.replicas_by_slot.get(t).copied().unwrap_or(0);
        if n > 0 {
            let _ = write!(k, "|{} {} {n} {spec}", g.tier, g.label);
        }
    }
    k
}

/// The fleet of the groups with replicas in slot `t`, in order, and each
/// one's index in `fleet`.
fn slot_fleet(fleet: &Fleet, t: usize) -> (Fleet, Vec<usize>) {
    let index: Vec<usize> = (0..fleet.groups.len())
        .filter(|&g| {
            fleet.groups[g]
                .replicas_by_slot
                .get(t)
                .copied()
                .unwrap_or(0)
                > 0
        })
        .collect();
    let alone = Fleet {
        slot_s: fleet.slot_s,
        tiers: fleet.tiers.clone(),
        groups: index.iter().map(|&g| fleet.groups[g].clone()).collect(),
        router: fleet.router,
    };
    (alone, index)
}

/// A replay of a slot's own fleet with its group tallies put back at the
/// groups' indices in a fleet of `groups` groups.
fn scatter(mut r: SimResult, index: &[usize], groups: usize) -> SimResult {
    let mut all = vec![GroupTally::default(); groups];
    for (tally, &g) in std::mem::take(&mut r.groups).into_iter().zip(index) {
        all[g] = tally;
    }
    r.groups = all;
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::step::tests::{h100, llama8b};
    use crate::perf::{PerfModel, StepModel};
    use crate::sim::{FleetTier, Group, Limits, ReplicaSpec, Router, Scheduler};

    /// The tiny scenario's traces and a fleet of two groups serving them.
    fn tiny() -> (Fleet, TraceReplay, u64, usize) {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/ok/tiny.toml");
        let scenario = crate::scenario::load(std::path::Path::new(path)).unwrap();
        let (demand, kept) =
            crate::demand::build_keeping(&scenario, Progress::hidden(), true).unwrap();
        let traces = super::super::traces(&scenario, &demand, kept);
        let slots = demand.slots;
        let spec = ReplicaSpec::new(
            StepModel::Roofline(PerfModel::new(
                &h100(),
                &llama8b(),
                1,
                crate::profiles::precision::Precision::Bf16,
            )),
            64,
            2048,
            Scheduler::DecodeFirstChunked,
        );
        let group = |label: &str, replicas: u32| Group {
            tier: 0,
            label: label.into(),
            spec: spec.clone(),
            replicas_by_slot: vec![replicas; slots],
            rps_per_replica: 1.0,
            spot: None,
        };
        let fleet = Fleet {
            slot_s: traces.slot_s,
            tiers: vec![FleetTier {
                name: "chat".into(),
                limits: Limits {
                    ttft_ms: 2000.0,
                    tpot_ms: 100.0,
                },
                api_share_by_slot: vec![0.25; slots],
                mean_output_tokens: demand.tiers[0].output_tokens.mean,
                deadline_s: None,
            }],
            groups: vec![group("a", 1), group("b", 2)],
            router: Router::LeastWork,
        };
        (fleet, traces, scenario.simulation.seed, slots)
    }

    fn same(a: &SimResult, b: &SimResult) {
        assert_eq!((a.requests, a.events), (b.requests, b.events));
        for (x, y) in a.tiers.iter().zip(&b.tiers) {
            assert_eq!(
                (x.requests, x.met_both, x.served_requests, x.output_tokens),
                (y.requests, y.met_both, y.served_requests, y.output_tokens)
            );
            assert_eq!(x.ttft.quantile_ms(0.99), y.ttft.quantile_ms(0.99));
        }
        assert_eq!(a.groups.len(), b.groups.len());
        for (x, y) in a.groups.iter().zip(&b.groups) {
            assert_eq!(
                (x.busy_s, x.up_s, &x.replicas),
                (y.busy_s, y.up_s, &y.replicas)
            );
        }
    }

    #[test]
    fn a_slot_replayed_against_its_own_groups_is_the_slot_replayed_against_the_whole_fleet() {
        let (mut fleet, traces, seed, slots) = tiny();
        // A group without replicas in slot 0 ahead of the others: it must
        // change nothing but the indices.
        let mut idle = fleet.groups[0].clone();
        idle.label = "idle".into();
        idle.replicas_by_slot = vec![0; slots];
        fleet.groups.insert(0, idle);
        let all: Vec<usize> = (0..slots).collect();
        let whole: Vec<SimResult> = all
            .iter()
            .map(|&t| simulate(&fleet, t..t + 1, traces.slot(t), seed, |_| {}))
            .collect();
        let whole = super::super::merge(&whole, fleet.tiers.len(), fleet.groups.len());
        assert!(whole.requests > 0);
        let cache = SlotReplays::default();
        let (first, reuse) = cache.replay(&fleet, &all, &traces, seed, Progress::hidden());
        same(&first, &whole);
        assert_eq!(
            reuse,
            Reuse {
                replayed: slots,
                reused: 0
            }
        );
        let (again, reuse) = cache.replay(&fleet, &all, &traces, seed, Progress::hidden());
        same(&again, &whole);
        assert_eq!(
            reuse,
            Reuse {
                replayed: 0,
                reused: slots
            }
        );
    }

    #[test]
    fn only_the_slots_whose_fleet_changed_are_replayed_again() {
        let (mut fleet, traces, seed, slots) = tiny();
        assert!(slots >= 2);
        let all: Vec<usize> = (0..slots).collect();
        let cache = SlotReplays::default();
        cache.replay(&fleet, &all, &traces, seed, Progress::hidden());
        fleet.groups[0].replicas_by_slot[1] += 1;
        let (_, reuse) = cache.replay(&fleet, &all, &traces, seed, Progress::hidden());
        assert_eq!(
            reuse,
            Reuse {
                replayed: 1,
                reused: slots - 1
            }
        );
        // Another seed is another replay of every slot.
        let (_, reuse) = cache.replay(&fleet, &all, &traces, seed + 1, Progress::hidden());
        assert_eq!(reuse.replayed, slots);
    }
}
