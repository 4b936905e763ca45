//! The figures demand takes from one tier of an aggregate: within-minute
//! burstiness, length distributions and the length sample, computed as
//! `traces::stats` computes them from requests.

use super::bins::fine_range;
use super::sample::LengthSampler;
use super::{BinTotal, MinuteRow, TierAggregate};
use crate::base::stats::percentile_histogram;
use crate::traces::length_sample::LENGTH_SAMPLE_SIZE;
use crate::traces::micros::span_s;
use crate::traces::quantised::{Quantised, MAX_OFFSETS};
use crate::traces::stats::{within_minute_cv_of, LengthStats};
use rand::rngs::StdRng;
use rand::SeedableRng;

impl TierAggregate {
    /// Burstiness within minutes: the square root of the count-weighted mean
    /// index of dispersion of the per-second counts of each minute, exactly
    /// [`crate::traces::stats::TraceAccumulator::within_minute_cv`] of the
    /// requests aggregated (Σ_m (S_m − n_m²/60) / Σ_m n_m, S the minute's
    /// `second_sq_sum`).
    pub fn within_minute_cv(&self) -> f64 {
        within_minute_cv_of(self.minutes.iter().map(|m| (m.requests, m.second_sq_sum)))
    }

    /// Whether the log's clock was rounded to a coarse step, judged as
    /// [`crate::traces::quantised::QuantisationDetector`] judges a trace's
    /// times, from what the minutes keep (format version 3): the distinct
    /// millisecond offsets within the second of each busy minute's first
    /// and last arrivals (at most [`MAX_OFFSETS`]), the requests per busy
    /// second (at least 2), and at least 10 gaps between busy seconds; on a
    /// clock rounded to a second or more every arrival of a time falls in one
    /// second, so busy seconds are the trace's distinct times. The step is
    /// measured between busy seconds, to the second. `None` before version 3.
    pub fn quantised(&self) -> Option<Quantised> {
        let mut offsets_ms: Vec<u32> = Vec::new();
        let (mut busy, mut requests) = (0u64, 0u64);
        let (mut first, mut last) = (None, 0i64);
        for m in self.minutes.iter().filter(|m| m.requests > 0) {
            let (seconds, (first_us, last_us)) = (m.seconds?, m.arrivals_us?);
            for us in [first_us, last_us] {
                let ms = (f64::from(us % 1_000_000) / 1000.0).round() as u32 % 1000;
                if !offsets_ms.contains(&ms) {
                    offsets_ms.push(ms);
                }
            }
            for (k, _) in seconds.iter().enumerate().filter(|(_, &c)| c > 0) {
                let at = m.minute_s + k as i64;
                first.get_or_insert(at);
                last = at;
                busy += 1;
            }
            requests += m.requests;
        }
        let gaps = busy.saturating_sub(1);
        let per_time = requests as f64 / busy.max(1) as f64;
        (offsets_ms.len() <= MAX_OFFSETS && per_time >= 2.0 && gaps >= 10).then(|| Quantised {
            step_s: (last - first.unwrap_or(last)) as f64 / gaps as f64,
            sub_second_offsets: offsets_ms.len(),
            requests_per_time: per_time,
        })
    }

    /// Seconds from the first to the last arrival, as the shaped demand's
    /// base rate divides the requests by it (as it divides a trace's by its
    /// span). Exact from the first and last arrivals' offsets (format version
    /// 2): the same microseconds as the trace's span. A version-1 aggregate
    /// lacks them, so its span is estimated as the time between the first and
    /// the last minute's starts (the expected span with uniform offsets), at
    /// least 60 s.
    pub fn span_s(&self) -> f64 {
        let busy = |m: &&MinuteRow| m.requests > 0;
        let first = self.minutes.iter().find(busy);
        let last = self.minutes.iter().rev().find(busy);
        match (first, last) {
            (
                Some(MinuteRow {
                    minute_s: a,
                    arrivals_us: Some((first_us, _)),
                    ..
                }),
                Some(MinuteRow {
                    minute_s: b,
                    arrivals_us: Some((_, last_us)),
                    ..
                }),
            ) => span_s(
                a * 1_000_000 + i64::from(*first_us),
                b * 1_000_000 + i64::from(*last_us),
            ),
            _ => (self.minutes.len().max(2) - 1) as f64 * 60.0,
        }
    }

    /// Mean input tokens per request.
    pub fn mean_input_tokens(&self) -> f64 {
        mean(&self.input)
    }

    /// Mean output tokens per request.
    pub fn mean_output_tokens(&self) -> f64 {
        mean(&self.output)
    }

    /// Input-length distribution from the histogram (see [`length_stats`]).
    pub fn input_tokens(&self) -> LengthStats {
        length_stats(&self.input)
    }

    /// Output-length distribution from the histogram.
    pub fn output_tokens(&self) -> LengthStats {
        length_stats(&self.output)
    }

    /// The (input, output) pairs the capacity search runs on: the length
    /// sample the aggregate records (format version 3; the same requests, in
    /// the same order, as [`crate::traces::stats::TraceAccumulator::length_sample`]
    /// takes from the trace), or, for versions 1 and 2, which have none,
    /// [`LENGTH_SAMPLE_SIZE`] pairs drawn from the bins with a fixed seed.
    pub fn capacity_lengths(&self) -> Vec<(u32, u32)> {
        match &self.sample {
            Some(sample) => sample
                .iter()
                .map(|r| (r.input_tokens, r.output_tokens))
                .collect(),
            None => self.drawn_lengths(LENGTH_SAMPLE_SIZE),
        }
    }

