//! Demand per tier and slot: from the traces (and an optional rate curve) to
//! the arrival rate that sizes capacity in each slot (`peak_rps`) and the mean
//! rate that sets volume and API cost (`mean_rps`).

pub(crate) mod source;
pub(crate) mod summary;
pub(crate) mod workload;

use crate::base::error::{PlannerError, Problem};
use crate::base::progress::Progress;
use crate::base::stats::percentile_sorted;
use crate::demand::source::{
    read_source, AggregateCache, CapacityLengths, DroppedOverContext, KeptSource, SourceFigures,
};
use crate::scenario::{PeakStatistic, Scenario, ShapeAnchor};
use crate::traces::block_chains::{BlockChains, NO_CHAIN};
use crate::traces::length_sample::LENGTH_SAMPLE_SIZE;
use crate::traces::prefix_reuse::PrefixReuse;
use crate::traces::shape::{read_rate_curve, RateCurve};
use crate::traces::stats::LengthStats;
use serde::Serialize;
use std::sync::Arc;

/// Demand of every tier over the planning slots.
#[derive(Debug, Clone, Serialize)]
pub struct Demand {
    pub slot_minutes: u32,
    pub slots: usize,
    /// How the slots were built, in words (shown in reports).
    pub method: String,
    pub tiers: Vec<TierDemand>,
}

impl Demand {
    /// Hours in the planning horizon.
    pub fn horizon_hours(&self) -> f64 {
        self.slots as f64 * f64::from(self.slot_minutes) / 60.0
    }

    /// Hours in one slot.
    pub fn slot_hours(&self) -> f64 {
        f64::from(self.slot_minutes) / 60.0
    }

    /// The demand of the slots in `range` alone, numbered from 0 (lengths,
    /// burstiness and sources unchanged): the days a plan is made on, or the
    /// days set aside to check it (`[check] days`).
    pub fn slots_in(&self, range: std::ops::Range<usize>, method: String) -> Demand {
        Demand {
            slot_minutes: self.slot_minutes,
            slots: range.len(),
            method,
            tiers: self
                .tiers
                .iter()
                .map(|t| TierDemand {
                    peak_rps: t.peak_rps[range.clone()].to_vec(),
                    mean_rps: t.mean_rps[range.clone()].to_vec(),
                    ..t.clone()
                })
                .collect(),
        }
    }
}

/// One tier's demand.
#[derive(Debug, Clone, Serialize)]
pub struct TierDemand {
    pub tier: String,
    /// Requests/s that capacity must sustain in each slot (the peak statistic).
    pub peak_rps: Vec<f64>,
    /// Mean requests/s in each slot (volume, API cost).
    pub mean_rps: Vec<f64>,
    pub input_tokens: LengthStats,
    pub output_tokens: LengthStats,
    /// Interarrival coefficient of variation of the tier's traces (`None`
    /// when a source is an aggregate, which does not hold it).
    pub interarrival_cv: Option<f64>,
    /// Arrival CV at the scale of seconds within minutes: the burstiness the
    /// queueing model uses (the per-minute peak already holds the rest).
    pub within_minute_cv: f64,
    /// Busiest minute over mean minute of the traces (burstiness).
    pub peak_to_mean_minute: f64,
    /// Fixed-seed sample of (input, output) token pairs.
    #[serde(skip)]
    pub lengths: Vec<(u32, u32)>,
    /// What a prefix cache of any size finds for each of the tier's
    /// requests (trace after trace, each in its order), when the replicas
    /// cache prefixes and a trace names its blocks or states a prefix
    /// model: the capacity search's sampled requests' hits.
    #[serde(skip)]
    pub(crate) prefix_reuse: Option<Arc<PrefixReuse>>,
    /// Beside each of `lengths`, its request's index in `prefix_reuse`
    /// (`NO_CHAIN` when it has none); empty without it.
    #[serde(skip)]
    pub sample_chains: Vec<u32>,
    pub sources: Vec<SourceSummary>,
}

