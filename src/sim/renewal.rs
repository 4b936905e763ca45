//! A renewal arrival stream at a chosen rate: gamma interarrival times of a
//! given coefficient of variation, lengths drawn from a sample (the capacity
//! search's workload).

use super::request::Arrival;
use rand::distributions::Distribution;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use statrs::distribution::Gamma;

/// `count` arrivals of tier 0 at `rate_rps` with gamma interarrival times of
/// coefficient of variation `cv` (1 = Poisson), lengths drawn from `lengths`
/// (each arrival's chain the index of its draw).
pub(crate) fn renewal(
    rate_rps: f64,
    cv: f64,
    lengths: &[(u32, u32)],
    count: usize,
    seed: u64,
) -> Vec<Arrival> {
    RenewalStream::new(cv, lengths, seed).at_rate(rate_rps, count)
}

/// One seeded renewal stream at every rate: its draws (a gamma variate of
/// mean `shape` for each gap, then a length) do not depend on the rate,
/// which only divides the gaps, so they are drawn once, as far as a run
/// has asked, and each rate's arrivals are computed from them exactly as
/// [`renewal`] computes them.
pub(crate) struct RenewalStream<'a> {
    lengths: &'a [(u32, u32)],
    /// The gamma distribution of unit scale and its shape 1/CV²; `None`
    /// when no such distribution exists.
    gamma: Option<(Gamma, f64)>,
    rng: StdRng,
    /// The draws so far: (gamma variate, index into `lengths`).
    draws: Vec<(f64, u32)>,
}

impl<'a> RenewalStream<'a> {
    /// The stream of coefficient of variation `cv` over `lengths` from `seed`.
    pub(crate) fn new(cv: f64, lengths: &'a [(u32, u32)], seed: u64) -> Self {
        let shape = 1.0 / (cv * cv).max(1e-6);
        RenewalStream {
            lengths,
            gamma: Gamma::new(shape, 1.0).ok().map(|g| (g, shape)),
            rng: StdRng::seed_from_u64(seed),
            draws: Vec::new(),
        }
    }

    /// The first `count` arrivals of tier 0 at `rate_rps`.
    pub(crate) fn at_rate(&mut self, rate_rps: f64, count: usize) -> Vec<Arrival> {
        let Some((gamma, shape)) = self.gamma else {
            return Vec::new();
        };
        if self.lengths.is_empty() || rate_rps <= 0.0 {
            return Vec::new();
        }
        while self.draws.len() < count {
            let gap = gamma.sample(&mut self.rng);
            let drawn = self.rng.gen_range(0..self.lengths.len());
            self.draws.push((gap, drawn as u32));
        }
        let mut t = 0.0;
        self.draws[..count]
            .iter()
            .map(|&(gap, drawn)| {
                t += gap / (shape * rate_rps);
                let (input, output) = self.lengths[drawn as usize];
                Arrival {
                    time_s: t,
                    tier: 0,
                    input_tokens: input,
                    output_tokens: output,
                    // The sampled request's index: where a replica that
                    // knows the sample's prefix hits finds its own.
                    chain: drawn,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renewal_has_the_requested_rate() {
        let a = renewal(4.0, 3.0, &[(100, 10)], 20_000, 3);
        let rate = a.len() as f64 / a.last().unwrap().time_s;
        assert!((rate - 4.0).abs() < 0.3, "{rate}");
    }

    #[test]
    fn one_stream_at_several_rates_and_lengths_is_each_fresh_stream() {
        let lengths = [(100, 10), (2_000, 300), (40, 900)];
        let mut stream = RenewalStream::new(1.7, &lengths, 9);
        for (rate, count) in [(3.0, 500), (0.25, 1_200), (40.0, 800), (3.0, 1_200)] {
            let fresh = renewal(rate, 1.7, &lengths, count, 9);
            let shared = stream.at_rate(rate, count);
            assert_eq!(shared.len(), count);
            for (a, b) in shared.iter().zip(&fresh) {
                assert_eq!(a.time_s.to_bits(), b.time_s.to_bits());
                assert_eq!(
                    (a.input_tokens, a.output_tokens),
                    (b.input_tokens, b.output_tokens)
                );
            }
        }
    }
}
