//! One configuration's searches on one tier: the single-replica screen and
//! the fleet points, each a series of simulated runs.

use super::cache::cache_key;
use super::Setting;
use crate::capacity::fleet::{wilson_interval, FleetCapacity, FleetPoint};
use crate::capacity::{Config, Sustained, Verdict};
use crate::demand::TierDemand;
use crate::perf::roofline::{RooflineBound, Savings};
use crate::scenario::{GpuOffer, Simulation, Tier};
use crate::sim::kv_cache::PrefixSource;
use crate::sim::renewal::{renewal, RenewalStream};
use crate::sim::request::Arrival;
use crate::sim::{simulate, Fleet, FleetTier, Limits, Paused, ReplicaSpec, TierTally};
use crate::traces::block_chains::NO_CHAIN;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::sync::Arc;

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
    /// The runs' arrival stream, drawn once for every rate and fleet.
    stream: RefCell<RenewalStream<'a>>,
    pub(super) key: String,
    /// Each sampled request's prompt tokens found cached, when the
    /// replicas cache prefixes ([`prefix_hits`]).
    hits: Option<Arc<[u32]>>,
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
        let hits = prefix_hits(setting.simulation, demand, &spec);
        // A disaggregated unit's replicas each run no faster than one
        // aggregated replica of their layout, and a request needs both
        // sides: x + y such replicas bound the unit.
        let roofline = RooflineBound::new(
            &offer.profile,
            &config.model_shape(offer, setting.model),
            config.layout().gpus(),
            config.precision,
            config.max_batch,
            &demand.lengths,
            Savings {
                cached_tokens: hits.as_deref().unwrap_or(&[]),
                decode_tokens_per_step: spec
                    .perf
                    .speculation()
                    .map_or(1.0, crate::perf::Speculation::tokens_per_step),
            },
        );
        let roofline_rps = roofline.max_rps() * f64::from(spec.replicas_per_unit());
        let key = cache_key(setting.simulation, &spec, tier, demand, hits.as_deref());
        let cv = demand.within_minute_cv.max(0.05);
        Search {
            spec,
            tier,
            demand,
            sim: setting.simulation,
            roofline_rps,
            stream: RefCell::new(RenewalStream::new(
                cv,
                &demand.lengths,
                setting.simulation.capacity_seed,
            )),
            key,
            hits,
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

    /// One whole run of `fleet` (of `n` replicas) at `rate`: the tier's
    /// tally, and whether the number in flight stayed bounded.
    fn run(&self, fleet: &Fleet, n: u32, rate: f64) -> (TierTally, bool) {
        let result = Paused::new(fleet, 0..1, self.arrivals(n, rate), self.sim.capacity_seed);
        self.judged(n, result).whole()
    }

    /// `n` replicas of the configuration behind the router.
    fn fleet(&self, n: u32) -> Fleet {
        fleet_of(&self.spec, n, self.tier, self.demand, self)
    }

    /// The requests of a run of `n` replicas at `rate`: the search's one
    /// stream at that rate (the same seeded stream compressed in time for
    /// every rate).
    fn arrivals(&self, n: u32, rate: f64) -> Vec<Arrival> {
        self.stream.borrow_mut().at_rate(rate, self.requests(n))
    }

    /// A run of `fleet` (of `n` replicas) at `rate` judged against the
    /// tier's target, stopped as soon as more of its requests have missed
    /// than the target allows of the whole run: it fails then, whatever
    /// the rest of its requests do, and is kept paused
    /// ([`Trial::Stopped`]) in case its binding limit is asked for.
    fn trial<'f>(&self, fleet: &'f Fleet, n: u32, rate: f64) -> Trial<'f> {
        let count = self.requests(n) as u64;
        let most = most_misses(count, self.target());
        let mut replay = Paused::new(fleet, 0..1, self.arrivals(n, rate), self.sim.capacity_seed);
        let failed = replay.run_until(
            |_| {},
            |_| {},
            |r| {
                let t = &r.tiers[0];
                t.served_requests + t.unserved_requests - t.met_both > most
            },
        );
        if failed {
            Trial::Stopped(Box::new(replay))
        } else {
            self.judged(n, replay)
        }
    }

    /// The run `replay` of `n` replicas to its end, judged.
    fn judged<'f>(&self, n: u32, mut replay: Run<'f>) -> Trial<'f> {
        replay.run_until(|_| {}, |_| {}, |_| false);
        let count = self.requests(n);
        let slots = f64::from(n) * f64::from(self.spec.batch_slots());
        let bounded = (replay.peak_in_flight() as f64) <= slots + BACKLOG_SHARE * count as f64;
        let tally = replay.finish().tiers.swap_remove(0);
        Trial::Whole {
            ok: bounded && tally.attainment() >= self.target(),
            tally: Box::new(tally),
            bounded,
        }
    }

    /// Requests/s one replica completes with its queue never empty: all
    /// requests of a run arrive at once and the busy time is measured (a
    /// disaggregated unit's: of its busier side, per replica of that side).
    fn saturated_rps(&self) -> f64 {
        let count = SATURATED_REQUESTS.max(4 * self.spec.batch_slots() as usize);
        let arrivals = renewal(
            1e9,
            1.0,
            &self.demand.lengths,
            count,
            self.sim.capacity_seed,
        );
        let fleet = fleet_of(&self.spec, 1, self.tier, self.demand, self);
        let result = simulate(&fleet, 0..1, arrivals, self.sim.capacity_seed, |_| {});
        let busy_s = result
            .groups
            .first()
            .map_or(0.0, |g| match &self.spec.split {
                None => g.busy_s,
                Some(split) => {
                    let side = |i: usize, n: u32| {
                        g.sides_busy_s.get(i).copied().unwrap_or(0.0) / f64::from(n)
                    };
                    side(0, split.prefill_replicas).max(side(1, split.decode_replicas))
                }
            });
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

    /// The limit that bound at failed run `hi`: from its tally when it ran
    /// whole, else from its tally once taken on from where it stopped to its
    /// end (a run stopped when it failed holds the counts of its first part
    /// only, and whether its queue stays bounded is not known for the rest).
    fn binding_of(&self, n: u32, hi: Failed<'_>) -> &'static str {
        let (tally, bounded) = match hi.trial {
            Trial::Whole { tally, bounded, .. } => (*tally, bounded),
            Trial::Stopped(replay) => self.judged(n, *replay).whole(),
        };
        Self::binding(&tally, hi.assumed_bounded || bounded)
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
        let fleet = self.fleet(1);
        let (at_low, low_bounded) = self.run(&fleet, 1, low);
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
        let (rate, tally, binding) = match self.trial(&fleet, 1, stable).sustained_or_not() {
            Ok(tally) => (stable, tally, "stability"),
            Err(top) => {
                let (mut lo, mut lo_tally) = (low, at_low);
                let mut hi = Failed::top(stable, top);
                for _ in 0..BISECTION_STEPS {
                    let mid = (lo * hi.rate).sqrt();
                    match self.trial(&fleet, 1, mid).sustained_or_not() {
                        Ok(t) => (lo, lo_tally) = (mid, t),
                        Err(t) => hi = Failed::probe(mid, t),
                    }
                }
                (lo, lo_tally, self.binding_of(1, hi))
            }
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
                ttft_ms: tally.ttft_quantile_ms(q, self.tier.ttft_ms),
                tpot_ms: tally.tpot_quantile_ms(q, self.tier.tpot_ms),
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
        let fleet = self.fleet(n);
        let top = match self.trial(&fleet, n, stable).sustained_or_not() {
            Ok(tally) => return self.point(n, stable, &tally, "stability"),
            Err(top) => top,
        };
        let mut b = RateBracket {
            lo: last.max_rps,
            lo_tally: None,
            hi: Failed::top(stable, top),
        };
        if last.max_rps <= 0.0 {
            // Nothing sustained yet: start from the screen's lowest rate.
            let low = stable * LOW_RATE_FRACTION;
            let (t, bounded) = self.run(&fleet, n, low);
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
            if rate >= b.hi.rate || !self.probe(&fleet, &mut b, n, rate) {
                break;
            }
            step *= 2.0;
        }
        while b.hi.rate - b.lo > FLEET_RELATIVE_TOLERANCE * b.lo {
            let rate = 0.5 * (b.lo + b.hi.rate);
            self.probe(&fleet, &mut b, n, rate);
        }
        let binding = self.binding_of(n, b.hi);
        // The last point's rate, if nothing above it passed: its tally at n.
        let lo_tally = b.lo_tally.unwrap_or_else(|| self.run(&fleet, n, b.lo).0);
        self.point(n, b.lo, &lo_tally, binding)
    }

    /// Runs `n` replicas at `rate` and moves the bracket's end it falls on;
    /// whether the rate was sustained.
    fn probe<'f>(&self, fleet: &'f Fleet, b: &mut RateBracket<'f>, n: u32, rate: f64) -> bool {
        match self.trial(fleet, n, rate).sustained_or_not() {
            Ok(t) => {
                (b.lo, b.lo_tally) = (rate, Some(t));
                true
            }
            Err(t) => {
                b.hi = Failed::probe(rate, t);
                false
            }
        }
    }
}

/// A capacity run: paused between events.
type Run<'f> = Paused<'f, std::vec::IntoIter<Arrival>>;

/// One simulated run judged against the tier's target.
enum Trial<'f> {
    /// Run to its end: its tally, whether the number in flight stayed
    /// bounded, and whether it was sustained (bounded and at or above the
    /// target).
    Whole {
        tally: Box<TierTally>,
        bounded: bool,
        ok: bool,
    },
    /// Stopped when its misses decided that it fails; it goes on from there
    /// if its whole tally is asked for.
    Stopped(Box<Run<'f>>),
}

impl<'f> Trial<'f> {
    /// The tally of a run that ran whole, and whether it was bounded.
    fn whole(self) -> (TierTally, bool) {
        match self {
            Trial::Whole { tally, bounded, .. } => (*tally, bounded),
            Trial::Stopped(_) => unreachable!("a run judged whole ran to its end"),
        }
    }

    /// The tally of a sustained run, or the failed run.
    fn sustained_or_not(self) -> Result<TierTally, Trial<'f>> {
        match self {
            Trial::Whole {
                tally, ok: true, ..
            } => Ok(*tally),
            failed => Err(failed),
        }
    }
}

