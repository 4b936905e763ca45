//! The length sample the capacity search runs on: of a tier's requests, the
//! [`LENGTH_SAMPLE_SIZE`] whose *sample key* is smallest (a bottom-k sample).
//!
//! The key is a fixed hash of the request's arrival microsecond and its two
//! lengths, computed with integer arithmetic modulo the prime 2³¹ − 1 that
//! every SQL engine evaluates alike (`sql/aggregate.sql` computes the same
//! keys), so the sample is one set of real requests whether it is taken from
//! a trace while it streams past, from the trace's aggregate, or by a
//! warehouse over billions of rows — and the capacity search runs on the same
//! requests in each case. Keys are spread uniformly and independently of the
//! lengths, so the sample is a uniform random sample without replacement;
//! unlike a reservoir it does not depend on the order of the rows, and the
//! samples of two parts of a log merge into the sample of the whole (the
//! smallest keys of their union).
//!
//! ```text
//! P = 2³¹ − 1 = 2,147,483,647
//! a = ((us mod P) + P) mod P             us: arrival in whole microseconds
//! b = (a·1,103,515,245 + (input mod P)) mod P
//! c = (b·1,664,525 + (output mod P)) mod P
//! d = (c·((c + 1,013,904,223) mod P)) mod P
//! key = (d·48,271 + b) mod P
//! ```
//!
//! Every product is of two numbers below 2³¹, so below 2⁶², and no sum
//! reaches 2⁶³: the figures are exact in 64-bit integers. Requests are ranked
//! by (key, us, input, output); the first [`LENGTH_SAMPLE_SIZE`] form the
//! sample, in that order.

use std::collections::BinaryHeap;

/// Requests in the length sample of a tier (all of them when it has fewer).
pub const LENGTH_SAMPLE_SIZE: usize = 16_384;

/// The modulus of the sample key, the prime 2³¹ − 1.
pub const SAMPLE_KEY_MODULUS: i64 = 2_147_483_647;

/// The sample key of a request arriving at `arrival_us` (whole microseconds,
/// [`super::micros::arrival_us`]) with these lengths (module documentation).
pub fn sample_key(arrival_us: i64, input_tokens: u32, output_tokens: u32) -> u32 {
    const P: i64 = SAMPLE_KEY_MODULUS;
    let a = (arrival_us % P + P) % P;
    let b = (a * 1_103_515_245 + i64::from(input_tokens) % P) % P;
    let c = (b * 1_664_525 + i64::from(output_tokens) % P) % P;
    let d = (c * ((c + 1_013_904_223) % P)) % P;
    ((d * 48_271 + b) % P) as u32
}

/// One request of the sample, with its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct SampledRequest {
    pub key: u32,
    pub arrival_us: i64,
    pub input_tokens: u32,
    pub output_tokens: u32,
}

/// The smallest-key requests seen so far: memory for [`LENGTH_SAMPLE_SIZE`]
/// requests, whatever the number pushed, in any order.
#[derive(Debug, Clone, Default)]
pub struct BottomK {
    heap: BinaryHeap<SampledRequest>,
}

impl BottomK {
    /// An empty sample.
    pub fn new() -> Self {
        Self::default()
    }

    /// Offers one request.
    pub fn push(&mut self, arrival_us: i64, input_tokens: u32, output_tokens: u32) {
        let r = SampledRequest {
            key: sample_key(arrival_us, input_tokens, output_tokens),
            arrival_us,
            input_tokens,
            output_tokens,
        };
        if self.heap.len() < LENGTH_SAMPLE_SIZE {
            self.heap.push(r);
        } else if let Some(mut top) = self.heap.peek_mut() {
            if r < *top {
                *top = r;
            }
        }
    }

    /// The sample in rank order (key, arrival, input, output).
    pub fn sorted(&self) -> Vec<SampledRequest> {
        let mut v = self.heap.clone().into_vec();
        v.sort_unstable();
        v
    }

