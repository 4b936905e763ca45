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
//! may exceed the roofline ceiling ([`crate::perf::roofline::RooflineBound`]); that is asserted.
//!
//! A run that is to say only whether a rate is sustained stops as soon as
//! more of its requests have missed than the target allows of the whole
//! run: it fails then, whatever its other requests do. It is kept paused,
//! and run to its end only if it is the search's last failure, whose whole
//! tally names the binding limit; so every figure is the one that whole runs
//! give.
//!
//! Results are cached on disk, keyed by every input of the search, so a
//! repeated solve skips the simulation.

mod cache;
mod search;

pub(crate) use crate::base::disk_cache::default_cache_dir;

use crate::base::progress::Progress;
use crate::base::timings::Timings;
use crate::capacity::fleet::FleetCapacity;
use crate::capacity::{self, speculative_method, CapacityEntry, Config, Verdict};
use crate::demand::TierDemand;
use crate::scenario::{GpuOffer, Scenario, ServedModel, Simulation, Tier};
use cache::{cached, read_cached, write_cached};
use search::{Screen, Search};

use std::collections::BTreeMap;
use std::path::Path;

/// Every configuration of every offer on every tier: screened on one
/// replica, and the survivors' fleet step functions up to the fleet that
/// `need_rps[tier]` requests/s require (capped at
/// `simulation.fleet_max_replicas`). Work is spread over the cores; the
/// result does not depend on the split. Each stage's time is recorded in
/// `timings` as a part of the caller's stage.
pub(crate) fn evaluate_all(
    scenario: &Scenario,
    demand: &[TierDemand],
    need_rps: &[f64],
    cache_dir: Option<&Path>,
    progress: Progress,
    timings: &Timings,
) -> Vec<Vec<CapacityEntry>> {
    // Each model's configurations on the offers as they run it.
    let by_model: Vec<Vec<(usize, Config)>> = scenario
        .models
        .iter()
        .map(|m| Config::candidates(&m.gpus, speculative_method(m)))
        .collect();
    let candidates_of = |k: usize| &by_model[scenario.tiers[k].model];
    // Stage 1a: batch caps at the middle chunk size of each offer.
    let mut jobs = Vec::new();
    for (k, _) in scenario.tiers.iter().enumerate() {
        let offers = &scenario.model_of(k).gpus;
        for (i, (g, c)) in candidates_of(k).iter().enumerate() {
            if c.max_batched_tokens == middle_chunk(&offers[*g]) {
                jobs.push((k, i));
            }
        }
    }
    // One stage of screens, timed as a part of the caller's stage.
    let screen = |jobs: &[(usize, usize)], stage: u32, what: &str| {
        timings.time_part(
            || {
                format!(
                    "capacity: {what} screened on one replica ({} configurations)",
                    jobs.len()
                )
            },
            || {
                screen_jobs(
                    scenario, demand, cache_dir, &by_model, jobs, progress, stage,
                )
            },
        )
    };
    let screened = screen(&jobs, 1, "batch caps");
    // Stage 1b: chunk sizes at the best batch cap of each (tier, GPU, TP,
    // precision, disaggregated unit).
    // (tier, the candidate's family).
    let mut best_batch: BTreeMap<(usize, Family), (f64, u32)> = BTreeMap::new();
    for ((k, i), e) in jobs.iter().zip(&screened) {
        let (g, c) = &candidates_of(*k)[*i];
        let rps = serving_rps(e);
        let slot = best_batch
            .entry((*k, (*g, c.tensor_parallel, c.precision, c.disaggregated)))
            .or_insert((rps, c.max_batch));
        if rps > slot.0 {
            *slot = (rps, c.max_batch);
        }
    }
    let mut more = Vec::new();
    for (k, _) in scenario.tiers.iter().enumerate() {
        let offers = &scenario.model_of(k).gpus;
        for (i, (g, c)) in candidates_of(k).iter().enumerate() {
            let key = (k, (*g, c.tensor_parallel, c.precision, c.disaggregated));
            let Some(&(_, b)) = best_batch.get(&key) else {
                continue;
            };
            if c.max_batch == b && c.max_batched_tokens != middle_chunk(&offers[*g]) {
                more.push((k, i));
            }
        }
    }
    let screened_more = screen(&more, 2, "chunk sizes");
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
    // Only the chosen pooling candidates keep the screen's one-point
    // function; the others are not simulated as fleets.
    for entries in &mut table {
        let kept = survivors(entries);
        for (i, e) in entries.iter_mut().enumerate() {
            if serving_rps(e) <= 0.0 && !kept.contains(&i) {
                e.fleet = None;
            }
        }
    }
    extend_fleets(
        &mut table, scenario, demand, need_rps, cache_dir, progress, timings,
    );
    table
}

