//! Small statistics used across the pipeline: nearest-rank percentiles,
//! percentiles of integer histograms, and a streaming mean/variance.

/// Nearest-rank percentile (`q` in [0, 1]) of values sorted ascending:
/// the smallest value with at least `q` of the values at or below it.
/// Returns 0 for an empty slice.
pub(crate) fn percentile_sorted(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Nearest-rank percentile of a histogram where `counts[v]` is how often the
/// integer value `v` occurs. Returns 0 for an empty histogram.
pub(crate) fn percentile_histogram(counts: &[u64], q: f64) -> u64 {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return 0;
    }
    let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
    let mut seen = 0;
    for (value, &count) in counts.iter().enumerate() {
        seen += count;
        if seen >= rank {
            return value as u64;
        }
    }
    (counts.len() - 1) as u64
}

/// Streaming mean and variance (Welford).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RunningMoments {
    count: u64,
    mean: f64,
    m2: f64,
}

impl RunningMoments {
    /// Adds one value.
    pub(crate) fn push(&mut self, x: f64) {
        self.count += 1;
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x - self.mean);
    }

    /// Mean (0 when empty).
    pub(crate) fn mean(&self) -> f64 {
        self.mean
    }

    /// Population standard deviation (0 with fewer than two values).
    pub(crate) fn std_dev(&self) -> f64 {
        if self.count < 2 {
            0.0
        } else {
            (self.m2 / self.count as f64).sqrt()
        }
    }

    /// Coefficient of variation: standard deviation over mean (0 when the mean is 0).
    pub(crate) fn cv(&self) -> f64 {
        if self.mean > 0.0 {
            self.std_dev() / self.mean
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile_sorted(&v, 0.5), 50.0);
        assert_eq!(percentile_sorted(&v, 0.99), 99.0);
        assert_eq!(percentile_sorted(&v, 1.0), 100.0);
        assert_eq!(percentile_sorted(&v, 0.0), 1.0);
        assert_eq!(percentile_sorted(&[], 0.5), 0.0);
    }

    #[test]
    fn histogram_percentiles_match_sorted_ones() {
        let values = [3u64, 3, 7, 1, 9, 9, 9, 2];
        let mut counts = vec![0u64; 10];
        for v in values {
            counts[v as usize] += 1;
        }
        let mut sorted: Vec<f64> = values.iter().map(|&v| v as f64).collect();
        sorted.sort_by(f64::total_cmp);
        for q in [0.1, 0.25, 0.5, 0.9, 0.99, 1.0] {
            assert_eq!(
                percentile_histogram(&counts, q) as f64,
                percentile_sorted(&sorted, q)
            );
        }
    }

    #[test]
    fn moments_of_a_known_series() {
        let mut m = RunningMoments::default();
        for x in [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0] {
            m.push(x);
        }
        assert_eq!(m.mean(), 5.0);
        assert_eq!(m.std_dev(), 2.0);
        assert_eq!(m.cv(), 0.4);
    }
}