impl TierDemand {
    /// Output tokens over the horizon (mean rate x slot length x mean output).
    pub fn output_tokens_total(&self, slot_hours: f64) -> f64 {
        self.mean_rps.iter().sum::<f64>() * slot_hours * 3600.0 * self.output_tokens.mean
    }
}

/// One trace behind a tier.
#[derive(Debug, Clone, Serialize)]
pub struct SourceSummary {
    /// The trace file, or the aggregate folder.
    pub trace: String,
    /// The trace format, or `aggregate`.
    pub format: String,
    /// The aggregate's tier the requests are sampled from (aggregates only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aggregate_tier: Option<String>,
    /// Step of the trace's rounded timestamps, when they are (its measured
    /// within-minute CV is then replaced, see `within_minute_cv`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantised_step_s: Option<f64>,
    /// The within-minute arrival CV this source contributes.
    pub within_minute_cv: f64,
    /// Where the capacity search's request lengths come from: the trace's
    /// length sample, the aggregate's recorded sample of the same requests,
    /// or draws from an older aggregate's bins.
    pub capacity_lengths: CapacityLengths,
    pub requests: u64,
    pub span_s: f64,
    pub scale: f64,
    /// Requests over the model's context left out (`over_context = "drop"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped_over_context: Option<DroppedOverContext>,
}

/// A trace's per-minute arrivals, aligned to the start of its first slot.
struct MinuteSeries {
    /// Arrivals per minute; `None` for minutes the trace does not cover.
    minutes: Vec<Option<f64>>,
}

/// Builds the demand of every tier of `scenario`.
pub(crate) fn build(scenario: &Scenario, progress: Progress) -> Result<Demand, PlannerError> {
    build_keeping(scenario, progress, false).map(|(d, _)| d)
}

