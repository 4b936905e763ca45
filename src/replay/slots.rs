//! Slots replayed one at a time, each from an empty fleet, on all cores, and
//! remembered by what decides them: the slot, the seed, and the fleet that
//! slot runs (each tier's limits and API share, each group's replica
//! count, replica and spot terms, and its router weight where another group
//! of its tier runs beside it: the least-work router weighs groups against
//! each other, never one group's replicas). A round that changes the
//! fleets of a few slots replays only those; the rounds of the candidate
//! kept off the API reuse every slot whose fleet they share. The traces are
//! the same for every plan of one solve, so they are not part of the
//! in-memory key.
//!
//! With a cache folder ([`SlotReplays::on_disk`]) each slot's replay is also
//! kept on disk (`replays/`, [`disk_cache`]) under the same key prefixed by
//! the program's identity and the traces' fingerprint (each file holds the
//! key's 128-bit digest; the folder keeps its most recently used 512 MB),
//! so a later solve (a what-if that changes a price, the same scenario
//! again, a sweep's variants) replays only the slots whose fleet or traces
//! it changed. A result read back is the result replayed: the JSON
//! round-trips every count and float exactly.
//!
//! A slot is replayed against the groups that run in it, in the fleet's
//! order: a group without replicas in the slot takes no request and draws no
//! random number, so leaving it out changes nothing but the index of the
//! others, which the merge of a replay's slots restores. Where at most one
//! tier draws from the run's random stream, a slot is replayed tier by tier
//! (the tiers share no replica and draw their arrivals from streams of their
//! own), each tier's replay remembered by its own terms and groups: a round
//! that resizes one tier's fleet in a slot replays that tier alone there.
//! Every tally is the one replay of every tier's; the most requests in
//! flight is then the sum of the tiers' (at most that many at once).

use crate::base::disk_cache;
use crate::base::progress::Progress;
use crate::demand::workload::TraceReplay;
use crate::sim::metrics::SlotTally;
use crate::sim::{simulate, Fleet, SimResult};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Bumped whenever the simulator or the replay changes results (the
/// program's identity, [`program`], changes with every build as well).
const REPLAY_VERSION: &str = "replay-4";
/// The cache's folder for slot replays.
const FOLDER: &str = "replays";
/// The most the folder keeps (a replay of every slot of `scenarios/peak.toml`
/// writes 168 files of 14.3 KB on average, 2.4 MB); the least recently used
/// files go first.
const FOLDER_MAX_BYTES: u64 = 512 << 20;

/// Single-slot replays of one solve, by key; one `SlotReplays` serves the
/// replays of one [`TraceReplay`].
#[derive(Debug, Default)]
pub(crate) struct SlotReplays {
    results: Mutex<HashMap<String, SimResult>>,
    disk: Option<Disk>,
}

/// Where slot replays are kept between runs, and the prefixes of their
/// keys: the program's identity and the fingerprint of the traces a replay
/// is drawn from (every tier's, then each tier's alone).
#[derive(Debug)]
struct Disk {
    dir: PathBuf,
    prefixes: Vec<String>,
    /// Whether this run wrote a replay (then the folder is pruned).
    written: std::sync::atomic::AtomicBool,
}

impl Disk {
    /// The prefix of unit `u`'s key: the fingerprint of the traces of its
    /// tier, or of every tier.
    fn prefix(&self, u: Unit) -> &str {
        &self.prefixes[u.tier.map_or(0, |k| k + 1)]
    }
}

/// How many slots a call replayed and how many it found already replayed
/// (in this run, or on disk: `stored`, which `reused` includes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Reuse {
    pub replayed: usize,
    pub reused: usize,
    pub stored: usize,
}

/// The running program, as its size and modification time: a rebuilt
/// program never reads the replays of another build. `None` when it cannot
/// be read (then nothing is kept on disk).
fn program() -> Option<String> {
    let meta = std::env::current_exe().ok()?.metadata().ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(format!(
        "{} bytes, modified {}",
        meta.len(),
        modified.as_nanos()
    ))
}

