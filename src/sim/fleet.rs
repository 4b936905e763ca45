//! The fleet: replicas grouped by (tier, configuration), following the plan's
//! replica counts slot by slot, a router in front of them, and the event loop
//! that replays a workload against them.
//!
//! * At each slot start every group gets the plan's replica count for that
//!   slot. New replicas start empty; replicas beyond the count stop taking
//!   requests and finish the ones they hold (drain).
//! * A request of a tier goes to the API with the plan's API share for its
//!   slot (seeded draw); otherwise the [`Router`] sends it to one of the
//!   tier's up replicas: by default the one with the least outstanding work
//!   per unit of capacity ((prompt tokens not yet prefilled + requests in
//!   system × the tier's mean output tokens) / the configuration's
//!   requests/s per replica; ties go to the lowest index), or round robin.
//!   A request finds no replica when the plan has none up for its tier, or
//!   when its prompt plus output exceed every up replica's KV cache; it is
//!   counted unserved (missing both limits).

use super::events::{Event, EventQueue};
use super::metrics::{GroupTally, Latency, Limits, SlotTally, TierTally};
use super::replica::{Finished, Replica, ReplicaSpec};
use super::request::{Arrival, InFlight, Slab};
use super::router::Router;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::ops::Range;

/// One tier as the fleet sees it.
#[derive(Debug, Clone)]
pub struct FleetTier {
    pub name: String,
    pub limits: Limits,
    /// Share of the tier's requests sent to the API, per slot.
    pub api_share_by_slot: Vec<f64>,
    /// Mean output tokens (the router's estimate of a request's decode work).
    pub mean_output_tokens: f64,
    /// A batch tier's deadline in seconds: its requests wait in the tier's
    /// backlog until a replica has a free batch place, and one completed
    /// later than arrival + deadline misses. `None`: routed on arrival.
    pub deadline_s: Option<f64>,
}

/// Spot terms of a group: each replica the plan requests for a slot is
/// granted with probability `availability` (seeded draw) unless it is
/// already up, and a granted replica is interrupted at `interruptions_per_hour`
/// (exponential times): it goes down at once, the requests it holds are
/// dropped (counted unserved and interrupted), and it stays down until the
/// next slot's request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spot {
    pub availability: f64,
    pub interruptions_per_hour: f64,
}

/// Identical replicas serving one tier.
#[derive(Debug, Clone)]
pub struct Group {
    pub tier: usize,
    pub label: String,
    pub spec: ReplicaSpec,
    pub replicas_by_slot: Vec<u32>,
    /// The plan's requests/s per replica (the router's capacity weight).
    pub rps_per_replica: f64,
    /// `Some` for replicas on spot GPUs.
    pub spot: Option<Spot>,
}

/// The fleet a plan describes.
#[derive(Debug, Clone)]
pub struct Fleet {
    pub slot_s: f64,
    pub tiers: Vec<FleetTier>,
    pub groups: Vec<Group>,
    /// How a request picks one of its tier's up replicas.
    pub router: Router,
}

/// What a replay measured.
#[derive(Debug, Clone)]
pub(crate) struct SimResult {
    pub tiers: Vec<TierTally>,
    /// Per slot of the range, per tier.
    pub slots: Vec<Vec<SlotTally>>,
    pub groups: Vec<GroupTally>,
    /// Requests offered.
    pub requests: u64,
    /// Events processed (arrivals, step ends, slot starts).
    pub events: u64,
    /// Most requests in flight at once.
    pub peak_in_flight: usize,
}

/// One request completed on a replica, as `planner simulate --requests-out`
/// writes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Completed {
    pub arrival_s: f64,
    pub tier: u16,
    pub ttft_ms: f64,
    pub e2e_ms: f64,
    pub output_tokens: u32,
}

struct GroupState {
    replicas: Vec<usize>,
    up: usize,
}

/// The state of one replay.
struct Run<'a> {
    fleet: &'a Fleet,
    slots: Range<usize>,
    /// Replicas are up until the end of the last slot; after it they drain.
    horizon_end_s: f64,
    replicas: Vec<Replica>,
    groups: Vec<GroupState>,
    /// Per tier, the groups serving it.
    tier_groups: Vec<Vec<usize>>,
    /// Per tier, the round-robin position: the index, among the tier's up
    /// replicas in order, of the next one to try.
    next_in_turn: Vec<usize>,
    current_slot: usize,
    /// Per tier, requests of a deadline tier waiting for a free batch place,
    /// oldest first.
    backlog: Vec<std::collections::VecDeque<Arrival>>,
    queue: EventQueue,
    reqs: Slab,
    rng: StdRng,
    finished: Vec<Finished>,
    result: SimResult,
}

