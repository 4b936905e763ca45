//! The prompts of a benchmark, as `vllm bench serve` makes them: lengths
//! from its random dataset (`--random-input-len`, `--random-output-len`,
//! `--random-range-ratio r`: each drawn uniformly from [⌊L (1 − r)⌋,
//! ⌊L (1 + r)⌋], at least 1) or from a trace, and send times from the
//! request rate (`inf`: all at 0; a rate: a Poisson process, or gamma gaps
//! with `--burstiness`; `trace`: the trace's own arrivals from its first).

use super::Prompt;
use crate::traces::block_chains::NO_CHAIN;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use statrs::distribution::Gamma;

/// When the client sends each prompt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum SendTimes {
    /// All at once (`--request-rate inf`).
    AllAtOnce,
    /// A Poisson process of this many requests per second.
    Poisson(f64),
    /// Gamma-distributed gaps of this shape at this mean rate (vLLM's
    /// `--burstiness`).
    Gamma { rate: f64, shape: f64 },
    /// The trace's arrival times, from its first.
    Trace,
}

/// `n` (input, output) lengths of the random dataset, seeded.
pub(crate) fn random_lengths(
    n: usize,
    input_len: u32,
    output_len: u32,
    range_ratio: f64,
    seed: u64,
) -> Vec<(u32, u32)> {
    let mut rng = StdRng::seed_from_u64(seed);
    let range = |len: u32| {
        let l = f64::from(len);
        let lo = (l * (1.0 - range_ratio)).floor().max(1.0) as u32;
        let hi = (l * (1.0 + range_ratio)).floor().max(1.0) as u32;
        (lo, hi.max(lo))
    };
    let (ilo, ihi) = range(input_len);
    let (olo, ohi) = range(output_len);
    (0..n)
        .map(|_| (rng.gen_range(ilo..=ihi), rng.gen_range(olo..=ohi)))
        .collect()
}

/// The prompts of `lengths` sent at `times` (with the trace's arrival
/// seconds, when `times` is [`SendTimes::Trace`]), seeded.
pub(crate) fn prompts(
    lengths: &[(u32, u32)],
    times: SendTimes,
    trace_arrivals_s: &[f64],
    seed: u64,
) -> Vec<Prompt> {
    let mut rng = StdRng::seed_from_u64(seed ^ 0x0005_eed0_fa11);
    let first = trace_arrivals_s.first().copied().unwrap_or(0.0);
    let mut t = 0.0;
    // vLLM's gaps for --burstiness: gamma(shape = burstiness, scale =
    // 1 / (rate × burstiness)), mean 1/rate, CV 1/√shape.
    let gamma = match times {
        SendTimes::Gamma { shape, .. } => Gamma::new(shape, 1.0).ok(),
        _ => None,
    };
    lengths
        .iter()
        .enumerate()
        .map(|(i, &(input_tokens, output_tokens))| {
            let send_s = match times {
                SendTimes::AllAtOnce => 0.0,
                SendTimes::Poisson(rate) => {
                    let at = t;
                    let u: f64 = rng.gen::<f64>();
                    t += -(1.0 - u).ln() / rate;
                    at
                }
                SendTimes::Gamma { rate, shape } => {
                    let at = t;
                    let gap = gamma.as_ref().map_or(1.0, |g| rng.sample(g));
                    t += gap / (shape * rate);
                    at
                }
                SendTimes::Trace => {
                    (trace_arrivals_s.get(i).copied().unwrap_or(first) - first).max(0.0)
                }
            };
            Prompt {
                input_tokens,
                output_tokens,
                send_s,
                chain: NO_CHAIN,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_lengths_stay_in_vllms_range() {
        let l = random_lengths(2_000, 1000, 100, 0.5, 7);
        assert!(l
            .iter()
            .all(|&(i, o)| (500..=1500).contains(&i) && (50..=150).contains(&o)));
        let fixed = random_lengths(10, 1000, 100, 0.0, 7);
        assert!(fixed.iter().all(|&l| l == (1000, 100)));
        assert_eq!(
            random_lengths(10, 1000, 100, 0.5, 7),
            random_lengths(10, 1000, 100, 0.5, 7)
        );
    }

    #[test]
    fn a_poisson_client_sends_at_its_rate() {
        let p = prompts(&vec![(10, 10); 20_000], SendTimes::Poisson(5.0), &[], 1);
        let span = p.last().unwrap().send_s;
        assert!((20_000.0 / span - 5.0).abs() < 0.15, "{}", 20_000.0 / span);
        assert!(p.windows(2).all(|w| w[0].send_s <= w[1].send_s));
        let at_once = prompts(&[(1, 1), (2, 2)], SendTimes::AllAtOnce, &[], 1);
        assert!(at_once.iter().all(|p| p.send_s == 0.0));
        let traced = prompts(&[(1, 1), (2, 2)], SendTimes::Trace, &[100.0, 102.5], 1);
        assert_eq!((traced[0].send_s, traced[1].send_s), (0.0, 2.5));
    }
}