/// Stage 2 alone: gives every survivor of the screen a fleet step function
/// that reaches `need_rps[tier]` (or `simulation.fleet_max_replicas`),
/// extending the ones it already has; its time, when there was any to
/// extend, is recorded in `timings` as a part of the caller's stage.
pub(crate) fn extend_fleets(
    table: &mut [Vec<CapacityEntry>],
    scenario: &Scenario,
    demand: &[TierDemand],
    need_rps: &[f64],
    cache_dir: Option<&Path>,
    progress: Progress,
    timings: &Timings,
) {
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
    let start = std::time::Instant::now();
    let bar = progress.steps("fleet capacity by simulation", fleet_jobs.len() as u64);
    let fleets = crate::base::parallel::map_in_order(&fleet_jobs, |&(k, i)| {
        let e = &table[k][i];
        let f = fleet(
            &Setting::of(scenario, k, cache_dir),
            &scenario.model_of(k).gpus[e.gpu],
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
    let points = |f: Option<&FleetCapacity>| f.map_or(0, |f| f.points.len());
    let mut added = 0;
    for ((k, i), f) in fleet_jobs.iter().zip(fleets) {
        let f = f.flatten();
        added += points(f.as_ref()).saturating_sub(points(table[*k][*i].fleet.as_ref()));
        table[*k][*i].fleet = f;
    }
    timings.record_part(
        format!(
            "capacity: fleet step functions extended ({} of them, {added} points added)",
            fleet_jobs.len()
        ),
        start.elapsed().as_secs_f64(),
    );
}

/// `f` up to its first point that sustains `need_rps` and to at most `limit`
/// replicas: what a computation from scratch returns, whatever longer
/// function the cache held (one computed for a larger fleet limit).
fn within(f: FleetCapacity, need_rps: f64, limit: u32) -> FleetCapacity {
    let mut f = f.up_to(need_rps);
    f.points.truncate(limit as usize);
    f
}

/// Whether fleets of up to [`search::POOLING_TRIAL_REPLICAS`] replicas all
/// sustained nothing: the misses are not the bursts' (a lone request misses).
fn never_pools(f: &FleetCapacity) -> bool {
    f.max_replicas() >= search::POOLING_TRIAL_REPLICAS && f.points.iter().all(|p| p.max_rps <= 0.0)
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
    cache_dir: Option<&Path>,
    by_model: &[Vec<(usize, Config)>],
    jobs: &[(usize, usize)],
    progress: Progress,
    stage: u32,
) -> Vec<CapacityEntry> {
    let bar = progress.steps(
        &format!("capacity by simulation ({stage}/2)"),
        jobs.len() as u64,
    );
    let out = crate::base::parallel::map_in_order(jobs, |&(k, i)| {
        let (g, c) = &by_model[scenario.tiers[k].model][i];
        let e = evaluate(
            &Setting::of(scenario, k, cache_dir),
            *g,
            &scenario.model_of(k).gpus[*g],
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
/// per (GPU type, tensor parallel, precision, unit shape), then only those not
/// dominated on the same GPU type by one with no more GPUs per replica and
/// at least as much single-replica capacity per GPU; and, for each (GPU
/// type, tensor parallel, precision) where no single replica serves, the
/// pooling candidate (one replica missing the target only through the
/// tier's bursts) with the highest attainment at the lowest rate.
pub(crate) fn survivors(entries: &[CapacityEntry]) -> Vec<usize> {
    let mut kept = serving_survivors(entries);
    let serving: std::collections::BTreeSet<_> = entries
        .iter()
        .filter(|e| serving_rps(e) > 0.0)
        .map(family)
        .collect();
    let mut pooling: BTreeMap<Family, (usize, f64)> = BTreeMap::new();
    for (i, e) in entries.iter().enumerate() {
        let key = family(e);
        let Some(first) = e.fleet.as_ref().and_then(|f| f.points.first()) else {
            continue;
        };
        if serving_rps(e) > 0.0 || serving.contains(&key) {
            continue;
        }
        match pooling.get(&key) {
            Some(&(_, a)) if a >= first.attainment => {}
            _ => {
                pooling.insert(key, (i, first.attainment));
            }
        }
    }
    kept.extend(pooling.into_values().map(|(i, _)| i));
    kept.sort_unstable();
    kept
}

/// Entries compared with each other by the survivors' rules: of one GPU
/// type, TP degree, precision and unit shape (a disaggregated unit's
/// requests/s are its GPUs' together, so it is compared with its kind).
type Family = (
    usize,
    u32,
    crate::profiles::precision::Precision,
    Option<crate::scenario::pd_ratio::PdRatio>,
);

fn family(e: &CapacityEntry) -> Family {
    (
        e.gpu,
        e.config.tensor_parallel,
        e.config.precision,
        e.config.disaggregated,
    )
}

/// The best single replica per (GPU type, tensor parallel, precision) not
/// dominated on capacity per GPU, and beside each the largest batch cap of
/// its key that serves: one replica's figure is decided by its TTFT at a
/// low rate, where a small batch cap can win by a hair, while a fleet's is
/// decided by pooled throughput, where the largest batch wins (on
/// `scenarios/peak.toml`'s interactive tier at TTFT 450 ms, MI300X TP4 with
/// batch cap 32 beats 128 alone, 4.64 against 4.55 requests/s, and saturates
/// at 6.7 requests/s a replica against 11.0).
fn serving_survivors(entries: &[CapacityEntry]) -> Vec<usize> {
    let mut best: BTreeMap<Family, usize> = BTreeMap::new();
    let mut widest: BTreeMap<Family, usize> = BTreeMap::new();
    for (i, e) in entries.iter().enumerate() {
        if serving_rps(e) <= 0.0 {
            continue;
        }
        let key = family(e);
        match best.get(&key) {
            Some(&j) if serving_rps(&entries[j]) >= serving_rps(e) => {}
            _ => {
                best.insert(key, i);
            }
        }
        match widest.get(&key) {
            Some(&j)
                if (entries[j].config.max_batch, serving_rps(&entries[j]))
                    >= (e.config.max_batch, serving_rps(e)) => {}
            _ => {
                widest.insert(key, i);
            }
        }
    }
    let kept: Vec<usize> = best.values().copied().collect();
    let mut kept = capacity::non_dominated(entries, &kept);
    for (key, &i) in &widest {
        if best.get(key).is_some_and(|b| kept.contains(b)) && !kept.contains(&i) {
            kept.push(i);
        }
    }
    kept.sort_unstable();
    kept
}

/// What a capacity search runs with besides the configuration: the served
/// model, the simulator's settings and where results are cached.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Setting<'a> {
    pub model: &'a ServedModel,
    pub simulation: &'a Simulation,
    pub cache_dir: Option<&'a Path>,
}

impl<'a> Setting<'a> {
    /// Tier `k`'s model and the scenario's simulator settings.
    pub(crate) fn of(scenario: &'a Scenario, k: usize, cache_dir: Option<&'a Path>) -> Self {
        Self::for_model(scenario, scenario.model_of(k), cache_dir)
    }

    /// `model` with the scenario's simulator settings.
    pub(crate) fn for_model(
        scenario: &'a Scenario,
        model: &'a ServedModel,
        cache_dir: Option<&'a Path>,
    ) -> Self {
        Setting {
            model,
            simulation: &scenario.simulation,
            cache_dir,
        }
    }
}

/// One replica of one configuration of `offer` on one tier (stage 1).
pub(crate) fn evaluate(
    setting: &Setting,
    gpu: usize,
    offer: &GpuOffer,
    config: &Config,
    tier: &Tier,
    demand: &TierDemand,
) -> CapacityEntry {
    let analytic = capacity::evaluate(gpu, offer, setting.model, config, tier, demand);
    if let Verdict::Cannot {
        best_ttft_ms: None, ..
    } = analytic.verdict
    {
        return analytic; // the model or the tier's requests do not fit in memory
    }
    let search = Search::new(setting, offer, config, tier, demand);
    let key = format!("screen|{}", search.key);
    let screen: Screen = cached(setting.cache_dir, &key, || search.single_replica());
    // A replica that misses only through the tier's bursts carries its
    // one-point step function (zero for one replica) as a pooling candidate.
    let fleet = match screen.verdict {
        Verdict::Cannot { .. } => {
            Some(search.start_fleet(screen.clone())).filter(|f| !f.points.is_empty())
        }
        Verdict::Serves(_) => None,
    };
    CapacityEntry {
        verdict: screen.verdict,
        fleet,
        ..analytic
    }
}

/// The fleet step function of one configuration on one tier, up to the
/// fleet that `need_rps` requires (stage 2); `None` when one replica cannot
/// serve the tier.
pub(crate) fn fleet(
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
    if fleet.as_ref().is_some_and(never_pools) {
        return None;
    }
    if fleet.as_ref().is_some_and(enough) {
        return fleet.map(|f| within(f, need_rps, limit));
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
    while !enough(f) && !never_pools(f) {
        let next = search.fleet_point(f);
        f.points.push(next);
    }
    write_cached(setting.cache_dir, &key, &*f);
    if never_pools(f) {
        return None;
    }
    // The cache may hold a longer function than this need: return what a
    // computation from scratch would, so the output never depends on it.
    fleet.map(|f| within(f, need_rps, limit))
}

/// The share of the tier's sampled prompt tokens the capacity search found
/// in a replica's prefix cache for `config` on `offer`, when the replicas
/// cache prefixes and the tier's traces name their blocks or state a prefix
/// model (`search::prefix_hits`).
pub(crate) fn sampled_prefix_share(
    scenario: &Scenario,
    model: &ServedModel,
    offer: &GpuOffer,
    config: &Config,
    demand: &TierDemand,
) -> Option<f64> {
    let spec = config.replica(offer, model, scenario.simulation.scheduler);
    let hits = search::prefix_hits(&scenario.simulation, demand, &spec)?;
    let input: u64 = demand.lengths.iter().map(|&(i, _)| u64::from(i)).sum();
    let cached: u64 = hits.iter().map(|&h| u64::from(h)).sum();
    (input > 0).then(|| cached as f64 / input as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::fleet::tests::step as function;

    /// What every point of a fleet step function promises, whatever way
    /// its search took: n = 1, 2, … replicas, each point at or above the
    /// last (a larger fleet never sustains less), at or under the fleet's
    /// stable rate (the search's ceiling), and sustained: its run met the
    /// tier's target.
    #[test]
    fn every_fleet_point_is_sustained_between_the_last_point_and_the_ceiling() {
        let scenario = crate::scenario::tiny_fixture();
        let demand = crate::demand::build(&scenario, Progress::hidden()).expect("demand");
        let (tier, tier_demand) = (&scenario.tiers[0], &demand.tiers[0]);
        let setting = Setting::of(&scenario, 0, None);
        let offers = &scenario.model_of(0).gpus;
        let (g, config) = Config::candidates(offers, None)
            .into_iter()
            .find(|(g, _)| offers[*g].id == "l40s")
            .expect("an L40S configuration");
        let screen = evaluate(&setting, g, &offers[g], &config, tier, tier_demand);
        let Verdict::Serves(one) = &screen.verdict else {
            panic!(
                "one L40S replica serves the tiny tier: {:?}",
                screen.verdict
            );
        };
        let need = one.max_rps * 8.0;
        let f = fleet(&setting, &offers[g], &config, tier, tier_demand, need, None)
            .expect("a fleet step function");
        assert!(f.points.len() >= 5, "{} points", f.points.len());
        let ceiling = |n: u32| {
            scenario.simulation.max_utilisation * f.saturated_rps_per_replica * f64::from(n)
        };
        for (i, p) in f.points.iter().enumerate() {
            assert_eq!(p.replicas, i as u32 + 1);
            assert!(p.max_rps <= ceiling(p.replicas) * (1.0 + 1e-9), "{p:?}");
            assert!(p.attainment >= tier.percentile / 100.0, "{p:?}");
        }
        for w in f.points.windows(2) {
            assert!(w[1].max_rps >= w[0].max_rps, "{:?} then {:?}", w[0], w[1]);
        }
        assert!(f.points.last().is_some_and(|p| p.max_rps >= need));
    }

    #[test]
    fn a_longer_cached_function_is_cut_to_the_need_and_the_fleet_limit() {
        let f = function(&[1.0, 3.0, 5.0, 7.0, 9.0, 11.0]);
        assert_eq!(within(f.clone(), 4.0, 48).max_replicas(), 3);
        assert_eq!(within(f.clone(), 100.0, 4).max_replicas(), 4);
        assert_eq!(within(f, 100.0, 48).max_replicas(), 6);
    }

    #[test]
    fn a_pooling_candidate_that_never_serves_is_dropped_after_the_trial_fleets() {
        assert!(!never_pools(&function(&[0.0, 0.0])));
        assert!(never_pools(&function(&[0.0, 0.0, 0.0, 0.0])));
        assert!(!never_pools(&function(&[0.0, 0.0, 0.0, 0.5])));
    }

    #[test]
    fn runs_are_lengthened_by_the_squared_cv_within_the_cap() {
        assert_eq!(search::burst_scale(0.5, 16.0), 1.0);
        assert_eq!(search::burst_scale(1.0, 16.0), 1.0);
        assert!((search::burst_scale(3.26, 16.0) - 10.6276).abs() < 1e-9);
        assert_eq!(search::burst_scale(3.26, 4.0), 4.0);
        assert_eq!(search::burst_scale(3.26, 1.0), 1.0);
    }
}