impl<'a> Run<'a> {
    fn new(fleet: &'a Fleet, slots: Range<usize>, seed: u64) -> Self {
        let tiers = fleet.tiers.len();
        Run {
            fleet,
            horizon_end_s: slots.end as f64 * fleet.slot_s,
            current_slot: slots.start,
            replicas: Vec::new(),
            groups: fleet
                .groups
                .iter()
                .map(|_| GroupState {
                    replicas: Vec::new(),
                    up: 0,
                })
                .collect(),
            tier_groups: (0..tiers)
                .map(|k| {
                    (0..fleet.groups.len())
                        .filter(|&g| fleet.groups[g].tier == k)
                        .collect()
                })
                .collect(),
            next_in_turn: vec![0; tiers],
            backlog: vec![std::collections::VecDeque::new(); tiers],
            queue: EventQueue::default(),
            reqs: Slab::default(),
            rng: StdRng::seed_from_u64(seed),
            finished: Vec::new(),
            result: SimResult {
                tiers: vec![TierTally::default(); tiers],
                slots: vec![vec![SlotTally::default(); tiers]; slots.len()],
                groups: vec![GroupTally::default(); fleet.groups.len()],
                requests: 0,
                events: 0,
                peak_in_flight: 0,
            },
            slots,
        }
    }

