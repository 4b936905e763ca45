//! One replica running continuous batching, with the step scheduler of the
//! engine it stands for ([`Scheduler`]):
//!
//! * decode-first with chunked prefill (vLLM V1, SGLang): each step, every
//!   decoding sequence gets one token; the remaining token budget
//!   (`max_batched_tokens` minus the decodes) goes to prompts being
//!   prefilled, oldest first, then to new admissions from the FIFO waiting
//!   queue;
//! * prefill-first (vLLM V0, TGI): when a waiting request can be admitted,
//!   the step prefills whole prompts (as many as fit the token budget, a
//!   longer prompt alone) and the decoding sequences wait; otherwise the step
//!   only decodes;
//! * a request is admitted while fewer than `max_batch` sequences run and the
//!   KV cache can hold its whole prompt plus one token; otherwise it and the
//!   requests behind it wait (first come, first served);
//! * when decoding sequences outgrow the KV cache, the latest admitted
//!   sequence is preempted and recomputed: it returns to the head of the queue
//!   and its next prefill covers the prompt plus the tokens it had generated;
//! * the step that completes a prompt's prefill also yields its first token.
//!
//! Steps that only decode, with nothing to admit, are advanced as one run up
//! to the next finish (or KV limit) in closed form ([`DecodeRun`]); an arrival
//! that could be admitted cuts the run at the step in flight.

use super::kv_cache::{KvCache, PrefixSource};
use super::request::Slab;
use crate::perf::{DecodeRun, StepModel, StepTime, StepWork};
use crate::profiles::Scheduler;
use crate::traces::block_chains::BlockChains;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

pub(crate) use super::replica_spec::ReplicaSpec;

/// A request that has finished on a replica.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Finished {
    pub id: u32,
    pub finish_s: f64,
}

/// When a decoding sequence finishes: (the replica's step counter, the
/// request, its epoch) in one number that orders as the triple does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct FinishAt(u128);

impl FinishAt {
    fn new(at: u64, id: u32, epoch: u32) -> Self {
        FinishAt(u128::from(at) << 64 | u128::from(id) << 32 | u128::from(epoch))
    }

    fn parts(self) -> (u64, u32, u32) {
        ((self.0 >> 64) as u64, (self.0 >> 32) as u32, self.0 as u32)
    }
}

/// The step or run of steps in progress.
#[derive(Debug, Clone)]
struct Step {
    start_s: f64,
    end_s: f64,
    /// Steps in the run (1 for a step with prefill work).
    steps: u64,
    /// Decoding sequences during the step(s).
    batch: u64,
    /// Decode-only run, when the step is one.
    run: Option<DecodeRun>,
}

/// The state of one replica.
#[derive(Debug)]
pub(crate) struct Replica {
    pub spec: usize,
    waiting: VecDeque<u32>,
    /// Requests that reached the replica but that its scheduler has not yet
    /// received ([`ReplicaSpec::recv_interval_steps`] above 1 only).
    inbox: VecDeque<u32>,
    /// Decode steps until the scheduler next receives (0: at the start of
    /// the next step).
    recv_wait: u32,
    /// The spec's [`ReplicaSpec::recv_interval_steps`], as of the last
    /// request queued.
    recv_every: u32,
    prefilling: Vec<u32>,
    /// The decoding sequences, in no particular order: each knows its
    /// place ([`crate::sim::request::InFlight::decode_pos`]), so one that
    /// leaves is taken out in constant time.
    decoding: Vec<u32>,
    /// (request, tokens) prefilled in the step in progress.
    chunks: Vec<(u32, u32)>,
    /// Decode steps executed so far (steps that gave every decoding sequence
    /// a token).
    clock: u64,
    /// When each decoding sequence finishes, earliest first.
    finishes: BinaryHeap<Reverse<FinishAt>>,
    /// The KV cache, of the spec's [`ReplicaSpec::kv_capacity_tokens`],
    /// reserving outputs under [`ReplicaSpec::reserve_output_kv`].
    kv: KvCache,
    /// Σ context (prompt + generated) of the decoding sequences.
    context_sum: u64,
    step: Option<Step>,
    /// Bumped whenever the scheduled end of the step in progress changes
    /// (wrapping: an end is stale long before 2^32 changes).
    pub generation: u32,
    next_admit_seq: u64,
    next_join_seq: u64,
    /// Seconds spent running steps while the plan had the replica up.
    pub busy_s: f64,
    /// Σ decoding sequences × step seconds while up (mean batch = this / busy).
    pub batch_s: f64,
    /// Position within its group: the replica is up while rank < the
    /// group's count for the slot.
    pub rank: usize,
    /// Seconds the plan had the replica up.
    pub up_s: f64,
    /// Prompt tokens not yet prefilled, over all requests on the replica.
    pub outstanding_prompt_tokens: u64,
    /// Requests waiting or running on the replica.
    pub in_system: u32,
    pub preemptions: u64,
    /// A spot replica not granted, or interrupted, in the current slot.
    pub down: bool,
    /// Decode runs by batch size at zero context, as the step model gave
    /// them (a run's batch-dependent parts, computed once per batch).
    decode_runs_by_batch: Vec<Option<DecodeRun>>,
}

