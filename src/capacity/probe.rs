//! What-if capacity: the replicas a configuration would need for the same
//! traffic on a faster (or slower) GPU, by the same capacity source as the
//! plan's own figures.

use super::simulated::{self, Setting};
use super::{CapacityEntry, Verdict};
use crate::demand::TierDemand;
use crate::profiles::engine::StepSlowdown;
use crate::scenario::{CapacitySource, GpuOffer, Scenario, Tier};
use std::path::Path;

/// `offer` with its FLOPS and memory bandwidth multiplied by `factor`.
pub(crate) fn scaled(offer: &GpuOffer, factor: f64) -> GpuOffer {
    let mut faster = offer.clone();
    faster.profile.bf16_tflops *= factor;
    faster.profile.fp8_tflops = faster.profile.fp8_tflops.map(|f| f * factor);
    faster.profile.memory_bandwidth_tb_s *= factor;
    faster
}

/// A fleet of one configuration serving a tier: `replicas` of `entry`
/// carrying `served_rps`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Serving<'a> {
    pub tier: &'a Tier,
    pub demand: &'a TierDemand,
    pub entry: &'a CapacityEntry,
    pub replicas: u32,
    pub served_rps: f64,
}

/// The replicas `serving` needs for the same traffic when its GPU's FLOPS
/// and bandwidth are `factor` × the profile's, never more than it runs now
/// when faster and never fewer when slower:
/// the fleet step function of the faster GPU (capacity by simulation) or
/// its single-replica figure (the queueing model). `None` when, slowed, no
/// fleet of the configuration keeps the tier's limits (one replica cannot
/// serve it); a faster GPU that cannot serve the tier keeps the replicas it
/// has.
pub(crate) fn replicas_at_speed(
    scenario: &Scenario,
    serving: &Serving<'_>,
    factor: f64,
    cache_dir: Option<&Path>,
) -> Option<u32> {
    let faster = scaled(
        &scenario.tier_model(serving.tier).gpus[serving.entry.gpu],
        factor,
    );
    replicas_on(scenario, serving, &faster, factor >= 1.0, cache_dir)
}

/// `offer` with its engine's steps slower by `slowdown` (the confidence
/// band's edge); the roofline model's offer as it is.
pub(crate) fn slowed(offer: &GpuOffer, slowdown: StepSlowdown) -> GpuOffer {
    let mut slower = offer.clone();
    if let Some(e) = slower.engine.as_mut() {
        e.profile.slowdown = slowdown;
    }
    slower
}

/// The replicas `serving` needs for the same traffic on `offer` (its own
/// offer changed), never more than it runs now when `faster` and never
/// fewer when not; `None` when, not faster, no fleet keeps the tier's
/// limits.
pub(crate) fn replicas_on(
    scenario: &Scenario,
    serving: &Serving<'_>,
    offer: &GpuOffer,
    faster: bool,
    cache_dir: Option<&Path>,
) -> Option<u32> {
    let Serving {
        tier,
        demand,
        entry,
        replicas,
        served_rps,
    } = *serving;
    let bounded = |needed: u32| {
        if faster {
            needed.min(replicas)
        } else {
            needed.max(replicas)
        }
    };
    let cannot = faster.then_some(replicas);
    match scenario.simulation.capacity {
        CapacitySource::Simulated => simulated::fleet(
            &Setting::for_model(scenario, scenario.tier_model(tier), cache_dir),
            offer,
            &entry.config,
            tier,
            demand,
            served_rps,
            None,
        )
        .filter(|f| !f.points.is_empty())
        .map_or(cannot, |f| Some(bounded(f.replicas_needed(served_rps)))),
        CapacitySource::Analytic => {
            match super::evaluate(
                entry.gpu,
                offer,
                scenario.tier_model(tier),
                &entry.config,
                tier,
                demand,
            )
            .verdict
            {
                Verdict::Serves(s) => {
                    Some(bounded(((served_rps / s.max_rps) - 1e-9).ceil() as u32))
                }
                Verdict::Cannot { .. } => cannot,
            }
        }
    }
}
