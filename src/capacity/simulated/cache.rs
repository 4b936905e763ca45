//! The key of a capacity search in the on-disk cache ([`disk_cache`]): every
//! input of the search, as text.

use crate::base::disk_cache::{self, fnv1a};
use crate::demand::TierDemand;
use crate::scenario::{Simulation, Tier};
use crate::sim::ReplicaSpec;
use serde::{de::DeserializeOwned, Serialize};
use std::path::Path;

/// Bumped whenever the simulator or the search changes results.
const CACHE_VERSION: &str = "simcap-7";
/// The cache's folder for capacity searches.
const FOLDER: &str = "capacity";
/// Every input the search depends on, as text.
pub(super) fn cache_key(
    sim: &Simulation,
    spec: &ReplicaSpec,
    tier: &Tier,
    demand: &TierDemand,
    prefix_hits: Option<&[u32]>,
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
        sim.capacity_seed
    ) + &match prefix_hits {
        Some(hits) => {
            let bytes: Vec<u8> = hits.iter().flat_map(|h| h.to_le_bytes()).collect();
            format!("|prefix hits {:016x}", fnv1a(&bytes))
        }
        None => String::new(),
    }
}

/// The cached search for `key`, or `compute()` (then cached).
pub(super) fn cached<T: Serialize + DeserializeOwned>(
    dir: Option<&Path>,
    key: &str,
    compute: impl FnOnce() -> T,
) -> T {
    disk_cache::cached(dir, FOLDER, key, compute)
}

pub(super) fn read_cached<T: DeserializeOwned>(dir: Option<&Path>, key: &str) -> Option<T> {
    disk_cache::read_cached(dir, FOLDER, key)
}

pub(super) fn write_cached<T: Serialize>(dir: Option<&Path>, key: &str, value: &T) {
    disk_cache::write_cached(dir, FOLDER, key, value);
}
