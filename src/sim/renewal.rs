//! A renewal arrival stream at a chosen rate: gamma interarrival times of a
//! given coefficient of variation, lengths drawn from a sample (the capacity
//! search's workload).

use super::request::Arrival;
use rand::distributions::Distribution;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use statrs::distribution::Gamma;

/// `count` arrivals of tier 0 at `rate_rps` with gamma interarrival times of
/// coefficient of variation `cv` (1 = Poisson), lengths drawn from `lengths`.
pub(crate) fn renewal(
    rate_rps: f64,
    cv: f64,
    lengths: &[(u32, u32)],
    count: usize,
    seed: u64,
) -> Vec<Arrival> {
    let mut rng = StdRng::seed_from_u64(seed);
    let shape = 1.0 / (cv * cv).max(1e-6);
    let Ok(gamma) = Gamma::new(shape, 1.0) else {
        return Vec::new();
    };
    if lengths.is_empty() || rate_rps <= 0.0 {
        return Vec::new();
    }
    let mut t = 0.0;
    (0..count)
        .map(|_| {
            t += gamma.sample(&mut rng) / (shape * rate_rps);
            let (input, output) = lengths[rng.gen_range(0..lengths.len())];
            Arrival {
                time_s: t,
                tier: 0,
                input_tokens: input,
                output_tokens: output,
            }
        })
        .collect()
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
}
