//! The replay simulator: a discrete-event model of a fleet of replicas, each
//! running continuous batching ([`replica`]) under a step [`scheduler`],
//! behind a [`router`] ([`fleet`]), fed by arrivals (the scenario's traces,
//! `demand::workload`, or a [`renewal`] stream).
//! Semantics in `docs/simulator.md`.

pub mod events;
pub mod fleet;
pub mod histogram;
pub mod metrics;
pub mod renewal;
pub mod replica;
pub mod request;
pub mod router;
pub mod scheduler;

pub use fleet::{simulate, simulate_observed, Completed, Fleet, FleetTier, Group, SimResult, Spot};
pub use metrics::{Latency, Limits, TierTally};
pub use replica::ReplicaSpec;
pub use router::Router;
pub use scheduler::Scheduler;