/// [`build`], also returning, when `keep` is set, every request of each of
/// the scenario's demand sources (indexed like `scenario.demand`) for replay.
pub(crate) fn build_keeping(
    scenario: &Scenario,
    progress: Progress,
    keep: bool,
) -> Result<(Demand, Vec<KeptSource>), PlannerError> {
    let mut kept: Vec<KeptSource> = vec![KeptSource::Nothing; scenario.demand.len()];
    let slot_minutes = scenario.planning.slot_minutes as usize;
    let curve = match &scenario.shape {
        Some(s) => {
            let full = read_rate_curve(&s.servegen)?;
            let covered_days = full.rate_rps.len() as u64 * u64::from(full.window_s) / 86_400;
            if covered_days < u64::from(s.days) {
                return Err(PlannerError::Scenario(vec![Problem::new(scenario.path.clone(), "shape.days", format!(
                        "the rate curve {} covers {covered_days} whole days; set `shape.days` to at most {covered_days}",
                        s.servegen.display()
                    ))]));
            }
            Some(full.truncated(u64::from(s.days) * 86_400))
        }
        None => None,
    };
    if let Some(c) = &curve {
        if !(slot_minutes * 60).is_multiple_of(c.window_s as usize) {
            return Err(PlannerError::Scenario(vec![Problem::new(scenario.path.clone(), "planning.slot_minutes", format!(
                    "with a rate curve, a slot must hold whole curve windows of {} minutes; got {slot_minutes}",
                    c.window_s / 60
                ))]));
        }
    }
    let mut tiers = Vec::new();
    let mut cache = AggregateCache::default();
    for (k, tier) in scenario.tiers.iter().enumerate() {
        let mut series = Vec::new();
        let mut sources = Vec::new();
        let mut accs = Vec::new();
        for (j, source) in scenario
            .demand
            .iter()
            .enumerate()
            .filter(|(_, d)| d.tier == k)
        {
            let (figures, kept_source) =
                read_source(scenario, j, source, &mut cache, progress, keep)?;
            kept[j] = kept_source;
            series.push((minute_series(&figures, slot_minutes), source.scale));
            sources.push(SourceSummary {
                trace: source.trace.display().to_string(),
                format: figures.format.clone(),
                aggregate_tier: figures.aggregate_tier.clone(),
                quantised_step_s: figures.quantised_step_s,
                within_minute_cv: figures.within_minute_cv,
                capacity_lengths: figures.capacity_lengths,
                requests: figures.requests,
                span_s: figures.span_s,
                scale: source.scale,
                dropped_over_context: figures.dropped_over_context,
            });
            accs.push((figures, source.scale));
        }
        let merged = merge_series(&series);
        let (peak_to_mean, stat_ratio) = burstiness(&merged, scenario.planning.peak_statistic);
        // The tier's day: the curve moved by its sources' shift (the
        // largest, when they state different ones).
        let shift_hours = scenario
            .demand
            .iter()
            .filter(|d| d.tier == k)
            .map(|d| d.shift_hours)
            .fold(0.0, f64::max);
        let shifted = curve.as_ref().map(|c| c.shifted(shift_hours * 3600.0));
        let (peak_rps, mean_rps) = match &shifted {
            None => slot_rates(&merged, slot_minutes, scenario.planning.peak_statistic),
            Some(c) => {
                let anchor = scenario
                    .shape
                    .as_ref()
                    .map_or(ShapeAnchor::Peak, |s| s.anchor);
                let base_rps = accs
                    .iter()
                    .map(|(a, scale)| a.requests as f64 / a.span_s.max(60.0) * scale)
                    .sum::<f64>();
                shaped_rates(
                    c,
                    slot_minutes,
                    base_rps,
                    stat_ratio,
                    anchor,
                    scenario.planning.peak_statistic,
                )
            }
        };
        let (lengths, input_tokens, output_tokens, cv) = merge_lengths(&accs);
        let (prefix_reuse, sample_chains) = merge_reuse(&accs).map_or_else(
            || {
                let (chains, rows) = merge_chains(&accs);
                (chains.map(|c| Arc::new(PrefixReuse::of(&c))), rows)
            },
            |(reuse, rows)| (Some(reuse), rows),
        );
        let total_weight: f64 = accs.iter().map(|(a, s)| a.requests as f64 * s).sum();
        let within_minute_cv = accs
            .iter()
            .map(|(a, s)| a.within_minute_cv * a.requests as f64 * s)
            .sum::<f64>()
            / total_weight;
        tiers.push(TierDemand {
            tier: tier.name.clone(),
            peak_rps,
            mean_rps,
            input_tokens,
            output_tokens,
            interarrival_cv: cv,
            within_minute_cv,
            peak_to_mean_minute: peak_to_mean,
            lengths,
            prefix_reuse,
            sample_chains,
            sources,
        });
    }
    let slots = tiers.iter().map(|t| t.peak_rps.len()).max().unwrap_or(0);
    if slots as u64 > crate::scenario::MAX_SLOTS {
        return Err(PlannerError::Scenario(vec![Problem::new(scenario.path.clone(), "planning.slot_minutes", format!(
                "the traces span {slots} slots of {slot_minutes} minutes, more than the {} a plan may have; use longer slots, or traces covering a shorter period",
                crate::scenario::MAX_SLOTS
            ))]));
    }
    for t in &mut tiers {
        t.peak_rps.resize(slots, 0.0);
        t.mean_rps.resize(slots, 0.0);
    }
    let method = match (&curve, &scenario.shape) {
        (Some(c), Some(s)) => format!(
            "{} {} of the ServeGen rate curve {}{}, anchored so that each trace's mean rate is the curve's {} slot; per-slot peak = {} scaled by the trace's measured burstiness",
            s.days,
            crate::base::numbers::noun(u64::from(s.days), "day", "days"),
            s.servegen.display(),
            if c.clients > 1 { format!(" ({} client series summed)", c.clients) } else { String::new() },
            match s.anchor { ShapeAnchor::Peak => "busiest", ShapeAnchor::Mean => "mean" },
            scenario.planning.peak_statistic.label()
        ),
        _ => format!(
            "the traces' own arrivals in clock-aligned {slot_minutes}-minute slots (slot 0 starts at each trace's first slot boundary); per-slot peak = {}",
            scenario.planning.peak_statistic.label()
        ),
    };
    let demand = Demand {
        slot_minutes: slot_minutes as u32,
        slots,
        method,
        tiers,
    };
    Ok((demand, kept))
}