impl Replica {
    /// Replica `rank` of group `spec`, running `runs` (the group's spec,
    /// which sizes its KV cache), empty.
    pub(crate) fn new(spec: usize, rank: usize, runs: &ReplicaSpec) -> Self {
        Replica {
            spec,
            waiting: VecDeque::new(),
            inbox: VecDeque::new(),
            recv_wait: 0,
            recv_every: 1,
            prefilling: Vec::new(),
            decoding: Vec::new(),
            chunks: Vec::new(),
            clock: 0,
            finishes: BinaryHeap::new(),
            kv: KvCache::new(runs.kv_capacity_tokens, runs.reserve_output_kv),
            context_sum: 0,
            step: None,
            generation: 0,
            next_admit_seq: 0,
            next_join_seq: 0,
            busy_s: 0.0,
            batch_s: 0.0,
            rank,
            up_s: 0.0,
            outstanding_prompt_tokens: 0,
            in_system: 0,
            preemptions: 0,
            down: false,
            decode_runs_by_batch: Vec::new(),
        }
    }

    /// The replica with a prefix cache over the prompt blocks `chains`
    /// (`--enable-prefix-caching`): a request finds the leading blocks of
    /// its chain computed and prefills the rest ([`super::prefix_cache`]).
    pub(crate) fn caching_prefixes(mut self, chains: Arc<BlockChains>) -> Self {
        self.kv = self.kv.with_prefix_cache(chains, None);
        self
    }

    /// The replica with the prefixes `source` gives (a prefix cache, or
    /// hits known beforehand).
    pub(crate) fn with_prefixes(mut self, source: &PrefixSource) -> Self {
        self.kv = self.kv.with_prefixes(source);
        self
    }

    /// Prompt tokens of `input_tokens` of chain `chain` that the replica
    /// would find computed now.
    pub(crate) fn cached_prompt_tokens(&self, chain: u32, input_tokens: u32) -> u32 {
        self.kv.cached_prompt_tokens(chain, input_tokens)
    }

    /// The step model's decode run of `batch` sequences at `context_tokens`,
    /// its batch-dependent parts remembered from the first run of that batch.
    fn decode_run(&mut self, perf: &StepModel, batch: u32, context_tokens: f64) -> DecodeRun {
        let b = batch as usize;
        if self.decode_runs_by_batch.len() <= b {
            self.decode_runs_by_batch.resize(b + 1, None);
        }
        let at_zero =
            *self.decode_runs_by_batch[b].get_or_insert_with(|| perf.decode_run(batch, 0.0));
        at_zero.at_context(context_tokens)
    }

