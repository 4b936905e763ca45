//! What a replay of the traces against a plan found, per tier and per
//! configuration: the `verification` object of a plan's JSON. [`crate::replay`]
//! fills it; [`crate::plan`] and the reports read it.

use serde::Serialize;
use std::collections::BTreeMap;

/// The replay's findings.
#[derive(Debug, Clone, Serialize)]
pub struct Verification {
    /// Which slots were replayed, and how, in words.
    pub method: String,
    pub replayed_slots: Vec<usize>,
    pub seed: u64,
    pub requests: u64,
    /// Events the simulator processed.
    pub events: u64,
    /// Most requests in flight at once on the replicas (what the simulator's
    /// memory grows with, besides the traces).
    pub peak_in_flight: usize,
    pub tiers: BTreeMap<String, TierVerification>,
    pub configurations: Vec<ConfigUtilisation>,
}

/// One tier on replay.
#[derive(Debug, Clone, Serialize)]
pub struct TierVerification {
    /// Share of GPU-routed requests meeting both limits; `target` is the
    /// tier's percentile / 100.
    pub attainment: f64,
    pub target: f64,
    pub meets_target: bool,
    pub requests: u64,
    pub api_requests: u64,
    pub served_requests: u64,
    pub unserved_requests: u64,
    /// Requests of a deadline tier completed after arrival + deadline
    /// (absent for tiers without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_requests: Option<u64>,
    /// Requests dropped by spot interruptions of their replica (also
    /// unserved; absent when the plan runs no spot replica for the tier).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interrupted_requests: Option<u64>,
    pub met_ttft: u64,
    pub met_tpot: u64,
    pub met_both: u64,
    pub ttft_p50_ms: f64,
    pub ttft_p99_ms: f64,
    pub tpot_p50_ms: f64,
    pub tpot_p99_ms: f64,
    /// TTFT at each of [`DISTRIBUTION_QUANTILES`] (the replayed GPU-served
    /// requests' distribution), milliseconds.
    pub ttft_distribution_ms: Vec<QuantileMs>,
    /// TPOT at each of [`DISTRIBUTION_QUANTILES`], milliseconds.
    pub tpot_distribution_ms: Vec<QuantileMs>,
    pub e2e_p99_ms: f64,
    pub queue_p99_ms: f64,
    /// Output tokens of served and API requests.
    pub output_tokens: u64,
    /// Output tokens of requests meeting both limits (API requests count as
    /// meeting them).
    pub goodput_output_tokens: u64,
    /// Cost of the replayed slots allocated to the tier (see docs/simulator.md).
    pub cost_usd: f64,
    pub cost_per_1k_output_tokens_usd: f64,
    pub cost_per_1k_goodput_tokens_usd: f64,
    /// The replayed slot with the lowest attainment, and that attainment.
    pub worst_slot: Option<(usize, f64)>,
}

/// The quantiles at which a tier's latency distributions are reported.
pub(crate) const DISTRIBUTION_QUANTILES: [f64; 16] = [
    0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.999,
];

/// One point of a latency distribution: the share of requests at or below
/// `ms`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct QuantileMs {
    pub quantile: f64,
    pub ms: f64,
}

/// The distribution points of `quantile_ms` (a histogram's quantile
/// function) at [`DISTRIBUTION_QUANTILES`].
pub(crate) fn distribution(quantile_ms: impl Fn(f64) -> f64) -> Vec<QuantileMs> {
    DISTRIBUTION_QUANTILES
        .iter()
        .map(|&quantile| QuantileMs {
            quantile,
            ms: quantile_ms(quantile),
        })
        .collect()
}

/// Utilisation of one configuration's replicas.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigUtilisation {
    pub tier: String,
    pub config: String,
    /// Busy replica-seconds over up replica-seconds: the share of time a
    /// replica had a step running.
    pub utilisation: f64,
    /// Mean decoding sequences per step while busy, and the cap.
    pub mean_batch: f64,
    pub max_batch: u32,
    pub preemptions: u64,
    /// Busy over up time of each replica of the group, by rank (replicas the
    /// plan never brought up are left out).
    pub replicas: Vec<f64>,
}
