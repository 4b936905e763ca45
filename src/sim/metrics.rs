//! What a replay measures: per tier, counts against the latency limits,
//! goodput, and latency percentiles; per slot, attainment.

use super::histogram::Histogram;
use serde::{Deserialize, Serialize};

/// The latency promise a request is judged against.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Limits {
    pub ttft_ms: f64,
    pub tpot_ms: f64,
}

/// The latencies of one completed request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Latency {
    pub ttft_ms: f64,
    /// (e2e − TTFT) / (output tokens − 1); 0 for a one-token answer, which
    /// has no time between tokens and so always meets the TPOT limit.
    pub tpot_ms: f64,
    pub e2e_ms: f64,
    /// Arrival to first admission into a batch.
    pub queue_ms: f64,
}

impl Latency {
    /// TPOT of a request from its end-to-end latency and TTFT.
    pub(crate) fn tpot_ms(e2e_ms: f64, ttft_ms: f64, output_tokens: u32) -> f64 {
        if output_tokens <= 1 {
            0.0
        } else {
            (e2e_ms - ttft_ms) / f64::from(output_tokens - 1)
        }
    }
}

/// Running totals of one tier.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct TierTally {
    /// Requests offered (all routes).
    pub requests: u64,
    /// Sent to the API by the plan's share (assumed to meet the limits: the
    /// plan buys them from a provider that promises them).
    pub api_requests: u64,
    pub api_input_tokens: u64,
    pub api_output_tokens: u64,
    /// Offered while no replica of the tier was up, or too long for any
    /// replica's KV cache: never served, counted as missing both limits.
    pub unserved_requests: u64,
    /// Completed on a replica.
    pub served_requests: u64,
    /// Completed after their tier's deadline (deadline tiers only).
    pub late: u64,
    /// Dropped by a spot interruption of their replica (also counted
    /// unserved).
    pub interrupted: u64,
    pub met_ttft: u64,
    pub met_tpot: u64,
    pub met_both: u64,
    /// Output tokens of requests completed on replicas.
    pub output_tokens: u64,
    /// Output tokens of replica-served requests that met both limits.
    pub goodput_output_tokens: u64,
    /// Σ (e2e − TTFT) of completed requests: seconds spent decoding.
    pub decode_s: f64,
    /// Prompt tokens of requests completed on replicas.
    #[serde(default)]
    pub served_input_tokens: u64,
    /// Of those, tokens their replica's prefix cache held at admission
    /// (not computed).
    #[serde(default)]
    pub cached_input_tokens: u64,
    pub ttft: Histogram,
    pub tpot: Histogram,
    pub e2e: Histogram,
    pub queue: Histogram,
}

impl TierTally {
    /// Records one completed request of a tier with a deadline: one finished
    /// after it (`on_time` false) misses even when both limits hold.
    pub(crate) fn record_on_time(
        &mut self,
        latency: Latency,
        output_tokens: u32,
        limits: Limits,
        on_time: bool,
    ) {
        self.served_requests += 1;
        self.output_tokens += u64::from(output_tokens);
        let ttft_ok = latency.ttft_ms <= limits.ttft_ms;
        let tpot_ok = latency.tpot_ms <= limits.tpot_ms;
        self.met_ttft += u64::from(ttft_ok);
        self.met_tpot += u64::from(tpot_ok);
        self.late += u64::from(!on_time);
        if ttft_ok && tpot_ok && on_time {
            self.met_both += 1;
            self.goodput_output_tokens += u64::from(output_tokens);
        }
        self.decode_s += (latency.e2e_ms - latency.ttft_ms) / 1e3;
        self.ttft.record(latency.ttft_ms);
        self.tpot.record(latency.tpot_ms);
        self.e2e.record(latency.e2e_ms);
        self.queue.record(latency.queue_ms);
    }

    /// The `q` quantile (0-1) of the served requests' TTFT, ms: its
    /// histogram's (the upper edge of a 1% bucket, so at most 1% above the
    /// exact value), and no more than `limit_ms` when the on-time count says
    /// the exact quantile is within it: both are upper bounds of the exact
    /// value, so a quantile the limit holds is never printed above it.
    pub(crate) fn ttft_quantile_ms(&self, q: f64, limit_ms: f64) -> f64 {
        self.within(self.ttft.quantile_ms(q), q, self.met_ttft, limit_ms)
    }

    /// [`Self::ttft_quantile_ms`] of TPOT.
    pub(crate) fn tpot_quantile_ms(&self, q: f64, limit_ms: f64) -> f64 {
        self.within(self.tpot.quantile_ms(q), q, self.met_tpot, limit_ms)
    }

    /// `value` (an upper bound of the exact `q` quantile of the served
    /// requests) capped at `limit_ms` when `met` of them were within it and
    /// that reaches the quantile's rank.
    fn within(&self, value: f64, q: f64, met: u64, limit_ms: f64) -> f64 {
        let n = self.served_requests;
        if n == 0 {
            return value;
        }
        let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
        if met >= rank {
            value.min(limit_ms)
        } else {
            value
        }
    }