    /// Takes the replica down at once (a spot interruption): every request
    /// it holds is dropped and returned (waiting, prefilling, then decoding
    /// in the order they joined the batch), and its step in progress
    /// abandoned.
    pub(crate) fn evict_all(&mut self, reqs: &Slab) -> Vec<u32> {
        let mut dropped: Vec<u32> = self.waiting.drain(..).collect();
        dropped.extend(self.inbox.drain(..));
        self.recv_wait = 0;
        dropped.append(&mut self.prefilling);
        self.decoding
            .sort_unstable_by_key(|&id| reqs.get(id).join_seq);
        dropped.append(&mut self.decoding);
        self.chunks.clear();
        self.finishes.clear();
        self.kv.clear();
        self.context_sum = 0;
        self.step = None;
        self.generation = self.generation.wrapping_add(1);
        self.outstanding_prompt_tokens = 0;
        self.in_system = 0;
        self.down = true;
        dropped
    }

    /// Whether a step is in progress.
    pub(crate) fn is_busy(&self) -> bool {
        self.step.is_some()
    }

    /// The end time of each decode step (each step of a run) of the step in
    /// progress, in order, when its decoding sequences get a token; pushed
    /// onto `out`. Nothing when no sequence decodes in it.
    pub(crate) fn token_times(&self, out: &mut Vec<f64>) {
        let Some(step) = &self.step else {
            return;
        };
        if step.batch == 0 {
            return;
        }
        match step.run {
            Some(run) if step.steps > 1 => {
                out.extend((1..=step.steps).map(|j| step.start_s + run.elapsed_s(j)));
                // The last one is the step's end exactly.
                if let Some(last) = out.last_mut() {
                    *last = step.end_s;
                }
            }
            _ => out.push(step.end_s),
        }
    }

    /// Queues request `id`. Returns the new end time of the step in progress
    /// when the arrival cuts a decode run short (the request can join at the
    /// next step boundary).
    pub(crate) fn enqueue(
        &mut self,
        now: f64,
        id: u32,
        reqs: &Slab,
        spec: &ReplicaSpec,
    ) -> Option<f64> {
        let r = reqs.get(id);
        self.outstanding_prompt_tokens += u64::from(r.prefill_target);
        self.in_system += 1;
        let interval = spec.recv_interval_steps;
        self.recv_every = interval;
        let queued = if interval > 1 {
            self.inbox.push_back(id);
            self.inbox.len()
        } else {
            self.waiting.push_back(id);
            self.waiting.len()
        };
        let step = self.step.as_mut()?;
        let run = step.run?;
        if queued != 1 || step.steps <= 1 {
            return None;
        }
        // The step boundary after `now`.
        let next = run.steps_to_reach(now - step.start_s, step.steps).max(1);
        let done = if interval > 1 {
            // The scheduler receives `recv_wait` steps into the run and
            // every `interval` after: the run ends at the first receipt
            // after `now`, where the request joins the waiting queue
            // whether or not it can be admitted then.
            let (first, every) = (u64::from(self.recv_wait.max(1)), u64::from(interval));
            let done = first + next.saturating_sub(first).div_ceil(every) * every;
            if done >= step.steps {
                return None;
            }
            done
        } else {
            // The request can join at `next` if the batch has room and the
            // KV cache then holds its prompt (it only fills during the run).
            let running = (self.prefilling.len() + self.decoding.len()) as u32;
            if running >= spec.max_batch
                || next >= step.steps
                || !self
                    .kv
                    .holds_prompt(u64::from(r.prefill_target), step.batch * next)
            {
                return None;
            }
            next
        };
        step.steps = done;
        step.end_s = step.start_s + run.elapsed_s(done);
        self.generation = self.generation.wrapping_add(1);
        Some(step.end_s)
    }

