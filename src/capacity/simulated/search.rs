//! One configuration's searches on one tier: the single-replica screen and
//! the fleet points, each a series of simulated runs.

use super::cache::cache_key;
use super::Setting;
use crate::capacity::fleet::{wilson_interval, FleetCapacity, FleetPoint};
use crate::capacity::{Config, Sustained, Verdict};
use crate::demand::TierDemand;
use crate::perf::roofline::RooflineBound;
use crate::scenario::{GpuOffer, Simulation, Tier};
use crate::sim::renewal::renewal;
use crate::sim::{simulate, Fleet, FleetTier, Group, Limits, ReplicaSpec, Router, TierTally};
use serde::{Deserialize, Serialize};

/// Bisection of a single replica: steps on log(rate), 2^-10 of the
/// bracket's log width.
const BISECTION_STEPS: u32 = 10;
/// A fleet point's bisection stops when the bracket is this narrow
/// (relative to its lower end).
const FLEET_RELATIVE_TOLERANCE: f64 = 0.01;
/// The single-replica search starts at this fraction of the saturated
/// throughput.
const LOW_RATE_FRACTION: f64 = 1e-3;
/// Requests of the saturated run (at least; four batches when larger).
const SATURATED_REQUESTS: usize = 2000;
/// A run is unstable when its peak number of requests in flight exceeds the
/// fleet's batch slots plus this share of the run's requests.
const BACKLOG_SHARE: f64 = 0.1;
/// A configuration whose single replica misses the target even at the
/// lowest rate, with its queue bounded, is given fleets of up to this many
/// replicas to find one that pools the tier's bursts; none serving, it has no
/// fleet.
pub(super) const POOLING_TRIAL_REPLICAS: u32 = 4;

/// What the single-replica screen found: the verdict, the saturated
/// throughput it measured, and the first point of the fleet step function
/// (when the replica serves, or misses only through the tier's bursts: then
/// zero requests/s).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Screen {
    pub(super) verdict: Verdict,
    saturated_rps: f64,
    point: Option<FleetPoint>,
}

/// Everything one configuration's searches on one tier share.
pub(super) struct Search<'a> {
    spec: ReplicaSpec,
    tier: &'a Tier,
    demand: &'a TierDemand,
    sim: &'a Simulation,
    roofline_rps: f64,
    pub(super) key: String,
}

impl<'a> Search<'a> {
    pub(super) fn new(
        setting: &'a Setting,
        offer: &GpuOffer,
        config: &Config,
        tier: &'a Tier,
        demand: &'a TierDemand,
    ) -> Self {
        let spec = config.replica(offer, setting.model, setting.simulation.scheduler);
        let roofline = RooflineBound::new(
            &offer.profile,
            &config.model_shape(offer, setting.model),
            config.gpus_per_replica(),
            config.precision,
            config.max_batch,
            &demand.lengths,
        );
        let key = cache_key(setting.simulation, &spec, tier, demand);
        Search {
            spec,
            tier,
            demand,
            sim: setting.simulation,
            roofline_rps: roofline.max_rps(),
            key,
        }
    }

    fn target(&self) -> f64 {
        self.tier.percentile / 100.0
    }

    /// Requests simulated for a fleet of `n`: the base length, times the
    /// tier's burst scale.
    fn requests(&self, n: u32) -> usize {
        let base = (self.sim.capacity_requests as usize)
            .max(self.sim.fleet_requests_per_replica as usize * n as usize);
        (base as f64 * burst_scale(self.demand.within_minute_cv, self.sim.burst_scale_max)).ceil()
            as usize
    }

    /// One run of `n` replicas at `rate`: the tier's tally, and whether the
    /// number in flight stayed bounded.
    fn run(&self, n: u32, rate: f64) -> (TierTally, bool) {
        let count = self.requests(n);
        let cv = self.demand.within_minute_cv.max(0.05);
        let arrivals = renewal(
            rate,
            cv,
            &self.demand.lengths,
            count,
            self.sim.capacity_seed,
        );
        let fleet = fleet_of(&self.spec, n, self.tier, self.demand, self.sim.router);
        let mut result = simulate(&fleet, 0..1, arrivals, self.sim.capacity_seed, |_| {});
        let slots = f64::from(n) * f64::from(self.spec.max_batch);
        let bounded = (result.peak_in_flight as f64) <= slots + BACKLOG_SHARE * count as f64;
        (result.tiers.swap_remove(0), bounded)
    }

    fn passes(&self, n: u32, rate: f64) -> (bool, TierTally) {
        let (tally, bounded) = self.run(n, rate);
        (bounded && tally.attainment() >= self.target(), tally)
    }

