//! The fleet step function of one (tier, configuration): for n = 1…N
//! replicas behind the router, the highest offered rate at which the fleet
//! keeps the tier's attainment target, each found by simulating that fleet.
//! Read the other way round it gives the replicas a slot's demand needs.

use serde::{Deserialize, Serialize};

/// One point of the step function: what a fleet of `replicas` sustains.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetPoint {
    pub replicas: u32,
    /// Highest offered requests/s at which the fleet meets the target.
    pub max_rps: f64,
    /// Attainment measured at `max_rps`, and its 95% Wilson interval over
    /// the `requests` simulated (how sure the figure is).
    pub attainment: f64,
    pub attainment_low: f64,
    pub attainment_high: f64,
    pub requests: u64,
    /// What limits the rate: "ttft", "tpot" (attainment), or "stability"
    /// (the offered work reached `max_utilisation` of the saturated
    /// throughput).
    pub binding: String,
}

/// The fleet step function with the bounds every point was checked against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetCapacity {
    /// n = 1…N, in order; `max_rps` never decreases.
    pub points: Vec<FleetPoint>,
    /// Requests/s one replica completes when its queue never empties
    /// (measured in the simulator with the tier's lengths).
    pub saturated_rps_per_replica: f64,
    /// Requests/s of the tier's mean request that the replica's peak FLOPs
    /// and memory bandwidth allow: no figure may exceed it.
    pub roofline_rps_per_replica: f64,
}

impl FleetCapacity {
    /// The largest fleet simulated.
    pub fn max_replicas(&self) -> u32 {
        self.points.last().map_or(0, |p| p.replicas)
    }

    /// Highest rate `n` replicas sustain: the simulated point for n ≤ N,
    /// beyond it the per-replica rate of the largest simulated fleet times n
    /// (pooling only grows with the fleet, so this errs low).
    pub fn capacity_rps(&self, n: u32) -> f64 {
        if n == 0 {
            return 0.0;
        }
        match self.points.get(n as usize - 1) {
            Some(p) => p.max_rps,
            None => self.points.last().map_or(0.0, |last| {
                last.max_rps / f64::from(last.replicas) * f64::from(n)
            }),
        }
    }

    /// The function up to its first point that sustains `rate_rps` (all of
    /// it when none does).
    pub fn up_to(mut self, rate_rps: f64) -> FleetCapacity {
        if let Some(i) = self.points.iter().position(|p| p.max_rps >= rate_rps) {
            self.points.truncate(i + 1);
        }
        self
    }

    /// Fewest replicas whose fleet sustains `rate_rps` (0 for no demand).
    pub fn replicas_needed(&self, rate_rps: f64) -> u32 {
        if rate_rps <= 0.0 || self.points.is_empty() {
            return 0;
        }
        if let Some(p) = self.points.iter().find(|p| p.max_rps >= rate_rps) {
            return p.replicas;
        }
        let last = self.points.last().expect("checked non-empty");
        let per_replica = last.max_rps / f64::from(last.replicas);
        let n = (rate_rps / per_replica - 1e-9).ceil();
        n.min(f64::from(u32::MAX)) as u32
    }
}

/// 95% Wilson score interval of a proportion of `met` out of `n`.
pub(crate) fn wilson_interval(met: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_963_984_540_054_f64;
    let n_f = n as f64;
    let p = met as f64 / n_f;
    let denominator = 1.0 + z * z / n_f;
    let centre = (p + z * z / (2.0 * n_f)) / denominator;
    let half = z * (p * (1.0 - p) / n_f + z * z / (4.0 * n_f * n_f)).sqrt() / denominator;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A step function whose fleet of `i + 1` replicas sustains `caps[i]`
    /// requests/s.
    pub(crate) fn step(caps: &[f64]) -> FleetCapacity {
        FleetCapacity {
            points: caps
                .iter()
                .enumerate()
                .map(|(i, &c)| FleetPoint {
                    replicas: i as u32 + 1,
                    max_rps: c,
                    attainment: 0.99,
                    attainment_low: 0.98,
                    attainment_high: 1.0,
                    requests: 1000,
                    binding: "ttft".into(),
                })
                .collect(),
            saturated_rps_per_replica: 10.0,
            roofline_rps_per_replica: 20.0,
        }
    }

    #[test]
    fn replicas_needed_reads_the_step_function() {
        // Pooling: 1 replica 2 req/s, 2 replicas 5, 3 replicas 8.
        let f = step(&[2.0, 5.0, 8.0]);
        assert_eq!(f.replicas_needed(0.0), 0);
        assert_eq!(f.replicas_needed(2.0), 1);
        assert_eq!(f.replicas_needed(2.01), 2);
        assert_eq!(f.replicas_needed(8.0), 3);
        // Beyond the largest fleet: 8/3 req/s per replica.
        assert_eq!(f.replicas_needed(8.1), 4);
        assert_eq!(f.replicas_needed(16.0), 6);
        assert_eq!(f.capacity_rps(6), 16.0);
        assert_eq!(f.clone().up_to(4.0).points.len(), 2);
        assert_eq!(f.clone().up_to(100.0).points.len(), 3);
        for rate in [0.5, 3.0, 7.9, 12.0, 40.0] {
            let n = f.replicas_needed(rate);
            assert!(f.capacity_rps(n) >= rate - 1e-9);
            assert!(f.capacity_rps(n - 1) < rate);
        }
    }

    #[test]
    fn wilson_interval_brackets_the_proportion() {
        let (lo, hi) = wilson_interval(990, 1000);
        assert!(lo < 0.99 && hi > 0.99);
        assert!((lo - 0.9817).abs() < 1e-3 && (hi - 0.9946).abs() < 1e-3);
        assert_eq!(wilson_interval(0, 0), (0.0, 1.0));
        let (lo, hi) = wilson_interval(1000, 1000);
        assert!(lo > 0.995 && hi == 1.0);
    }
}
