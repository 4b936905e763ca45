//! The on-disk cache of capacity searches: one JSON file per search, named
//! by a stable hash of every input and holding the inputs as text, so a
//! changed input never reads a stale result.

use crate::demand::TierDemand;
use crate::scenario::{Simulation, Tier};
use crate::sim::ReplicaSpec;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Bumped whenever the simulator or the search changes results.
const CACHE_VERSION: &str = "simcap-5";
/// Where capacity results are cached: `$PLANNER_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/planner`, else `~/.cache/planner`.
pub(crate) fn default_cache_dir() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("PLANNER_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("planner")))
        .or_else(|| env("HOME").map(|d| d.join(".cache").join("planner")))
}

/// Every input the search depends on, as text.
pub(super) fn cache_key(
    sim: &Simulation,
    spec: &ReplicaSpec,
    tier: &Tier,
    demand: &TierDemand,
) -> String {
    let lengths: Vec<u8> = demand
        .lengths
        .iter()
        .flat_map(|&(i, o)| [i.to_le_bytes(), o.to_le_bytes()].concat())
        .collect();
    format!(
        "{CACHE_VERSION}|{:?}|limits {} {} p{}|cv {:?}|lengths {:016x} x{}|mean out {:?}|n {}|per replica {}|burst scale max {:?}|utilisation {:?}|router {:?}|seed {}",
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
        sim.burst_scale_max,
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
pub(super) fn cached<T: Serialize + DeserializeOwned>(
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

pub(super) fn read_cached<T: DeserializeOwned>(dir: Option<&Path>, key: &str) -> Option<T> {
    let text = std::fs::read_to_string(cache_path(dir?, key)).ok()?;
    let cached: Cached<T> = serde_json::from_str(&text).ok()?;
    (cached.key == key).then_some(cached.value)
}

/// Writes through a temporary file and a rename, so a reader never sees half
/// a file; failures only cost the cache.
pub(super) fn write_cached<T: Serialize>(dir: Option<&Path>, key: &str, value: &T) {
    // One temporary name per write, so threads of one process (a sweep's
    // variants) never write into each other's file.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
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
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp{}-{n}", std::process::id()));
    // A failed write (disk full) or rename leaves no temporary behind.
    if std::fs::write(&tmp, text).is_err() || std::fs::rename(&tmp, &path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}