/// The lowest rate known not sustained, and its run.
struct Failed<'f> {
    rate: f64,
    trial: Trial<'f>,
    /// The run at the fleet's stable rate (the search's first upper end)
    /// names its binding limit by its latencies alone, as if bounded.
    assumed_bounded: bool,
}

impl<'f> Failed<'f> {
    fn top(rate: f64, trial: Trial<'f>) -> Self {
        Failed {
            rate,
            trial,
            assumed_bounded: true,
        }
    }

    fn probe(rate: f64, trial: Trial<'f>) -> Self {
        Failed {
            rate,
            trial,
            assumed_bounded: false,
        }
    }
}

/// A fleet point's search: the highest rate known sustained and the lowest
/// known not, with the runs that showed it.
struct RateBracket<'f> {
    lo: f64,
    lo_tally: Option<TierTally>,
    hi: Failed<'f>,
}

/// The most requests of a run of `count` that may miss while it can still
/// meet target `q` (its attainment, met ÷ `count`, compared as
/// [`TierTally::attainment`] is): one more miss decides that it fails.
fn most_misses(count: u64, q: f64) -> u64 {
    let meets = |misses: u64| (count - misses) as f64 / count as f64 >= q;
    if count == 0 || !meets(0) {
        return 0;
    }
    let mut m = (((1.0 - q) * count as f64).floor() as u64).min(count);
    while m > 0 && !meets(m) {
        m -= 1;
    }
    while m < count && meets(m + 1) {
        m += 1;
    }
    m
}

