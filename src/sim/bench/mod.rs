//! A benchmark client against one replica, as `vllm bench serve` drives a
//! server: prompts sent at their times (all at 0 for `--request-rate inf`,
//! a Poisson process otherwise), at most `max_concurrency` in flight (the
//! client's semaphore: a prompt waits for a finished one before it is
//! sent), each reaching the engine after the front end's time per request
//! (requests sent together queue through it one by one) and the server's
//! own time for it (a fixed part and a part per prompt token, each request
//! apart: `docs/model.md` §2.1). The engine drains
//! every request that has reached it before it schedules a step. A request
//! records its TTFT and end-to-end latency from the moment it was sent, and
//! the gap before each output token (its ITLs). A request that can never
//! run (longer than the model's context, or than the replica's KV cache) is
//! answered at once with an error, as a server rejects it.
//! Semantics in `docs/simulator.md` §8 ("The benchmark client").

pub(crate) mod prompts;
mod summary;
mod unit;

pub(crate) use summary::{BenchSummary, Stats};
pub(crate) use unit::unit_run;

use super::events::{Event, EventQueue};
use super::replica::{Finished, Replica, ReplicaSpec};
use super::request::{Arrival, InFlight, Slab};
use crate::traces::block_chains::BlockChains;
use std::collections::VecDeque;
use std::sync::Arc;

/// One prompt of the benchmark.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Prompt {
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// Seconds after the start at which the client may send it (0 for
    /// `--request-rate inf`).
    pub send_s: f64,
    /// Its prompt's block chain (`--dataset` with block hashes), or
    /// `NO_CHAIN`.
    pub chain: u32,
}

/// What one request measured.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RequestRecord {
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// When it was sent, seconds after the start.
    pub sent_s: f64,
    pub ttft_s: f64,
    pub e2e_s: f64,
    /// The gap before each output token after the first (output − 1 of them).
    pub itls_s: Vec<f64>,
    /// Why the server refused it, or `None` when it was served.
    pub error: Option<String>,
    /// Prompt tokens the prefix cache held at its admission (not
    /// computed).
    pub cached_tokens: u32,
}

/// A whole benchmark run.
#[derive(Debug, Clone)]
pub(crate) struct BenchRun {
    /// In prompt order.
    pub requests: Vec<RequestRecord>,
    /// Seconds from the start to the last response.
    pub duration_s: f64,
    /// Requests preempted (and recomputed) by the engine.
    pub preemptions: u64,
}

/// Runs `prompts` against one replica of `spec`. `max_context_tokens`:
/// the model's context (a longer request is refused). `itls`: record each
/// request's inter-token gaps (a fit that needs only means skips them).
/// `chains`: the prompts' blocks, when the engine caches prefixes
/// (`--enable-prefix-caching`; [`super::prefix_cache`]).
pub(crate) fn run(
    spec: &ReplicaSpec,
    prompts: &[Prompt],
    max_concurrency: Option<u32>,
    max_context_tokens: u32,
    itls: bool,
    chains: Option<&Arc<BlockChains>>,
) -> BenchRun {
    let mut bench = Bench::new(spec, prompts, max_concurrency, max_context_tokens);
    if let Some(chains) = chains {
        bench.replica = Replica::new(0, 0, spec).caching_prefixes(Arc::clone(chains));
    }
    bench.record_itls = itls;
    bench.try_send(0.0);
    bench.drain(0.0);
    while let Some((now, event)) = bench.queue.pop() {
        match event {
            Event::Arrival => bench.drain(now),
            Event::SlotStart(_) => {
                bench.wake_scheduled = false;
                bench.try_send(now);
                bench.drain(now);
            }
            Event::StepEnd { generation, .. } if generation == bench.replica.generation => {
                bench.end_step(now);
            }
            Event::StepEnd { .. }
            | Event::Interrupt { .. }
            | Event::Loaded { .. }
            | Event::Handoff { .. } => {}
        }
    }
    let duration_s = bench
        .records
        .iter()
        .flatten()
        .map(|r| r.sent_s + r.e2e_s)
        .fold(0.0, f64::max);
    let preemptions = bench.replica.preemptions;
    BenchRun {
        requests: bench.records.into_iter().flatten().collect(),
        duration_s,
        preemptions,
    }
}

/// The state of one run.
struct Bench<'a> {
    spec: &'a ReplicaSpec,
    prompts: &'a [Prompt],
    cap: u32,
    max_context_tokens: u32,
    replica: Replica,
    reqs: Slab,
    queue: EventQueue,
    /// The next prompt to send.
    next: usize,
    in_flight: u32,
    /// When the front end is free for the next request.
    frontend_free_s: f64,
    /// Requests through the front end, not yet handed to the engine:
    /// (prompt, sent at, reaches the engine at).
    pending: VecDeque<(usize, f64, f64)>,
    /// Slab id → prompt index.
    prompt_of: Vec<usize>,
    /// The end of every decode step so far, in order.
    token_times: Vec<f64>,
    finished: Vec<Finished>,
    records: Vec<Option<RequestRecord>>,
    wake_scheduled: bool,
    record_itls: bool,
}

impl<'a> Bench<'a> {
    fn new(
        spec: &'a ReplicaSpec,
        prompts: &'a [Prompt],
        max_concurrency: Option<u32>,
        max_context_tokens: u32,
    ) -> Self {
        Bench {
            spec,
            prompts,
            cap: max_concurrency.unwrap_or(u32::MAX).max(1),
            max_context_tokens,
            replica: Replica::new(0, 0, spec),
            reqs: Slab::default(),
            queue: EventQueue::default(),
            next: 0,
            in_flight: 0,
            frontend_free_s: 0.0,
            pending: VecDeque::new(),
            prompt_of: Vec::new(),
            token_times: Vec::new(),
            finished: Vec::new(),
            records: vec![None; prompts.len()],
            wake_scheduled: false,
            record_itls: true,
        }
    }

