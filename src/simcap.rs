//! Capacity by simulation, in two stages.
//!
//! 1. **Screen**: for every configuration of every offer on every tier, the
//!    highest offered rate at which one replica keeps the tier's attainment
//!    target (the share of requests meeting both TTFT and TPOT limits ≥
//!    percentile / 100), by bisection in the replay simulator. Per (GPU type,
//!    tensor parallel, precision) the batch cap and chunk size are searched
//!    one after the other (batch caps at the middle chunk size, then chunk
//!    sizes at the best batch cap).
//! 2. **Fleet**: for the configurations that survive the screen (the best
//!    per GPU type, tensor parallel and precision, not dominated on capacity
//!    per GPU), the step function of fleets of n = 1…N replicas behind the
//!    router ([`FleetCapacity`]): each point is a bisection with n replicas
//!    simulated, so the replicas a slot needs are exact at the integers.
//!
//! Every run uses the tier's real (input, output) pairs and gamma
//! interarrival times with the trace's within-minute CV (Poisson only when
//! that CV is 1); the same seeded stream is compressed in time for every
//! rate, so attainment falls monotonically in practice and the search is
//! reproducible. A rate counts as sustained only if it also passes two
//! stability tests: the offered work is at most `max_utilisation` of the
//! fleet's saturated throughput (measured by a run whose queue never
//! empties), and the number of requests in flight did not grow beyond the
//! batches plus a tenth of the run (a queue growing without bound). No figure
//! may exceed the roofline ceiling ([`RooflineBound`]); that is asserted.
//!
//! Results are cached on disk, keyed by every input of the search, so a
//! repeated solve skips the simulation.

use crate::capacity::{self, CapacityEntry, Config, Sustained, Verdict};
use crate::demand::TierDemand;
use crate::fleet_capacity::{wilson_interval, FleetCapacity, FleetPoint};
use crate::progress::Progress;
use crate::roofline::RooflineBound;
use crate::scenario::{GpuOffer, Scenario, ServedModel, Simulation, Tier};
use crate::sim::workload::renewal;
use crate::sim::{simulate, Fleet, FleetTier, Group, Limits, ReplicaSpec, Router, TierTally};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Bumped whenever the simulator or the search changes results.
const CACHE_VERSION: &str = "simcap-4";
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

/// Where capacity results are cached: `$PLANNER_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/planner`, else `~/.cache/planner`.
pub fn default_cache_dir() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("PLANNER_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("planner")))
        .or_else(|| env("HOME").map(|d| d.join(".cache").join("planner")))
}

/// Every configuration of every offer on every tier: screened on one
/// replica, and the survivors' fleet step functions up to the fleet that
/// `need_rps[tier]` requests/s require (capped at
/// `simulation.fleet_max_replicas`). Work is spread over the cores; the
/// result does not depend on the split.
pub fn evaluate_all(
    scenario: &Scenario,
    demand: &[TierDemand],
    need_rps: &[f64],
    cache_dir: Option<&Path>,
    progress: Progress,
) -> Vec<Vec<CapacityEntry>> {
    let setting = Setting::of(scenario, cache_dir);
    let candidates = Config::candidates(&scenario.gpus);
    // Stage 1a: batch caps at the middle chunk size of each offer.
    let mut jobs = Vec::new();
    for (k, _) in scenario.tiers.iter().enumerate() {
        for (i, c) in candidates.iter().enumerate() {
            if c.max_batched_tokens == middle_chunk(&scenario.gpus[c.gpu]) {
                jobs.push((k, i));
            }
        }
    }
    let screened = screen_jobs(scenario, demand, &setting, &candidates, &jobs, progress, 1);
    // Stage 1b: chunk sizes at the best batch cap of each (tier, GPU, TP,
    // precision).
    let mut best_batch: BTreeMap<(usize, usize, u32, crate::precision::Precision), (f64, u32)> =
        BTreeMap::new();
    for ((k, i), e) in jobs.iter().zip(&screened) {
        let c = &candidates[*i];
        let rps = serving_rps(e);
        let slot = best_batch
            .entry((*k, c.gpu, c.tensor_parallel, c.precision))
            .or_insert((rps, c.max_batch));
        if rps > slot.0 {
            *slot = (rps, c.max_batch);
        }
    }
    let mut more = Vec::new();
    for (k, _) in scenario.tiers.iter().enumerate() {
        for (i, c) in candidates.iter().enumerate() {
            let Some(&(_, b)) = best_batch.get(&(k, c.gpu, c.tensor_parallel, c.precision)) else {
                continue;
            };
            if c.max_batch == b && c.max_batched_tokens != middle_chunk(&scenario.gpus[c.gpu]) {
                more.push((k, i));
            }
        }
    }
    let screened_more = screen_jobs(scenario, demand, &setting, &candidates, &more, progress, 2);
    // Entries in candidate order, whatever the stage that produced them.
    let by_job: BTreeMap<(usize, usize), CapacityEntry> = jobs
        .into_iter()
        .zip(screened)
        .chain(more.into_iter().zip(screened_more))
        .collect();
    let mut table: Vec<Vec<CapacityEntry>> = vec![Vec::new(); scenario.tiers.len()];
    for ((k, _), e) in by_job {
        table[k].push(e);
    }
    extend_fleets(&mut table, scenario, demand, need_rps, cache_dir, progress);
    table
}

