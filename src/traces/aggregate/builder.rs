//! The aggregate of per-request traces, one request at a time. Memory holds
//! one 60-second counter row per tier and minute spanned (about 300 bytes;
//! 3 MB for a week of one tier), the fine pair cells holding requests (at
//! most 81 × 81) and the 16,384 requests of the length sample, whatever the
//! number of requests; traces of one tier may overlap in time and come in
//! any order.

use super::bins::fine_bin;
use super::{Aggregate, JointLengths, MinuteRow, SampleRow, TierAggregate};
use crate::traces::length_sample::{BottomK, SampledRequest};
use crate::traces::micros::arrival_us;
use crate::traces::stats::MAX_SPAN_S;
use crate::traces::Request;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
struct MinuteCounters {
    per_second: [u32; 60],
    input_tokens: u64,
    output_tokens: u64,
    /// Earliest and latest arrival, microseconds from the minute's start.
    first_us: u32,
    last_us: u32,
}

#[derive(Debug, Clone)]
struct TierBuilder {
    minutes: BTreeMap<i64, MinuteCounters>,
    lengths: TierAggregate,
    sample: BottomK,
}

/// Builds an [`Aggregate`] from requests tagged with their tier.
#[derive(Debug, Clone, Default)]
pub struct AggregateBuilder {
    tiers: BTreeMap<String, TierBuilder>,
}

impl AggregateBuilder {
    /// An empty aggregate.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one request of `tier`.
    pub fn push(&mut self, tier: &str, r: &Request) {
        if !self.tiers.contains_key(tier) {
            self.tiers.insert(
                tier.to_string(),
                TierBuilder {
                    minutes: BTreeMap::new(),
                    lengths: TierAggregate::empty(tier),
                    sample: BottomK::new(),
                },
            );
        }
        let t = self.tiers.get_mut(tier).expect("inserted above");
        let second = r.arrival_s.floor() as i64;
        let minute_s = second.div_euclid(60) * 60;
        let us = arrival_us(r.arrival_s);
        let offset_us = (us - minute_s * 1_000_000) as u32;
        let minute = t.minutes.entry(minute_s).or_insert(MinuteCounters {
            per_second: [0; 60],
            input_tokens: 0,
            output_tokens: 0,
            first_us: offset_us,
            last_us: offset_us,
        });
        minute.first_us = minute.first_us.min(offset_us);
        minute.last_us = minute.last_us.max(offset_us);
        minute.per_second[second.rem_euclid(60) as usize] += 1;
        minute.input_tokens += u64::from(r.input_tokens);
        minute.output_tokens += u64::from(r.output_tokens);
        let (i, o) = (r.input_tokens, r.output_tokens);
        let lengths = &mut t.lengths;
        for (hist, n) in [(&mut lengths.input, i), (&mut lengths.output, o)] {
            let bin = &mut hist[fine_bin(n) as usize];
            bin.requests += 1;
            bin.tokens += u64::from(n);
        }
        if let JointLengths::Fine(cells) = &mut lengths.pairs {
            let cell = cells.entry((fine_bin(i), fine_bin(o))).or_default();
            cell.requests += 1;
            cell.input_tokens += u64::from(i);
            cell.output_tokens += u64::from(o);
        }
        t.sample.push(us, i, o);
    }

    /// The first tier whose minutes span more than 400 days, with its span in
    /// days (a stray timestamp would otherwise make a huge table).
    pub fn too_long(&self) -> Option<(&str, f64)> {
        self.tiers.iter().find_map(|(name, t)| {
            let first = *t.minutes.keys().next()?;
            let last = *t.minutes.keys().next_back()?;
            ((last - first) as f64 > MAX_SPAN_S)
                .then(|| (name.as_str(), (last - first) as f64 / 86_400.0))
        })
    }

    /// Tier `tier`'s length sample so far, in rank order.
    pub(crate) fn sample_requests(&self, tier: &str) -> Vec<SampledRequest> {
        self.tiers
            .get(tier)
            .map_or_else(Vec::new, |t| t.sample.sorted())
    }

