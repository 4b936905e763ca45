//! Workloads for the simulator: the scenario's traces replayed slot by slot
//! against a plan, and a renewal stream at a chosen rate for capacity search.
//!
//! Replay of slot t, per trace of a tier (the arrival pattern inside the slot
//! is the trace's own; its volume is the plan's):
//! * without a rate curve the slot reads the trace's own requests in
//!   [t·slot, (t+1)·slot) from the trace's first slot boundary — the same
//!   window the demand figures came from — and `scale` sets the multiplier;
//! * with a rate curve the slot reads the trace as a loop, from offset
//!   (t·slot) mod span, and the multiplier makes the expected count the
//!   slot's mean rate × slot length × this trace's share of the tier;
//! * every request is kept ⌊m⌋ or ⌈m⌉ times (seeded draw on the fraction);
//!   copies after the first are shifted by a uniform 0-60 s (wrapping inside
//!   the slot), so scaled-up traffic keeps the trace's minute-by-minute shape
//!   without replaying identical bursts in lockstep.
//!
//! Seeds depend on (seed, slot, tier, trace), so a slot replayed alone gets the
//! same requests as in a replay of the whole horizon.

use crate::base::disk_cache::Fnv;
use crate::sim::request::Arrival;
use crate::traces::aggregate::sample::{minute_offsets, LengthSampler};
use crate::traces::aggregate::{MinuteRow, TierAggregate};
use crate::traces::block_chains::{BlockChains, NO_CHAIN, REUSED_CHAIN};
use crate::traces::prefix_reuse::PrefixReuse;
use crate::traces::Request;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;

/// A request of a window of a source: (seconds, input tokens, output
/// tokens, chain index or `NO_CHAIN`).
type Window = (f64, u32, u32, u32);

/// Seconds within which the copies of a scaled-up request are spread.
pub(crate) const COPY_SPREAD_S: f64 = 60.0;

/// Where a source's requests come from.
#[derive(Debug, Clone)]
enum Arrivals {
    /// A trace's requests: (seconds, input tokens, output tokens), sorted,
    /// and, when the trace names its prompts' blocks, each one's chain
    /// index (else empty).
    Requests {
        requests: Vec<(f64, u32, u32)>,
        chains: Vec<u32>,
    },
    /// An aggregate's minutes (the first starting at `first_s`), whose
    /// requests are drawn per minute with a seed of (seed, minute); `seed`
    /// is [`minute_seed`] of the replay's seed and `stream`.
    Minutes {
        minutes: Vec<MinuteRow>,
        first_s: f64,
        sampler: LengthSampler,
        seed: u64,
        stream: (u64, u64),
        /// Where the aggregate's sampled requests' prefix reuse begins in
        /// the replay's [`TraceReplay::reuse`] (`None`: no hit is known).
        reused_from: Option<u32>,
    },
}

/// One trace of a tier, in memory, times relative to its first slot boundary
/// (unshaped) or its first request (shaped); or one tier of an aggregate,
/// whose requests are drawn minute by minute when a slot asks for them.
#[derive(Debug, Clone)]
pub(crate) struct SourceReplay {
    arrivals: Arrivals,
    /// Length of the loop for shaped replay.
    span_s: f64,
    scale: f64,
    /// Requests/s of the trace × scale (its weight within the tier).
    base_rps: f64,
    /// The chain of every request without one of its own: a prefix model's
    /// shared system prompt ([`Self::sharing_chain`]).
    shared_chain: Option<u32>,
}

impl SourceReplay {
    /// Prepares a trace's requests (any order) for replay in slots of `slot_s`.
    pub(crate) fn new(requests: Vec<Request>, scale: f64, slot_s: f64, shaped: bool) -> Self {
        // Same size and alignment: the collect reuses the allocation.
        let times: Vec<(f64, u32, u32)> = requests
            .into_iter()
            .map(|r| (r.arrival_s, r.input_tokens, r.output_tokens))
            .collect();
        Self::sorted(times, Vec::new(), scale, slot_s, shaped)
    }

