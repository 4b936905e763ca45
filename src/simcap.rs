//! Capacity by simulation: the highest offered rate at which one replica of a
//! configuration keeps a tier's attainment target (the share of requests
//! meeting both TTFT and TPOT limits ≥ percentile / 100), found by bisection
//! on the rate with the replay simulator. The stream has the tier's real
//! (input, output) pairs and gamma interarrival times with the trace's
//! within-minute CV (Poisson only when that CV is 1); the same seeded stream
//! is compressed in time for every rate, so attainment falls monotonically in
//! practice and the search is reproducible.
//!
//! Results are cached on disk, keyed by every input of the search, so a
//! repeated solve skips the simulation.

use crate::capacity::{self, CapacityEntry, Sustained, Verdict};
use crate::demand::TierDemand;
use crate::perf::PerfModel;
use crate::progress::Progress;
use crate::scenario::{GpuOffer, Scenario, ServedModel, Simulation, Tier};
use crate::sim::workload::renewal;
use crate::sim::{simulate, Fleet, FleetTier, Group, Limits, ReplicaSpec, Router, TierTally};
use std::path::{Path, PathBuf};

/// Bumped whenever the simulator or the search changes results.
const CACHE_VERSION: &str = "simcap-2";
/// Bisection steps on log(rate): 2^-10 of the bracket's log width.
const BISECTION_STEPS: u32 = 10;
/// The search starts at this fraction of the throughput estimate.
const LOW_RATE_FRACTION: f64 = 1e-3;

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

/// Every configuration of every offer on every tier, by simulation (entries
/// the analytic screen rules out for memory keep its verdict). Work is spread
/// over the cores; the result does not depend on the split.
pub fn evaluate_all(
    scenario: &Scenario,
    demand: &[TierDemand],
    cache_dir: Option<&Path>,
    progress: Progress,
) -> Vec<Vec<CapacityEntry>> {
    let mut jobs = Vec::new();
    for (k, tier) in scenario.tiers.iter().enumerate() {
        for (g, offer) in scenario.gpus.iter().enumerate() {
            for &tp in &offer.tensor_parallel {
                for &b in &offer.max_batch {
                    jobs.push((k, tier, g, tp, b));
                }
            }
        }
    }
    let bar = progress.steps("capacity by simulation", jobs.len() as u64);
    let setting = Setting::of(scenario, cache_dir);
    let results = crate::parallel::map_in_order(&jobs, |&(k, tier, g, tp, b)| {
        let e = evaluate(&setting, &scenario.gpus[g], g, (tp, b), tier, &demand[k]);
        bar.inc(1);
        (k, e)
    });
    bar.finish_and_clear();
    let mut table = vec![Vec::new(); scenario.tiers.len()];
    for (k, e) in results.into_iter().flatten() {
        table[k].push(e);
    }
    table
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

/// One configuration (tensor-parallel degree, batch cap) of `offer` (offer
/// number `gpu`) on one tier.
pub fn evaluate(
    setting: &Setting,
    offer: &GpuOffer,
    gpu: usize,
    (tp, max_batch): (u32, u32),
    tier: &Tier,
    demand: &TierDemand,
) -> CapacityEntry {
    let analytic = capacity::evaluate(offer, gpu, setting.model, tp, max_batch, tier, demand);
    if let Verdict::Cannot {
        best_ttft_ms: None, ..
    } = analytic.verdict
    {
        return analytic; // the model or the tier's requests do not fit in memory
    }
    let spec = ReplicaSpec::new(
        PerfModel::new(&offer.profile, &setting.model.profile, tp),
        max_batch,
        setting.simulation.max_batched_tokens,
        setting.simulation.scheduler,
    );
    let key = cache_key(setting.simulation, &spec, tier, demand);
    let path = setting.cache_dir.map(|d| {
        d.join("capacity")
            .join(format!("{:016x}.json", fnv1a(key.as_bytes())))
    });
    if let Some(v) = path.as_deref().and_then(|p| read_cached(p, &key)) {
        return CapacityEntry {
            verdict: v,
            ..analytic
        };
    }
    let verdict = search(&spec, tier, demand, setting.simulation);
    if let Some(p) = path {
        write_cached(&p, &key, &verdict);
    }
    CapacityEntry {
        verdict,
        ..analytic
    }
}

/// A single replica with no API, judged against `tier`.
fn fleet_of_one(spec: &ReplicaSpec, tier: &Tier, demand: &TierDemand) -> Fleet {
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
            replicas_by_slot: vec![1],
            rps_per_replica: 1.0,
        }],
        router: Router::default(),
    }
}