fn minute_series(figures: &SourceFigures, slot_minutes: usize) -> MinuteSeries {
    let offset = (figures.first_minute_s / 60).rem_euclid(slot_minutes as i64) as usize;
    let mut minutes = vec![None; offset];
    minutes.extend(figures.minute_counts.iter().map(|&c| Some(c as f64)));
    MinuteSeries { minutes }
}

fn merge_series(series: &[(MinuteSeries, f64)]) -> Vec<Option<f64>> {
    let len = series
        .iter()
        .map(|(s, _)| s.minutes.len())
        .max()
        .unwrap_or(0);
    (0..len)
        .map(|i| {
            series.iter().fold(None, |acc: Option<f64>, (s, scale)| {
                match s.minutes.get(i).copied().flatten() {
                    Some(c) => Some(acc.unwrap_or(0.0) + c * scale),
                    None => acc,
                }
            })
        })
        .collect()
}

fn statistic(mut observed: Vec<f64>, stat: PeakStatistic) -> f64 {
    if observed.is_empty() {
        return 0.0;
    }
    match stat {
        PeakStatistic::Mean => observed.iter().sum::<f64>() / observed.len() as f64,
        PeakStatistic::MaxMinute => observed.iter().copied().fold(0.0, f64::max),
        PeakStatistic::QuantileMinute { quantile } => {
            observed.sort_by(f64::total_cmp);
            percentile_sorted(&observed, quantile)
        }
    }
}

/// Per-slot (peak, mean) requests/s from minute counts: the peak from the
/// minutes a trace observed (a slot it covers in part is sized for the
/// traffic it saw), the mean, which sets the slot's volume (API requests
/// and tokens, the cost per token), from the slot's requests over the whole
/// slot (a minute no trace covers brought none).
fn slot_rates(
    minutes: &[Option<f64>],
    slot_minutes: usize,
    stat: PeakStatistic,
) -> (Vec<f64>, Vec<f64>) {
    minutes
        .chunks(slot_minutes)
        .map(|slot| {
            let observed: Vec<f64> = slot.iter().flatten().copied().collect();
            let mean = observed.iter().sum::<f64>() / (slot_minutes as f64 * 60.0);
            (statistic(observed, stat) / 60.0, mean)
        })
        .unzip()
}

/// (busiest minute / mean minute, chosen statistic / mean minute) over the
/// observed minutes.
fn burstiness(minutes: &[Option<f64>], stat: PeakStatistic) -> (f64, f64) {
    let observed: Vec<f64> = minutes.iter().flatten().copied().collect();
    let mean = statistic(observed.clone(), PeakStatistic::Mean);
    if mean <= 0.0 {
        return (1.0, 1.0);
    }
    let max = statistic(observed.clone(), PeakStatistic::MaxMinute);
    (max / mean, statistic(observed, stat) / mean)
}

/// Per-slot (peak, mean) requests/s from a rate curve anchored to `base_rps`.
fn shaped_rates(
    curve: &RateCurve,
    slot_minutes: usize,
    base_rps: f64,
    stat_ratio: f64,
    anchor: ShapeAnchor,
    stat: PeakStatistic,
) -> (Vec<f64>, Vec<f64>) {
    let per_slot = slot_minutes * 60 / curve.window_s as usize;
    let slots: Vec<(f64, f64)> = curve
        .rate_rps
        .chunks(per_slot)
        .map(|w| {
            let mean = w.iter().sum::<f64>() / w.len() as f64;
            let max = w.iter().copied().fold(0.0, f64::max);
            (
                if stat == PeakStatistic::Mean {
                    mean
                } else {
                    max
                },
                mean,
            )
        })
        .collect();
    let reference = match anchor {
        ShapeAnchor::Peak => slots.iter().map(|s| s.1).fold(0.0, f64::max),
        ShapeAnchor::Mean => curve.mean_rps(),
    };
    if reference <= 0.0 {
        return (vec![0.0; slots.len()], vec![0.0; slots.len()]);
    }
    slots
        .iter()
        .map(|&(peak, mean)| {
            (
                base_rps * peak / reference * stat_ratio,
                base_rps * mean / reference,
            )
        })
        .unzip()
}

