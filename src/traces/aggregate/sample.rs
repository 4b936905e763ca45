//! Requests drawn from an aggregate, for the replay (and, for an aggregate of
//! format version 1 or 2, which has no length sample, for the capacity
//! search).
//!
//! Lengths, format version 3: a fine (input bin, output bin) cell in
//! proportion to its requests in the whole log; then one of the length
//! sample's requests in that cell, uniformly (the sample is a uniform random
//! subset of the log, so within a cell its requests are the cell's own
//! lengths; when the log has no more requests than the sample holds, the
//! draws are the log's own lengths); a cell no sampled request lies in gets,
//! on each axis, a length inside its bin, uniform on the widest interval
//! centred on the cell's mean (its tokens / requests) that the bin holds.
//! Versions 1 and 2: a coarse cell in proportion to the pairs; in each axis a
//! fine bin inside that cell in proportion to the fine histogram (so every
//! fine bin keeps its share); a length inside the fine bin as above, centred
//! on the bin's mean.
//!
//! Arrivals of a minute, format version 3: each clock second's recorded
//! arrivals, at uniform times within the second (inside the first and last
//! arrivals). Versions 1 and 2 record only the minute's sum of squared
//! per-second counts: its count is spread over the K clock seconds from its
//! first to its last arrival's (all 60 when the offsets are unknown, version
//! 1), with the minute's dispersion over those seconds D = Σc²/n − n/K
//! (variance over mean of the per-second counts c; the seconds outside hold
//! none; (K − 1)/K for a Poisson stream's multinomial spread). When
//! D > (K − 1)/K the seconds' weights are drawn from a symmetric Dirichlet of
//! concentration k = (n − D′)/(K·(D′ − 1)) with D′ = D·K/(K − 1), whose
//! multinomial counts have expected dispersion D; otherwise a share D′ of the
//! requests go to random seconds and the rest round-robin, more regular than
//! Poisson. That keeps the minute's dispersion but not the order of its
//! seconds: a burst lasting ten seconds comes back as ten scattered busy
//! seconds, which a fleet absorbs more easily (docs/aggregate-format.md). In
//! every version the earliest and the latest arrival are then put at the
//! first and last arrival offsets, which versions 2 and 3 record exactly (a
//! minute of one or two requests is replayed exactly).

use super::bins::{coarse_of_fine, fine_bin, fine_range, COARSE_BINS};
use super::{JointLengths, MinuteRow, TierAggregate};
use rand::distributions::Distribution;
use rand::Rng;
use statrs::distribution::Gamma;
use std::collections::BTreeMap;

/// Cumulative weights for drawing an index in proportion to its weight.
#[derive(Debug, Clone, Default)]
struct Weighted {
    items: Vec<u32>,
    cumulative: Vec<u64>,
}

impl Weighted {
    fn push(&mut self, item: u32, weight: u64) {
        if weight > 0 {
            let total = self.cumulative.last().copied().unwrap_or(0);
            self.items.push(item);
            self.cumulative.push(total + weight);
        }
    }

    fn draw(&self, rng: &mut impl Rng) -> Option<u32> {
        let total = *self.cumulative.last()?;
        let x = rng.gen_range(0..total);
        let i = self.cumulative.partition_point(|&c| c <= x);
        Some(self.items[i])
    }
}

/// A length in fine bin `bin` whose requests have mean `mean`: uniform on the
/// widest interval centred on the mean inside the bin.
fn within_bin(bin: u32, mean: f64, rng: &mut impl Rng) -> u32 {
    let (lo, hi) = fine_range(bin).expect("a fine bin");
    let lo = f64::from(lo);
    let top = hi.map_or(f64::INFINITY, |h| f64::from(h - 1));
    let half = (mean - lo).min(top - mean).max(0.0);
    let x = mean + (2.0 * rng.gen::<f64>() - 1.0) * half;
    x.round().clamp(lo, top.min(f64::from(u32::MAX))) as u32
}

/// The mean of `tokens` over `requests` (the bin's lower edge when empty).
fn mean_in(bin: u32, requests: u64, tokens: u64) -> f64 {
    if requests > 0 {
        tokens as f64 / requests as f64
    } else {
        f64::from(fine_range(bin).expect("a fine bin").0)
    }
}