    fn spec(&self, replica: usize) -> &'a ReplicaSpec {
        &self.fleet.groups[self.replicas[replica].spec].spec
    }

    /// Row of `result.slots` for an arrival at `time_s`.
    fn slot_row(&self, time_s: f64) -> usize {
        let last = self.slots.end.max(1) - 1;
        ((time_s / self.fleet.slot_s) as usize).clamp(self.slots.start, last) - self.slots.start
    }

    /// Schedules the end of replica `r`'s step, if one is in progress.
    fn schedule(&mut self, r: usize, end_s: Option<f64>) {
        if let Some(end) = end_s {
            let generation = self.replicas[r].generation;
            self.queue.push(
                end,
                Event::StepEnd {
                    replica: r,
                    generation,
                },
            );
        }
    }

    /// Slot `s` begins: every group takes the plan's replica count.
    fn start_slot(&mut self, s: usize) {
        self.current_slot = s;
        let slot_s = self.fleet.slot_s;
        for (g, group) in self.fleet.groups.iter().enumerate() {
            let up = group.replicas_by_slot.get(s).copied().unwrap_or(0) as usize;
            let state = &mut self.groups[g];
            while state.replicas.len() < up {
                let rank = state.replicas.len();
                state.replicas.push(self.replicas.len());
                self.replicas.push(Replica::new(g, rank));
            }
            let before = state.up;
            state.up = up;
            if let Some(spot) = group.spot {
                self.request_spot(g, s, spot, before);
            }
            let state = &self.groups[g];
            for &r in &state.replicas[..state.up] {
                if !self.replicas[r].down {
                    self.replicas[r].up_s += slot_s;
                    self.result.groups[g].up_s += slot_s;
                }
            }
        }
        let now = s as f64 * slot_s;
        for k in 0..self.fleet.tiers.len() {
            self.release_backlog(k, now);
        }
    }

    /// Slot `s` of spot group `g`: each requested replica not already up
    /// (of the `before` up in the previous slot, and not interrupted) is
    /// granted with probability `availability`; each granted one draws the
    /// time of its interruption, scheduled when it falls within the slot.
    fn request_spot(&mut self, g: usize, s: usize, spot: Spot, before: usize) {
        let slot_s = self.fleet.slot_s;
        let start = s as f64 * slot_s;
        for i in 0..self.groups[g].up {
            let r = self.groups[g].replicas[i];
            let carried = i < before && !self.replicas[r].down;
            if !carried {
                let granted = self.rng.gen::<f64>() < spot.availability;
                self.replicas[r].down = !granted;
            }
            if !self.replicas[r].down && spot.interruptions_per_hour > 0.0 {
                let u: f64 = self.rng.gen::<f64>();
                let after_s = -(1.0 - u).ln() / spot.interruptions_per_hour * 3600.0;
                if after_s < slot_s {
                    self.queue.push(
                        start + after_s,
                        Event::Interrupt {
                            replica: r,
                            slot: s,
                        },
                    );
                }
            }
        }
    }

    /// Spot replica `r` is taken back: the requests it holds are dropped.
    fn interrupt(&mut self, r: usize, slot: usize) {
        if slot != self.current_slot || self.replicas[r].down {
            return;
        }
        let k = self.fleet.groups[self.replicas[r].spec].tier;
        for id in self.replicas[r].evict_all() {
            self.reqs.remove(id);
            let tally = &mut self.result.tiers[k];
            tally.unserved_requests += 1;
            tally.interrupted += 1;
        }
    }

    /// The up replica of deadline tier `k` with a free batch place, whose KV
    /// cache can hold `need` tokens, with the least outstanding work per
    /// unit of capacity.
    fn route_with_room(&self, k: usize, need: u64) -> Option<usize> {
        let mean_output = self.fleet.tiers[k].mean_output_tokens;
        let mut best: Option<(f64, usize)> = None;
        for &g in &self.tier_groups[k] {
            let group = &self.fleet.groups[g];
            if need > group.spec.kv_capacity_tokens {
                continue;
            }
            let state = &self.groups[g];
            for &r in &state.replicas[..state.up] {
                let rep = &self.replicas[r];
                if rep.down || rep.in_system >= group.spec.max_batch {
                    continue;
                }
                let work =
                    rep.outstanding_prompt_tokens as f64 + f64::from(rep.in_system) * mean_output;
                let score = work / group.rps_per_replica.max(1e-12);
                if best.is_none_or(|(b, _)| score < b) {
                    best = Some((score, r));
                }
            }
        }
        best.map(|(_, r)| r)
    }

    /// Hands the oldest waiting requests of deadline tier `k` to replicas
    /// with a free batch place, while there are some (and the horizon has
    /// not ended).
    fn release_backlog(&mut self, k: usize, now: f64) {
        if now > self.horizon_end_s {
            return;
        }
        while let Some(a) = self.backlog[k].front().copied() {
            let need = u64::from(a.input_tokens.max(1)) + u64::from(a.output_tokens.max(1));
            let Some(r) = self.route_with_room(k, need) else {
                return;
            };
            self.backlog[k].pop_front();
            self.dispatch(now, a, r);
        }
    }

    /// Queues arrival `a` on replica `r` at `now`; a request released from
    /// a backlog starts its TTFT and TPOT clocks at `now` and remembers how
    /// long it waited.
    fn dispatch(&mut self, now: f64, a: Arrival, r: usize) {
        let mut q = InFlight::new(&a);
        q.held_s = (now - a.time_s).max(0.0);
        q.arrival_s = a.time_s + q.held_s;
        let id = self.reqs.insert(q);
        let spec = self.spec(r);
        let rep = &mut self.replicas[r];
        let end = match rep.enqueue(now, id, &self.reqs, spec) {
            Some(end) => Some(end),
            None if !rep.is_busy() => rep.start_step(now, &mut self.reqs, spec),
            None => None,
        };
        self.schedule(r, end);
    }

    /// The up replica of tier `k`, whose KV cache can hold `need` tokens,
    /// that the fleet's router picks.
    fn route(&mut self, k: usize, need: u64) -> Option<usize> {
        match self.fleet.router {
            Router::LeastWork => self.route_least_work(k, need),
            Router::RoundRobin => self.route_round_robin(k, need),
        }
    }

    /// The up replica of tier `k` with the least outstanding work per unit
    /// of capacity whose KV cache can hold `need` tokens.
    fn route_least_work(&self, k: usize, need: u64) -> Option<usize> {
        let mean_output = self.fleet.tiers[k].mean_output_tokens;
        let mut best: Option<(f64, usize)> = None;
        for &g in &self.tier_groups[k] {
            let group = &self.fleet.groups[g];
            if need > group.spec.kv_capacity_tokens {
                continue;
            }
            let weight = group.rps_per_replica.max(1e-12);
            let state = &self.groups[g];
            for &r in &state.replicas[..state.up] {
                let rep = &self.replicas[r];
                if rep.down {
                    continue;
                }
                let work =
                    rep.outstanding_prompt_tokens as f64 + f64::from(rep.in_system) * mean_output;
                let score = work / weight;
                if best.is_none_or(|(b, _)| score < b) {
                    best = Some((score, r));
                }
            }
        }
        best.map(|(_, r)| r)
    }

    /// The next up replica of tier `k` in turn (groups in order, replicas by
    /// rank) whose KV cache can hold `need` tokens.
    fn route_round_robin(&mut self, k: usize, need: u64) -> Option<usize> {
        let groups = &self.tier_groups[k];
        let up: usize = groups.iter().map(|&g| self.groups[g].up).sum();
        for i in 0..up {
            let mut pos = (self.next_in_turn[k] + i) % up;
            for &g in groups {
                let state = &self.groups[g];
                if pos >= state.up {
                    pos -= state.up;
                    continue;
                }
                let r = state.replicas[pos];
                if need <= self.fleet.groups[g].spec.kv_capacity_tokens && !self.replicas[r].down {
                    self.next_in_turn[k] = (self.next_in_turn[k] + i + 1) % up;
                    return Some(r);
                }
                break;
            }
        }
        None
    }

    /// A request arrives: to the API, to a replica, or unserved.
    fn arrive(&mut self, now: f64, a: Arrival) {
        self.result.requests += 1;
        let k = usize::from(a.tier);
        self.result.tiers[k].requests += 1;
        let share = self.fleet.tiers[k]
            .api_share_by_slot
            .get(self.current_slot)
            .copied()
            .unwrap_or(0.0);
        if share > 0.0 && (share >= 1.0 || self.rng.gen::<f64>() < share) {
            let tally = &mut self.result.tiers[k];
            tally.api_requests += 1;
            tally.api_input_tokens += u64::from(a.input_tokens);
            tally.api_output_tokens += u64::from(a.output_tokens);
            return;
        }
        let row = self.slot_row(a.time_s);
        self.result.slots[row][k].on_gpus += 1;
        let need = u64::from(a.input_tokens.max(1)) + u64::from(a.output_tokens.max(1));
        if self.fleet.tiers[k].deadline_s.is_some() {
            let fits_somewhere = self.tier_groups[k]
                .iter()
                .any(|&g| need <= self.fleet.groups[g].spec.kv_capacity_tokens);
            if !fits_somewhere {
                self.result.tiers[k].unserved_requests += 1;
                return;
            }
            match self.route_with_room(k, need) {
                Some(r) if self.backlog[k].is_empty() => self.dispatch(now, a, r),
                _ => {
                    self.backlog[k].push_back(a);
                    self.release_backlog(k, now);
                }
            }
            return;
        }
        let Some(r) = self.route(k, need) else {
            self.result.tiers[k].unserved_requests += 1;
            return;
        };
        self.dispatch(now, a, r);
    }

    /// Replica `r`'s step ends: record what finished, start the next step.
    fn end_step(&mut self, now: f64, r: usize, on_completed: &mut impl FnMut(&Completed)) {
        let spec = self.spec(r);
        let rep = &mut self.replicas[r];
        let up = rep.rank < self.groups[rep.spec].up && !rep.down && now <= self.horizon_end_s;
        self.finished.clear();
        rep.end_step(now, up, &mut self.reqs, &mut self.finished);
        for i in 0..self.finished.len() {
            let f = self.finished[i];
            let q = *self.reqs.get(f.id);
            let k = usize::from(q.tier);
            let ttft_ms = (q.first_token_s - q.arrival_s) * 1e3;
            let e2e_ms = (f.finish_s - q.arrival_s) * 1e3;
            let latency = Latency {
                ttft_ms,
                tpot_ms: Latency::tpot_ms(e2e_ms, ttft_ms, q.output_tokens),
                e2e_ms,
                queue_ms: (q.admitted_s - q.arrival_s) * 1e3,
            };
            let limits = self.fleet.tiers[k].limits;
            // A deadline counts from arrival, before any wait in the backlog.
            let on_time = self.fleet.tiers[k]
                .deadline_s
                .is_none_or(|d| f.finish_s - (q.arrival_s - q.held_s) <= d);
            let met =
                on_time && latency.ttft_ms <= limits.ttft_ms && latency.tpot_ms <= limits.tpot_ms;
            self.result.tiers[k].record_on_time(latency, q.output_tokens, limits, on_time);
            let row = self.slot_row(q.arrival_s - q.held_s);
            self.result.slots[row][k].met_both += u64::from(met);
            on_completed(&Completed {
                arrival_s: q.arrival_s,
                tier: q.tier,
                ttft_ms,
                e2e_ms,
                output_tokens: q.output_tokens,
            });
            self.reqs.remove(f.id);
        }
        let end = self.replicas[r].start_step(now, &mut self.reqs, spec);
        self.schedule(r, end);
        let k = self.fleet.groups[self.replicas[r].spec].tier;
        if self.fleet.tiers[k].deadline_s.is_some() {
            self.release_backlog(k, now);
        }
    }

    /// The totals, with each replica's busy and up time; requests still in a
    /// backlog when the replay ends were never served.
    fn finish(mut self) -> SimResult {
        for (k, waiting) in self.backlog.iter().enumerate() {
            self.result.tiers[k].unserved_requests += waiting.len() as u64;
        }
        for rep in &self.replicas {
            let tally = &mut self.result.groups[rep.spec];
            if tally.replicas.len() <= rep.rank {
                tally.replicas.resize(rep.rank + 1, (0.0, 0.0));
            }
            tally.replicas[rep.rank] = (rep.up_s, rep.busy_s);
            tally.busy_s += rep.busy_s;
            tally.batch_s += rep.batch_s;
            tally.preemptions += rep.preemptions;
        }
        self.result.peak_in_flight = self.reqs.high_water();
        self.result
    }
}