/// The sources' chains in one list, and beside the lengths
/// [`merge_lengths`] takes, each sampled request's index in it (`NO_CHAIN`
/// for a source without chains); `None` and empty when no source has any.
fn merge_chains(accs: &[(SourceFigures, f64)]) -> (Option<Arc<BlockChains>>, Vec<u32>) {
    let Some(first) = accs.iter().find_map(|(a, _)| a.chains.as_ref()) else {
        return (None, Vec::new());
    };
    if accs.len() == 1 {
        return (Some(Arc::clone(first)), accs[0].0.sample_chains.clone());
    }
    let mut chains = BlockChains::new(first.block_tokens);
    let rows = merged_rows(accs, |a| a.chains.as_ref().map(|own| chains.append(own)));
    (Some(Arc::new(chains)), rows)
}

/// The tier's prefix reuse when a source is an aggregate that carries its
/// sampled requests' ([`SourceFigures::reuse`]): each source's own, one
/// after the other (a trace's from one pass over its chains), with the
/// sampled requests' rows beside the merged sample; `None` when no source
/// is such an aggregate. A source whose blocks are of another size than the
/// first's adds no hits (none is invented).
fn merge_reuse(accs: &[(SourceFigures, f64)]) -> Option<(Arc<PrefixReuse>, Vec<u32>)> {
    let first = accs.iter().find_map(|(a, _)| a.reuse.as_ref())?;
    if accs.len() == 1 {
        return Some((Arc::clone(first), accs[0].0.sample_chains.clone()));
    }
    let mut reuse = PrefixReuse::from_steps(first.block_tokens(), &[]);
    let rows = merged_rows(accs, |a| {
        let own = match (&a.reuse, &a.chains) {
            (Some(r), _) => Arc::clone(r),
            (None, Some(c)) => Arc::new(PrefixReuse::of(c)),
            (None, None) => return None,
        };
        (own.block_tokens() == reuse.block_tokens()).then(|| reuse.append(&own))
    });
    Some((Arc::new(reuse), rows))
}

/// Beside the lengths [`merge_lengths`] takes from each source, its sampled
/// requests' rows moved to where `place` puts the source's own list in the
/// merged one (`NO_CHAIN` for a source it puts nowhere).
fn merged_rows(
    accs: &[(SourceFigures, f64)],
    mut place: impl FnMut(&SourceFigures) -> Option<u32>,
) -> Vec<u32> {
    let mut rows = Vec::new();
    for ((a, _), take) in accs.iter().zip(sample_shares(accs)) {
        let n = a.lengths.len().min(take);
        match place(a) {
            None => rows.extend(std::iter::repeat_n(NO_CHAIN, n)),
            Some(offset) => rows.extend(a.sample_chains.iter().take(n).map(|&r| {
                if r == NO_CHAIN {
                    r
                } else {
                    r + offset
                }
            })),
        }
    }
    rows
}

/// How many of each source's sampled requests the tier's sample takes: in
/// proportion to its (scaled) volume, at least one.
fn sample_shares(accs: &[(SourceFigures, f64)]) -> Vec<usize> {
    let weight = |a: &SourceFigures, s: f64| a.requests as f64 * s;
    let total: f64 = accs.iter().map(|(a, s)| weight(a, *s)).sum();
    accs.iter()
        .map(|(a, s)| {
            ((weight(a, *s) / total) * LENGTH_SAMPLE_SIZE as f64)
                .round()
                .max(1.0) as usize
        })
        .collect()
}

