//! Log-bucketed histogram of latencies: constant memory, percentiles within
//! 1% (relative) of the exact value, mergeable.

use serde::{Deserialize, Serialize};

/// Bucket i holds values in [MIN_MS × RATIO^i, MIN_MS × RATIO^(i+1)).
const MIN_MS: f64 = 0.001;
const RATIO: f64 = 1.01;
const BUCKETS: usize = 3000; // up to 0.001 × 1.01^3000 ≈ 9.6e9 ms

/// Counts of latencies in milliseconds (stored as [`Stored`]: the counts
/// from the first to the last bucket that holds any, runs of zeros in one
/// number).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "Stored", try_from = "Stored")]
pub(crate) struct Histogram {
    counts: Vec<u64>,
    total: u64,
    max_ms: f64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; BUCKETS],
            total: 0,
            max_ms: 0.0,
        }
    }
}

/// Bucket of `value_ms` by its definition: ⌊ln(value / MIN_MS) / ln RATIO⌋,
/// at most the last (0 at or below `MIN_MS`).
fn bucket_by_log(value_ms: f64) -> usize {
    if value_ms <= MIN_MS {
        return 0;
    }
    ((value_ms / MIN_MS).ln() / RATIO.ln())
        .floor()
        .min((BUCKETS - 1) as f64) as usize
}

/// Bits of a positive float's exponent and leading mantissa bits that pick
/// its first guess: 7 mantissa bits, 128 steps an octave, each narrower
/// (0.54 of a bucket) than a bucket.
const GUESS_SHIFT: u32 = 52 - 7;

/// The edges [`bucket_by_log`] draws, found once: `edges[i]` (i ≥ 1) is the
/// least value whose bucket is i or more, and `guess[k − first_key]` the
/// bucket of the least value whose bits shifted by [`GUESS_SHIFT`] are k.
/// A value's bucket is its guess, moved up past the edges at or below it
/// (one step at most): the definition's result, without a logarithm.
struct Edges {
    edges: Vec<f64>,
    first_key: u64,
    guess: Vec<u16>,
}

impl Edges {
    fn new() -> Self {
        let mut edges = vec![MIN_MS; BUCKETS];
        for (i, edge) in edges.iter_mut().enumerate().skip(1) {
            *edge = least_with_bucket(i);
        }
        let first_key = MIN_MS.to_bits() >> GUESS_SHIFT;
        let last_key = edges[BUCKETS - 1].to_bits() >> GUESS_SHIFT;
        let guess = (first_key..=last_key)
            .map(|k| {
                let lower = f64::from_bits(k << GUESS_SHIFT);
                if lower <= MIN_MS {
                    0
                } else {
                    (edges[1..].partition_point(|&e| e <= lower)) as u16
                }
            })
            .collect();
        Edges {
            edges,
            first_key,
            guess,
        }
    }

    fn bucket(&self, value_ms: f64) -> usize {
        if value_ms <= MIN_MS {
            return 0;
        }
        // Positive floats (and NaN, past every key) order like their bits.
        let key = value_ms.to_bits() >> GUESS_SHIFT;
        let Some(&g) = key
            .checked_sub(self.first_key)
            .and_then(|k| self.guess.get(k as usize))
        else {
            return BUCKETS - 1;
        };
        let mut b = usize::from(g);
        while b + 1 < BUCKETS && value_ms >= self.edges[b + 1] {
            b += 1;
        }
        b
    }
}

/// The least value whose [`bucket_by_log`] is `i` or more: bisection over
/// the bit patterns around MIN_MS × RATIO^i, widened until it brackets it.
fn least_with_bucket(i: usize) -> f64 {
    let near = MIN_MS * RATIO.powi(i as i32);
    let mut width = 1e-12;
    loop {
        let lo = (near * (1.0 - width)).max(MIN_MS).to_bits();
        let hi = (near * (1.0 + width)).to_bits();
        let below = |b: u64| bucket_by_log(f64::from_bits(b)) < i;
        if below(lo) && !below(hi) {
            let (mut lo, mut hi) = (lo, hi);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if below(mid) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            return f64::from_bits(hi);
        }
        width *= 1e3;
    }
}

static EDGES: std::sync::OnceLock<Edges> = std::sync::OnceLock::new();

impl Histogram {
    fn bucket(value_ms: f64) -> usize {
        EDGES.get_or_init(Edges::new).bucket(value_ms)
    }

    /// Adds one value.
    pub(crate) fn record(&mut self, value_ms: f64) {
        self.counts[Self::bucket(value_ms)] += 1;
        self.total += 1;
        self.max_ms = self.max_ms.max(value_ms);
    }

    /// The `q` quantile (0-1): the upper edge of the bucket holding it, capped
    /// at the largest value seen, so never below the exact value by more than
    /// rounding and at most 1% above it. 0 when empty.
    pub(crate) fn quantile_ms(&self, q: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return (MIN_MS * RATIO.powi(i as i32 + 1)).min(self.max_ms);
            }
        }
        self.max_ms
    }

    /// Adds another histogram's counts.
    pub(crate) fn merge(&mut self, other: &Histogram) {
        // `total` is the sum of the counts: an empty histogram adds none
        // (a slot's replay of one tier merges every tier's tally).
        if other.total > 0 {
            for (a, b) in self.counts.iter_mut().zip(&other.counts) {
                *a += b;
            }
        }
        self.total += other.total;
        self.max_ms = self.max_ms.max(other.max_ms);
    }
}

/// A histogram as the on-disk cache holds it: its buckets from `first` on,
/// up to the last one that holds a value, a run of n > 1 empty buckets
/// written as −n.
#[derive(Serialize, Deserialize)]
pub(crate) struct Stored {
    first: usize,
    counts: Vec<i64>,
    max_ms: f64,
}