    /// Why prompt `p` can never run, if it cannot.
    fn refusal(&self, p: &Prompt) -> Option<String> {
        let tokens = u64::from(p.input_tokens.max(1)) + u64::from(p.output_tokens.max(1));
        if tokens > u64::from(self.max_context_tokens) {
            return Some(format!(
                "{tokens} tokens exceed the model's context of {}",
                self.max_context_tokens
            ));
        }
        if tokens > self.spec.kv_capacity_tokens {
            return Some(format!(
                "{tokens} tokens exceed the replica's KV cache of {}",
                self.spec.kv_capacity_tokens
            ));
        }
        None
    }

    /// Sends every prompt that is due at `now` while the concurrency allows;
    /// schedules a wake-up for the next one that is not due yet.
    fn try_send(&mut self, now: f64) {
        while self.next < self.prompts.len() && self.in_flight < self.cap {
            let p = self.prompts[self.next];
            if p.send_s > now {
                if !self.wake_scheduled {
                    self.queue.push(p.send_s, Event::SlotStart(self.next));
                    self.wake_scheduled = true;
                }
                return;
            }
            let i = self.next;
            self.next += 1;
            if let Some(error) = self.refusal(&p) {
                self.records[i] = Some(RequestRecord {
                    input_tokens: p.input_tokens,
                    output_tokens: p.output_tokens,
                    sent_s: now,
                    ttft_s: 0.0,
                    e2e_s: 0.0,
                    itls_s: Vec::new(),
                    error: Some(error),
                    cached_tokens: 0,
                });
                continue;
            }
            let through_s = now.max(self.frontend_free_s) + self.spec.perf.frontend_s();
            self.frontend_free_s = through_s;
            // The server's own time (tokenising, hand-over, admission) runs
            // for each request apart: a long prompt may reach the engine
            // after a shorter one sent later.
            let reach_s = through_s + self.spec.perf.server_s(p.input_tokens);
            let at = self.pending.partition_point(|&(_, _, r)| r <= reach_s);
            self.pending.insert(at, (i, now, reach_s));
            self.queue.push(reach_s, Event::Arrival);
            self.in_flight += 1;
        }
    }

    /// Hands the engine every request that has reached it by `now`; starts
    /// a step when the engine is idle.
    fn drain(&mut self, now: f64) {
        while let Some(&(i, sent_s, reach_s)) = self.pending.front() {
            if reach_s > now {
                break;
            }
            self.pending.pop_front();
            let p = self.prompts[i];
            let id = self.reqs.insert(InFlight::new(&Arrival {
                time_s: sent_s,
                tier: 0,
                input_tokens: p.input_tokens,
                output_tokens: p.output_tokens,
                chain: p.chain,
            }));
            let slot = id as usize;
            if self.prompt_of.len() <= slot {
                self.prompt_of.resize(slot + 1, 0);
            }
            self.prompt_of[slot] = i;
            if let Some(end) = self.replica.enqueue(now, id, &self.reqs, self.spec) {
                self.schedule(end);
            }
        }
        if !self.replica.is_busy() {
            let end = self.replica.start_step(now, &mut self.reqs, self.spec);
            if let Some(end) = end {
                self.schedule(end);
            }
        }
    }

    fn schedule(&mut self, end_s: f64) {
        self.queue.push(
            end_s,
            Event::StepEnd {
                replica: 0,
                generation: self.replica.generation,
            },
        );
    }

    /// The step in progress ends: record the finished requests, send the
    /// prompts they make room for, start the next step.
    fn end_step(&mut self, now: f64) {
        if self.record_itls {
            self.replica.token_times(&mut self.token_times);
        }
        self.finished.clear();
        self.replica
            .end_step(now, true, &mut self.reqs, &mut self.finished);
        for k in 0..self.finished.len() {
            let f = self.finished[k];
            let q = *self.reqs.get(f.id);
            let i = self.prompt_of[f.id as usize];
            self.records[i] = Some(RequestRecord {
                input_tokens: q.input_tokens,
                output_tokens: q.output_tokens,
                sent_s: q.arrival_s,
                ttft_s: q.first_token_s - q.arrival_s,
                e2e_s: f.finish_s - q.arrival_s,
                itls_s: if self.record_itls {
                    self.itls(q.first_token_s, f.finish_s, q.output_tokens)
                } else {
                    Vec::new()
                },
                error: None,
                cached_tokens: q.cached_tokens,
            });
            self.reqs.remove(f.id);
            self.in_flight -= 1;
        }
        self.try_send(now);
        self.drain(now);
    }

    /// The gaps before the tokens after the first, for a request whose first
    /// token came at `first_s` and its last at `finish_s`: its tokens are the
    /// last `output − 1` decode steps that ended in (first, finish] (a
    /// preempted request sat out some of them: its gaps then span them).
    fn itls(&self, first_s: f64, finish_s: f64, output_tokens: u32) -> Vec<f64> {
        let wanted = output_tokens.saturating_sub(1) as usize;
        if wanted == 0 {
            return Vec::new();
        }
        let lo = self.token_times.partition_point(|&t| t <= first_s);
        let hi = self.token_times.partition_point(|&t| t <= finish_s);
        let times = &self.token_times[lo..hi];
        let times = &times[times.len().saturating_sub(wanted)..];
        let mut out = Vec::with_capacity(times.len());
        let mut last = first_s;
        for &t in times {
            out.push(t - last);
            last = t;
        }
        out
    }
}

#[cfg(test)]
mod tests;