/// Replays `arrivals` (sorted by time, seconds since the start of slot 0,
/// within `slots`) against `fleet`. `on_slot` is called at each slot start.
pub(crate) fn simulate(
    fleet: &Fleet,
    slots: Range<usize>,
    arrivals: impl IntoIterator<Item = Arrival>,
    seed: u64,
    on_slot: impl FnMut(usize),
) -> SimResult {
    simulate_observed(fleet, slots, arrivals, seed, on_slot, |_| {})
}

/// [`simulate`], also handing every request completed on a replica to
/// `on_completed`, in completion order.
pub(crate) fn simulate_observed(
    fleet: &Fleet,
    slots: Range<usize>,
    arrivals: impl IntoIterator<Item = Arrival>,
    seed: u64,
    mut on_slot: impl FnMut(usize),
    mut on_completed: impl FnMut(&Completed),
) -> SimResult {
    let mut arrivals = arrivals.into_iter();
    let mut run = Run::new(fleet, slots.clone(), seed);
    for s in slots {
        run.queue.push(s as f64 * fleet.slot_s, Event::SlotStart(s));
    }
    let mut pending = arrivals.next();
    if let Some(a) = &pending {
        run.queue.push(a.time_s, Event::Arrival);
    }
    while let Some((now, event)) = run.queue.pop() {
        run.result.events += 1;
        match event {
            Event::SlotStart(s) => {
                run.start_slot(s);
                on_slot(s);
            }
            Event::Arrival => {
                let Some(a) = pending.take() else { continue };
                pending = arrivals.next();
                if let Some(next) = &pending {
                    run.queue.push(next.time_s.max(now), Event::Arrival);
                }
                run.arrive(now, a);
            }
            Event::StepEnd {
                replica,
                generation,
            } => {
                if run.replicas[replica].generation == generation {
                    run.end_step(now, replica, &mut on_completed);
                }
            }
            Event::Interrupt { replica, slot } => run.interrupt(replica, slot),
        }
    }
    run.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::step::tests::{h100, llama8b};
    use crate::perf::PerfModel;
    use crate::sim::renewal::renewal;
    use crate::sim::router::Router;
    use crate::sim::scheduler::Scheduler;

    fn spec(decode_runs: bool, max_batch: u32, kv_capacity_tokens: u64) -> ReplicaSpec {
        ReplicaSpec {
            perf: PerfModel::new(
                &h100(),
                &llama8b(),
                1,
                crate::profiles::precision::Precision::Bf16,
            ),
            max_batch,
            max_batched_tokens: 2048,
            kv_capacity_tokens,
            scheduler: Scheduler::DecodeFirstChunked,
            decode_runs,
        }
    }

    fn fleet(spec: ReplicaSpec, replicas: u32, api_share: f64) -> Fleet {
        Fleet {
            slot_s: 3600.0,
            tiers: vec![FleetTier {
                name: "t".into(),
                limits: Limits {
                    ttft_ms: 500.0,
                    tpot_ms: 50.0,
                },
                api_share_by_slot: vec![api_share],
                mean_output_tokens: 200.0,
                deadline_s: None,
            }],
            groups: vec![Group {
                tier: 0,
                label: "g".into(),
                spec,
                replicas_by_slot: vec![replicas],
                rps_per_replica: 1.0,
                spot: None,
            }],
            router: Router::LeastWork,
        }
    }

    #[test]
    fn a_lone_request_takes_one_prefill_and_its_decode_steps() {
        let f = fleet(spec(true, 8, 100_000), 1, 0.0);
        let a = Arrival {
            time_s: 1.0,
            tier: 0,
            input_tokens: 1000,
            output_tokens: 101,
        };
        let r = simulate(&f, 0..1, [a], 1, |_| {});
        let perf = &f.groups[0].spec.perf;
        let prefill_ms = perf.prefill_s(1000.0) * 1e3;
        let t = &r.tiers[0];
        assert_eq!((t.requests, t.served_requests, t.met_both), (1, 1, 1));
        let ttft = t.ttft.quantile_ms(1.0);
        assert!((ttft - prefill_ms).abs() < 1e-9, "{ttft} vs {prefill_ms}");
        // 100 decode steps; context 1001 at the first, growing by one.
        let decode_ms: f64 = (0..100)
            .map(|j| perf.decode_step_s(1.0, 1001.0 + f64::from(j)) * 1e3)
            .sum();
        let e2e = t.e2e.quantile_ms(1.0);
        assert!((e2e - prefill_ms - decode_ms).abs() < 1e-6, "{e2e}");
        // One arrival, one slot start, the prefill step and one decode run.
        assert_eq!(r.events, 4);
    }

    #[test]
    fn a_deadline_tier_waits_for_the_slot_that_serves_it_and_misses_past_its_deadline() {
        // Ten requests in the first (10-minute) slot, which has no replica;
        // the next slot has one, with room for all of them.
        let mut f = fleet(spec(true, 16, 1_000_000), 0, 0.0);
        f.slot_s = 600.0;
        f.tiers[0].limits.ttft_ms = 60_000.0;
        f.tiers[0].api_share_by_slot = vec![0.0, 0.0];
        f.groups[0].replicas_by_slot = vec![0, 1];
        let arrivals: Vec<Arrival> = (0..10)
            .map(|i| Arrival {
                time_s: 1.0 + f64::from(i),
                tier: 0,
                input_tokens: 500,
                output_tokens: 50,
            })
            .collect();
        // Without a deadline they find no replica and are lost.
        let routed = simulate(&f, 0..2, arrivals.clone(), 1, |_| {});
        assert_eq!(routed.tiers[0].unserved_requests, 10);
        // With an hour's deadline they wait for slot 1 and all meet it.
        f.tiers[0].deadline_s = Some(3600.0);
        let held = simulate(&f, 0..2, arrivals.clone(), 1, |_| {});
        let t = &held.tiers[0];
        assert_eq!((t.served_requests, t.met_both, t.late), (10, 10, 0));
        assert_eq!(
            held.slots[0][0].met_both, 10,
            "counted in their arrival slot"
        );
        // With five minutes they are served ten minutes late: all miss.
        f.tiers[0].deadline_s = Some(300.0);
        let late = simulate(&f, 0..2, arrivals.clone(), 1, |_| {});
        let t = &late.tiers[0];
        assert_eq!((t.served_requests, t.met_both, t.late), (10, 0, 10));
        // Replayed alone, the first slot never gets a replica: unserved.
        let alone = simulate(&f, 0..1, arrivals, 1, |_| {});
        assert_eq!(alone.tiers[0].unserved_requests, 10);
    }

    #[test]
    fn spot_replicas_are_granted_and_interrupted_and_drop_what_they_hold() {
        let mut f = fleet(spec(true, 64, 1_000_000), 2, 0.0);
        f.slot_s = 600.0;
        f.tiers[0].limits.ttft_ms = 60_000.0;
        f.tiers[0].limits.tpot_ms = 1_000.0;
        let arrivals: Vec<Arrival> = (0..600)
            .map(|i| Arrival {
                time_s: f64::from(i),
                tier: 0,
                input_tokens: 500,
                output_tokens: 400,
            })
            .collect();
        let run = |f: &Fleet| simulate(f, 0..1, arrivals.clone(), 7, |_| {});
        // Always granted, never interrupted: like on-demand replicas.
        f.groups[0].spot = Some(Spot {
            availability: 1.0,
            interruptions_per_hour: 0.0,
        });
        let calm = run(&f);
        assert_eq!(calm.tiers[0].interrupted, 0);
        assert_eq!(calm.tiers[0].served_requests, 600);
        // Interrupted about every six minutes: both replicas go down within
        // the slot, dropping what they hold; later arrivals find none.
        f.groups[0].spot = Some(Spot {
            availability: 1.0,
            interruptions_per_hour: 10.0,
        });
        let stormy = run(&f);
        let t = &stormy.tiers[0];
        assert!(t.interrupted > 0, "{t:?}");
        assert!(t.unserved_requests > t.interrupted, "{t:?}");
        assert_eq!(t.served_requests + t.unserved_requests, 600);
        assert!(t.attainment() < 0.9);
        // Hardly ever granted: nothing is served.
        f.groups[0].spot = Some(Spot {
            availability: 1e-6,
            interruptions_per_hour: 0.0,
        });
        let none = run(&f);
        assert_eq!(none.tiers[0].served_requests, 0);
        assert_eq!(none.groups[0].up_s, 0.0);
    }

    fn prefill_first(mut spec: ReplicaSpec) -> ReplicaSpec {
        spec.scheduler = Scheduler::PrefillFirst;
        spec
    }

    /// Requests completed, in arrival order.
    fn completed(f: &Fleet, arrivals: &[Arrival]) -> Vec<Completed> {
        let mut done = Vec::new();
        simulate_observed(f, 0..1, arrivals.to_vec(), 1, |_| {}, |c| done.push(*c));
        done.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
        done
    }

    #[test]
    fn prefill_first_prefills_a_prompt_longer_than_the_budget_in_one_step() {
        let a = Arrival {
            time_s: 1.0,
            tier: 0,
            input_tokens: 5000,
            output_tokens: 1,
        };
        let whole = fleet(prefill_first(spec(true, 8, 100_000)), 1, 0.0);
        let r = simulate(&whole, 0..1, [a], 1, |_| {});
        let prefill_ms = whole.groups[0].spec.perf.prefill_s(5000.0) * 1e3;
        let ttft = r.tiers[0].ttft.quantile_ms(1.0);
        assert!((ttft - prefill_ms).abs() < 1e-9, "{ttft} vs {prefill_ms}");
        // Arrival, slot start, one step.
        assert_eq!(r.events, 3);
        // Chunked, it takes three steps of at most 2048 tokens.
        let chunked = simulate(&fleet(spec(true, 8, 100_000), 1, 0.0), 0..1, [a], 1, |_| {});
        assert_eq!(chunked.events, 5);
    }

    #[test]
    fn prefill_first_stalls_decodes_while_it_prefills() {
        let arrivals = [
            Arrival {
                time_s: 0.5,
                tier: 0,
                input_tokens: 1000,
                output_tokens: 201,
            },
            Arrival {
                time_s: 1.0,
                tier: 0,
                input_tokens: 4000,
                output_tokens: 1,
            },
        ];
        let f = fleet(prefill_first(spec(true, 8, 100_000)), 1, 0.0);
        let perf = &f.groups[0].spec.perf;
        let done = completed(&f, &arrivals);
        // The first request's 200 decode steps run at its own batch of one;
        // the second prompt's prefill step sits between two of them.
        let decode_ms: f64 = (0..200)
            .map(|j| perf.decode_step_s(1.0, 1001.0 + f64::from(j)) * 1e3)
            .sum();
        let expected = (perf.prefill_s(1000.0) + perf.prefill_s(4000.0)) * 1e3 + decode_ms;
        assert!(
            (done[0].e2e_ms - expected).abs() < 1e-6,
            "{} vs {expected}",
            done[0].e2e_ms
        );
        // The second waits at most one decode step before its whole prefill.
        let prefill_ms = perf.prefill_s(4000.0) * 1e3;
        let ttft = done[1].ttft_ms;
        assert!(ttft >= prefill_ms && ttft < prefill_ms + 20.0, "{ttft}");
        // Decode-first, the first request's decode rides along with the
        // chunks: it finishes sooner.
        let chunked = completed(&fleet(spec(true, 8, 100_000), 1, 0.0), &arrivals);
        assert!(chunked[0].e2e_ms < done[0].e2e_ms, "{}", chunked[0].e2e_ms);
    }

    /// `n` requests 10 s apart, each `input` prompt tokens and 10 output.
    fn spaced(n: u32, input: u32) -> Vec<Arrival> {
        (0..n)
            .map(|i| Arrival {
                time_s: 10.0 * f64::from(i),
                tier: 0,
                input_tokens: input,
                output_tokens: 10,
            })
            .collect()
    }

    #[test]
    fn round_robin_takes_turns_where_least_work_takes_the_first_idle_replica() {
        // Requests far apart: every replica is idle when each arrives.
        let arrivals = spaced(6, 100);
        let mut f = fleet(spec(true, 8, 100_000), 3, 0.0);
        let busy = |f: &Fleet| -> Vec<bool> {
            let r = simulate(f, 0..1, arrivals.clone(), 1, |_| {});
            r.groups[0].replicas.iter().map(|&(_, b)| b > 0.0).collect()
        };
        assert_eq!(busy(&f), [true, false, false]);
        f.router = Router::RoundRobin;
        assert_eq!(busy(&f), [true, true, true]);
    }

    #[test]
    fn round_robin_skips_replicas_too_small_for_the_request() {
        let mut f = fleet(spec(true, 8, 1_000), 2, 0.0);
        let mut big = f.groups[0].clone();
        big.spec.kv_capacity_tokens = 100_000;
        f.groups.push(big);
        f.router = Router::RoundRobin;
        let arrivals = spaced(4, 5_000);
        let r = simulate(&f, 0..1, arrivals, 1, |_| {});
        assert_eq!(r.tiers[0].served_requests, 4);
        assert_eq!(r.groups[0].busy_s, 0.0);
        let big: Vec<bool> = r.groups[1].replicas.iter().map(|&(_, b)| b > 0.0).collect();
        assert_eq!(big, [true, true]);
    }

    #[test]
    fn decode_runs_match_step_by_step_simulation() {
        let lengths: Vec<(u32, u32)> = (0..64).map(|i| (200 + 97 * i, 20 + 13 * i)).collect();
        let arrivals = renewal(6.0, 2.0, &lengths, 3000, 11);
        // A small KV cache forces preemptions as well.
        for kv in [1_000_000, 12_000] {
            let by_runs = simulate(
                &fleet(spec(true, 32, kv), 2, 0.0),
                0..1,
                arrivals.clone(),
                5,
                |_| {},
            );
            let by_steps = simulate(
                &fleet(spec(false, 32, kv), 2, 0.0),
                0..1,
                arrivals.clone(),
                5,
                |_| {},
            );
            let (a, b) = (&by_runs.tiers[0], &by_steps.tiers[0]);
            assert_eq!(a.served_requests, 3000);
            assert_eq!(
                (a.met_ttft, a.met_tpot, a.met_both),
                (b.met_ttft, b.met_tpot, b.met_both)
            );
            for q in [0.5, 0.9, 0.99] {
                let rel = |x: f64, y: f64| (x - y).abs() / y.max(1e-9);
                assert!(rel(a.ttft.quantile_ms(q), b.ttft.quantile_ms(q)) < 0.011);
                assert!(rel(a.e2e.quantile_ms(q), b.e2e.quantile_ms(q)) < 0.011);
            }
            assert_eq!(
                by_runs.groups[0].preemptions,
                by_steps.groups[0].preemptions
            );
            assert!(
                by_runs.events * 5 < by_steps.events,
                "{} vs {}",
                by_runs.events,
                by_steps.events
            );
            if kv == 12_000 {
                assert!(by_runs.groups[0].preemptions > 0);
            }
        }
    }

    #[test]
    fn every_request_is_accounted_for_and_the_seed_fixes_the_result() {
        let lengths = [(500, 100), (3000, 20), (50, 400)];
        let arrivals = renewal(20.0, 1.5, &lengths, 5000, 2);
        let f = fleet(spec(true, 16, 60_000), 3, 0.3);
        let r = simulate(&f, 0..1, arrivals.clone(), 9, |_| {});
        let t = &r.tiers[0];
        assert_eq!(t.requests, 5000);
        assert_eq!(
            t.api_requests + t.served_requests + t.unserved_requests,
            5000
        );
        assert!((t.api_requests as f64 / 5000.0 - 0.3).abs() < 0.03);
        let again = simulate(&f, 0..1, arrivals, 9, |_| {});
        assert_eq!(again.tiers[0].met_both, t.met_both);
        assert_eq!(again.events, r.events);
        assert!(r.groups[0].busy_s > 0.0 && r.groups[0].busy_s <= r.groups[0].up_s * 1.01);
    }

    #[test]
    fn overload_misses_the_limits_and_more_replicas_recover() {
        let lengths = [(2000, 200)];
        let arrivals = renewal(30.0, 1.0, &lengths, 4000, 4);
        let one = simulate(
            &fleet(spec(true, 64, 400_000), 1, 0.0),
            0..1,
            arrivals.clone(),
            1,
            |_| {},
        );
        let four = simulate(
            &fleet(spec(true, 64, 400_000), 8, 0.0),
            0..1,
            arrivals,
            1,
            |_| {},
        );
        assert!(
            one.tiers[0].attainment() < 0.5,
            "{}",
            one.tiers[0].attainment()
        );
        assert!(
            four.tiers[0].attainment() > 0.99,
            "{}",
            four.tiers[0].attainment()
        );
    }

    #[test]
    fn no_replica_up_leaves_requests_unserved() {
        let a = Arrival {
            time_s: 0.5,
            tier: 0,
            input_tokens: 10,
            output_tokens: 10,
        };
        let r = simulate(&fleet(spec(true, 8, 100_000), 0, 0.0), 0..1, [a], 1, |_| {});
        assert_eq!(r.tiers[0].unserved_requests, 1);
        assert_eq!(r.tiers[0].attainment(), 0.0);
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use crate::perf::step::tests::{h100, llama8b};
    use crate::perf::PerfModel;
    use crate::sim::renewal::renewal;
    use crate::sim::scheduler::Scheduler;
    use proptest::prelude::*;

    fn fleet(
        scheduler: Scheduler,
        decode_runs: bool,
        (max_batch, kv, budget): (u32, u64, u32),
        replicas: u32,
    ) -> Fleet {
        Fleet {
            slot_s: 1e9,
            tiers: vec![FleetTier {
                name: "t".into(),
                limits: Limits {
                    ttft_ms: 800.0,
                    tpot_ms: 40.0,
                },
                api_share_by_slot: vec![0.0],
                mean_output_tokens: 100.0,
                deadline_s: None,
            }],
            groups: vec![Group {
                tier: 0,
                label: "g".into(),
                spec: ReplicaSpec {
                    perf: PerfModel::new(
                        &h100(),
                        &llama8b(),
                        1,
                        crate::profiles::precision::Precision::Bf16,
                    ),
                    max_batch,
                    max_batched_tokens: budget,
                    kv_capacity_tokens: kv,
                    scheduler,
                    decode_runs,
                },
                replicas_by_slot: vec![replicas],
                rps_per_replica: 1.0,
                spot: None,
            }],
            router: Router::LeastWork,
        }
    }

    proptest! {
        #![proptest_config(crate::base::testing::proptest_config(24))]

        /// Under either scheduler, advancing decode steps in runs changes
        /// nothing a request sees: the same requests meet the same limits,
        /// with the same preemptions, as a simulation that steps one token at
        /// a time; and every request is accounted for.
        #[test]
        fn decode_runs_are_exact(
            seed in 0u64..1000,
            rate in 2.0f64..40.0,
            cv in 0.5f64..4.0,
            max_batch in 1u32..64,
            kv in 6_000u64..400_000,
            budget in 512u32..8192,
            replicas in 1u32..4,
        ) {
            let lengths: Vec<(u32, u32)> = (0..32).map(|i| (50 + 173 * i, 1 + 37 * (i % 9))).collect();
            let arrivals = renewal(rate, cv, &lengths, 600, seed);
            let replica = (max_batch, kv, budget);
            for scheduler in Scheduler::ALL {
                let a = simulate(&fleet(scheduler, true, replica, replicas), 0..1, arrivals.clone(), seed, |_| {});
                let b = simulate(&fleet(scheduler, false, replica, replicas), 0..1, arrivals.clone(), seed, |_| {});
                let (x, y) = (&a.tiers[0], &b.tiers[0]);
                prop_assert_eq!(x.served_requests + x.unserved_requests, 600);
                prop_assert_eq!((x.served_requests, x.met_ttft, x.met_tpot, x.met_both), (y.served_requests, y.met_ttft, y.met_tpot, y.met_both));
                prop_assert_eq!(a.groups[0].preemptions, b.groups[0].preemptions);
                prop_assert!((x.decode_s - y.decode_s).abs() <= 1e-6 * y.decode_s.max(1.0));
            }
        }
    }
}
