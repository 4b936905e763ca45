//! What a replay of the traces against a plan found, per tier and per
//! configuration: the `verification` object of a plan's JSON. [`crate::replay`]
//! fills it; [`crate::plan`] and the reports read it.

use crate::scenario::SloWindow;
use crate::sim::metrics::SlotTally;
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
    /// The router the replay sent requests through, when the replicas cache
    /// prefixes (where the router decides what they find).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix_router: Option<crate::sim::Router>,
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
    /// What the replicas' prefix caches saved the tier (absent unless the
    /// replicas cache prefixes and a trace of the tier names its blocks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix_cache: Option<PrefixCacheUse>,
    /// Where `prefix_cache`'s hits come from: the traces' block hashes, an
    /// aggregate's prefixes table, or a prefix model the scenario states
    /// (absent with `prefix_cache`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix_source: Option<String>,
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
    /// Every replayed slot with GPU-served requests: the slot, its
    /// requests and their attainment (what the rounds size slot by slot;
    /// not written out).
    #[serde(skip)]
    pub slot_attainment: Vec<(usize, u64, f64)>,
    /// The span each window of the target covers (`tiers[].slo_window`).
    pub slo_window: SloWindow,
    /// Every window with replayed slots, in order: the target is met when
    /// each of them meets it.
    pub windows: Vec<Window>,
    /// Windows whose attainment reaches the target.
    pub windows_meeting: usize,
    /// The window of lowest attainment (among the complete ones when any
    /// is).
    pub worst_window: Option<Window>,
}

/// A tier's prefix-cache hits on replay, over its requests completed on
/// replicas.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PrefixCacheUse {
    /// Their prompt tokens.
    pub input_tokens: u64,
    /// Of those, held by the replica's prefix cache at admission: prefill
    /// not computed.
    pub cached_input_tokens: u64,
    /// `cached_input_tokens / input_tokens` (token-weighted hit rate).
    pub hit_rate: f64,
}

impl PrefixCacheUse {
    /// The hits of `cached` of `input` prompt tokens.
    pub fn of(input: u64, cached: u64) -> Self {
        PrefixCacheUse {
            input_tokens: input,
            cached_input_tokens: cached,
            hit_rate: if input == 0 {
                0.0
            } else {
                cached as f64 / input as f64
            },
        }
    }
}

/// One window of a tier's target on replay.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Window {
    /// First slot of the window, and the slot after its last.
    pub start_slot: usize,
    pub end_slot: usize,
    /// Slots of the window that were replayed (fewer than its span on a
    /// sampled replay).
    pub replayed_slots: usize,
    /// GPU-served requests of the window's replayed slots.
    pub requests: u64,
    /// Share of them meeting both limits (1 when there were none).
    pub attainment: f64,
    pub meets_target: bool,
    /// Whether every slot of the window was replayed, so that its
    /// attainment is the window's: only such windows decide the target.
    pub complete: bool,
}

/// Tier `k`'s windows of `window` over a horizon of (slots, slot minutes)
/// that hold replayed slots: per window its GPU-served requests and their
/// attainment, from the replayed slots' tallies (`slots[i]`'s row is
/// `tallies[i]`).
pub(crate) fn windows(
    window: SloWindow,
    horizon: (usize, u32),
    slots: &[usize],
    tallies: &[Vec<SlotTally>],
    k: usize,
    target: f64,
) -> Vec<Window> {
    let (horizon_slots, slot_minutes) = horizon;
    let horizon_slots = horizon_slots.max(slots.iter().max().map_or(0, |s| s + 1));
    window
        .windows(horizon_slots, slot_minutes)
        .into_iter()
        .filter_map(|range| {
            let (mut on_gpus, mut met, mut replayed) = (0_u64, 0_u64, 0_usize);
            for (s, row) in slots.iter().zip(tallies) {
                if range.contains(s) {
                    replayed += 1;
                    on_gpus += row[k].on_gpus;
                    met += row[k].met_both;
                }
            }
            (replayed > 0).then(|| {
                let attainment = if on_gpus == 0 {
                    1.0
                } else {
                    met as f64 / on_gpus as f64
                };
                Window {
                    start_slot: range.start,
                    end_slot: range.end,
                    replayed_slots: replayed,
                    requests: on_gpus,
                    attainment,
                    meets_target: attainment >= target,
                    complete: replayed == range.len(),
                }
            })
        })
        .collect()
}

impl TierVerification {
    /// The attainment that decides the target: the worst complete
    /// window's, or the replayed slots' together when no window was
    /// replayed whole (a sampled replay of day windows).
    pub fn binding_attainment(&self) -> f64 {
        self.worst_window
            .filter(|w| w.complete)
            .map_or(self.attainment, |w| w.attainment.min(self.attainment))
    }
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
    /// plan never brought up are left out; a disaggregated unit's replicas
    /// together, by unit).
    pub replicas: Vec<f64>,
    /// A group of disaggregated units: the busy share of its prefill and of
    /// its decode replicas (which side bounds the unit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sides: Option<UnitSides>,
}

/// The stepping shares of a disaggregated unit's two sides.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct UnitSides {
    /// Prefill and decode replicas per unit (`xPyD`).
    pub shape: crate::scenario::pd_ratio::PdRatio,
    pub prefill_stepping: f64,
    pub decode_stepping: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(on_gpus: u64, met_both: u64) -> Vec<SlotTally> {
        vec![SlotTally { on_gpus, met_both }]
    }

    #[test]
    fn day_windows_cover_the_horizon_and_the_last_may_be_short() {
        let days = SloWindow::Day.windows(60, 60);
        assert_eq!(days, vec![0..24, 24..48, 48..60]);
        assert_eq!(SloWindow::Day.windows(96, 15), vec![0..96]);
        assert_eq!(SloWindow::Slot.windows(3, 60), vec![0..1, 1..2, 2..3]);
        assert_eq!(SloWindow::Horizon.windows(168, 60), vec![0..168]);
    }

    #[test]
    fn a_day_that_misses_is_found_although_the_week_meets() {
        // 48 hourly slots: day 1 meets at 99.9%, day 2 misses at 98%, and
        // the two together meet 99%.
        let slots: Vec<usize> = (0..48).collect();
        let tallies: Vec<Vec<SlotTally>> = slots
            .iter()
            .map(|&s| {
                if s < 24 {
                    tally(3000, 2997)
                } else {
                    tally(1000, 980)
                }
            })
            .collect();
        let w = windows(SloWindow::Day, (48, 60), &slots, &tallies, 0, 0.99);
        assert_eq!(w.len(), 2);
        assert!(w[0].meets_target && w[0].complete);
        assert!(!w[1].meets_target && w[1].complete);
        assert!((w[1].attainment - 0.98).abs() < 1e-12);
        assert_eq!(w[1].requests, 24_000);
        let all = windows(SloWindow::Horizon, (48, 60), &slots, &tallies, 0, 0.99);
        assert!(all[0].meets_target, "{all:?}");
    }

    #[test]
    fn sampled_slots_make_incomplete_windows_and_empty_slots_meet() {
        let w = windows(
            SloWindow::Day,
            (48, 60),
            &[3, 30],
            &[tally(100, 90), tally(0, 0)],
            0,
            0.99,
        );
        assert_eq!(w.len(), 2);
        assert!(w.iter().all(|w| !w.complete && w.replayed_slots == 1));
        assert_eq!(w[1].attainment, 1.0);
    }
}