    /// Requests/s one replica completes with its queue never empty: all
    /// requests of a run arrive at once and the busy time is measured.
    fn saturated_rps(&self) -> f64 {
        let count = SATURATED_REQUESTS.max(4 * self.spec.max_batch as usize);
        let arrivals = renewal(
            1e9,
            1.0,
            &self.demand.lengths,
            count,
            self.sim.capacity_seed,
        );
        let fleet = fleet_of(&self.spec, 1, self.tier, self.demand, self.sim.router);
        let result = simulate(&fleet, 0..1, arrivals, self.sim.capacity_seed, |_| {});
        let busy_s = result.groups.first().map_or(0.0, |g| g.busy_s);
        let served = result.tiers[0].served_requests as f64;
        let rps = if busy_s > 0.0 { served / busy_s } else { 0.0 };
        assert!(
            rps <= self.roofline_rps * (1.0 + 1e-9),
            "saturated throughput {rps} req/s exceeds the roofline ceiling {} req/s: the latency model is faster than the hardware",
            self.roofline_rps
        );
        rps
    }

    /// Highest rate a fleet of `n` may claim: `max_utilisation` of its
    /// saturated throughput.
    fn stable_rps(&self, n: u32, saturated: f64) -> f64 {
        self.sim.max_utilisation * saturated * f64::from(n)
    }

    fn point(&self, n: u32, rate: f64, tally: &TierTally, binding: &str) -> FleetPoint {
        assert!(
            rate <= self.roofline_rps * f64::from(n) * (1.0 + 1e-9),
            "{rate} req/s on {n} replicas exceeds the roofline ceiling of {} req/s per replica",
            self.roofline_rps
        );
        let on_gpus = tally.served_requests + tally.unserved_requests;
        let (low, high) = wilson_interval(tally.met_both, on_gpus);
        FleetPoint {
            replicas: n,
            max_rps: rate,
            attainment: tally.attainment(),
            attainment_low: low,
            attainment_high: high,
            requests: on_gpus,
            binding: binding.into(),
        }
    }