    /// Share of the requests kept on GPUs (served or unserved) that met both
    /// limits; 1 when there were none.
    pub(crate) fn attainment(&self) -> f64 {
        let on_gpus = self.served_requests + self.unserved_requests;
        if on_gpus == 0 {
            1.0
        } else {
            self.met_both as f64 / on_gpus as f64
        }
    }

    /// Adds another tally.
    pub(crate) fn merge(&mut self, o: &TierTally) {
        self.requests += o.requests;
        self.api_requests += o.api_requests;
        self.api_input_tokens += o.api_input_tokens;
        self.api_output_tokens += o.api_output_tokens;
        self.unserved_requests += o.unserved_requests;
        self.served_requests += o.served_requests;
        self.late += o.late;
        self.interrupted += o.interrupted;
        self.met_ttft += o.met_ttft;
        self.met_tpot += o.met_tpot;
        self.met_both += o.met_both;
        self.output_tokens += o.output_tokens;
        self.goodput_output_tokens += o.goodput_output_tokens;
        self.served_input_tokens += o.served_input_tokens;
        self.cached_input_tokens += o.cached_input_tokens;
        self.decode_s += o.decode_s;
        self.ttft.merge(&o.ttft);
        self.tpot.merge(&o.tpot);
        self.e2e.merge(&o.e2e);
        self.queue.merge(&o.queue);
    }
}

/// Per slot and tier: requests kept on GPUs and those meeting both limits.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub(crate) struct SlotTally {
    pub on_gpus: u64,
    pub met_both: u64,
}

/// Utilisation of one group of identical replicas.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct GroupTally {
    /// Replica-seconds the plan kept the group's replicas up.
    pub up_s: f64,
    /// Replica-seconds spent running steps while up.
    pub busy_s: f64,
    /// Σ decoding sequences × step seconds while up.
    pub batch_s: f64,
    pub preemptions: u64,
    /// Replica-seconds spent loading the model (a pooled fleet's switches).
    #[serde(default)]
    pub loading_s: f64,
    /// Per replica (by rank in the group; a disaggregated unit's replicas
    /// summed by unit): (up seconds, busy seconds while up).
    pub replicas: Vec<(f64, f64)>,
    /// A group of disaggregated units: busy replica-seconds of its prefill
    /// replicas, then of its decode replicas; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sides_busy_s: Vec<f64>,
}

impl GroupTally {
    /// Adds another tally, replica by replica.
    pub(crate) fn merge(&mut self, o: &GroupTally) {
        self.up_s += o.up_s;
        self.busy_s += o.busy_s;
        self.batch_s += o.batch_s;
        self.preemptions += o.preemptions;
        self.loading_s += o.loading_s;
        if self.replicas.len() < o.replicas.len() {
            self.replicas.resize(o.replicas.len(), (0.0, 0.0));
        }
        for (a, b) in self.replicas.iter_mut().zip(&o.replicas) {
            a.0 += b.0;
            a.1 += b.1;
        }
        if self.sides_busy_s.len() < o.sides_busy_s.len() {
            self.sides_busy_s.resize(o.sides_busy_s.len(), 0.0);
        }
        for (a, b) in self.sides_busy_s.iter_mut().zip(&o.sides_busy_s) {
            *a += b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 served requests, `late` of them at 2,010 ms and the rest at
    /// 1,999.9 ms, against a 2,000 ms limit: both lie in the 1% bucket
    /// [1,999.8, 2,019.8) ms, whose upper edge is past the limit.
    fn tally(late: usize) -> TierTally {
        let limits = Limits {
            ttft_ms: 2_000.0,
            tpot_ms: 50.0,
        };
        let mut t = TierTally::default();
        for i in 0..100 {
            let ttft_ms = if i < late { 2_010.0 } else { 1_999.9 };
            let latency = Latency {
                ttft_ms,
                tpot_ms: 20.0,
                e2e_ms: ttft_ms + 2_000.0,
                queue_ms: 0.0,
            };
            t.record_on_time(latency, 101, limits, true);
        }
        t
    }

    #[test]
    fn a_quantile_the_limit_holds_is_never_printed_above_it() {
        // One late request: 99 of 100 met, so the exact p99 is within the
        // limit, though the bucket's edge is past it.
        let met = tally(1);
        assert!(met.ttft.quantile_ms(0.99) > 2_000.0);
        assert_eq!(met.ttft_quantile_ms(0.99, 2_000.0), 2_000.0);
        // Two late: the exact p99 is 2,010 ms, and so is the figure.
        let missed = tally(2);
        assert_eq!(missed.ttft_quantile_ms(0.99, 2_000.0), 2_010.0);
        // A figure within the limit is the histogram's.
        assert_eq!(met.tpot_quantile_ms(0.99, 50.0), met.tpot.quantile_ms(0.99));
        assert!(met.tpot_quantile_ms(0.99, 50.0) < 50.0);
    }
}
