//! The event loop: one replay of a workload against a fleet, slot by slot.

use super::parts::{parts, Part, Role};
use super::{Completed, Fleet, SimResult, Spot};
use crate::sim::events::{Event, EventQueue};
use crate::sim::metrics::{GroupTally, Latency, SlotTally, TierTally};
use crate::sim::replica::{Finished, Replica, ReplicaSpec};
use crate::sim::request::{Arrival, InFlight, Slab};
use crate::sim::router::Router;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::ops::Range;

mod client;
pub(crate) use client::{client, ClientPrompt};

struct GroupState {
    replicas: Vec<usize>,
    up: usize,
    /// By rank, each replica's outstanding work, what the least-work router
    /// compares (infinite while the replica is down); kept current by
    /// [`Run::refresh`] whenever a replica's work changes.
    work: Vec<f64>,
}

/// The state of one replay.
struct Run<'a> {
    fleet: &'a Fleet,
    /// The groups' replicas by role ([`parts`]); a replica's `spec` is
    /// its part's index.
    parts: Vec<Part<'a>>,
    slots: Range<usize>,
    /// Replicas are up until the end of the last slot; after it they drain.
    horizon_end_s: f64,
    replicas: Vec<Replica>,
    /// Per part.
    groups: Vec<GroupState>,
    /// Per tier, the parts its requests arrive at.
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
        let parts = parts(fleet);
        Run {
            fleet,
            horizon_end_s: slots.end as f64 * fleet.slot_s,
            current_slot: slots.start,
            replicas: Vec::new(),
            groups: parts
                .iter()
                .map(|_| GroupState {
                    replicas: Vec::new(),
                    up: 0,
                    work: Vec::new(),
                })
                .collect(),
            tier_groups: (0..tiers)
                .map(|k| {
                    (0..parts.len())
                        .filter(|&p| parts[p].tier == k && parts[p].takes_arrivals())
                        .collect()
                })
                .collect(),
            parts,
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
        self.parts[self.replicas[replica].spec].spec
    }

    /// Whether a request of `input` + `output` tokens fits part `p`'s
    /// group (both sides of a disaggregated unit).
    fn holds(&self, p: usize, input: u32, output: u32) -> bool {
        self.fleet.groups[self.parts[p].group]
            .spec
            .holds(input, output)
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

    /// Replica `r`'s outstanding work for the least-work router, after its
    /// work or its state changed.
    fn refresh(&mut self, r: usize) {
        let rep = &self.replicas[r];
        let work = if rep.down {
            f64::INFINITY
        } else {
            self.work_of(rep)
        };
        let state = &mut self.groups[rep.spec];
        if state.work.len() <= rep.rank {
            state.work.resize(rep.rank + 1, 0.0);
        }
        state.work[rep.rank] = work;
    }

    /// The outstanding work of `rep`: prompt tokens not yet prefilled plus
    /// its requests × its tier's mean output tokens.
    fn work_of(&self, rep: &Replica) -> f64 {
        let tier = self.parts[rep.spec].tier;
        let mean_output = self.fleet.tiers[tier].mean_output_tokens;
        rep.outstanding_prompt_tokens as f64 + f64::from(rep.in_system) * mean_output
    }

    /// `work` per unit of part `p`'s capacity, the score the least-work
    /// router compares across groups.
    fn per_capacity(&self, p: usize, work: f64) -> f64 {
        work / self.parts[p].rps_per_replica.max(1e-12)
    }

    /// Slot `s` begins: every group takes the plan's replica count.
    fn start_slot(&mut self, s: usize) {
        self.current_slot = s;
        let slot_s = self.fleet.slot_s;
        let fleet = self.fleet;
        for g in 0..self.parts.len() {
            let (fleet_group, per_unit, spec) = {
                let part = &self.parts[g];
                (part.group, part.per_unit, part.spec)
            };
            let group = &fleet.groups[fleet_group];
            let units = group.replicas_by_slot.get(s).copied().unwrap_or(0);
            let up = (units * per_unit) as usize;
            let state = &mut self.groups[g];
            while state.replicas.len() < up {
                let rank = state.replicas.len();
                state.replicas.push(self.replicas.len());
                let mut replica = Replica::new(g, rank, spec);
                if let Some(prefixes) = &self.fleet.prefixes {
                    replica = replica.with_prefixes(prefixes);
                }
                self.replicas.push(replica);
            }
            let before = state.up;
            state.up = up;
            if let Some(spot) = group.spot {
                self.request_spot(g, s, spot, before);
            }
            for i in 0..self.groups[g].replicas.len() {
                let r = self.groups[g].replicas[i];
                if i < self.groups[g].up && !self.replicas[r].down {
                    self.replicas[r].up_s += slot_s;
                    self.result.groups[fleet_group].up_s += slot_s;
                }
                self.refresh(r);
            }
            self.start_loading(g, s);
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

    /// Slot `s` of group `g`: its last `loading_by_slot[s]` replicas up load
    /// their model, down until `load_s` into the slot (all of it when the
    /// load outlasts the slot).
    fn start_loading(&mut self, g: usize, s: usize) {
        let part = &self.parts[g];
        let (fleet_group, per_unit) = (part.group, part.per_unit);
        let group = &self.fleet.groups[fleet_group];
        let units = group.loading_by_slot.get(s).copied().unwrap_or(0);
        let loading = (units * per_unit) as usize;
        if loading == 0 || group.load_s <= 0.0 {
            return;
        }
        let up = self.groups[g].up;
        let start = s as f64 * self.fleet.slot_s;
        for i in up.saturating_sub(loading)..up {
            let r = self.groups[g].replicas[i];
            if self.replicas[r].down {
                continue; // a spot replica not granted stays down
            }
            self.replicas[r].down = true;
            self.refresh(r);
            let group = &self.fleet.groups[fleet_group];
            self.result.groups[fleet_group].loading_s += group.load_s.min(self.fleet.slot_s);
            if group.load_s < self.fleet.slot_s {
                self.queue.push(
                    start + group.load_s,
                    Event::Loaded {
                        replica: r,
                        slot: s,
                    },
                );
            }
        }
    }

    /// Replica `r` has loaded its model in slot `slot`: it takes requests.
    fn loaded(&mut self, r: usize, slot: usize, now: f64) {
        if slot != self.current_slot {
            return;
        }
        self.replicas[r].down = false;
        self.refresh(r);
        let k = self.parts[self.replicas[r].spec].tier;
        self.release_backlog(k, now);
    }

    /// Spot replica `r` is taken back: the requests it holds are dropped.
    fn interrupt(&mut self, r: usize, slot: usize) {
        if slot != self.current_slot || self.replicas[r].down {
            return;
        }
        let k = self.parts[self.replicas[r].spec].tier;
        for id in self.replicas[r].evict_all(&self.reqs) {
            self.reqs.remove(id);
            let tally = &mut self.result.tiers[k];
            tally.unserved_requests += 1;
            tally.interrupted += 1;
        }
        self.refresh(r);
    }

    /// The up replica of deadline tier `k` with a free batch place, whose
    /// group holds `a`, with the least outstanding work per
    /// unit of capacity: in each group the one with the least work (a
    /// group's replicas share one capacity), then across groups per unit of
    /// capacity; the first in the groups' order and by rank on a tie.
    fn route_with_room(&self, k: usize, a: &Arrival) -> Option<usize> {
        let mut best: Option<(f64, usize)> = None;
        for &g in &self.tier_groups[k] {
            if !self.holds(g, a.input_tokens, a.output_tokens) {
                continue;
            }
            let max_batch = self.parts[g].spec.max_batch;
            let state = &self.groups[g];
            let mut least: Option<(f64, usize)> = None;
            for &r in &state.replicas[..state.up] {
                let rep = &self.replicas[r];
                if rep.down || rep.in_system >= max_batch {
                    continue;
                }
                let work = self.work_of(rep);
                if least.is_none_or(|(w, _)| work < w) {
                    least = Some((work, r));
                }
            }
            if let Some((work, r)) = least {
                let score = self.per_capacity(g, work);
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
            let Some(r) = self.route_with_room(k, &a) else {
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
        if let Role::Prefill { .. } = self.parts[self.replicas[r].spec].role {
            // The prefill side stops at the first token.
            q.decode_output_tokens = q.output_tokens;
            q.output_tokens = 1;
        }
        let id = self.reqs.insert(q);
        self.enqueue(now, id, r);
    }

    /// Queues in-flight request `id` on replica `r` at `now`.
    fn enqueue(&mut self, now: f64, id: u32, r: usize) {
        let spec = self.spec(r);
        let rep = &mut self.replicas[r];
        let end = match rep.enqueue(now, id, &self.reqs, spec) {
            Some(end) => Some(end),
            None if !rep.is_busy() => rep.start_step(now, &mut self.reqs, spec),
            None => None,
        };
        self.refresh(r);
        self.schedule(r, end);
    }

    /// The up replica of tier `k`, whose group holds `a`, that the
    /// fleet's router picks for `a`.
    fn route(&mut self, k: usize, a: &Arrival) -> Option<usize> {
        match self.fleet.router {
            Router::LeastWork => self.route_least_work(k, a),
            Router::RoundRobin => self.route_round_robin(k, a),
            Router::PrefixAware => self.route_prefix_aware(k, a),
        }
    }

    /// The up replica of tier `k` whose group holds `a` with the least
    /// outstanding work per unit of capacity once `a`'s
    /// prompt tokens not in its prefix cache are added; the first in the
    /// groups' order and by rank on a tie.
    fn route_prefix_aware(&self, k: usize, a: &Arrival) -> Option<usize> {
        let mut best = (f64::INFINITY, None);
        for &g in &self.tier_groups[k] {
            if !self.holds(g, a.input_tokens, a.output_tokens) {
                continue;
            }
            let state = &self.groups[g];
            for (rank, &work) in state.work[..state.up].iter().enumerate() {
                if !work.is_finite() {
                    continue;
                }
                let r = state.replicas[rank];
                let cached = self.replicas[r].cached_prompt_tokens(a.chain, a.input_tokens);
                let added = f64::from(a.input_tokens - cached);
                let score = self.per_capacity(g, work + added);
                if score < best.0 {
                    best = (score, Some(r));
                }
            }
        }
        best.1
    }

    /// The up replica of tier `k` with the least outstanding work per unit
    /// of capacity whose group holds `a`, from the work
    /// [`Self::refresh`] keeps: in each group the one with the least work
    /// (a group's replicas share one capacity, so the division orders them
    /// alike and the group's capacity decides nothing among them), then
    /// across groups per unit of capacity; the first in the groups' order
    /// and by rank on a tie.
    fn route_least_work(&self, k: usize, a: &Arrival) -> Option<usize> {
        let mut best = (f64::INFINITY, None);
        for &g in &self.tier_groups[k] {
            if !self.holds(g, a.input_tokens, a.output_tokens) {
                continue;
            }
            let state = &self.groups[g];
            let mut least = (f64::INFINITY, None);
            for (rank, &work) in state.work[..state.up].iter().enumerate() {
                if work < least.0 {
                    least = (work, Some(rank));
                }
            }
            if let (work, Some(rank)) = least {
                let score = self.per_capacity(g, work);
                if score < best.0 {
                    best = (score, Some(state.replicas[rank]));
                }
            }
        }
        best.1
    }

    /// The next up replica of tier `k` in turn (groups in order, replicas by
    /// rank) whose group holds `a`.
    fn route_round_robin(&mut self, k: usize, a: &Arrival) -> Option<usize> {
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
                if self.holds(g, a.input_tokens, a.output_tokens) && !self.replicas[r].down {
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
        if self.fleet.tiers[k].deadline_s.is_some() {
            let fits_somewhere = self.tier_groups[k]
                .iter()
                .any(|&g| self.holds(g, a.input_tokens, a.output_tokens));
            if !fits_somewhere {
                self.result.tiers[k].unserved_requests += 1;
                return;
            }
            match self.route_with_room(k, &a) {
                Some(r) if self.backlog[k].is_empty() => self.dispatch(now, a, r),
                _ => {
                    self.backlog[k].push_back(a);
                    self.release_backlog(k, now);
                }
            }
            return;
        }
        let Some(r) = self.route(k, &a) else {
            self.result.tiers[k].unserved_requests += 1;
            return;
        };
        self.dispatch(now, a, r);
    }

    /// Request `id`'s KV cache reached the decode side: the decode replica
    /// of part `p` with the least work takes it (an up one; else one still
    /// draining), its prompt but the last token prefilled; none: unserved.
    fn hand_off(&mut self, now: f64, id: u32, p: usize) {
        let state = &self.groups[p];
        let least = |ranks: &[usize]| {
            let mut best: Option<(f64, usize)> = None;
            for &r in ranks {
                let rep = &self.replicas[r];
                if rep.down {
                    continue;
                }
                let work = self.work_of(rep);
                if best.is_none_or(|(w, _)| work < w) {
                    best = Some((work, r));
                }
            }
            best.map(|(_, r)| r)
        };
        let Some(r) = least(&state.replicas[..state.up]).or_else(|| least(&state.replicas)) else {
            let k = usize::from(self.reqs.get(id).tier);
            self.result.tiers[k].unserved_requests += 1;
            self.reqs.remove(id);
            return;
        };
        let q = self.reqs.get_mut(id);
        q.output_tokens = q.decode_output_tokens;
        q.decode_output_tokens = 0;
        q.transferred = q.input_tokens - 1;
        q.prefill_target = q.input_tokens;
        q.prefilled = 0;
        q.first_token_s = f64::NAN;
        q.generated_at_join = 0;
        q.kv_reserved = 0;
        q.epoch = q.epoch.wrapping_add(1);
        self.enqueue(now, id, r);
    }

    /// Replica `r`'s step ends: record what finished (or, on a prefill
    /// replica, send its KV cache on), start the next step.
    fn end_step(&mut self, now: f64, r: usize, on_completed: &mut impl FnMut(&Completed)) {
        let spec = self.spec(r);
        let rep = &mut self.replicas[r];
        let up = rep.rank < self.groups[rep.spec].up && !rep.down && now <= self.horizon_end_s;
        self.finished.clear();
        rep.end_step(now, up, &mut self.reqs, &mut self.finished);
        let split = self.fleet.groups[self.parts[rep.spec].group]
            .spec
            .split
            .as_deref();
        if let (Role::Prefill { decode }, Some(split)) = (self.parts[rep.spec].role, split) {
            for f in &self.finished {
                let input = self.reqs.get(f.id).input_tokens;
                let at = now + split.transfer.seconds(input);
                self.queue.push(
                    at,
                    Event::Handoff {
                        request: f.id as usize,
                        decode,
                    },
                );
            }
            self.finished.clear();
        }
        for i in 0..self.finished.len() {
            let f = self.finished[i];
            let q = *self.reqs.get(f.id);
            let k = usize::from(q.tier);
            // The server's own time for the request (docs/model.md §2.1)
            // delays its first token and so every token after it; it takes
            // no GPU time, so the replica's steps do not wait for it.
            let server_s = spec.perf.server_s(q.input_tokens);
            let ttft_ms = (q.first_token_s - q.arrival_s + server_s) * 1e3;
            let e2e_ms = (f.finish_s - q.arrival_s + server_s) * 1e3;
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
                .is_none_or(|d| f.finish_s + server_s - (q.arrival_s - q.held_s) <= d);
            let met =
                on_time && latency.ttft_ms <= limits.ttft_ms && latency.tpot_ms <= limits.tpot_ms;
            let tally = &mut self.result.tiers[k];
            tally.record_on_time(latency, q.output_tokens, limits, on_time);
            tally.served_input_tokens += u64::from(q.input_tokens);
            tally.cached_input_tokens += u64::from(q.cached_tokens);
            let row = self.slot_row(q.arrival_s - q.held_s);
            self.result.slots[row][k].met_both += u64::from(met);
            on_completed(&Completed {
                arrival_s: q.arrival_s,
                input_tokens: q.input_tokens,
                tier: q.tier,
                ttft_ms,
                e2e_ms,
                output_tokens: q.output_tokens,
            });
            self.reqs.remove(f.id);
        }
        let end = self.replicas[r].start_step(now, &mut self.reqs, spec);
        self.refresh(r);
        self.schedule(r, end);
        let k = self.parts[self.replicas[r].spec].tier;
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
            let part = &self.parts[rep.spec];
            let tally = &mut self.result.groups[part.group];
            // A disaggregated unit's replicas count as one, by unit.
            let unit = rep.rank / part.per_unit.max(1) as usize;
            if tally.replicas.len() <= unit {
                tally.replicas.resize(unit + 1, (0.0, 0.0));
            }
            let (up_s, busy_s) = tally.replicas[unit];
            tally.replicas[unit] = (up_s + rep.up_s, busy_s + rep.busy_s);
            if part.role != Role::Serve {
                let side = usize::from(part.role == Role::Decode);
                tally.sides_busy_s.resize(2, 0.0);
                tally.sides_busy_s[side] += rep.busy_s;
            }
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
    on_slot: impl FnMut(usize),
    on_completed: impl FnMut(&Completed),
) -> SimResult {
    let mut replay = Paused::new(fleet, slots, arrivals, seed);
    replay.run_until(on_slot, on_completed, |_| false);
    replay.finish()
}

/// A replay that can stop between events and go on later: the state of
/// [`simulate`]'s run after the events handled so far.
pub(crate) struct Paused<'a, I> {
    run: Run<'a>,
    arrivals: I,
    pending: Option<Arrival>,
}

impl<'a, I: Iterator<Item = Arrival>> Paused<'a, I> {
    /// The replay of `arrivals` (sorted by time) against `fleet` over
    /// `slots`, before its first event.
    pub(crate) fn new(
        fleet: &'a Fleet,
        slots: Range<usize>,
        arrivals: impl IntoIterator<IntoIter = I>,
        seed: u64,
    ) -> Self {
        let mut arrivals = arrivals.into_iter();
        let mut run = Run::new(fleet, slots.clone(), seed);
        for s in slots {
            run.queue.push(s as f64 * fleet.slot_s, Event::SlotStart(s));
        }
        let pending = arrivals.next();
        if let Some(a) = &pending {
            run.queue.push(a.time_s, Event::Arrival);
        }
        Paused {
            run,
            arrivals,
            pending,
        }
    }

    /// Handles events until the last, or until one after which `decided`
    /// says the tallies so far settle what the caller asks of the run (then
    /// `true`: the replay can go on from there).
    pub(crate) fn run_until(
        &mut self,
        mut on_slot: impl FnMut(usize),
        mut on_completed: impl FnMut(&Completed),
        mut decided: impl FnMut(&SimResult) -> bool,
    ) -> bool {
        let run = &mut self.run;
        while let Some((now, event)) = run.queue.pop() {
            run.result.events += 1;
            match event {
                Event::SlotStart(s) => {
                    run.start_slot(s);
                    on_slot(s);
                }
                Event::Arrival => {
                    let Some(a) = self.pending.take() else {
                        continue;
                    };
                    self.pending = self.arrivals.next();
                    if let Some(next) = &self.pending {
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
                Event::Loaded { replica, slot } => run.loaded(replica, slot, now),
                Event::Handoff { request, decode } => run.hand_off(now, request as u32, decode),
            }
            if decided(&run.result) {
                return true;
            }
        }
        false
    }

    /// The most requests in flight at once so far.
    pub(crate) fn peak_in_flight(&self) -> usize {
        self.run.reqs.high_water()
    }

    /// The totals of the events handled so far (of the whole replay once
    /// [`Self::run_until`] has returned `false`).
    pub(crate) fn finish(self) -> SimResult {
        self.run.finish()
    }
}