    fn binding(failed: &TierTally, bounded: bool) -> &'static str {
        if !bounded {
            "stability"
        } else if failed.met_ttft < failed.met_tpot {
            "ttft"
        } else {
            "tpot"
        }
    }

    /// Stage 1: bisection on one replica's rate.
    pub(super) fn single_replica(&self) -> Screen {
        let q = self.target();
        let tier = self.tier;
        let saturated = self.saturated_rps();
        let stable = self.stable_rps(1, saturated);
        let low = stable * LOW_RATE_FRACTION;
        let (at_low, low_bounded) = self.run(1, low);
        let ok = low_bounded && at_low.attainment() >= q;
        // Missed at the lowest rate with a bounded queue: the misses are the
        // requests of a burst waiting for each other on one replica, which a
        // fleet may pool. The step function starts at zero for one replica.
        let pooling = (stable > 0.0 && low_bounded)
            .then(|| self.point(1, 0.0, &at_low, Self::binding(&at_low, low_bounded)));
        let cannot = |verdict| Screen {
            verdict,
            saturated_rps: saturated,
            point: pooling.clone(),
        };
        if !ok || stable <= 0.0 {
            return cannot(Verdict::Cannot {
                reason: format!(
                    "even at {low:.3} req/s only {:.1}% of requests meet both limits (p{} TTFT {:.0} ms, limit {}; TPOT {:.1} ms, limit {})",
                    at_low.attainment() * 100.0,
                    tier.percentile,
                    at_low.ttft.quantile_ms(q),
                    tier.ttft_ms,
                    at_low.tpot.quantile_ms(q),
                    tier.tpot_ms
                ),
                best_ttft_ms: Some(at_low.ttft.quantile_ms(q)),
                best_tpot_ms: Some(at_low.tpot.quantile_ms(q)),
            });
        }
        let (top_ok, top) = self.passes(1, stable);
        let (rate, tally, binding) = if top_ok {
            (stable, top, "stability")
        } else {
            let (mut lo, mut lo_tally) = (low, at_low);
            let mut hi = stable;
            let mut hi_tally = top;
            let mut hi_bounded = true;
            for _ in 0..BISECTION_STEPS {
                let mid = (lo * hi).sqrt();
                let (t, bounded) = self.run(1, mid);
                if bounded && t.attainment() >= q {
                    (lo, lo_tally) = (mid, t);
                } else {
                    (hi, hi_tally, hi_bounded) = (mid, t, bounded);
                }
            }
            let binding = Self::binding(&hi_tally, hi_bounded);
            (lo, lo_tally, binding)
        };
        let point = self.point(1, rate, &tally, binding);
        let mean_batch = if tally.served_requests > 0 {
            rate * tally.decode_s / tally.served_requests as f64
        } else {
            0.0
        };
        Screen {
            verdict: Verdict::Serves(Sustained {
                max_rps: point.max_rps,
                ttft_ms: tally.ttft.quantile_ms(q),
                tpot_ms: tally.tpot.quantile_ms(q),
                mean_batch,
                binding: binding.into(),
            }),
            saturated_rps: saturated,
            point: Some(point),
        }
    }

    /// A step function holding the screen's point (one replica; zero
    /// requests/s when only a fleet may serve), or none when no fleet is
    /// tried.
    pub(super) fn start_fleet(&self, screen: Screen) -> FleetCapacity {
        FleetCapacity {
            points: screen.point.into_iter().collect(),
            saturated_rps_per_replica: screen.saturated_rps,
            roofline_rps_per_replica: self.roofline_rps,
        }
    }

    /// The next point of `f`: n = last + 1 replicas, searched upward from
    /// the last point's rate (a larger fleet never sustains less) by
    /// galloping steps, then bisection to [`FLEET_RELATIVE_TOLERANCE`].
    pub(super) fn fleet_point(&self, f: &FleetCapacity) -> FleetPoint {
        let last = f.points.last().expect("a started fleet has a point");
        let n = last.replicas + 1;
        let stable = self.stable_rps(n, f.saturated_rps_per_replica);
        let (top_ok, top) = self.passes(n, stable);
        if top_ok {
            return self.point(n, stable, &top, "stability");
        }
        let mut b = RateBracket {
            lo: last.max_rps,
            lo_tally: None,
            hi: stable,
            hi_tally: top,
            hi_bounded: true,
        };
        if last.max_rps <= 0.0 {
            // Nothing sustained yet: start from the screen's lowest rate.
            let low = stable * LOW_RATE_FRACTION;
            let (t, bounded) = self.run(n, low);
            if !(bounded && t.attainment() >= self.target()) {
                let binding = Self::binding(&t, bounded);
                return self.point(n, 0.0, &t, binding);
            }
            (b.lo, b.lo_tally) = (low, Some(t));
        }
        // Gallop from the linear guess n/(n−1) × the last rate (doubling
        // from the lowest rate when the last fleet sustained nothing).
        let mut step = if last.max_rps > 0.0 {
            (b.lo * f64::from(n) / f64::from(last.replicas) - b.lo).max(b.lo * 0.01)
        } else {
            b.lo
        };
        loop {
            let rate = b.lo + step;
            if rate >= b.hi || !self.probe(&mut b, n, rate) {
                break;
            }
            step *= 2.0;
        }
        while b.hi - b.lo > FLEET_RELATIVE_TOLERANCE * b.lo {
            let rate = 0.5 * (b.lo + b.hi);
            self.probe(&mut b, n, rate);
        }
        let binding = Self::binding(&b.hi_tally, b.hi_bounded);
        // The last point's rate, if nothing above it passed: its tally at n.
        let lo_tally = b.lo_tally.unwrap_or_else(|| self.run(n, b.lo).0);
        self.point(n, b.lo, &lo_tally, binding)
    }

    /// Runs `n` replicas at `rate` and moves the bracket's end it falls on;
    /// whether the rate was sustained.
    fn probe(&self, b: &mut RateBracket, n: u32, rate: f64) -> bool {
        let (t, bounded) = self.run(n, rate);
        let ok = bounded && t.attainment() >= self.target();
        if ok {
            (b.lo, b.lo_tally) = (rate, Some(t));
        } else {
            (b.hi, b.hi_tally, b.hi_bounded) = (rate, t, bounded);
        }
        ok
    }
}

/// A fleet point's search: the highest rate known sustained and the lowest
/// known not, with the runs that showed it.
struct RateBracket {
    lo: f64,
    lo_tally: Option<TierTally>,
    hi: f64,
    hi_tally: TierTally,
    hi_bounded: bool,
}

/// How many times the base requests a run of a tier with within-minute
/// arrival CV `cv` holds: CV², between 1 and `most`. The count of a renewal
/// stream over a long window has variance CV² × its mean, so a run of
/// CV² × N requests holds about as many independent bursts as a Poisson run
/// of N, and its attainment estimate is about as steady.
pub(super) fn burst_scale(cv: f64, most: f64) -> f64 {
    (cv * cv).clamp(1.0, most.max(1.0))
}

/// `n` identical replicas behind `router` with no API, judged against
/// `tier`.
fn fleet_of(spec: &ReplicaSpec, n: u32, tier: &Tier, demand: &TierDemand, router: Router) -> Fleet {
    Fleet {
        slot_s: 1e15,
        tiers: vec![FleetTier {
            name: tier.name.clone(),
            limits: Limits {
                ttft_ms: tier.ttft_ms,
                tpot_ms: tier.tpot_ms,
            },
            api_share_by_slot: vec![0.0],
            mean_output_tokens: demand.output_tokens.mean,
            deadline_s: None,
        }],
        groups: vec![Group {
            tier: 0,
            label: String::new(),
            spec: spec.clone(),
            replicas_by_slot: vec![n],
            rps_per_replica: 1.0,
            spot: None,
        }],
        router,
    }
}
