//! The fleet: replicas grouped by (tier, configuration), following the plan's
//! replica counts slot by slot, a router in front of them, and the event loop
//! that replays a workload against them.
//!
//! * At each slot start every group gets the plan's replica count for that
//!   slot. New replicas start empty; replicas beyond the count stop taking
//!   requests and finish the ones they hold (drain).
//! * A request of a tier goes to the API with the plan's API share for its
//!   slot (seeded draw); otherwise the [`Router`] sends it to one of the
//!   tier's up replicas: by default the one with the least outstanding work
//!   per unit of capacity ((prompt tokens not yet prefilled + requests in
//!   system × the tier's mean output tokens) / the configuration's
//!   requests/s per replica; ties go to the lowest index), or round robin.
//!   A request finds no replica when the plan has none up for its tier, or
//!   when its prompt plus output exceed every up replica's KV cache; it is
//!   counted unserved (missing both limits).

use super::kv_cache::PrefixSource;
use super::metrics::{GroupTally, Limits, SlotTally, TierTally};
use super::replica::ReplicaSpec;
use super::router::Router;
use serde::{Deserialize, Serialize};

mod parts;
mod run;

pub(crate) use run::{client, simulate, simulate_observed, ClientPrompt, Paused};

/// One tier as the fleet sees it.
#[derive(Debug, Clone)]
pub(crate) struct FleetTier {
    pub name: String,
    pub limits: Limits,
    /// Share of the tier's requests sent to the API, per slot.
    pub api_share_by_slot: Vec<f64>,
    /// Mean output tokens (the router's estimate of a request's decode work).
    pub mean_output_tokens: f64,
    /// A batch tier's deadline in seconds: its requests wait in the tier's
    /// backlog until a replica has a free batch place, and one completed
    /// later than arrival + deadline misses. `None`: routed on arrival.
    pub deadline_s: Option<f64>,
}

/// Spot terms of a group: each replica the plan requests for a slot is
/// granted with probability `availability` (seeded draw) unless it is
/// already up, and a granted replica is interrupted at `interruptions_per_hour`
/// (exponential times): it goes down at once, the requests it holds are
/// dropped (counted unserved and interrupted), and it stays down until the
/// next slot's request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Spot {
    pub availability: f64,
    pub interruptions_per_hour: f64,
}

/// Identical replicas serving one tier.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub tier: usize,
    pub label: String,
    pub spec: ReplicaSpec,
    pub replicas_by_slot: Vec<u32>,
    /// The plan's requests/s per replica (the router's capacity weight).
    pub rps_per_replica: f64,
    /// `Some` for replicas on spot GPUs.
    pub spot: Option<Spot>,
    /// Per slot, how many of its replicas start the slot loading their
    /// model (a pooled fleet moved their GPUs from another model): the
    /// last ranks up, down for `load_s` from the slot's start. Empty: none.
    pub loading_by_slot: Vec<u32>,
    /// Seconds a loading replica serves nothing: its weights read from
    /// storage and the engine started.
    pub load_s: f64,
}

/// The fleet a plan describes.
#[derive(Debug, Clone)]
pub(crate) struct Fleet {
    pub slot_s: f64,
    pub tiers: Vec<FleetTier>,
    pub groups: Vec<Group>,
    /// How a request picks one of its tier's up replicas.
    pub router: Router,
    /// What the replicas know of the requests' prompt prefixes, when they
    /// cache them (`None`: no prefix caching).
    pub prefixes: Option<PrefixSource>,
}

impl Fleet {
    /// One tier served by one group of `replicas` replicas of `spec` in
    /// every slot (a capacity search's or a benchmark's fleet), no spot, no
    /// loads, no prefix caching.
    pub(crate) fn single(
        slot_s: f64,
        tier: FleetTier,
        spec: ReplicaSpec,
        replicas: u32,
        router: Router,
    ) -> Fleet {
        Fleet {
            slot_s,
            tiers: vec![tier],
            groups: vec![Group {
                tier: 0,
                label: String::new(),
                spec,
                replicas_by_slot: vec![replicas],
                rps_per_replica: 1.0,
                spot: None,
                loading_by_slot: Vec::new(),
                load_s: 0.0,
            }],
            router,
            prefixes: None,
        }
    }
}

/// What a replay measured (cached on disk per slot: `replay::slots`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SimResult {
    pub tiers: Vec<TierTally>,
    /// Per slot of the range, per tier.
    pub slots: Vec<Vec<SlotTally>>,
    pub groups: Vec<GroupTally>,
    /// Requests offered.
    pub requests: u64,
    /// Events processed (arrivals, step ends, slot starts).
    pub events: u64,
    /// Most requests in flight at once.
    pub peak_in_flight: usize,
}

/// One request completed on a replica, as `planner simulate --requests-out`
/// writes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Completed {
    pub arrival_s: f64,
    pub input_tokens: u32,
    pub tier: u16,
    pub ttft_ms: f64,
    pub e2e_ms: f64,
    pub output_tokens: u32,
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod properties;

#[cfg(test)]
mod split_tests;