/// Stage 2 alone: gives every survivor of the screen a fleet step function
/// that reaches `need_rps[tier]` (or `simulation.fleet_max_replicas`),
/// extending the ones it already has.
pub fn extend_fleets(
    table: &mut [Vec<CapacityEntry>],
    scenario: &Scenario,
    demand: &[TierDemand],
    need_rps: &[f64],
    cache_dir: Option<&Path>,
    progress: Progress,
) {
    let setting = Setting::of(scenario, cache_dir);
    let mut fleet_jobs = Vec::new();
    for (k, entries) in table.iter().enumerate() {
        for i in survivors(entries) {
            let e = &entries[i];
            let reaches = e.fleet.as_ref().is_some_and(|f| {
                f.points.last().is_some_and(|p| p.max_rps >= need_rps[k])
                    || f.max_replicas() >= scenario.simulation.fleet_max_replicas
            });
            if !reaches {
                fleet_jobs.push((k, i));
            }
        }
    }
    if fleet_jobs.is_empty() {
        return;
    }
    let bar = progress.steps("fleet capacity by simulation", fleet_jobs.len() as u64);
    let fleets = crate::parallel::map_in_order(&fleet_jobs, |&(k, i)| {
        let e = &table[k][i];
        let f = fleet(
            &setting,
            &scenario.gpus[e.config.gpu],
            &e.config,
            &scenario.tiers[k],
            &demand[k],
            need_rps[k],
            e.fleet.clone(),
        );
        bar.inc(1);
        f
    });
    bar.finish_and_clear();
    for ((k, i), f) in fleet_jobs.into_iter().zip(fleets) {
        table[k][i].fleet = f.flatten();
    }
}

/// The chunk size screened first: the middle of the offer's list.
fn middle_chunk(offer: &GpuOffer) -> u32 {
    let mut sizes = offer.max_batched_tokens.clone();
    sizes.sort_unstable();
    sizes[sizes.len() / 2]
}

fn serving_rps(e: &CapacityEntry) -> f64 {
    match &e.verdict {
        Verdict::Serves(s) => s.max_rps,
        Verdict::Cannot { .. } => 0.0,
    }
}

fn screen_jobs(
    scenario: &Scenario,
    demand: &[TierDemand],
    setting: &Setting,
    candidates: &[Config],
    jobs: &[(usize, usize)],
    progress: Progress,
    stage: u32,
) -> Vec<CapacityEntry> {
    let bar = progress.steps(
        &format!("capacity by simulation ({stage}/2)"),
        jobs.len() as u64,
    );
    let out = crate::parallel::map_in_order(jobs, |&(k, i)| {
        let c = &candidates[i];
        let e = evaluate(
            setting,
            &scenario.gpus[c.gpu],
            c,
            &scenario.tiers[k],
            &demand[k],
        );
        bar.inc(1);
        e
    });
    bar.finish_and_clear();
    out.into_iter().map(|e| e.expect("every job ran")).collect()
}

/// The entries whose fleets are simulated: the best (batch cap, chunk size)
/// per (GPU type, tensor parallel, precision), then only those not
/// dominated on the same GPU type by one with no more GPUs per replica and
/// at least as much single-replica capacity per GPU.
pub fn survivors(entries: &[CapacityEntry]) -> Vec<usize> {
    let mut best: BTreeMap<(usize, u32, crate::precision::Precision), usize> = BTreeMap::new();
    for (i, e) in entries.iter().enumerate() {
        if serving_rps(e) <= 0.0 {
            continue;
        }
        let key = (e.config.gpu, e.config.tensor_parallel, e.config.precision);
        match best.get(&key) {
            Some(&j) if serving_rps(&entries[j]) >= serving_rps(e) => {}
            _ => {
                best.insert(key, i);
            }
        }
    }
    let kept: Vec<usize> = best.into_values().collect();
    capacity::non_dominated(entries, &kept)
}

/// What a capacity search runs with besides the configuration: the served
/// model, the simulator's settings and where results are cached.
#[derive(Debug, Clone, Copy)]
pub struct Setting<'a> {
    pub model: &'a ServedModel,
    pub simulation: &'a Simulation,
    pub cache_dir: Option<&'a Path>,
}

