//! The replay simulator: a discrete-event model of a fleet of replicas, each
//! running continuous batching ([`replica`]) under a step scheduler
//! ([`crate::profiles::Scheduler`]) over its KV cache ([`kv_cache`]) and, for traces that name their
//! prompts' blocks, a prefix cache ([`prefix_cache`]),
//! behind a [`router`] ([`fleet`]), aggregated or disaggregated into
//! prefill and decode replicas ([`replica_spec::SplitSpec`], [`kv_transfer`]), fed by arrivals (the scenario's traces,
//! `demand::workload`, or a [`renewal`] stream).
//! Semantics in `docs/simulator.md`.

pub(crate) mod bench;
pub(crate) mod events;
pub(crate) mod fleet;
pub(crate) mod histogram;
pub(crate) mod kv_cache;
pub(crate) mod kv_transfer;
pub(crate) mod metrics;
pub(crate) mod prefix_cache;
pub(crate) mod renewal;
pub(crate) mod replica;
pub(crate) mod replica_spec;
pub(crate) mod request;
pub(crate) mod router;

pub(crate) use crate::profiles::Scheduler;
pub(crate) use fleet::{
    simulate, simulate_observed, Completed, Fleet, FleetTier, Group, Paused, SimResult, Spot,
};
pub(crate) use kv_transfer::KvTransfer;
pub(crate) use metrics::{Latency, Limits, TierTally};
pub(crate) use replica::ReplicaSpec;
pub(crate) use replica_spec::SplitSpec;
pub(crate) use router::Router;