    /// Starts the next step if there is work; returns its end time.
    pub(crate) fn start_step(
        &mut self,
        now: f64,
        reqs: &mut Slab,
        spec: &ReplicaSpec,
    ) -> Option<f64> {
        debug_assert!(self.step.is_none());
        self.receive(spec);
        self.preempt_to_fit(reqs);
        self.chunks.clear();
        let batch = match spec.scheduler {
            Scheduler::DecodeFirstChunked => self.schedule_decode_first_chunked(now, reqs, spec),
            Scheduler::PrefillFirstChunked => self.schedule_prefill_first_chunked(now, reqs, spec),
            Scheduler::PrefillFirst => self.schedule_prefill_first(now, reqs, spec),
        };
        if batch == 0 && self.chunks.is_empty() {
            return None;
        }
        let perf = &spec.perf;
        let (duration_s, steps, run) = if self.chunks.is_empty() {
            let run = self.decode_run(perf, batch as u32, self.context_sum as f64);
            let to_finish = self.steps_to_next_finish(reqs);
            let to_kv_limit = self.kv.decode_steps_until_full(batch);
            // Requests not yet received end the run at the next receipt.
            let to_receipt = if self.inbox.is_empty() {
                u64::MAX
            } else {
                u64::from(self.recv_wait)
            };
            let steps = if spec.decode_runs {
                to_finish.min(to_kv_limit).min(to_receipt).max(1)
            } else {
                1
            };
            (run.elapsed_s(steps), steps, Some(run))
        } else {
            // The decoding sequences' context, when they take part.
            let context = if batch > 0 { self.context_sum } else { 0 };
            let mut work = StepWork {
                tokens: batch as f64,
                attention_pairs: context as f64,
                kv_read_tokens: context as f64,
                logit_tokens: batch as f64,
                sequences: (batch + self.chunks.len() as u64) as f64,
            };
            for &(id, chunk) in &self.chunks {
                let r = reqs.get(id);
                let (c, o) = (f64::from(chunk), f64::from(r.prefilled));
                work.tokens += c;
                work.attention_pairs += c * o + c * c / 2.0;
                work.kv_read_tokens += o;
                // Only the chunk that completes its prompt yields a logit.
                if r.prefilled + chunk >= r.prefill_target {
                    work.logit_tokens += 1.0;
                }
            }
            (perf.step_s(&work), 1, None)
        };
        self.step = Some(Step {
            start_s: now,
            end_s: now + duration_s,
            steps,
            batch,
            run,
        });
        self.generation = self.generation.wrapping_add(1);
        Some(now + duration_s)
    }

    /// Ends the step in progress at `now`; pushes the requests that finished.
    /// `up` says whether the plan has the replica up (else it is draining).
    pub(crate) fn end_step(
        &mut self,
        now: f64,
        up: bool,
        reqs: &mut Slab,
        finished: &mut Vec<Finished>,
    ) {
        let Some(step) = self.step.take() else {
            return;
        };
        // Steps run while draining (after the plan took the replica down)
        // are not counted as busy up time.
        if up {
            self.busy_s += step.end_s - step.start_s;
            self.batch_s += step.batch as f64 * (step.end_s - step.start_s);
        }
        if step.batch > 0 {
            self.clock += step.steps;
        }
        self.count_towards_receipt(&step);
        self.context_sum += step.batch * step.steps;
        self.kv.grow(step.batch * step.steps);
        for i in 0..self.chunks.len() {
            let (id, chunk) = self.chunks[i];
            self.outstanding_prompt_tokens -= u64::from(chunk);
            let r = reqs.get_mut(id);
            r.prefilled += chunk;
            if r.prefilled < r.prefill_target {
                continue;
            }
            if r.first_token_s.is_nan() {
                r.first_token_s = now;
            }
            r.generated_at_join = r.prefill_target - r.input_tokens + 1;
            r.join_clock = self.clock;
            if let Some(pos) = self.prefilling.iter().position(|&p| p == id) {
                self.prefilling.remove(pos);
            }
            if r.generated_at_join >= r.output_tokens {
                self.kv
                    .release(u64::from(r.prefill_target), u64::from(r.kv_reserved));
                self.kv.remember_generated(r.chain);
                self.in_system -= 1;
                finished.push(Finished { id, finish_s: now });
            } else {
                self.context_sum += u64::from(r.prefill_target) + 1;
                let finish = self.clock + u64::from(r.output_tokens - r.generated_at_join);
                self.finishes
                    .push(Reverse(FinishAt::new(finish, id, r.epoch)));
                r.decode_pos = self.decoding.len() as u32;
                r.join_seq = self.next_join_seq;
                self.next_join_seq += 1;
                self.decoding.push(id);
            }
        }
        self.chunks.clear();
        while let Some(&Reverse(f)) = self.finishes.peek() {
            let (at, id, epoch) = f.parts();
            if at > self.clock {
                break;
            }
            self.finishes.pop();
            let r = reqs.get(id);
            if r.epoch != epoch {
                continue;
            }
            let kv = r.kv_tokens(self.clock);
            self.kv.release(kv, u64::from(r.kv_reserved));
            self.kv.remember_generated(r.chain);
            self.context_sum -= kv + 1;
            self.in_system -= 1;
            let pos = r.decode_pos as usize;
            self.remove_decoding(pos, reqs);
            finished.push(Finished { id, finish_s: now });
        }
    }