/// How many times the base requests a run of a tier with within-minute
/// arrival CV `cv` holds: CV², between 1 and `most`. The count of a renewal
/// stream over a long window has variance CV² × its mean, so a run of
/// CV² × N requests holds about as many independent bursts as a Poisson run
/// of N, and its attainment estimate is about as steady.
pub(super) fn burst_scale(cv: f64, most: f64) -> f64 {
    (cv * cv).clamp(1.0, most.max(1.0))
}

/// The prompt tokens each of the tier's sampled requests finds cached on a
/// replica of `spec`, when the replicas cache prefixes and the tier's
/// traces name their blocks: the tier's requests fed in order through one
/// prefix cache of the replica's KV memory, and each sampled request's hit
/// there (at most all but its last prompt token; `traces::prefix_reuse` finds it
/// for any size from one pass). Every replica is taken
/// to see the whole trace, which a fleet behind a prefix-aware router
/// betters (each conversation on one replica, whose memory holds fewer
/// conversations) and a router blind to prefixes may not reach; the replay
/// checks the plan with each replica's own cache.
pub(crate) fn prefix_hits(
    sim: &Simulation,
    demand: &TierDemand,
    spec: &ReplicaSpec,
) -> Option<Arc<[u32]>> {
    let reuse = demand
        .prefix_reuse
        .as_ref()
        .filter(|_| sim.prefix_caching)?;
    let blocks = spec.kv_capacity_tokens / u64::from(reuse.block_tokens().max(1));
    let blocks = usize::try_from(blocks).unwrap_or(usize::MAX);
    Some(
        demand
            .sample_chains
            .iter()
            .zip(&demand.lengths)
            .map(|(&row, &(input, _))| match row {
                NO_CHAIN => 0,
                row => reuse.hit_tokens(row, blocks).min(input.saturating_sub(1)),
            })
            .collect(),
    )
}