    /// The sample's (input, output) pairs in rank order.
    pub fn pairs(&self) -> Vec<(u32, u32)> {
        self.sorted()
            .into_iter()
            .map(|r| (r.input_tokens, r.output_tokens))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_the_documented_arithmetic() {
        // By hand: us = 0, input 0, output 0 gives a = b = c = 0, d = 0, key 0.
        assert_eq!(sample_key(0, 0, 0), 0);
        // us = 1: a = 1, b = 1,103,515,245, c = (b·1,664,525) mod P, ….
        let p = i128::from(SAMPLE_KEY_MODULUS);
        let b = 1_103_515_245i128;
        let c = (b * 1_664_525) % p;
        let d = (c * ((c + 1_013_904_223) % p)) % p;
        assert_eq!(i128::from(sample_key(1, 0, 0)), (d * 48_271 + b) % p);
        // Negative microseconds (a relative clock before its origin) are
        // reduced into 0..P like positive ones.
        assert_eq!(
            sample_key(-1, 5, 6),
            sample_key(SAMPLE_KEY_MODULUS - 1, 5, 6)
        );
        // The largest inputs stay inside 64-bit arithmetic.
        assert!(i64::from(sample_key(i64::MAX, u32::MAX, u32::MAX)) < SAMPLE_KEY_MODULUS);
    }

    #[test]
    fn the_sample_is_the_smallest_keys_in_any_order() {
        let requests: Vec<(i64, u32, u32)> = (0..20_000i64)
            .map(|i| {
                (
                    1_700_000_000_000_000 + i * 37_123,
                    (i % 977) as u32,
                    (i % 301) as u32,
                )
            })
            .collect();
        let mut forward = BottomK::new();
        let mut backward = BottomK::new();
        for &(us, i, o) in &requests {
            forward.push(us, i, o);
        }
        for &(us, i, o) in requests.iter().rev() {
            backward.push(us, i, o);
        }
        let mut all: Vec<SampledRequest> = requests
            .iter()
            .map(|&(us, i, o)| SampledRequest {
                key: sample_key(us, i, o),
                arrival_us: us,
                input_tokens: i,
                output_tokens: o,
            })
            .collect();
        all.sort_unstable();
        all.truncate(LENGTH_SAMPLE_SIZE);
        assert_eq!(forward.sorted(), all);
        assert_eq!(backward.sorted(), all);
        // Two halves' samples merge into the whole's.
        let (mut first, mut second) = (BottomK::new(), BottomK::new());
        for (k, &(us, i, o)) in requests.iter().enumerate() {
            if k % 2 == 0 { &mut first } else { &mut second }.push(us, i, o);
        }
        let mut merged = BottomK::new();
        for r in first.sorted().into_iter().chain(second.sorted()) {
            merged.push(r.arrival_us, r.input_tokens, r.output_tokens);
        }
        assert_eq!(merged.sorted(), all);
    }

    #[test]
    fn the_sample_does_not_lean_towards_any_length() {
        // Arrivals every 50 ms (a regular clock, the worst case for a
        // multiplicative hash) whose lengths cycle with the arrival: the
        // sample must hold each length class in its share of the log.
        let n = 400_000i64;
        let mut s = BottomK::new();
        for i in 0..n {
            s.push(
                1_700_000_000_000_000 + i * 50_000,
                (i % 8) as u32 * 1000,
                (i % 5) as u32,
            );
        }
        let pairs = s.pairs();
        assert_eq!(pairs.len(), LENGTH_SAMPLE_SIZE);
        let k = LENGTH_SAMPLE_SIZE as f64;
        // Within 5 standard deviations of a binomial share p of the sample.
        let near = |got: f64, p: f64| (got - k * p).abs() < 5.0 * (k * p * (1.0 - p)).sqrt();
        for class in 0..8u32 {
            let got = pairs.iter().filter(|p| p.0 == class * 1000).count() as f64;
            assert!(near(got, 1.0 / 8.0), "input class {class}: {got}");
        }
        for class in 0..5u32 {
            let got = pairs.iter().filter(|p| p.1 == class).count() as f64;
            assert!(near(got, 1.0 / 5.0), "output class {class}: {got}");
        }
        // Requests at one instant (a quantised clock) are sampled by their
        // lengths alone: still no lean, over many instants.
        let mut s = BottomK::new();
        for i in 0..n {
            s.push((i / 20) * 3_000_000, (i % 20) as u32 * 100 + 7, 50);
        }
        let pairs = s.pairs();
        for class in 0..20u32 {
            let got = pairs.iter().filter(|p| p.0 == class * 100 + 7).count() as f64;
            assert!(near(got, 1.0 / 20.0), "instant class {class}: {got}");
        }
    }
}