    /// [`Self::new`] for a trace whose request `i` (in the order given)
    /// has prompt blocks chain `first_chain + i` (of the replay's
    /// [`TraceReplay::chains`]).
    pub(crate) fn with_chains(
        requests: Vec<Request>,
        first_chain: u32,
        scale: f64,
        slot_s: f64,
        shaped: bool,
    ) -> Self {
        let mut chained: Vec<(f64, u32, u32, u32)> = requests
            .into_iter()
            .zip(first_chain..)
            .map(|(r, c)| (r.arrival_s, r.input_tokens, r.output_tokens, c))
            .collect();
        chained.sort_by(|a, b| a.0.total_cmp(&b.0));
        let chains = chained.iter().map(|r| r.3).collect();
        let times = chained.into_iter().map(|(t, i, o, _)| (t, i, o)).collect();
        Self::sorted(times, chains, scale, slot_s, shaped)
    }

    /// The source of `times` (sorted here, `chains` beside them already
    /// in time order or empty).
    fn sorted(
        mut times: Vec<(f64, u32, u32)>,
        chains: Vec<u32>,
        scale: f64,
        slot_s: f64,
        shaped: bool,
    ) -> Self {
        if chains.is_empty() {
            times.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        let first = times.first().map_or(0.0, |r| r.0);
        let last = times.last().map_or(0.0, |r| r.0);
        let n = times.len() as f64;
        // The loop closes one mean gap after the last request.
        let span_s = if n > 1.0 {
            (last - first) * n / (n - 1.0)
        } else {
            slot_s
        }
        .max(1.0);
        let origin = if shaped {
            first
        } else {
            (first / slot_s).floor() * slot_s
        };
        for r in &mut times {
            r.0 -= origin;
        }
        SourceReplay {
            arrivals: Arrivals::Requests {
                requests: times,
                chains,
            },
            span_s,
            scale,
            base_rps: n / span_s * scale,
            shared_chain: None,
        }
    }

    /// Prepares a tier of an aggregate: its minutes are aligned like a
    /// trace's requests (to the first slot boundary, or to the first minute
    /// when shaped), and each minute's requests are drawn from the replay's
    /// `seed` and the source's `stream` (its tier and its index among the
    /// scenario's demand sources).
    pub(crate) fn from_aggregate(
        tier: &TierAggregate,
        scale: f64,
        slot_s: f64,
        shaped: bool,
        (seed, stream): (u64, (u64, u64)),
    ) -> Self {
        let first = tier.minutes.first().map_or(0, |m| m.minute_s) as f64;
        // The first arrival, which a shaped replay starts from as a trace's
        // does (format version 2 on: the first minute's first offset).
        let first_arrival = first
            + tier
                .minutes
                .iter()
                .find(|m| m.requests > 0)
                .and_then(|m| m.arrivals_us)
                .map_or(0.0, |(f, _)| f64::from(f) / 1e6);
        let origin = if shaped {
            first_arrival
        } else {
            (first / slot_s).floor() * slot_s
        };
        // The loop is the trace's, (last − first)·n/(n − 1) from the first
        // arrival (closing one mean gap after the last), when the offsets
        // give the span; every minute of the aggregate otherwise (version 1).
        let n = tier.requests() as f64;
        let exact_span = tier.minutes.iter().any(|m| m.arrivals_us.is_some());
        let span_s = match (exact_span, n > 1.0) {
            (true, true) => (tier.span_s() * n / (n - 1.0)).max(1.0),
            (true, false) => slot_s.max(1.0),
            (false, _) => (tier.minutes.len() as f64 * 60.0).max(60.0),
        };
        SourceReplay {
            arrivals: Arrivals::Minutes {
                minutes: tier.minutes.clone(),
                first_s: first - origin,
                sampler: LengthSampler::new(tier),
                seed: minute_seed(seed, stream),
                stream,
                reused_from: None,
            },
            span_s,
            scale,
            base_rps: tier.requests() as f64 / span_s * scale,
            shared_chain: None,
        }
    }

    /// The aggregate's source whose request drawn as sample row `r` has the
    /// prefix reuse of row `first + r` of the replay's reuse (a chain index
    /// with [`REUSED_CHAIN`] set); a trace's is left as it is.
    pub(crate) fn reusing_from(mut self, first: u32) -> Self {
        if let Arrivals::Minutes { reused_from, .. } = &mut self.arrivals {
            *reused_from = Some(first);
        }
        self
    }

    /// The source whose every request without a chain of its own has chain
    /// `chain` (a system prompt all its prompts begin with).
    pub(crate) fn sharing_chain(mut self, chain: u32) -> Self {
        self.shared_chain = Some(chain);
        self
    }

    /// Appends the requests in [start, end), their times moved by `shift`,
    /// with their chains (`NO_CHAIN` when not known).
    fn between(&self, start: f64, end: f64, shift: f64, out: &mut Vec<Window>) {
        let shared = self.shared_chain.unwrap_or(NO_CHAIN);
        match &self.arrivals {
            Arrivals::Requests { requests, chains } => {
                let lo = requests.partition_point(|r| r.0 < start);
                let hi = requests.partition_point(|r| r.0 < end);
                out.extend(requests[lo..hi].iter().zip(lo..).map(|(&(t, i, o), at)| {
                    (t + shift, i, o, chains.get(at).copied().unwrap_or(shared))
                }));
            }
            Arrivals::Minutes {
                minutes,
                first_s,
                sampler,
                seed,
                reused_from,
                ..
            } => {
                let index = |t: f64| ((t - first_s) / 60.0).floor().max(0.0) as usize;
                let from = index(start);
                let to = (index(end) + 1).min(minutes.len());
                for (i, m) in minutes.iter().enumerate().take(to).skip(from) {
                    let mut rng = StdRng::seed_from_u64(mix(*seed, i as u64, 0, 0));
                    let minute_start = first_s + 60.0 * i as f64;
                    for offset in minute_offsets(m, &mut rng) {
                        let (input, output, row) = sampler.draw_row(&mut rng);
                        let chain = match (reused_from, row) {
                            (Some(first), Some(row)) => REUSED_CHAIN | (first + row),
                            _ => shared,
                        };
                        let t = minute_start + offset;
                        if (start..end).contains(&t) {
                            out.push((t + shift, input, output, chain));
                        }
                    }
                }
            }
        }
    }

    /// Requests in [from, from + len) of the trace (looped when `looped`).
    fn window(&self, from_s: f64, len_s: f64, looped: bool, out: &mut Vec<Window>) {
        out.clear();
        let mut start = from_s;
        let mut emitted_s = 0.0;
        let empty = match &self.arrivals {
            Arrivals::Requests { requests, .. } => requests.is_empty(),
            Arrivals::Minutes { minutes, .. } => minutes.is_empty(),
        };
        while emitted_s < len_s {
            let end = if looped {
                (start + (len_s - emitted_s)).min(self.span_s)
            } else {
                start + len_s
            };
            self.between(start, end, emitted_s - start, out);
            emitted_s += end - start;
            if !looped || empty {
                break;
            }
            start = 0.0;
        }
    }
}

/// One tier's traces and per-slot volume.
#[derive(Debug, Clone)]
pub(crate) struct TierReplay {
    pub sources: Vec<SourceReplay>,
    /// Mean requests/s per slot (shaped replay); unused without a curve.
    pub mean_rps: Vec<f64>,
}

/// The scenario's traces, ready to replay slot by slot.
#[derive(Debug, Clone)]
pub(crate) struct TraceReplay {
    pub tiers: Vec<TierReplay>,
    pub slot_s: f64,
    /// Whether a rate curve shapes the volume.
    pub shaped: bool,
    pub seed: u64,
    /// The horizon's slot that this replay's slot 0 is: 0, or the first
    /// day set aside (`[check] days`), whose slots are replayed against a
    /// plan of their own numbered from 0.
    pub first_slot: usize,
    /// The prompt blocks of every request of the traces that name them
    /// (Mooncake's `hash_ids`), which the requests' chain indices point
    /// into; `None` when no trace does or the replicas do not cache
    /// prefixes.
    pub chains: Option<Arc<BlockChains>>,
    /// The prefix reuse of the sampled requests of the aggregates that
    /// carry it (their `prefixes` tables, one after the other), which the
    /// chain indices with [`REUSED_CHAIN`] set point into; `None` when none
    /// does or the replicas do not cache prefixes.
    pub reuse: Option<Arc<PrefixReuse>>,
}

impl TraceReplay {
    /// A stable hash of everything tier `only`'s arrivals (every tier's when
    /// `None`) are drawn from: each source's requests or minutes, scales and
    /// loops, the per-slot rates, the slot length, shaping and seed, and the
    /// prompts' blocks and reuse (every tier's), but not `first_slot`: the
    /// key of a slot's replay in the on-disk cache names the horizon's slot
    /// itself.
    pub(crate) fn fingerprint_of(&self, only: Option<usize>) -> u64 {
        let mut h = Fnv::default();
        h.f64(self.slot_s);
        h.u64(u64::from(self.shaped));
        h.u64(self.seed);
        match only {
            None => h.u64(self.tiers.len() as u64),
            Some(k) => {
                h.u64(u64::MAX);
                h.u64(k as u64);
            }
        }
        for (k, tier) in self.tiers.iter().enumerate() {
            if only.is_some_and(|o| o != k) {
                continue;
            }
            h.u64(tier.sources.len() as u64);
            for source in &tier.sources {
                h.f64(source.span_s);
                h.f64(source.scale);
                h.u64(source.shared_chain.map_or(u64::MAX, u64::from));
                h.f64(source.base_rps);
                match &source.arrivals {
                    Arrivals::Requests { requests, chains } => {
                        h.u64(requests.len() as u64);
                        for &(t, i, o) in requests {
                            h.f64(t);
                            h.u64(u64::from(i) << 32 | u64::from(o));
                        }
                        h.u64(chains.len() as u64);
                        for &c in chains {
                            h.u64(u64::from(c));
                        }
                    }
                    Arrivals::Minutes {
                        minutes,
                        first_s,
                        sampler,
                        seed,
                        reused_from,
                        ..
                    } => {
                        h.u64(u64::MAX);
                        h.f64(*first_s);
                        h.u64(*seed);
                        h.u64(reused_from.map_or(u64::MAX, u64::from));
                        h.bytes(format!("{minutes:?}{sampler:?}").as_bytes());
                    }
                }
            }
            h.u64(tier.mean_rps.len() as u64);
            for &r in &tier.mean_rps {
                h.f64(r);
            }
        }
        // The chains' blocks, not only their indices: a prefix model's
        // chains change with its settings over the same requests.
        if let Some(chains) = &self.chains {
            chains.hash_into(&mut h);
        }
        if let Some(reuse) = &self.reuse {
            reuse.hash_into(&mut h);
        }
        h.finish()
    }