    /// Whether the capacity lengths are real requests (the recorded sample)
    /// rather than drawn from the bins.
    pub fn has_length_sample(&self) -> bool {
        self.sample.is_some()
    }

    /// `count` (input, output) pairs drawn from the bins with a fixed seed.
    pub fn drawn_lengths(&self, count: usize) -> Vec<(u32, u32)> {
        let sampler = LengthSampler::new(self);
        let mut rng = StdRng::seed_from_u64(0x5eed);
        (0..count).map(|_| sampler.draw(&mut rng)).collect()
    }
}

fn mean(hist: &[BinTotal]) -> f64 {
    let n: u64 = hist.iter().map(|b| b.requests).sum();
    if n == 0 {
        0.0
    } else {
        hist.iter().map(|b| b.tokens).sum::<u64>() as f64 / n as f64
    }
}

/// The largest length bin `b` can hold: its upper edge, and no more than its
/// tokens allow once every other request in it has the lower edge.
fn bin_ceiling(b: usize, total: BinTotal) -> u64 {
    let (lo, hi) = fine_range(b as u32).expect("a fine bin");
    let by_tokens = total.tokens - (total.requests - 1) * u64::from(lo);
    hi.map_or(by_tokens, |h| by_tokens.min(u64::from(h - 1)))
}

/// Mean (exact, from the token sums); p50, p90, p99 and max as the ceiling
/// of the bin holding that rank (at most one bin width, 25%, above the exact
/// figure).
pub(super) fn length_stats(hist: &[BinTotal]) -> LengthStats {
    let counts: Vec<u64> = hist.iter().map(|b| b.requests).collect();
    let at = |q: f64| {
        let b = percentile_histogram(&counts, q) as usize;
        if hist[b].requests == 0 {
            0
        } else {
            bin_ceiling(b, hist[b])
        }
    };
    let max = hist
        .iter()
        .enumerate()
        .rev()
        .find(|(_, t)| t.requests > 0)
        .map_or(0, |(b, t)| bin_ceiling(b, *t));
    LengthStats {
        mean: mean(hist),
        p50: at(0.5),
        p90: at(0.9),
        p99: at(0.99),
        max,
    }
}

#[cfg(test)]
mod tests {
    use crate::traces::aggregate::AggregateBuilder;
    use crate::traces::stats::{Clock, TraceAccumulator};
    use crate::traces::Request;

    #[test]
    fn figures_match_the_requests_they_aggregate() {
        let mut b = AggregateBuilder::new();
        let mut acc = TraceAccumulator::new(Clock::Utc);
        for i in 0..5000u32 {
            // Bursts: 50 requests in the first 5 s of every 20 s.
            let t = f64::from(i / 50) * 20.0 + f64::from(i % 50) / 10.0;
            let r = Request {
                arrival_s: 1e9 + t,
                input_tokens: 10 + i % 3000,
                output_tokens: 1 + i % 700,
            };
            b.push("t", &r);
            acc.push(r);
        }
        let agg = b.finish();
        let t = &agg.tiers[0];
        assert_eq!(t.within_minute_cv(), acc.within_minute_cv());
        assert_eq!(t.mean_input_tokens(), acc.mean_input_tokens());
        assert_eq!(t.span_s(), acc.span_s());
        // Without the offsets (format version 1): whole minutes.
        let mut v1 = t.clone();
        for m in &mut v1.minutes {
            m.arrivals_us = None;
        }
        assert_eq!(v1.span_s(), (t.minutes.len() - 1) as f64 * 60.0);
        let (exact, binned) = (acc.input_tokens(), t.input_tokens());
        for (e, b) in [
            (exact.p50, binned.p50),
            (exact.p99, binned.p99),
            (exact.max, binned.max),
        ] {
            assert!(b >= e && (b as f64) <= e as f64 * 1.25 + 1.0, "{e} vs {b}");
        }
        assert_eq!(t.drawn_lengths(100).len(), 100);
        // The recorded sample is the trace's own, request for request.
        assert_eq!(t.capacity_lengths(), acc.length_sample());
    }

    /// The shipped traces' clocks as the trace reader judges them: the
    /// Mooncake trace's rounded to 3 s, the Azure traces' fine; their
    /// aggregates say the same.
    #[test]
    fn an_aggregate_finds_the_rounded_clock_its_trace_has() {
        use crate::base::progress::Progress;
        use crate::traces::aggregate::aggregate_traces;
        use crate::traces::stats::accumulate_keeping;
        use crate::traces::ReaderOptions;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for (tier, file) in [
            ("chat", "data/mooncake/conversation_trace.jsonl"),
            (
                "code",
                "data/azure-llm-2023/AzureLLMInferenceTrace_code.csv",
            ),
            (
                "conv",
                "data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv",
            ),
        ] {
            let path = root.join(file);
            let (_, _, acc) =
                accumulate_keeping(&path, ReaderOptions::default(), Progress::new(true), None)
                    .unwrap();
            let traces = [(tier.to_string(), path)];
            let (agg, _) =
                aggregate_traces(&traces, ReaderOptions::default(), Progress::new(true)).unwrap();
            let (trace, aggregate) = (acc.quantised(), agg.tiers[0].quantised());
            assert_eq!(trace.is_some(), aggregate.is_some(), "{file}");
            if let (Some(t), Some(a)) = (trace, aggregate) {
                assert!((a.step_s / t.step_s - 1.0).abs() < 0.01, "{t:?} {a:?}");
                assert!((a.requests_per_time - t.requests_per_time).abs() < 1e-9);
            }
        }
    }
}