impl SlotReplays {
    /// Replays of `traces` remembered in this run and, with a cache folder
    /// `dir`, kept on disk between runs.
    pub(crate) fn on_disk(dir: Option<&Path>, traces: &TraceReplay) -> Self {
        let disk = dir.zip(program()).map(|(dir, program)| Disk {
            dir: dir.to_path_buf(),
            prefixes: std::iter::once(None)
                .chain((0..traces.tiers.len()).map(Some))
                .map(|only| {
                    format!(
                        "{REPLAY_VERSION}|{program}|traces {:016x} from slot {}",
                        traces.fingerprint_of(only),
                        traces.first_slot
                    )
                })
                .collect(),
            written: std::sync::atomic::AtomicBool::new(false),
        });
        SlotReplays {
            results: Mutex::default(),
            disk,
        }
    }

    /// `slots` of `replay` replayed against `fleet`, each alone from an empty
    /// fleet (slot rows in the order of `slots`), and what was reused. A
    /// slot is replayed tier by tier ([`units`]) where that is the same
    /// replay, so that a plan that changes one tier's fleet in a slot
    /// replays only that tier there.
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
            .map(|g| format!("{:?}|{:?}", g.spec, g.spot))
            .collect();
        let per_slot: Vec<Vec<Unit>> = slots.iter().map(|&t| units(fleet, t)).collect();
        let all: Vec<Unit> = per_slot.iter().flatten().copied().collect();
        let keys: Vec<String> = all.iter().map(|&u| key(fleet, &specs, u, seed)).collect();
        let missing: Vec<(usize, Unit)> = {
            let known = self
                .results
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let mut seen = std::collections::HashSet::new();
            all.iter()
                .zip(&keys)
                .enumerate()
                .filter(|(_, (_, k))| !known.contains_key(*k) && seen.insert(k.as_str()))
                .map(|(i, (&u, _))| (i, u))
                .collect()
        };
        let reused_in_memory = all.len() - missing.len();
        let missing = self.read_stored(missing, &keys);
        let stored = all.len() - missing.len() - reused_in_memory;
        let bar = progress.steps("replaying slots", missing.len() as u64);
        // A unit's replay is kept with its group tallies in the order of the
        // unit's own groups (its key lists them): another fleet with the
        // same key may hold other groups around them, at other indices.
        let replayed = crate::base::parallel::map_in_order(&missing, |&(_, u)| {
            let r = replay_unit(fleet, replay, u, seed);
            bar.inc(1);
            r
        });
        bar.finish_and_clear();
        let reuse = Reuse {
            replayed: missing.len(),
            reused: all.len() - missing.len(),
            stored,
        };
        let mut results = self
            .results
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for ((i, u), r) in missing.iter().zip(replayed) {
            if let Some(r) = r {
                self.store(*u, &keys[*i], &r);
                results.insert(keys[*i].clone(), r);
            }
        }
        for (k, &u) in keys.iter().zip(&all) {
            if !results.contains_key(k) {
                // A worker that panicked: replay the unit here.
                results.insert(k.clone(), replay_unit(fleet, replay, u, seed));
            }
        }
        // The tiers' tallies summed slot by slot, each slot's row the sum
        // of its units', each unit's group tallies added at its groups'
        // indices in `fleet`.
        let tiers = fleet.tiers.len();
        let mut merged = super::merge(std::iter::empty(), tiers, fleet.groups.len());
        let mut keys = keys.iter();
        for units in &per_slot {
            let mut row = vec![SlotTally::default(); tiers];
            let mut in_flight = 0;
            for &u in units {
                let Some(r) = keys.next().and_then(|k| results.get(k)) else {
                    continue;
                };
                for (a, b) in merged.tiers.iter_mut().zip(&r.tiers) {
                    a.merge(b);
                }
                for (a, b) in row.iter_mut().zip(r.slots.iter().flatten()) {
                    a.on_gpus += b.on_gpus;
                    a.met_both += b.met_both;
                }
                for (tally, g) in r.groups.iter().zip(unit_groups(fleet, u)) {
                    merged.groups[g].merge(tally);
                }
                merged.requests += r.requests;
                merged.events += r.events;
                in_flight += r.peak_in_flight;
            }
            // Each unit's replay began with its own slot start, which one
            // replay of the slot counts once.
            merged.events -= units.len().saturating_sub(1) as u64;
            merged.peak_in_flight = merged.peak_in_flight.max(in_flight);
            merged.slots.push(row);
        }
        (merged, reuse)
    }

    /// `missing` (index into `keys`, unit) less the units found on disk,
    /// which are remembered in this run from now on.
    fn read_stored(&self, missing: Vec<(usize, Unit)>, keys: &[String]) -> Vec<(usize, Unit)> {
        let Some(disk) = &self.disk else {
            return missing;
        };
        let mut results = self
            .results
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        missing
            .into_iter()
            .filter(|&(i, u)| {
                let key = format!("{}|{}", disk.prefix(u), keys[i]);
                let digest = disk_cache::digest(&key);
                match disk_cache::read_stored::<SimResult>(Some(&disk.dir), FOLDER, &key, &digest) {
                    Some(r) => {
                        results.insert(keys[i].clone(), r);
                        false
                    }
                    None => true,
                }
            })
            .collect()
    }

    /// Keeps unit `u`'s replay on disk, when there is a cache folder.
    fn store(&self, u: Unit, key: &str, r: &SimResult) {
        if let Some(disk) = &self.disk {
            let key = format!("{}|{key}", disk.prefix(u));
            disk_cache::write_stored(Some(&disk.dir), FOLDER, &key, &disk_cache::digest(&key), r);
            disk.written
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

impl Drop for SlotReplays {
    /// A run that wrote replays keeps the folder within its bound.
    fn drop(&mut self) {
        if let Some(disk) = &self.disk {
            if disk.written.load(std::sync::atomic::Ordering::Relaxed) {
                disk_cache::prune(&disk.dir, FOLDER, FOLDER_MAX_BYTES);
            }
        }
    }
}

/// What one replay covers: slot `slot` of every tier (`tier` `None`) or of
/// one tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Unit {
    slot: usize,
    tier: Option<usize>,
}

/// Whether tier `k`'s replay in slot `t` draws random numbers: a share of
/// its requests sent to the API by a draw, or spot replicas (granted and
/// interrupted by draws).
pub(super) fn draws(fleet: &Fleet, t: usize, k: usize) -> bool {
    let share = fleet.tiers[k]
        .api_share_by_slot
        .get(t)
        .copied()
        .unwrap_or(0.0);
    (share > 0.0 && share < 1.0)
        || fleet.groups.iter().any(|g| {
            g.tier == k && g.spot.is_some() && g.replicas_by_slot.get(t).copied().unwrap_or(0) > 0
        })
}

/// The replays slot `t` is made of. The tiers share no replica, and each
/// tier's arrivals are drawn from its own streams, so each tier's replay
/// alone is the same as its part of the replay of all of them, as long as
/// at most one tier draws from the run's random stream (which is then
/// drawn in the same order): then one replay per tier, else one of every
/// tier.
fn units(fleet: &Fleet, t: usize) -> Vec<Unit> {
    let tiers = fleet.tiers.len();
    let drawing = (0..tiers).filter(|&k| draws(fleet, t, k)).count();
    if tiers == 1 || drawing > 1 {
        return vec![Unit {
            slot: t,
            tier: None,
        }];
    }
    (0..tiers)
        .map(|k| Unit {
            slot: t,
            tier: Some(k),
        })
        .collect()
}

/// What decides unit `u`'s replay (besides the traces): the seed, the slot
/// length and router, the terms in the slot of each tier it replays, and
/// each of their groups that runs in it.
fn key(fleet: &Fleet, specs: &[String], u: Unit, seed: u64) -> String {
    use std::fmt::Write;
    let t = u.slot;
    let mut k = format!("{t}|{seed}|{:?}|{:?}", fleet.slot_s, fleet.router);
    if fleet.prefixes.is_some() {
        k.push_str("|prefix caching");
    }
    if let Some(only) = u.tier {
        let _ = write!(k, "|tier {only}");
    }
    for (i, tier) in fleet.tiers.iter().enumerate() {
        if u.tier.is_some_and(|o| o != i) {
            continue;
        }
        let share = tier.api_share_by_slot.get(t).copied().unwrap_or(0.0);
        let _ = write!(
            k,
            "|{:?} {:?} {share:?} {:?} {:?}",
            tier.limits.ttft_ms, tier.limits.tpot_ms, tier.mean_output_tokens, tier.deadline_s
        );
    }
    let groups = unit_groups(fleet, u);
    for &g in &groups {
        let group = &fleet.groups[g];
        let n = group.replicas_by_slot.get(t).copied().unwrap_or(0);
        let _ = write!(k, "|{} {} {n} {}", group.tier, group.label, specs[g]);
        let loading = group.loading_by_slot.get(t).copied().unwrap_or(0);
        if loading > 0 {
            let _ = write!(k, " loading {loading} for {:?} s", group.load_s);
        }
        // The router weighs a group's capacity only against another group of
        // its tier (`sim::fleet::run`, least work): a tier served by one
        // group in the slot replays the same whatever its weight.
        if groups
            .iter()
            .any(|&o| o != g && fleet.groups[o].tier == group.tier)
        {
            let _ = write!(k, " weight {:?}", group.rps_per_replica);
        }
    }
    k
}

/// Unit `u` of `replay` replayed alone against its own groups of `fleet`
/// (group tallies in their order, not the fleet's).
fn replay_unit(fleet: &Fleet, replay: &TraceReplay, u: Unit, seed: u64) -> SimResult {
    simulate(
        &unit_fleet(fleet, u),
        u.slot..u.slot + 1,
        replay.slot_of(u.slot, u.tier),
        seed,
        |_| {},
    )
}

/// The indices in `fleet` of the groups of unit `u`'s tiers with replicas
/// in its slot, in order.
fn unit_groups(fleet: &Fleet, u: Unit) -> Vec<usize> {
    (0..fleet.groups.len())
        .filter(|&g| {
            let group = &fleet.groups[g];
            u.tier.is_none_or(|k| group.tier == k)
                && group.replicas_by_slot.get(u.slot).copied().unwrap_or(0) > 0
        })
        .collect()
}

/// The fleet of unit `u`'s groups, in order (every tier kept, so that
/// tier indices stay the fleet's).
fn unit_fleet(fleet: &Fleet, u: Unit) -> Fleet {
    Fleet {
        slot_s: fleet.slot_s,
        tiers: fleet.tiers.clone(),
        groups: unit_groups(fleet, u)
            .into_iter()
            .map(|g| fleet.groups[g].clone())
            .collect(),
        router: fleet.router,
        prefixes: fleet.prefixes.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{FleetTier, Group, Limits, Router};

    /// The tiny scenario's traces and a fleet of two groups serving them.
    fn tiny() -> (Fleet, TraceReplay, u64, usize) {
        let scenario = crate::scenario::tiny_fixture();
        let (demand, kept) =
            crate::demand::build_keeping(&scenario, Progress::hidden(), true).unwrap();
        let traces = super::super::traces(&scenario, &demand, kept);
        let slots = demand.slots;
        let spec = crate::sim::replica_spec::tests::h100_llama8b();
        let group = |label: &str, replicas: u32| Group {
            tier: 0,
            label: label.into(),
            spec: spec.clone(),
            replicas_by_slot: vec![replicas; slots],
            rps_per_replica: 1.0,
            spot: None,
            loading_by_slot: Vec::new(),
            load_s: 0.0,
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
            prefixes: None,
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
        assert_eq!(a.slots.len(), b.slots.len());
        for (x, y) in a.slots.iter().flatten().zip(b.slots.iter().flatten()) {
            assert_eq!((x.on_gpus, x.met_both), (y.on_gpus, y.met_both));
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
                reused: 0,
                stored: 0
            }
        );
        let (again, reuse) = cache.replay(&fleet, &all, &traces, seed, Progress::hidden());
        same(&again, &whole);
        assert_eq!(
            reuse,
            Reuse {
                replayed: 0,
                reused: slots,
                stored: 0
            }
        );
    }

    /// An empty folder of this name (and the process id) under the system's
    /// temporary folder.
    fn fresh_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// `tiny()` with a second tier: the same trace drawn from the second
    /// tier's streams, served by group "b", the first tier by group "a".
    fn two_tiers() -> (Fleet, TraceReplay, u64, usize) {
        let (mut fleet, mut traces, seed, slots) = tiny();
        traces.tiers.push(traces.tiers[0].clone());
        let mut bulk = fleet.tiers[0].clone();
        bulk.name = "bulk".into();
        bulk.api_share_by_slot = vec![0.0; slots];
        fleet.tiers.push(bulk);
        fleet.groups[1].tier = 1;
        (fleet, traces, seed, slots)
    }

    #[test]
    fn a_router_weight_is_part_of_a_replay_only_beside_another_group_of_its_tier() {
        let (mut fleet, traces, seed, slots) = two_tiers();
        let all: Vec<usize> = (0..slots).collect();
        let cache = SlotReplays::default();
        cache.replay(&fleet, &all, &traces, seed, Progress::hidden());
        // Tier 1 runs group "b" alone: its weight decides nothing, and the
        // replays kept are those of the new weight.
        fleet.groups[1].rps_per_replica = 3.7;
        let (kept, reuse) = cache.replay(&fleet, &all, &traces, seed, Progress::hidden());
        assert_eq!((reuse.replayed, reuse.reused), (0, 2 * slots));
        let fresh = SlotReplays::default();
        let (replayed, _) = fresh.replay(&fleet, &all, &traces, seed, Progress::hidden());
        same(&kept, &replayed);
        assert_eq!(
            serde_json::to_string(&kept).unwrap(),
            serde_json::to_string(&replayed).unwrap()
        );
        // Two groups of one tier: the weights route between them.
        let (mut fleet, traces, seed, slots) = tiny();
        let all: Vec<usize> = (0..slots).collect();
        let cache = SlotReplays::default();
        cache.replay(&fleet, &all, &traces, seed, Progress::hidden());
        fleet.groups[0].rps_per_replica = 3.7;
        let (_, reuse) = cache.replay(&fleet, &all, &traces, seed, Progress::hidden());
        assert_eq!((reuse.replayed, reuse.reused), (slots, 0));
    }

    #[test]
    fn a_slot_replayed_tier_by_tier_is_its_replay_of_every_tier() {
        let (mut fleet, traces, seed, slots) = two_tiers();
        let all: Vec<usize> = (0..slots).collect();
        let joint = |fleet: &Fleet| {
            let each: Vec<SimResult> = all
                .iter()
                .map(|&t| simulate(fleet, t..t + 1, traces.slot(t), seed, |_| {}))
                .collect();
            super::super::merge(&each, fleet.tiers.len(), fleet.groups.len())
        };
        // Only the first tier draws (its API share): one replay per tier.
        assert_eq!(units(&fleet, 0).len(), 2);
        let whole = joint(&fleet);
        assert!(whole.tiers.iter().all(|t| t.requests > 0));
        let cache = SlotReplays::default();
        let (by_tier, reuse) = cache.replay(&fleet, &all, &traces, seed, Progress::hidden());
        assert_eq!(reuse.replayed, 2 * slots);
        same(&by_tier, &whole);
        assert!(by_tier.peak_in_flight >= whole.peak_in_flight);
        // A change to the second tier's fleet in slot 1 replays only that
        // tier there.
        fleet.groups[1].replicas_by_slot[1] += 1;
        let (changed, reuse) = cache.replay(&fleet, &all, &traces, seed, Progress::hidden());
        assert_eq!((reuse.replayed, reuse.reused), (1, 2 * slots - 1));
        same(&changed, &joint(&fleet));
        // Two tiers that draw share the run's stream: one replay of both.
        fleet.tiers[1].api_share_by_slot = vec![0.5; slots];
        assert_eq!(
            units(&fleet, 0),
            vec![Unit {
                slot: 0,
                tier: None
            }]
        );
        let (together, reuse) = cache.replay(&fleet, &all, &traces, seed, Progress::hidden());
        assert_eq!(reuse.replayed, slots);
        same(&together, &joint(&fleet));
        assert_eq!(together.peak_in_flight, joint(&fleet).peak_in_flight);
    }

    #[test]
    fn a_continuous_replay_tier_by_tier_is_the_replay_of_every_tier() {
        let (fleet, traces, seed, slots) = two_tiers();
        // One tier's arrivals are its part of every tier's, in order.
        for t in 0..slots {
            for k in 0..2 {
                let mine: Vec<_> = traces
                    .slot(t)
                    .into_iter()
                    .filter(|a| a.tier as usize == k)
                    .collect();
                assert_eq!(traces.slot_of(t, Some(k)), mine);
            }
        }
        let whole = simulate(
            &fleet,
            0..slots,
            (0..slots).flat_map(|t| traces.slot(t)),
            seed,
            |_| {},
        );
        let apart = super::super::apart::simulate_apart(&fleet, 0..slots, &traces, seed, |_| {})
            .expect("one tier draws: replayed apart");
        same(&apart, &whole);
        assert!(apart.peak_in_flight >= whole.peak_in_flight);
        // Both tiers drawing: not apart.
        let mut both = fleet.clone();
        both.tiers[1].api_share_by_slot = vec![0.5; slots];
        assert!(
            super::super::apart::simulate_apart(&both, 0..slots, &traces, seed, |_| {}).is_none()
        );
    }

    #[test]
    fn a_change_to_one_tiers_traces_leaves_the_other_tiers_replays_on_disk() {
        let (fleet, traces, seed, slots) = two_tiers();
        let dir = fresh_dir("planner-tier-replays");
        let all: Vec<usize> = (0..slots).collect();
        let first = SlotReplays::on_disk(Some(&dir), &traces);
        let (_, reuse) = first.replay(&fleet, &all, &traces, seed, Progress::hidden());
        assert_eq!((reuse.replayed, reuse.stored), (2 * slots, 0));
        // The second tier's trace twice: its replays are new, the first
        // tier's are read back.
        let mut more = traces.clone();
        let again = more.tiers[1].sources[0].clone();
        more.tiers[1].sources.push(again);
        let later = SlotReplays::on_disk(Some(&dir), &more);
        let (read, reuse) = later.replay(&fleet, &all, &more, seed, Progress::hidden());
        assert_eq!(
            reuse,
            Reuse {
                replayed: slots,
                reused: slots,
                stored: slots
            }
        );
        let direct: Vec<SimResult> = all
            .iter()
            .map(|&t| simulate(&fleet, t..t + 1, more.slot(t), seed, |_| {}))
            .collect();
        same(
            &read,
            &super::super::merge(&direct, fleet.tiers.len(), fleet.groups.len()),
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_slot_reused_by_another_fleet_credits_its_groups_at_that_fleets_indices() {
        let (fleet, traces, seed, slots) = tiny();
        assert!(slots >= 2);
        let cache = SlotReplays::default();
        cache.replay(&fleet, &[0], &traces, seed, Progress::hidden());
        // Another plan: a group ahead of the others that runs only in slot
        // 1, so slot 0's fleet (and key) is unchanged but its groups sit at
        // other indices.
        let mut other = fleet.clone();
        let mut late = fleet.groups[0].clone();
        late.label = "late".into();
        late.replicas_by_slot = vec![0; slots];
        late.replicas_by_slot[1] = 3;
        other.groups.insert(0, late);
        let (reused, reuse) = cache.replay(&other, &[0], &traces, seed, Progress::hidden());
        assert_eq!(reuse.reused, 1);
        let direct = simulate(&other, 0..1, traces.slot(0), seed, |_| {});
        same(&reused, &direct);
        assert_eq!(reused.groups[0].up_s, 0.0);
        assert!(reused.groups[1].up_s > 0.0 && reused.groups[2].up_s > 0.0);
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
                reused: slots - 1,
                stored: 0
            }
        );
        // Another seed is another replay of every slot.
        let (_, reuse) = cache.replay(&fleet, &all, &traces, seed + 1, Progress::hidden());
        assert_eq!(reuse.replayed, slots);
    }

    #[test]
    fn a_later_run_reads_the_slots_from_disk_as_they_were_replayed() {
        let (fleet, traces, seed, slots) = tiny();
        let dir = fresh_dir("planner-slot-replays");
        let all: Vec<usize> = (0..slots).collect();
        let first = SlotReplays::on_disk(Some(&dir), &traces);
        let (replayed, reuse) = first.replay(&fleet, &all, &traces, seed, Progress::hidden());
        assert_eq!((reuse.replayed, reuse.stored), (slots, 0));
        // A new run (nothing in memory) reads every slot back, identical.
        let later = SlotReplays::on_disk(Some(&dir), &traces);
        let (read, reuse) = later.replay(&fleet, &all, &traces, seed, Progress::hidden());
        assert_eq!(
            reuse,
            Reuse {
                replayed: 0,
                reused: slots,
                stored: slots
            }
        );
        same(&read, &replayed);
        assert_eq!(
            format!("{:?}", read.tiers[0].ttft),
            format!("{:?}", replayed.tiers[0].ttft)
        );
        // Other traces (another trace seed) are other replays.
        let mut other = traces.clone();
        other.seed += 1;
        let elsewhere = SlotReplays::on_disk(Some(&dir), &other);
        let (_, reuse) = elsewhere.replay(&fleet, &all, &other, seed, Progress::hidden());
        assert_eq!((reuse.replayed, reuse.stored), (slots, 0));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