    /// The same traces drawn with another `seed` (the arrivals' draws of
    /// every slot, and an aggregate's requests): the replay of another seed.
    pub(crate) fn with_seed(&self, seed: u64) -> Self {
        let mut other = self.clone();
        other.seed = seed;
        for source in other.tiers.iter_mut().flat_map(|t| t.sources.iter_mut()) {
            if let Arrivals::Minutes {
                seed: drawn,
                stream,
                ..
            } = &mut source.arrivals
            {
                *drawn = minute_seed(seed, *stream);
            }
        }
        other
    }

    /// The same traces with slot 0 at the horizon's slot `first_slot`.
    pub(crate) fn starting_at(&self, first_slot: usize) -> Self {
        TraceReplay {
            first_slot,
            ..self.clone()
        }
    }

    /// The arrivals of slot `t` (the horizon's slot `first_slot + t`: its
    /// requests, seeds and planned volume), sorted by time (seconds since
    /// slot 0).
    #[cfg(test)]
    pub(crate) fn slot(&self, t: usize) -> Vec<Arrival> {
        self.slot_of(t, None)
    }

    /// The arrivals of slot `t` of tier `only` (every tier when `None`):
    /// each tier's are drawn from its own streams, so one tier's are the
    /// same, in the same order, as among every tier's.
    pub(crate) fn slot_of(&self, t: usize, only: Option<usize>) -> Vec<Arrival> {
        let mut out = Vec::new();
        let mut window = Vec::new();
        let at_slot = t as f64 * self.slot_s;
        let u = t + self.first_slot;
        let slot_start = u as f64 * self.slot_s;
        for (k, tier) in self.tiers.iter().enumerate() {
            if only.is_some_and(|o| o != k) {
                continue;
            }
            let total_base: f64 = tier.sources.iter().map(|s| s.base_rps).sum();
            for (j, source) in tier.sources.iter().enumerate() {
                let mut rng = StdRng::seed_from_u64(mix(self.seed, u as u64, k as u64, j as u64));
                let multiplier = if self.shaped {
                    let offset = (slot_start % source.span_s + source.span_s) % source.span_s;
                    source.window(offset, self.slot_s, true, &mut window);
                    let share = if total_base > 0.0 {
                        source.base_rps / total_base
                    } else {
                        0.0
                    };
                    let target = tier.mean_rps.get(u).copied().unwrap_or(0.0) * self.slot_s * share;
                    if window.is_empty() {
                        0.0
                    } else {
                        target / window.len() as f64
                    }
                } else {
                    source.window(slot_start, self.slot_s, false, &mut window);
                    source.scale
                };
                for &(offset_s, input, output, chain) in &window {
                    let copies = multiplier.floor() as u64
                        + u64::from(rng.gen::<f64>() < multiplier.fract());
                    for c in 0..copies {
                        let mut at = offset_s;
                        // A copy is another user's request: its prompt
                        // shares no block with the original's (no hit is
                        // invented for scaled-up traffic), but the source's
                        // system prompt, when it states one.
                        let mut chain = chain;
                        if c > 0 {
                            at = (at + rng.gen::<f64>() * COPY_SPREAD_S) % self.slot_s;
                            chain = source.shared_chain.unwrap_or(NO_CHAIN);
                        }
                        out.push(Arrival {
                            time_s: at_slot + at,
                            tier: k as u16,
                            input_tokens: input,
                            output_tokens: output,
                            chain,
                        });
                    }
                }
            }
        }
        out.sort_by(|a, b| a.time_s.total_cmp(&b.time_s).then(a.tier.cmp(&b.tier)));
        out
    }

