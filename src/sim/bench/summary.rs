//! The figures `vllm bench serve` prints and saves (`--save-result`), from a
//! benchmark run: counts, throughputs, and the mean, median, standard
//! deviation and 99th percentile of TTFT, TPOT, ITL and end-to-end latency,
//! each as vLLM computes it (TPOT of a request: (e2e − TTFT) / (output − 1),
//! requests of one output token left out; percentiles interpolated linearly
//! between order statistics, as `numpy.percentile`; the standard deviation
//! over the population).

use super::BenchRun;
use serde::Serialize;

/// Mean, median, standard deviation, 90th and 99th percentile of one
/// latency, ms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub(crate) struct Stats {
    pub mean_ms: f64,
    pub median_ms: f64,
    pub std_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
}

impl Stats {
    /// The figures of `values_ms` (all zero when empty).
    pub(crate) fn of(mut values_ms: Vec<f64>) -> Stats {
        if values_ms.is_empty() {
            return Stats::default();
        }
        // Unstable is the same order: values that compare equal under
        // total_cmp are the same bits.
        values_ms.sort_unstable_by(f64::total_cmp);
        let n = values_ms.len() as f64;
        let mean = values_ms.iter().sum::<f64>() / n;
        let var = values_ms.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        Stats {
            mean_ms: mean,
            median_ms: interpolated(&values_ms, 50.0),
            std_ms: var.sqrt(),
            p90_ms: interpolated(&values_ms, 90.0),
            p99_ms: interpolated(&values_ms, 99.0),
        }
    }

    /// The `percentile`th percentile of `values_ms`, interpolated.
    pub(crate) fn percentile(mut values_ms: Vec<f64>, percentile: f64) -> f64 {
        values_ms.sort_by(f64::total_cmp);
        interpolated(&values_ms, percentile)
    }
}

/// `numpy.percentile(sorted, q)` with linear interpolation.
fn interpolated(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let pos = (q / 100.0).clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// A run's summary, in the terms of vLLM's.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BenchSummary {
    pub completed: usize,
    pub failed: usize,
    pub duration_s: f64,
    pub total_input_tokens: u64,
    pub total_output_tokens: u64,
    pub request_throughput: f64,
    pub output_throughput: f64,
    pub total_token_throughput: f64,
    pub ttft: Stats,
    pub tpot: Stats,
    pub itl: Stats,
    pub e2el: Stats,
    /// Prompt tokens the prefix cache held, over the served requests.
    pub cached_prompt_tokens: u64,
}

impl BenchSummary {
    /// The summary of `run` (its served requests; refused ones count as
    /// failed).
    pub(crate) fn of(run: &BenchRun) -> BenchSummary {
        let served: Vec<_> = run.requests.iter().filter(|r| r.error.is_none()).collect();
        let total_input_tokens: u64 = served.iter().map(|r| u64::from(r.input_tokens)).sum();
        let total_output_tokens: u64 = served.iter().map(|r| u64::from(r.output_tokens)).sum();
        let duration_s = run.duration_s;
        let per_s = |x: f64| {
            if duration_s > 0.0 {
                x / duration_s
            } else {
                0.0
            }
        };
        let tpots = served
            .iter()
            .filter(|r| r.output_tokens > 1)
            .map(|r| (r.e2e_s - r.ttft_s) / f64::from(r.output_tokens - 1) * 1e3)
            .collect();
        BenchSummary {
            completed: served.len(),
            failed: run.requests.len() - served.len(),
            duration_s,
            total_input_tokens,
            total_output_tokens,
            request_throughput: per_s(served.len() as f64),
            output_throughput: per_s(total_output_tokens as f64),
            total_token_throughput: per_s((total_input_tokens + total_output_tokens) as f64),
            ttft: Stats::of(served.iter().map(|r| r.ttft_s * 1e3).collect()),
            tpot: Stats::of(tpots),
            itl: Stats::of(
                served
                    .iter()
                    .flat_map(|r| r.itls_s.iter().map(|g| g * 1e3))
                    .collect(),
            ),
            e2el: Stats::of(served.iter().map(|r| r.e2e_s * 1e3).collect()),
            cached_prompt_tokens: served.iter().map(|r| u64::from(r.cached_tokens)).sum(),
        }
    }

    /// The prefix cache's hit rate: the share of the served prompts' tokens
    /// found computed.
    pub(crate) fn prefix_hit_share(&self) -> f64 {
        if self.total_input_tokens == 0 {
            0.0
        } else {
            self.cached_prompt_tokens as f64 / self.total_input_tokens as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_as_numpy_does() {
        // numpy.percentile([1, 2, 3, 4], 50) = 2.5; 99 -> 3.97.
        let s = Stats::of(vec![4.0, 1.0, 3.0, 2.0]);
        assert_eq!(s.median_ms, 2.5);
        assert!((s.p99_ms - 3.97).abs() < 1e-12);
        assert_eq!(s.mean_ms, 2.5);
        assert!((s.std_ms - 1.25f64.sqrt()).abs() < 1e-12);
        assert_eq!(Stats::of(vec![]), Stats::default());
    }
}