/// `n` identical replicas behind the simulation's router with no API,
/// judged against `tier`, with `search`'s prefix hits.
fn fleet_of(
    spec: &ReplicaSpec,
    n: u32,
    tier: &Tier,
    demand: &TierDemand,
    search: &Search,
) -> Fleet {
    let sim = search.sim;
    let tier = FleetTier {
        name: tier.name.clone(),
        limits: Limits {
            ttft_ms: tier.ttft_ms,
            tpot_ms: tier.tpot_ms,
        },
        api_share_by_slot: vec![0.0],
        mean_output_tokens: demand.output_tokens.mean,
        deadline_s: None,
    };
    Fleet {
        prefixes: search.hits.clone().map(PrefixSource::Known),
        ..Fleet::single(1e15, tier, spec.clone(), n, sim.router)
    }
}

#[cfg(test)]
mod tests {
    use super::most_misses;

    #[test]
    fn one_miss_past_the_most_decides_that_a_run_fails() {
        for (count, q) in [
            (1_000, 0.99),
            (100, 0.99),
            (4_000, 0.999),
            (12_345, 0.95),
            (7, 0.5),
            (10, 1.0),
            (3, 0.0),
        ] {
            let meets = |m: u64| (count - m) as f64 / count as f64 >= q;
            let m = most_misses(count, q);
            assert!(meets(m), "{count} {q}: {m} misses already fail");
            assert!(
                m == count || !meets(m + 1),
                "{count} {q}: {m} is not the most"
            );
        }
        assert_eq!(most_misses(1_000, 0.99), 10);
        assert_eq!(most_misses(100, 0.99), 1);
        assert_eq!(most_misses(10, 1.0), 0);
        assert_eq!(most_misses(0, 0.99), 0);
    }
}