/// Requests/s at which the replica's work rate saturates, estimated from the
/// mean prompt's prefill and decode steps at the largest batch its KV cache
/// allows: the bisection's first upper bound.
fn throughput_estimate_rps(spec: &ReplicaSpec, demand: &TierDemand) -> f64 {
    let perf = &spec.perf;
    let mean_in = demand.input_tokens.mean.max(1.0);
    let mean_out = demand.output_tokens.mean.max(1.0);
    let context = mean_in + mean_out / 2.0;
    let batch = f64::from(spec.max_batch)
        .min(spec.kv_capacity_tokens as f64 / (mean_in + mean_out))
        .max(1.0);
    let per_request_s =
        perf.prefill_s(mean_in) + (mean_out - 1.0) * perf.decode_step_s(batch, context) / batch;
    1.0 / per_request_s.max(1e-9)
}

fn search(spec: &ReplicaSpec, tier: &Tier, demand: &TierDemand, sim: &Simulation) -> Verdict {
    let target = tier.percentile / 100.0;
    let fleet = fleet_of_one(spec, tier, demand);
    let cv = demand.within_minute_cv.max(0.05);
    let n = sim.capacity_requests as usize;
    let run = |rate: f64| -> TierTally {
        let arrivals = renewal(rate, cv, &demand.lengths, n, sim.seed);
        simulate(&fleet, 0..1, arrivals, sim.seed, |_| {})
            .tiers
            .swap_remove(0)
    };
    let q = target;
    let estimate = throughput_estimate_rps(spec, demand);
    let low = estimate * LOW_RATE_FRACTION;
    let at_low = run(low);
    if at_low.attainment() < target {
        return Verdict::Cannot {
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
        };
    }
    // Bracket: grow the upper bound until the target fails.
    let (mut lo, mut lo_tally) = (low, at_low);
    let mut hi = estimate * 2.0;
    let mut hi_tally = run(hi);
    let mut doublings = 0;
    while hi_tally.attainment() >= target && doublings < 6 {
        (lo, lo_tally) = (hi, hi_tally);
        hi *= 2.0;
        hi_tally = run(hi);
        doublings += 1;
    }
    for _ in 0..BISECTION_STEPS {
        let mid = (lo * hi).sqrt();
        let t = run(mid);
        if t.attainment() >= target {
            (lo, lo_tally) = (mid, t);
        } else {
            (hi, hi_tally) = (mid, t);
        }
    }
    let binding = if hi_tally.attainment() >= target {
        "throughput"
    } else if (hi_tally.met_ttft as f64) < (hi_tally.met_tpot as f64) {
        "ttft"
    } else {
        "tpot"
    };
    let mean_batch = if lo_tally.served_requests > 0 {
        lo * lo_tally.decode_s / lo_tally.served_requests as f64
    } else {
        0.0
    };
    Verdict::Serves(Sustained {
        max_rps: lo,
        ttft_ms: lo_tally.ttft.quantile_ms(q),
        tpot_ms: lo_tally.tpot.quantile_ms(q),
        mean_batch,
        binding: binding.into(),
    })
}

/// Every input the search depends on, as text.
fn cache_key(sim: &Simulation, spec: &ReplicaSpec, tier: &Tier, demand: &TierDemand) -> String {
    let lengths: Vec<u8> = demand
        .lengths
        .iter()
        .flat_map(|&(i, o)| [i.to_le_bytes(), o.to_le_bytes()].concat())
        .collect();
    format!(
        "{CACHE_VERSION}|{:?}|batch {}|tokens {}|{}|kv {}|limits {} {} p{}|cv {:?}|lengths {:016x} x{}|mean out {:?}|n {}|seed {}",
        spec.perf,
        spec.max_batch,
        spec.max_batched_tokens,
        spec.scheduler.name(),
        spec.kv_capacity_tokens,
        tier.ttft_ms,
        tier.tpot_ms,
        tier.percentile,
        demand.within_minute_cv,
        fnv1a(&lengths),
        demand.lengths.len(),
        demand.output_tokens.mean,
        sim.capacity_requests,
        sim.seed
    )
}

/// 64-bit FNV-1a: a hash that stays the same across builds and platforms.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Cached {
    key: String,
    verdict: Verdict,
}

fn read_cached(path: &Path, key: &str) -> Option<Verdict> {
    let text = std::fs::read_to_string(path).ok()?;
    let cached: Cached = serde_json::from_str(&text).ok()?;
    (cached.key == key).then_some(cached.verdict)
}

/// Writes through a temporary file and a rename, so a reader never sees half
/// a file; failures only cost the cache.
fn write_cached(path: &Path, key: &str, verdict: &Verdict) {
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let cached = Cached {
        key: key.to_string(),
        verdict: verdict.clone(),
    };
    let Ok(text) = serde_json::to_string(&cached) else {
        return;
    };
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}