impl<'a> Setting<'a> {
    /// The scenario's model and simulator settings.
    pub fn of(scenario: &'a Scenario, cache_dir: Option<&'a Path>) -> Self {
        Setting {
            model: &scenario.model,
            simulation: &scenario.simulation,
            cache_dir,
        }
    }
}

/// One replica of one configuration of `offer` on one tier (stage 1).
pub fn evaluate(
    setting: &Setting,
    offer: &GpuOffer,
    config: &Config,
    tier: &Tier,
    demand: &TierDemand,
) -> CapacityEntry {
    let analytic = capacity::evaluate(offer, setting.model, config, tier, demand);
    if let Verdict::Cannot {
        best_ttft_ms: None, ..
    } = analytic.verdict
    {
        return analytic; // the model or the tier's requests do not fit in memory
    }
    let search = Search::new(setting, offer, config, tier, demand);
    let key = format!("screen|{}", search.key);
    let screen: Screen = cached(setting.cache_dir, &key, || search.single_replica());
    CapacityEntry {
        verdict: screen.verdict,
        ..analytic
    }
}

/// The fleet step function of one configuration on one tier, up to the
/// fleet that `need_rps` requires (stage 2); `None` when one replica cannot
/// serve the tier.
pub fn fleet(
    setting: &Setting,
    offer: &GpuOffer,
    config: &Config,
    tier: &Tier,
    demand: &TierDemand,
    need_rps: f64,
    known: Option<FleetCapacity>,
) -> Option<FleetCapacity> {
    let search = Search::new(setting, offer, config, tier, demand);
    let key = format!("fleet|{}", search.key);
    let limit = setting.simulation.fleet_max_replicas;
    let enough = |f: &FleetCapacity| {
        f.points.last().is_some_and(|p| p.max_rps >= need_rps) || f.max_replicas() >= limit
    };
    let on_disk: Option<FleetCapacity> = read_cached(setting.cache_dir, &key);
    // The longer of what the caller holds and what the cache holds: both are
    // prefixes of the same deterministic sequence.
    let mut fleet = match (known, on_disk) {
        (Some(a), Some(b)) => Some(if a.points.len() >= b.points.len() {
            a
        } else {
            b
        }),
        (a, b) => a.or(b),
    };
    if fleet.as_ref().is_some_and(enough) {
        return fleet.map(|f| f.up_to(need_rps));
    }
    let f = fleet.get_or_insert_with(|| {
        let screen = format!("screen|{}", search.key);
        search.start_fleet(cached(setting.cache_dir, &screen, || {
            search.single_replica()
        }))
    });
    if f.points.is_empty() {
        return None;
    }
    while !enough(f) {
        let next = search.fleet_point(f);
        f.points.push(next);
    }
    write_cached(setting.cache_dir, &key, &*f);
    // The cache may hold a longer function than this need: return what a
    // computation from scratch would, so the output never depends on it.
    fleet.map(|f| f.up_to(need_rps))
}

/// What the single-replica screen found: the verdict, the saturated
/// throughput it measured, and (when the replica serves) the first point of
/// the fleet step function.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Screen {
    verdict: Verdict,
    saturated_rps: f64,
    point: Option<FleetPoint>,
}

/// Everything one configuration's searches on one tier share.
struct Search<'a> {
    spec: ReplicaSpec,
    tier: &'a Tier,
    demand: &'a TierDemand,
    sim: &'a Simulation,
    roofline_rps: f64,
    key: String,
}