    /// The aggregate: every minute from each tier's first to its last, empty
    /// minutes included with zero counts.
    pub fn finish(self) -> Aggregate {
        let tiers = self
            .tiers
            .into_values()
            .map(|t| {
                let mut out = t.lengths;
                out.sample = Some(
                    t.sample
                        .sorted()
                        .into_iter()
                        .map(|r| SampleRow {
                            key: r.key,
                            input_tokens: r.input_tokens,
                            output_tokens: r.output_tokens,
                        })
                        .collect(),
                );
                let (Some(&first), Some(&last)) =
                    (t.minutes.keys().next(), t.minutes.keys().next_back())
                else {
                    return out;
                };
                out.minutes = (first..=last)
                    .step_by(60)
                    .map(|minute_s| match t.minutes.get(&minute_s) {
                        None => MinuteRow {
                            minute_s,
                            seconds: Some([0; 60]),
                            ..MinuteRow::default()
                        },
                        Some(m) => MinuteRow {
                            minute_s,
                            requests: m.per_second.iter().map(|&c| u64::from(c)).sum(),
                            input_tokens: m.input_tokens,
                            output_tokens: m.output_tokens,
                            busiest_second: m.per_second.iter().copied().max().map_or(0, u64::from),
                            second_sq_sum: m
                                .per_second
                                .iter()
                                .map(|&c| u64::from(c) * u64::from(c))
                                .sum(),
                            arrivals_us: Some((m.first_us, m.last_us)),
                            seconds: Some(m.per_second),
                        },
                    })
                    .collect();
                out
            })
            .collect();
        Aggregate { tiers }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traces::aggregate::BinTotal;

    fn req(t: f64, i: u32, o: u32) -> Request {
        Request {
            arrival_s: t,
            input_tokens: i,
            output_tokens: o,
        }
    }

    #[test]
    fn minutes_are_contiguous_and_count_seconds() {
        let mut b = AggregateBuilder::new();
        // Minute 60: three in second 61, one in 62; minute 120 empty; one at 185.
        for t in [61.0, 61.5, 61.9, 62.2, 185.0] {
            b.push("a", &req(t, 10, 3));
        }
        let agg = b.finish();
        let m = &agg.tiers[0].minutes;
        assert_eq!(m.len(), 3);
        assert_eq!(
            m[0],
            MinuteRow {
                minute_s: 60,
                requests: 4,
                input_tokens: 40,
                output_tokens: 12,
                busiest_second: 3,
                second_sq_sum: 10,
                arrivals_us: Some((1_000_000, 2_200_000)),
                seconds: Some(std::array::from_fn(|k| [0, 3, 1]
                    .get(k)
                    .copied()
                    .unwrap_or(0))),
            }
        );
        assert_eq!(m[1].arrivals_us, None);
        assert_eq!(m[2].arrivals_us, Some((5_000_000, 5_000_000)));
        assert_eq!(agg.tiers[0].span_s(), 124.0);
        assert_eq!(m[1].requests, 0);
        assert_eq!(m[2].minute_s, 180);
        assert_eq!(
            agg.tiers[0].input[9],
            BinTotal {
                requests: 5,
                tokens: 50
            }
        );
        assert_eq!(agg.tiers[0].requests(), 5);
    }

    #[test]
    fn overlapping_traces_of_a_tier_add_second_by_second() {
        let mut one = AggregateBuilder::new();
        let mut two = AggregateBuilder::new();
        let times = [0.1, 0.2, 5.0, 59.9];
        for t in times {
            one.push("a", &req(t, 1, 1));
        }
        // The same requests split over two "files", the second one earlier.
        for t in &times[2..] {
            two.push("a", &req(*t, 1, 1));
        }
        for t in &times[..2] {
            two.push("a", &req(*t, 1, 1));
        }
        assert_eq!(one.finish(), two.finish());
    }

    #[test]
    fn tiers_are_kept_apart_and_sorted() {
        let mut b = AggregateBuilder::new();
        b.push("z", &req(0.0, 1, 1));
        b.push("a", &req(0.0, 5000, 1));
        let agg = b.finish();
        assert_eq!(agg.tiers[0].tier, "a");
        assert_eq!(agg.tiers[1].requests(), 1);
        let JointLengths::Fine(cells) = &agg.tiers[0].pairs else {
            panic!("a built aggregate has fine pairs");
        };
        let cell = cells[&(fine_bin(5000), 1)];
        assert_eq!(
            (cell.requests, cell.input_tokens, cell.output_tokens),
            (1, 5000, 1)
        );
        assert_eq!(agg.tiers[0].sample.as_ref().map(Vec::len), Some(1));
    }
}