/// One axis's fine bins' means, and per coarse bin the fine bins inside it
/// weighted by requests (versions 1 and 2).
#[derive(Debug, Clone)]
struct Axis {
    means: Vec<f64>,
    by_coarse: Vec<Weighted>,
}

impl Axis {
    fn new(hist: &[super::BinTotal]) -> Self {
        let mut by_coarse = vec![Weighted::default(); COARSE_BINS as usize];
        let means = hist
            .iter()
            .enumerate()
            .map(|(b, total)| {
                by_coarse[coarse_of_fine(b as u32) as usize].push(b as u32, total.requests);
                mean_in(b as u32, total.requests, total.tokens)
            })
            .collect();
        Axis { means, by_coarse }
    }

    fn draw(&self, coarse: u32, rng: &mut impl Rng) -> u32 {
        let Some(bin) = self.by_coarse[coarse as usize].draw(rng) else {
            return 0;
        };
        within_bin(bin, self.means[bin as usize], rng)
    }
}

/// One fine cell (version 3): its bins, their means over the cell's
/// requests, and the sampled requests inside it.
#[derive(Debug, Clone)]
struct FineCell {
    input_bin: u32,
    input_mean: f64,
    output_bin: u32,
    output_mean: f64,
    sampled: Vec<SampledPair>,
}

/// A sampled request in a cell: (input, output, its row of the sample).
type SampledPair = (u32, u32, u32);

/// What a drawn cell stands for.
#[derive(Debug, Clone)]
enum Cells {
    /// Fine cells (version 3).
    Fine(Vec<FineCell>),
    /// Coarse cells (versions 1 and 2), index `input · COARSE_BINS + output`.
    Coarse { input: Axis, output: Axis },
}

/// Draws (input, output) token pairs from a tier's aggregate.
#[derive(Debug, Clone)]
pub struct LengthSampler {
    weights: Weighted,
    cells: Cells,
}

impl LengthSampler {
    /// The sampler of `tier`'s lengths.
    pub fn new(tier: &TierAggregate) -> Self {
        let mut weights = Weighted::default();
        let cells = match &tier.pairs {
            JointLengths::Fine(fine) => {
                let mut sampled: BTreeMap<(u32, u32), Vec<SampledPair>> = BTreeMap::new();
                for (row, r) in tier.sample.iter().flatten().enumerate() {
                    let (i, o) = (r.input_tokens, r.output_tokens);
                    sampled
                        .entry((fine_bin(i), fine_bin(o)))
                        .or_default()
                        .push((i, o, row as u32));
                }
                Cells::Fine(
                    fine.iter()
                        .filter(|(_, c)| c.requests > 0)
                        .enumerate()
                        .map(|(k, (&(i, o), c))| {
                            weights.push(k as u32, c.requests);
                            FineCell {
                                input_bin: i,
                                input_mean: mean_in(i, c.requests, c.input_tokens),
                                output_bin: o,
                                output_mean: mean_in(o, c.requests, c.output_tokens),
                                sampled: sampled.remove(&(i, o)).unwrap_or_default(),
                            }
                        })
                        .collect(),
                )
            }
            JointLengths::Coarse(coarse) => {
                for (cell, &n) in coarse.iter().enumerate() {
                    weights.push(cell as u32, n);
                }
                Cells::Coarse {
                    input: Axis::new(&tier.input),
                    output: Axis::new(&tier.output),
                }
            }
        };
        LengthSampler { weights, cells }
    }

    /// One (input tokens, output tokens) pair; (0, 0) for an empty tier.
    pub fn draw(&self, rng: &mut impl Rng) -> (u32, u32) {
        let (i, o, _) = self.draw_row(rng);
        (i, o)
    }

    /// [`Self::draw`], with the row of the tier's sample the pair is (`None`
    /// for a pair drawn inside the bins of a cell the sample misses).
    pub fn draw_row(&self, rng: &mut impl Rng) -> (u32, u32, Option<u32>) {
        let Some(cell) = self.weights.draw(rng) else {
            return (0, 0, None);
        };
        match &self.cells {
            Cells::Fine(cells) => {
                let c = &cells[cell as usize];
                if c.sampled.is_empty() {
                    let input = within_bin(c.input_bin, c.input_mean, rng);
                    (input, within_bin(c.output_bin, c.output_mean, rng), None)
                } else {
                    let (i, o, row) = c.sampled[rng.gen_range(0..c.sampled.len())];
                    (i, o, Some(row))
                }
            }
            Cells::Coarse { input, output } => {
                let i = input.draw(cell / COARSE_BINS, rng);
                (i, output.draw(cell % COARSE_BINS, rng), None)
            }
        }
    }
}