impl From<Histogram> for Stored {
    fn from(h: Histogram) -> Self {
        let first = h.counts.iter().position(|&c| c > 0).unwrap_or(0);
        let last = h
            .counts
            .iter()
            .rposition(|&c| c > 0)
            .map_or(first, |l| l + 1);
        let mut counts: Vec<i64> = Vec::new();
        let mut zeros = 0i64;
        for &c in &h.counts[first..last] {
            if c == 0 {
                zeros += 1;
                continue;
            }
            match zeros {
                0 => {}
                1 => counts.push(0),
                n => counts.push(-n),
            }
            zeros = 0;
            counts.push(i64::try_from(c).unwrap_or(i64::MAX));
        }
        Stored {
            first,
            counts,
            max_ms: h.max_ms,
        }
    }
}

impl TryFrom<Stored> for Histogram {
    type Error = String;

    fn try_from(s: Stored) -> Result<Self, String> {
        let mut counts = vec![0; BUCKETS];
        let mut i = s.first;
        for c in s.counts {
            let (value, run) = if c < 0 {
                (0, c.unsigned_abs())
            } else {
                (c.unsigned_abs(), 1)
            };
            let end = i.saturating_add(usize::try_from(run).unwrap_or(usize::MAX));
            if end > BUCKETS {
                return Err(format!("buckets from {} run past {BUCKETS}", s.first));
            }
            counts[i..end].fill(value);
            i = end;
        }
        Ok(Histogram {
            total: counts.iter().sum(),
            counts,
            max_ms: s.max_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn the_bucket_from_the_edges_is_the_bucket_by_its_logarithm() {
        let edges = EDGES.get_or_init(Edges::new);
        let next = |v: f64, ulps: i64| f64::from_bits((v.to_bits() as i64 + ulps) as u64);
        // Every edge and the floats beside it.
        for &e in &edges.edges[1..] {
            for ulps in -3..=3 {
                let v = next(e, ulps);
                assert_eq!(Histogram::bucket(v), bucket_by_log(v), "{v:e}");
            }
        }
        // Values spread over every bucket, and the odd ones.
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..200_000 {
            let v = MIN_MS * 10f64.powf(rng.gen::<f64>() * 14.0 - 1.0);
            assert_eq!(Histogram::bucket(v), bucket_by_log(v), "{v:e}");
        }
        for v in [
            f64::NEG_INFINITY,
            -1.0,
            -0.0,
            0.0,
            1e-300,
            MIN_MS,
            next(MIN_MS, 1),
            1e12,
            1e300,
            f64::MAX,
            f64::INFINITY,
            f64::NAN,
        ] {
            assert_eq!(Histogram::bucket(v), bucket_by_log(v), "{v:e}");
        }
    }

    #[test]
    fn quantiles_within_one_percent() {
        let mut h = Histogram::default();
        for i in 1..=10_000 {
            h.record(f64::from(i) * 0.37);
        }
        for q in [0.5, 0.9, 0.99, 0.999] {
            let exact = (q * 10_000.0_f64).ceil() * 0.37;
            let got = h.quantile_ms(q);
            assert!(
                got >= exact * 0.999 && got <= exact * 1.0101,
                "q{q}: {got} vs {exact}"
            );
        }
        assert_eq!(h.quantile_ms(1.0), 3700.0);
        assert_eq!(Histogram::default().quantile_ms(0.99), 0.0);
    }

    #[test]
    fn stored_as_its_busy_buckets_and_read_back_the_same() {
        let mut h = Histogram::default();
        for v in [0.5, 12.25, 12.3, 900.0] {
            h.record(v);
        }
        // Buckets 624 to 1306: the zeros before the first are not written,
        // the runs between as one number each.
        let text = serde_json::to_string(&h).unwrap();
        assert!(text.len() < 100, "{} bytes: {text}", text.len());
        let back: Histogram = serde_json::from_str(&text).unwrap();
        assert_eq!(back, h);
        // Gaps of one, two and three empty buckets.
        let mut gaps = Histogram::default();
        for i in [0, 2, 5, 9, 10] {
            gaps.record(100.0 * RATIO.powi(i) * 1.001);
        }
        let back: Histogram = serde_json::from_str(&serde_json::to_string(&gaps).unwrap()).unwrap();
        assert_eq!(back, gaps);
        h.record(1e12);
        let back: Histogram = serde_json::from_str(&serde_json::to_string(&h).unwrap()).unwrap();
        assert!(back == h && back.quantile_ms(0.5) == h.quantile_ms(0.5));
        let empty: Histogram =
            serde_json::from_str(&serde_json::to_string(&Histogram::default()).unwrap()).unwrap();
        assert_eq!(empty, Histogram::default());
        assert!(
            serde_json::from_str::<Histogram>(r#"{"first":2999,"counts":[1,-2],"max_ms":1}"#)
                .is_err()
        );
    }

    #[test]
    fn a_merge_is_the_histogram_of_both_sets_of_values() {
        let (a_values, b_values) = ([3.0, 250.0, 250.5, 9e4], [0.5, 250.2, 1e7]);
        let mut a = Histogram::default();
        let mut both = Histogram::default();
        for v in a_values {
            a.record(v);
            both.record(v);
        }
        let mut b = Histogram::default();
        for v in b_values {
            b.record(v);
            both.record(v);
        }
        let before = a.clone();
        a.merge(&Histogram::default());
        assert_eq!(a, before, "an empty histogram adds nothing");
        a.merge(&b);
        assert_eq!(a, both);
        let mut empty = Histogram::default();
        empty.merge(&b);
        assert_eq!(empty, b);
    }
}