    /// The scheduler's receipt at the start of a step: the requests that
    /// reached the replica join its waiting queue when the receipt is due,
    /// or when nothing runs (an idle scheduler polls at once); a receipt
    /// with nothing to receive starts the interval again all the same.
    fn receive(&mut self, spec: &ReplicaSpec) {
        if spec.recv_interval_steps <= 1 {
            return;
        }
        let idle = self.prefilling.is_empty() && self.decoding.is_empty();
        if self.recv_wait == 0 || idle {
            self.waiting.extend(self.inbox.drain(..));
            self.recv_wait = spec.recv_interval_steps;
        }
    }

    /// Counts the step just ended towards the next receipt: a step with
    /// prefill work makes it due at once (SGLang weighs such a step as the
    /// whole interval); a run of decode steps brings it that much closer,
    /// and a receipt passed in a run with nothing to receive starts the
    /// interval again.
    fn count_towards_receipt(&mut self, step: &Step) {
        let every = u64::from(self.recv_every);
        if every <= 1 {
            return;
        }
        let wait = u64::from(self.recv_wait);
        self.recv_wait = if step.run.is_none()
            || step.steps >= wait && (step.steps - wait).is_multiple_of(every)
        {
            0
        } else if step.steps < wait {
            (wait - step.steps) as u32
        } else {
            (every - (step.steps - wait) % every) as u32
        };
    }

    /// Decode-first with chunked prefill: every decoding sequence gets its
    /// token; the rest of the budget goes to prompts being prefilled, oldest
    /// first, then to admissions. Fills `chunks`; returns the decoding
    /// sequences that get a token.
    fn schedule_decode_first_chunked(
        &mut self,
        now: f64,
        reqs: &mut Slab,
        spec: &ReplicaSpec,
    ) -> u64 {
        let batch = self.decoding.len() as u64;
        let budget = u64::from(spec.max_batched_tokens).saturating_sub(batch);
        self.fill_chunks(now, reqs, spec, budget);
        batch
    }

    /// Fills `chunks` within `budget` tokens: the part-prefilled prompts
    /// first, oldest first, then newly admitted ones (the last chunked).
    fn fill_chunks(&mut self, now: f64, reqs: &mut Slab, spec: &ReplicaSpec, mut budget: u64) {
        let rank = u64::from(spec.rank_tokens);
        for &id in &self.prefilling {
            if budget == 0 {
                break;
            }
            let r = reqs.get(id);
            let chunk = u64::from(r.prefill_target - r.prefilled)
                .min(budget)
                .min(rank);
            self.chunks.push((id, chunk as u32));
            budget -= chunk;
        }
        while budget > 0 {
            let Some((id, target)) = self.admit_head(now, reqs, spec, u64::MAX) else {
                break;
            };
            let chunk = target.min(budget).min(rank);
            self.chunks.push((id, chunk as u32));
            budget -= chunk;
        }
    }

    /// Prefill-first with chunking (SGLang): while prompts wait or are part
    /// prefilled, the step prefills them, oldest first, in the token budget
    /// (the last one chunked), and the decoding sequences wait; otherwise
    /// every decoding sequence gets its token. Fills `chunks`; returns the
    /// decoding sequences that get a token.
    fn schedule_prefill_first_chunked(
        &mut self,
        now: f64,
        reqs: &mut Slab,
        spec: &ReplicaSpec,
    ) -> u64 {
        self.fill_chunks(now, reqs, spec, u64::from(spec.max_batched_tokens));
        if self.chunks.is_empty() {
            self.decoding.len() as u64
        } else {
            0
        }
    }