/// The within-minute dispersion D = Σc²/n − n/60 of a minute (0 when empty).
pub fn dispersion(m: &MinuteRow) -> f64 {
    if m.requests == 0 {
        return 0.0;
    }
    let n = m.requests as f64;
    m.second_sq_sum as f64 / n - n / 60.0
}

/// Arrival offsets in seconds from the minute's start, sorted, for the
/// minute's request count, dispersion and first and last arrivals (see the
/// module documentation).
pub fn minute_offsets(m: &MinuteRow, rng: &mut impl Rng) -> Vec<f64> {
    let n = m.requests;
    if n == 0 {
        return Vec::new();
    }
    // The arrivals lie in [first, last] seconds from the minute's start.
    let (first, last) = m.arrivals_us.map_or((0.0, 60.0), |(f, l)| {
        (f64::from(f) / 1e6, f64::from(l) / 1e6)
    });
    let from = first.floor() as u32;
    let seconds: Vec<u32> = if let Some(counts) = &m.seconds {
        // Version 3: each second's own arrivals.
        counts
            .iter()
            .enumerate()
            .flat_map(|(k, &c)| std::iter::repeat_n(k as u32 - from.min(k as u32), c as usize))
            .collect()
    } else {
        let width = (last.floor() as u32 + 1).min(60) - from;
        draw_seconds(n, m.second_sq_sum, width, rng)
    };
    let mut offsets: Vec<f64> = seconds
        .into_iter()
        .map(|s| {
            let lo = f64::from(from + s).max(first);
            let hi = f64::from(from + s + 1).min(last);
            lo + rng.gen::<f64>() * (hi - lo).max(0.0)
        })
        .collect();
    offsets.sort_by(f64::total_cmp);
    if m.arrivals_us.is_some() {
        let end = offsets.len() - 1;
        offsets[0] = first;
        offsets[end] = last;
    }
    offsets
}