impl<'a> Search<'a> {
    fn new(
        setting: &'a Setting,
        offer: &GpuOffer,
        config: &Config,
        tier: &'a Tier,
        demand: &'a TierDemand,
    ) -> Self {
        let spec = ReplicaSpec::new(
            config.perf(offer, setting.model),
            config.max_batch,
            config.max_batched_tokens,
            setting.simulation.scheduler,
        );
        let roofline = RooflineBound::new(
            &offer.profile,
            &setting.model.profile,
            config.tensor_parallel,
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

    /// Requests simulated for a fleet of `n`.
    fn requests(&self, n: u32) -> usize {
        (self.sim.capacity_requests as usize)
            .max(self.sim.fleet_requests_per_replica as usize * n as usize)
    }

    /// One run of `n` replicas at `rate`: the tier's tally, and whether the
    /// number in flight stayed bounded.
    fn run(&self, n: u32, rate: f64) -> (TierTally, bool) {
        let count = self.requests(n);
        let cv = self.demand.within_minute_cv.max(0.05);
        let arrivals = renewal(rate, cv, &self.demand.lengths, count, self.sim.seed);
        let fleet = fleet_of(&self.spec, n, self.tier, self.demand, self.sim.router);
        let mut result = simulate(&fleet, 0..1, arrivals, self.sim.seed, |_| {});
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
        let arrivals = renewal(1e9, 1.0, &self.demand.lengths, count, self.sim.seed);
        let fleet = fleet_of(&self.spec, 1, self.tier, self.demand, self.sim.router);
        let result = simulate(&fleet, 0..1, arrivals, self.sim.seed, |_| {});
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

    fn binding(&self, failed: &TierTally, bounded: bool) -> &'static str {
        if !bounded {
            "stability"
        } else if failed.met_ttft < failed.met_tpot {
            "ttft"
        } else {
            "tpot"
        }
    }

    /// Stage 1: bisection on one replica's rate.
    fn single_replica(&self) -> Screen {
        let q = self.target();
        let tier = self.tier;
        let saturated = self.saturated_rps();
        let stable = self.stable_rps(1, saturated);
        let low = stable * LOW_RATE_FRACTION;
        let (ok, at_low) = self.passes(1, low);
        let cannot = |verdict| Screen {
            verdict,
            saturated_rps: saturated,
            point: None,
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
            let binding = self.binding(&hi_tally, hi_bounded);
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

    /// A step function holding the screen's point (one replica), or none
    /// when one replica cannot serve the tier.
    fn start_fleet(&self, screen: Screen) -> FleetCapacity {
        FleetCapacity {
            points: screen.point.into_iter().collect(),
            saturated_rps_per_replica: screen.saturated_rps,
            roofline_rps_per_replica: self.roofline_rps,
        }
    }

    /// The next point of `f`: n = last + 1 replicas, searched upward from
    /// the last point's rate (a larger fleet never sustains less) by
    /// galloping steps, then bisection to [`FLEET_RELATIVE_TOLERANCE`].
    fn fleet_point(&self, f: &FleetCapacity) -> FleetPoint {
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
        // Gallop from the linear guess n/(n−1) × the last rate.
        let mut step = (b.lo * f64::from(n) / f64::from(last.replicas) - b.lo).max(b.lo * 0.01);
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
        let binding = self.binding(&b.hi_tally, b.hi_bounded);
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
        }],
        groups: vec![Group {
            tier: 0,
            label: String::new(),
            spec: spec.clone(),
            replicas_by_slot: vec![n],
            rps_per_replica: 1.0,
        }],
        router,
    }
}

/// Every input the search depends on, as text.
fn cache_key(sim: &Simulation, spec: &ReplicaSpec, tier: &Tier, demand: &TierDemand) -> String {
    let lengths: Vec<u8> = demand
        .lengths
        .iter()
        .flat_map(|&(i, o)| [i.to_le_bytes(), o.to_le_bytes()].concat())
        .collect();
    format!(
        "{CACHE_VERSION}|{:?}|limits {} {} p{}|cv {:?}|lengths {:016x} x{}|mean out {:?}|n {}|per replica {}|utilisation {:?}|router {:?}|seed {}",
        spec,
        tier.ttft_ms,
        tier.tpot_ms,
        tier.percentile,
        demand.within_minute_cv,
        fnv1a(&lengths),
        demand.lengths.len(),
        demand.output_tokens.mean,
        sim.capacity_requests,
        sim.fleet_requests_per_replica,
        sim.max_utilisation,
        sim.router,
        sim.seed
    )
}

/// 64-bit FNV-1a: a hash that stays the same across builds and platforms.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[derive(Serialize, Deserialize)]
struct Cached<T> {
    key: String,
    value: T,
}

fn cache_path(dir: &Path, key: &str) -> PathBuf {
    dir.join("capacity")
        .join(format!("{:016x}.json", fnv1a(key.as_bytes())))
}

/// The cached value for `key`, or `compute()` (then cached).
fn cached<T: Serialize + DeserializeOwned>(
    dir: Option<&Path>,
    key: &str,
    compute: impl FnOnce() -> T,
) -> T {
    if let Some(v) = read_cached(dir, key) {
        return v;
    }
    let v = compute();
    write_cached(dir, key, &v);
    v
}

fn read_cached<T: DeserializeOwned>(dir: Option<&Path>, key: &str) -> Option<T> {
    let text = std::fs::read_to_string(cache_path(dir?, key)).ok()?;
    let cached: Cached<T> = serde_json::from_str(&text).ok()?;
    (cached.key == key).then_some(cached.value)
}

/// Writes through a temporary file and a rename, so a reader never sees half
/// a file; failures only cost the cache.
fn write_cached<T: Serialize>(dir: Option<&Path>, key: &str, value: &T) {
    let Some(dir) = dir else { return };
    let path = cache_path(dir, key);
    let Some(parent) = path.parent() else { return };
    if std::fs::create_dir_all(parent).is_err() {
        return;
    }
    let cached = Cached {
        key: key.to_string(),
        value,
    };
    let Ok(text) = serde_json::to_string(&cached) else {
        return;
    };
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, &path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}