    /// The arrivals of the slots in `slots`, slot after slot, handed to
    /// `consume` as one iterator and generated a slot or two ahead on
    /// another thread (the same arrivals in the same order: a slot's
    /// arrivals depend on nothing but the slot).
    pub(crate) fn with_arrivals_ahead<R>(
        &self,
        slots: std::ops::Range<usize>,
        consume: impl FnOnce(&mut dyn Iterator<Item = Arrival>) -> R,
    ) -> R {
        self.with_arrivals_of_ahead(slots, None, consume)
    }

    /// [`Self::with_arrivals_ahead`] of tier `only` (every tier when `None`).
    pub(crate) fn with_arrivals_of_ahead<R>(
        &self,
        slots: std::ops::Range<usize>,
        only: Option<usize>,
        consume: impl FnOnce(&mut dyn Iterator<Item = Arrival>) -> R,
    ) -> R {
        std::thread::scope(|scope| {
            let (send, receive) = std::sync::mpsc::sync_channel::<Vec<Arrival>>(2);
            let ahead = slots.clone();
            scope.spawn(move || {
                for t in ahead {
                    if send.send(self.slot_of(t, only)).is_err() {
                        return;
                    }
                }
            });
            let mut received = receive.iter().flatten();
            let out = consume(&mut received);
            drop(received);
            out
        })
    }
}

/// The seed an aggregate source's minutes are drawn with: the replay's
/// `seed` mixed with the source's stream (tier, index).
fn minute_seed(seed: u64, (tier, index): (u64, u64)) -> u64 {
    mix(seed, u64::MAX, tier, index)
}

/// A seed from (seed, slot, tier, trace) (SplitMix64 finaliser).
pub(crate) fn mix(seed: u64, a: u64, b: u64, c: u64) -> u64 {
    let mut z =
        seed ^ a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.rotate_left(21) ^ c.rotate_left(42);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A replay of one tier fed by `source` alone.
    fn one_source(
        source: SourceReplay,
        mean_rps: Vec<f64>,
        slot_s: f64,
        shaped: bool,
        seed: u64,
    ) -> TraceReplay {
        TraceReplay {
            tiers: vec![TierReplay {
                sources: vec![source],
                mean_rps,
            }],
            slot_s,
            shaped,
            seed,
            first_slot: 0,
            chains: None,
            reuse: None,
        }
    }

    fn trace() -> Vec<Request> {
        (0..3600)
            .map(|i| Request {
                arrival_s: 1_000_000.0 * 3600.0 + f64::from(i),
                input_tokens: 100 + i as u32 % 7,
                output_tokens: 10,
            })
            .collect()
    }

    /// Two prefix models over the same requests (sessions 60 s and 120 s
    /// apart) number their chains alike; their replays must not share a
    /// cached slot.
    #[test]
    fn the_fingerprint_holds_the_chains_blocks() {
        use crate::traces::sessions::session_chains;
        let requests = trace();
        let replay = |gap_s: f64| {
            let chains = session_chains(0, &requests, 4, gap_s);
            let src = SourceReplay::with_chains(requests.clone(), 0, 1.0, 3600.0, false);
            TraceReplay {
                chains: Some(Arc::new(chains)),
                ..one_source(src, vec![], 3600.0, false, 1)
            }
        };
        let (a, b) = (replay(60.0), replay(120.0));
        assert_eq!(a.slot(0), b.slot(0));
        assert_ne!(a.fingerprint_of(None), b.fingerprint_of(None));
        assert_eq!(
            a.fingerprint_of(Some(0)),
            replay(60.0).fingerprint_of(Some(0))
        );
    }

    #[test]
    fn unshaped_slot_replays_the_trace_times_its_scale() {
        let src = SourceReplay::new(trace(), 2.0, 3600.0, false);
        let replay = one_source(src, vec![], 3600.0, false, 1);
        let slot = replay.slot(0);
        assert_eq!(slot.len(), 7200);
        assert!(slot.windows(2).all(|w| w[0].time_s <= w[1].time_s));
        assert!(slot.iter().all(|a| (0.0..3600.0).contains(&a.time_s)));
        assert!(replay.slot(1).is_empty());
        assert_eq!(replay.slot(0), slot, "same seed, same arrivals");
        // Numbered from slot 1 of the horizon, slot 0 holds what slot 1 held.
        let two_hours: Vec<Request> = (0..7200)
            .map(|i| Request {
                arrival_s: 1_000_000.0 * 3600.0 + f64::from(i),
                input_tokens: 100 + i as u32 % 7,
                output_tokens: 10,
            })
            .collect();
        let later = one_source(
            SourceReplay::new(two_hours, 2.0, 3600.0, false),
            vec![],
            3600.0,
            false,
            1,
        );
        let shifted: Vec<f64> = later.slot(1).iter().map(|a| a.time_s - 3600.0).collect();
        let from_one: Vec<f64> = later
            .starting_at(1)
            .slot(0)
            .iter()
            .map(|a| a.time_s)
            .collect();
        assert_eq!(shifted.len(), 7200);
        assert_eq!(from_one.len(), 7200);
        assert!(shifted
            .iter()
            .zip(&from_one)
            .all(|(a, b)| (a - b).abs() < 1e-9));
    }

    #[test]
    fn shaped_slot_follows_the_planned_volume() {
        let src = SourceReplay::new(trace(), 1.0, 1800.0, true);
        let replay = one_source(src, vec![0.5, 2.5], 1800.0, true, 7);
        let quiet = replay.slot(0).len() as f64;
        let busy = replay.slot(1).len() as f64;
        assert!((quiet - 900.0).abs() < 60.0, "{quiet}");
        assert!((busy - 4500.0).abs() < 60.0, "{busy}");
        assert!(replay
            .slot(1)
            .iter()
            .all(|a| (1800.0..3600.0).contains(&a.time_s)));
    }

    #[test]
    fn a_traces_requests_carry_their_chains_and_their_copies_none() {
        // Given in reverse: each request keeps the chain of its place in
        // the order given, whatever the sort does.
        let requests: Vec<Request> = trace().into_iter().rev().collect();
        let src = SourceReplay::with_chains(requests, 10, 1.5, 3600.0, false);
        let replay = one_source(src, vec![], 3600.0, false, 3);
        let slot = replay.slot(0);
        let (with, without): (Vec<&Arrival>, Vec<&Arrival>) =
            slot.iter().partition(|a| a.chain != NO_CHAIN);
        // Every original once with its chain; the copies of a scale of 1.5
        // (about half the requests) without.
        assert_eq!(with.len(), 3600);
        assert!((1_600..2_000).contains(&without.len()), "{}", without.len());
        for a in with {
            // Request i (by time) was given at 3599 − i: chain 10 + 3599 − i.
            let i = (a.time_s - 0.0).round() as u32;
            assert_eq!(a.chain, 10 + 3599 - i, "{a:?}");
        }
    }
}