/// The second (0 to `width` − 1) of each of `n` arrivals whose per-second
/// counts square-sum to `sq_sum`, spread over `width` seconds.
fn draw_seconds(n: u64, sq_sum: u64, width: u32, rng: &mut impl Rng) -> Vec<u32> {
    let mut seconds: Vec<u32> = Vec::with_capacity(n as usize);
    if width <= 1 {
        seconds.resize(n as usize, 0);
        return seconds;
    }
    let k_s = f64::from(width);
    let nf = n as f64;
    let d = (sq_sum as f64 / nf - nf / k_s) * k_s / (k_s - 1.0);
    if d > 1.0 {
        let k = ((nf - d) / (k_s * (d - 1.0))).max(1e-9);
        let weights: Vec<f64> = match Gamma::new(k, 1.0) {
            Ok(g) => (0..width).map(|_| g.sample(rng)).collect(),
            Err(_) => vec![0.0; width as usize],
        };
        let total: f64 = weights.iter().sum();
        if total > 0.0 && total.is_finite() {
            let mut cumulative = Vec::with_capacity(width as usize);
            let mut acc = 0.0;
            for w in &weights {
                acc += w / total;
                cumulative.push(acc);
            }
            for _ in 0..n {
                let x = rng.gen::<f64>();
                seconds.push(
                    cumulative
                        .partition_point(|&c| c <= x)
                        .min(width as usize - 1) as u32,
                );
            }
        } else {
            let s = rng.gen_range(0..width);
            seconds.resize(n as usize, s);
        }
    } else {
        let start = rng.gen_range(0..width);
        for i in 0..n {
            if rng.gen::<f64>() < d {
                seconds.push(rng.gen_range(0..width));
            } else {
                seconds.push((start + (i % u64::from(width)) as u32) % width);
            }
        }
    }
    seconds
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traces::aggregate::AggregateBuilder;
    use crate::traces::Request;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    fn minute(n: u64, sq: u64) -> MinuteRow {
        MinuteRow {
            minute_s: 0,
            requests: n,
            busiest_second: n,
            second_sq_sum: sq,
            ..MinuteRow::default()
        }
    }

    fn measured_dispersion(offsets: &[f64]) -> f64 {
        let mut c = [0u64; 60];
        for o in offsets {
            c[*o as usize] += 1;
        }
        let n = offsets.len() as u64;
        dispersion(&MinuteRow {
            requests: n,
            second_sq_sum: c.iter().map(|x| x * x).sum(),
            ..MinuteRow::default()
        })
    }

    #[test]
    fn minutes_keep_their_count_and_dispersion() {
        let mut rng = StdRng::seed_from_u64(1);
        // 600 requests: Poisson-like (D ≈ 1), bursty (D = 9), very regular.
        for (sq, target) in [(6600, 1.0), (11_400, 9.0), (6000, 0.0)] {
            let m = minute(600, sq);
            assert!((dispersion(&m) - target).abs() < 1e-9);
            let runs: Vec<f64> = (0..200)
                .map(|_| {
                    let o = minute_offsets(&m, &mut rng);
                    assert_eq!(o.len(), 600);
                    assert!(o.iter().all(|t| (0.0..60.0).contains(t)));
                    measured_dispersion(&o)
                })
                .collect();
            let mean = runs.iter().sum::<f64>() / runs.len() as f64;
            assert!(
                (mean - target).abs() < 0.15 * target.max(1.0),
                "D {target}: mean {mean}"
            );
        }
    }

    #[test]
    fn minutes_keep_their_first_and_last_arrival() {
        let mut rng = StdRng::seed_from_u64(3);
        // 200 requests between 10.25 s and 29.5 s; per-second counts of a
        // Poisson-like spread over those 20 seconds (D = 1): Σc² = n²/20 + n.
        let m = MinuteRow {
            requests: 200,
            busiest_second: 20,
            second_sq_sum: 2200,
            arrivals_us: Some((10_250_000, 29_500_000)),
            ..MinuteRow::default()
        };
        let mut measured = Vec::new();
        for _ in 0..200 {
            let o = minute_offsets(&m, &mut rng);
            assert_eq!(o.len(), 200);
            assert_eq!((o[0], o[199]), (10.25, 29.5));
            assert!(o.windows(2).all(|w| w[0] <= w[1]));
            let mut c = [0u64; 60];
            for t in &o {
                c[*t as usize] += 1;
            }
            measured.push(c.iter().map(|x| x * x).sum::<u64>() as f64);
        }
        let mean = measured.iter().sum::<f64>() / measured.len() as f64;
        assert!((mean / 2200.0 - 1.0).abs() < 0.05, "Σc² {mean}");
        // One and two requests are replayed exactly.
        for (n, f, l) in [(1, 7_000_000, 7_000_000), (2, 1_500_000, 58_250_000)] {
            let m = MinuteRow {
                requests: n,
                busiest_second: 1,
                second_sq_sum: n,
                arrivals_us: Some((f, l)),
                ..MinuteRow::default()
            };
            let o = minute_offsets(&m, &mut rng);
            assert_eq!(o.first(), Some(&(f64::from(f) / 1e6)));
            assert_eq!(o.last(), Some(&(f64::from(l) / 1e6)));
        }
    }

    #[test]
    fn sampled_lengths_keep_each_bins_share_and_mean() {
        let mut b = AggregateBuilder::new();
        for i in 0..10_000u32 {
            let input = 100 + (i * 37) % 4000;
            let output = if input > 2000 {
                20 + i % 7
            } else {
                300 + i % 50
            };
            b.push(
                "t",
                &Request {
                    arrival_s: f64::from(i),
                    input_tokens: input,
                    output_tokens: output,
                },
            );
        }
        let agg = b.finish();
        let t = &agg.tiers[0];
        let s = LengthSampler::new(t);
        let mut rng = StdRng::seed_from_u64(2);
        let draws: Vec<(u32, u32)> = (0..50_000).map(|_| s.draw(&mut rng)).collect();
        let mean_in = draws.iter().map(|d| f64::from(d.0)).sum::<f64>() / 50_000.0;
        let true_in = t.input.iter().map(|b| b.tokens).sum::<u64>() as f64 / 10_000.0;
        assert!(
            (mean_in / true_in - 1.0).abs() < 0.01,
            "{mean_in} vs {true_in}"
        );
        // The joint shape survives: long prompts have short outputs.
        assert!(draws.iter().filter(|d| d.0 > 2100).all(|d| d.1 < 32));
        assert!(draws.iter().filter(|d| d.0 < 1000).all(|d| d.1 >= 256));
    }
}