/// Merges the sources' length samples in proportion to their (scaled) volume.
fn merge_lengths(
    accs: &[(SourceFigures, f64)],
) -> (Vec<(u32, u32)>, LengthStats, LengthStats, Option<f64>) {
    let weight = |a: &SourceFigures, s: f64| a.requests as f64 * s;
    let total: f64 = accs.iter().map(|(a, s)| weight(a, *s)).sum();
    let mut lengths = Vec::new();
    for ((a, _), take) in accs.iter().zip(sample_shares(accs)) {
        lengths.extend(a.lengths.iter().take(take));
    }
    let (first, _) = &accs[0];
    if accs.len() == 1 {
        return (
            lengths,
            first.input_tokens.clone(),
            first.output_tokens.clone(),
            first.interarrival_cv,
        );
    }
    let mean_of = |f: &dyn Fn(&SourceFigures) -> f64| {
        accs.iter().map(|(a, s)| f(a) * weight(a, *s)).sum::<f64>() / total
    };
    let mut ins: Vec<f64> = lengths.iter().map(|l| f64::from(l.0)).collect();
    let mut outs: Vec<f64> = lengths.iter().map(|l| f64::from(l.1)).collect();
    ins.sort_by(f64::total_cmp);
    outs.sort_by(f64::total_cmp);
    let from_sample = |sorted: &[f64], mean: f64, max: u64| LengthStats {
        mean,
        p50: percentile_sorted(sorted, 0.5) as u64,
        p90: percentile_sorted(sorted, 0.9) as u64,
        p99: percentile_sorted(sorted, 0.99) as u64,
        max,
    };
    let max_in = accs
        .iter()
        .map(|(a, _)| a.input_tokens.max)
        .max()
        .unwrap_or(0);
    let max_out = accs
        .iter()
        .map(|(a, _)| a.output_tokens.max)
        .max()
        .unwrap_or(0);
    let interarrival_cv = accs
        .iter()
        .map(|(a, s)| a.interarrival_cv.map(|cv| cv * weight(a, *s)))
        .sum::<Option<f64>>()
        .map(|x| x / total);
    (
        lengths,
        from_sample(&ins, mean_of(&|a| a.input_tokens.mean), max_in),
        from_sample(&outs, mean_of(&|a| a.output_tokens.mean), max_out),
        interarrival_cv,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slot_peaks_use_observed_minutes_and_volumes_the_whole_slot() {
        // Slot 0: minutes 0-1 unobserved, then 60 and 120 arrivals; slot 1:
        // 30, then the trace ends.
        let minutes = vec![None, None, Some(60.0), Some(120.0), Some(30.0), None];
        let (peak, mean) = slot_rates(&minutes, 4, PeakStatistic::MaxMinute);
        assert_eq!(peak, vec![2.0, 0.5]);
        // 180 requests over the slot's 240 s; 30 over the next 240 s: the
        // slots' volumes are the trace's requests, whatever the slot length.
        assert_eq!(mean, vec![0.75, 0.125]);
        let (q, _) = slot_rates(&minutes, 4, PeakStatistic::QuantileMinute { quantile: 0.5 });
        assert_eq!(q, vec![1.0, 0.5]);
        let (mean_peak, _) = slot_rates(&minutes, 4, PeakStatistic::Mean);
        assert_eq!(mean_peak, vec![1.5, 0.5]);
    }

    #[test]
    fn merged_sources_add_minute_by_minute() {
        let a = MinuteSeries {
            minutes: vec![Some(1.0), Some(2.0)],
        };
        let b = MinuteSeries {
            minutes: vec![None, Some(3.0), Some(4.0)],
        };
        assert_eq!(
            merge_series(&[(a, 1.0), (b, 2.0)]),
            vec![Some(1.0), Some(8.0), Some(8.0)]
        );
    }

    #[test]
    fn shaped_rates_anchor_the_trace_at_the_busiest_slot() {
        let curve = RateCurve {
            window_s: 600,
            rate_rps: vec![1.0, 3.0, 2.0, 2.0],
            cv: vec![0.0; 4],
            clients: 1,
        };
        // Two windows per slot: slot means 2 and 2, slot maxima 3 and 2.
        let (peak, mean) = shaped_rates(
            &curve,
            20,
            10.0,
            1.5,
            ShapeAnchor::Peak,
            PeakStatistic::MaxMinute,
        );
        assert_eq!(mean, vec![10.0, 10.0]);
        assert_eq!(peak, vec![22.5, 15.0]);
    }
}