    /// Prefill-first without chunking: when the queue's head can be
    /// admitted, the step prefills whole prompts, as many as fit the budget
    /// (the first one whatever its length), and decodes nothing; otherwise
    /// every decoding sequence gets its token. Fills `chunks`; returns the
    /// decoding sequences that get a token.
    fn schedule_prefill_first(&mut self, now: f64, reqs: &mut Slab, spec: &ReplicaSpec) -> u64 {
        let mut budget = u64::from(spec.max_batched_tokens);
        while let Some((id, target)) = self.admit_head(now, reqs, spec, budget) {
            self.chunks.push((id, target as u32));
            budget = budget.saturating_sub(target);
        }
        if self.chunks.is_empty() {
            self.decoding.len() as u64
        } else {
            0
        }
    }

    /// Admits the head of the waiting queue when fewer than `max_batch`
    /// sequences run, the KV cache holds its prompt plus one token and,
    /// unless it would be the step's first prefill, its prompt fits
    /// `budget`; returns it and the tokens it must prefill.
    fn admit_head(
        &mut self,
        now: f64,
        reqs: &mut Slab,
        spec: &ReplicaSpec,
        budget: u64,
    ) -> Option<(u32, u64)> {
        let &id = self.waiting.front()?;
        let running = (self.prefilling.len() + self.decoding.len()) as u32;
        let head = reqs.get(id);
        let target = u64::from(head.prefill_target);
        let reserve = self
            .kv
            .reservation_tokens(head.input_tokens, head.output_tokens);
        // Tokens its prefix cache holds, or that a prefill replica sent,
        // are not computed again.
        let chain = head.chain;
        let transferred = head.transferred;
        let cached = if transferred > 0 {
            u64::from(transferred)
        } else {
            u64::from(self.kv.cached_prompt_tokens(chain, head.input_tokens))
        };
        // A prefill-first step holds the decoding sequences back: it admits
        // a prompt only while their next tokens still fit after it, so the
        // prompt is not preempted before they move.
        let held_back = if spec.scheduler == Scheduler::PrefillFirstChunked {
            self.decoding.len() as u64
        } else {
            0
        };
        if running >= spec.max_batch
            || !self.kv.admits(target, held_back, reserve)
            || (!self.chunks.is_empty() && target - cached > budget)
        {
            return None;
        }
        self.kv.remember(chain);
        self.waiting.pop_front();
        let r = reqs.get_mut(id);
        if transferred == 0 {
            r.cached_tokens = cached as u32;
        }
        r.prefilled = cached as u32;
        self.outstanding_prompt_tokens -= cached;
        if r.admitted_s.is_nan() {
            r.admitted_s = now;
        }
        r.admit_seq = self.next_admit_seq;
        r.kv_reserved = reserve as u32;
        self.next_admit_seq += 1;
        self.kv.admit(target, reserve);
        self.prefilling.push(id);
        Some((id, target - cached))
    }

    /// Steps until the earliest decoding sequence finishes.
    fn steps_to_next_finish(&mut self, reqs: &Slab) -> u64 {
        while let Some(&Reverse(f)) = self.finishes.peek() {
            let (at, id, epoch) = f.parts();
            if reqs.get(id).epoch == epoch {
                return at.saturating_sub(self.clock).max(1);
            }
            self.finishes.pop();
        }
        1
    }

    /// Takes the sequence at `pos` out of the decoding list: the last one
    /// takes its place.
    fn remove_decoding(&mut self, pos: usize, reqs: &mut Slab) {
        self.decoding.swap_remove(pos);
        if let Some(&moved) = self.decoding.get(pos) {
            reqs.get_mut(moved).decode_pos = pos as u32;
        }
    }

