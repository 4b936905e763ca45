//! A continuous replay tier by tier, the tiers on separate threads.
//!
//! The tiers of a fleet share no replica and draw their arrivals from
//! streams of their own; the run's own random stream (API shares, spot
//! grants and interruptions) is drawn in event order. When at most one tier
//! draws from it over the whole range, each tier's continuous replay against
//! its own groups and arrivals is exactly its part of the replay of every
//! tier (`slots::draws`, and `docs/simulator.md`), so the tiers can be
//! replayed at once on separate threads and summed: the same tallies, in
//! the time of the largest tier. The events are counted as one run counts
//! them (each slot start once); the most requests in flight is the sum of
//! the tiers' (an upper bound, the tiers' peaks need not coincide).

use super::slots::draws;
use crate::demand::workload::TraceReplay;
use crate::sim::metrics::SlotTally;
use crate::sim::{simulate, Fleet, SimResult};
use std::ops::Range;

/// `range` of `replay` replayed against `fleet` in one continuous run per
/// tier, summed; `None` where the tiers cannot be replayed apart (one tier,
/// or more than one drawing from the run's stream), or a tier's run failed.
pub(super) fn simulate_apart(
    fleet: &Fleet,
    range: Range<usize>,
    replay: &TraceReplay,
    seed: u64,
    on_slot: impl Fn(usize) + Sync,
) -> Option<SimResult> {
    let tiers = fleet.tiers.len();
    let drawing = (0..tiers)
        .filter(|&k| range.clone().any(|t| draws(fleet, t, k)))
        .count();
    if tiers < 2 || drawing > 1 {
        return None;
    }
    let each: Vec<usize> = (0..tiers).collect();
    let parts = crate::base::parallel::map_in_order(&each, |&k| {
        let groups: Vec<usize> = (0..fleet.groups.len())
            .filter(|&g| fleet.groups[g].tier == k)
            .collect();
        let own = Fleet {
            slot_s: fleet.slot_s,
            tiers: fleet.tiers.clone(),
            groups: groups.iter().map(|&g| fleet.groups[g].clone()).collect(),
            router: fleet.router,
            prefixes: fleet.prefixes.clone(),
        };
        let r = replay.with_arrivals_of_ahead(range.clone(), Some(k), |arrivals| {
            simulate(&own, range.clone(), arrivals, seed, |s| {
                if k == 0 {
                    on_slot(s);
                }
            })
        });
        (groups, r)
    });
    let mut total = super::merge(std::iter::empty(), tiers, fleet.groups.len());
    total.slots = vec![vec![SlotTally::default(); tiers]; range.len()];
    for part in parts {
        let (groups, r) = part?;
        for (a, b) in total.tiers.iter_mut().zip(&r.tiers) {
            a.merge(b);
        }
        for (row, own) in total.slots.iter_mut().zip(&r.slots) {
            for (a, b) in row.iter_mut().zip(own) {
                a.on_gpus += b.on_gpus;
                a.met_both += b.met_both;
            }
        }
        for (&g, tally) in groups.iter().zip(&r.groups) {
            total.groups[g].merge(tally);
        }
        total.requests += r.requests;
        total.events += r.events;
        total.peak_in_flight += r.peak_in_flight;
    }
    // Every tier's run began each slot with its own slot start.
    total.events -= ((tiers - 1) * range.len()) as u64;
    Some(total)
}