    /// Preempts the latest admitted sequences until the next step's decode
    /// tokens fit in the KV cache.
    fn preempt_to_fit(&mut self, reqs: &mut Slab) {
        while self.kv.overflows_with(self.decoding.len() as u64) {
            let latest = |list: &[u32]| {
                list.iter()
                    .enumerate()
                    .max_by_key(|(_, &id)| reqs.get(id).admit_seq)
                    .map(|(i, &id)| (i, id, reqs.get(id).admit_seq))
            };
            let from_prefill = latest(&self.prefilling);
            let from_decode = latest(&self.decoding);
            let victim = match (from_prefill, from_decode) {
                (Some(p), Some(d)) if p.2 > d.2 => (true, p),
                (_, Some(d)) => (false, d),
                (Some(p), None) => (true, p),
                (None, None) => return,
            };
            let (prefilling, (pos, id, _)) = victim;
            let clock = self.clock;
            if !prefilling {
                self.remove_decoding(pos, reqs);
            }
            let r = reqs.get_mut(id);
            let held = if prefilling {
                self.prefilling.remove(pos);
                self.outstanding_prompt_tokens += u64::from(r.prefilled);
                u64::from(r.prefill_target)
            } else {
                let kv = r.kv_tokens(clock);
                self.context_sum -= kv + 1;
                r.prefill_target = r.input_tokens + r.generated(clock);
                self.outstanding_prompt_tokens += u64::from(r.prefill_target);
                kv
            };
            self.kv.release(held, u64::from(r.kv_reserved));
            r.kv_reserved = 0;
            r.prefilled = 0;
            // A preempted sequence recomputes its whole context here.
            r.transferred = 0;
            r.epoch += 1;
            r.preemptions += 1;
            self.preemptions += 1;
            self.waiting.push_front(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::step::tests::{h100, llama8b};
    use crate::perf::PerfModel;
    use crate::profiles::precision::Precision;
    use crate::sim::request::{Arrival, InFlight};

    #[test]
    fn a_finish_orders_as_its_triple() {
        let triples = [
            (0, 0, 0),
            (0, 0, 1),
            (0, 1, 0),
            (1, 0, 0),
            (5, u32::MAX, 0),
            (5, 0, u32::MAX),
            (6, 0, 0),
            (u64::MAX, u32::MAX, u32::MAX),
        ];
        for a in triples {
            assert_eq!(FinishAt::new(a.0, a.1, a.2).parts(), a);
            for b in triples {
                let (fa, fb) = (FinishAt::new(a.0, a.1, a.2), FinishAt::new(b.0, b.1, b.2));
                assert_eq!(fa.cmp(&fb), a.cmp(&b), "{a:?} against {b:?}");
            }
        }
    }

    #[test]
    fn an_evicted_replica_drops_its_decoding_sequences_in_the_order_they_joined() {
        let spec = ReplicaSpec {
            perf: StepModel::Roofline(PerfModel::new(&h100(), &llama8b(), 1, Precision::Bf16)),
            max_batch: 8,
            max_batched_tokens: 2048,
            rank_tokens: 2048,
            kv_capacity_tokens: 100_000,
            scheduler: Scheduler::DecodeFirstChunked,
            reserve_output_kv: false,
            decode_runs: true,
            recv_interval_steps: 1,
            split: None,
        };
        let mut reqs = Slab::default();
        let mut rep = Replica::new(0, 0, &spec);
        for output_tokens in [50, 5, 60, 70] {
            let id = reqs.insert(InFlight::new(&Arrival {
                time_s: 0.0,
                tier: 0,
                input_tokens: 100,
                output_tokens,
                chain: crate::traces::block_chains::NO_CHAIN,
            }));
            assert_eq!(rep.enqueue(0.0, id, &reqs, &spec), None);
        }
        // One step prefills the four prompts; they join in that order.
        let mut end = rep.start_step(0.0, &mut reqs, &spec);
        let mut finished = Vec::new();
        while finished.is_empty() {
            let now = end.expect("a step is in progress");
            rep.end_step(now, true, &mut reqs, &mut finished);
            end = rep.start_step(now, &mut reqs, &spec);
        }
        // The second has finished and the last took its place in the list.
        assert_eq!(finished.iter().map(|f| f.id).collect::<Vec<_>>(), [1]);
        assert_eq!(rep.decoding, [0, 3, 2]);
        assert_eq!(rep.evict_all(&reqs), [0, 2, 3]);
    }
}
