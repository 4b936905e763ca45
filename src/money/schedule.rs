//! A plan slot by slot: demand, the capacity the plan holds split by where
//! it comes from (reserved GPUs, on-demand GPUs, spot GPUs, the API), GPUs by
//! type and the slot's cost at list prices. The CSV schedule and the HTML charts
//! read it.
//!
//! A slot's GPU-served capacity is Σ over configurations of replicas × the
//! requests/s one replica covers there (`mu[c,t]`). Within a GPU type,
//! reserved GPUs are used first: the share of a type's capacity counted as
//! reserved is min(reserved, in use) / in use. Spot replicas carry their
//! expected capacity (requested × the offer's yield share × `mu[c,t]`). The
//! API carries its share of each tier's peak rate.

use crate::demand::summary::DemandSummary;
use crate::money::prices::Prices;
use crate::plan::Plan;
use serde::Serialize;
use std::collections::BTreeMap;

/// One slot of the schedule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Slot {
    pub slot: usize,
    /// Hours from the start of the horizon.
    pub start_hour: f64,
    /// Σ over tiers of the slot's peak requests/s (what capacity must cover).
    pub demand_rps: f64,
    /// Requests/s the slot's reserved GPUs carry.
    pub reserved_rps: f64,
    /// Requests/s the slot's on-demand GPUs carry.
    pub on_demand_rps: f64,
    /// Requests/s spot replicas are expected to carry (requested × yield).
    pub spot_rps: f64,
    /// Requests/s sent to the API.
    pub api_rps: f64,
    /// GPU type → GPUs held reserved (the whole horizon).
    pub reserved_gpus: BTreeMap<String, u32>,
    /// GPU type → GPUs rented on demand in this slot.
    pub on_demand_gpus: BTreeMap<String, u32>,
    /// GPU type → spot GPUs requested in this slot.
    pub spot_gpus: BTreeMap<String, u32>,
    /// GPU type → GPUs running (non-spot) replicas in this slot.
    pub in_use_gpus: BTreeMap<String, u32>,
    /// Tier → (peak requests/s, mean requests/s, API share, replicas, GPUs).
    pub tiers: BTreeMap<String, SlotTier>,
    /// Reserved hours, on-demand hours and API requests of the slot at the
    /// scenario's list prices.
    pub cost_usd: f64,
}

/// One tier in one slot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct SlotTier {
    pub peak_rps: f64,
    pub mean_rps: f64,
    pub api_share: f64,
    pub replicas: u32,
    pub gpus: u32,
}

/// The plan's schedule, one entry per slot, at `prices` on `demand`.
pub(crate) fn of(
    plan: &Plan,
    demand: &BTreeMap<String, DemandSummary>,
    prices: &Prices,
) -> Vec<Slot> {
    let slots = plan.solver.slots;
    let slot_s = plan.slot_hours * 3600.0;
    let api_usd_per_request = |name: &str| {
        let (Some(api), Some(d)) = (prices.api_for(name), demand.get(name)) else {
            return 0.0;
        };
        (d.tier.input_tokens.mean * api.usd_per_million_input_tokens
            + d.tier.output_tokens.mean * api.usd_per_million_output_tokens)
            / 1e6
    };
    (0..slots)
        .map(|t| {
            let mut in_use: BTreeMap<String, u32> =
                plan.reserved.keys().map(|g| (g.clone(), 0)).collect();
            let mut cap_by_type: BTreeMap<String, f64> = BTreeMap::new();
            let mut tiers = BTreeMap::new();
            let mut api_rps = 0.0;
            let mut spot_rps = 0.0;
            let mut demand_rps = 0.0;
            let mut cost_usd = 0.0;
            for (name, tier) in &plan.tiers {
                let d = demand.get(name);
                let peak = d.and_then(|d| d.peak_rps.get(t)).copied().unwrap_or(0.0);
                let mean = d.and_then(|d| d.mean_rps.get(t)).copied().unwrap_or(0.0);
                let share = tier.api_share_by_slot.get(t).copied().unwrap_or(0.0);
                let (mut replicas, mut gpus) = (0, 0);
                for c in &tier.configurations {
                    let n = c.replicas_by_slot.get(t).copied().unwrap_or(0);
                    replicas += n;
                    gpus += n * c.gpus_per_replica;
                    *in_use.entry(c.config.gpu_type.clone()).or_insert(0) += n * c.gpus_per_replica;
                    let mu = c.rps_per_replica_by_slot.get(t).copied().unwrap_or(0.0);
                    *cap_by_type.entry(c.config.gpu_type.clone()).or_insert(0.0) +=
                        f64::from(n) * mu;
                    let spot = c.spot_replicas_by_slot.get(t).copied().unwrap_or(0);
                    spot_rps += f64::from(spot) * c.spot_yield_share.unwrap_or(0.0) * mu;
                }
                demand_rps += peak;
                api_rps += share * peak;
                cost_usd += share * mean * slot_s * api_usd_per_request(name);
                tiers.insert(
                    name.clone(),
                    SlotTier {
                        peak_rps: peak,
                        mean_rps: mean,
                        api_share: share,
                        replicas,
                        gpus,
                    },
                );
            }
            let on_demand_gpus = plan.on_demand.get(t).cloned().unwrap_or_default();
            let spot_gpus = plan
                .spot
                .as_ref()
                .and_then(|s| s.get(t).cloned())
                .unwrap_or_default();
            let (mut reserved_rps, mut on_demand_rps) = (0.0, 0.0);
            for (gpu, cap) in &cap_by_type {
                let used = f64::from(in_use.get(gpu).copied().unwrap_or(0));
                let reserved = f64::from(plan.reserved.get(gpu).copied().unwrap_or(0));
                let from_reserved = if used > 0.0 {
                    reserved.min(used) / used
                } else {
                    0.0
                };
                reserved_rps += cap * from_reserved;
                on_demand_rps += cap * (1.0 - from_reserved);
            }
            for (gpu, price) in &prices.gpus {
                let reserved = f64::from(plan.reserved.get(gpu).copied().unwrap_or(0));
                let rented = f64::from(on_demand_gpus.get(gpu).copied().unwrap_or(0));
                let spot = f64::from(spot_gpus.get(gpu).copied().unwrap_or(0));
                // Spot is paid for the GPUs granted: requested × availability.
                let spot_usd_per_hour = price
                    .spot
                    .as_ref()
                    .map_or(0.0, |o| o.availability * o.usd_per_gpu_hour);
                cost_usd += (reserved * price.reserved_usd_per_gpu_hour.unwrap_or(0.0)
                    + rented * price.on_demand_usd_per_gpu_hour.unwrap_or(0.0)
                    + spot * spot_usd_per_hour)
                    * plan.slot_hours;
            }
            Slot {
                slot: t,
                start_hour: t as f64 * plan.slot_hours,
                demand_rps,
                reserved_rps,
                on_demand_rps,
                spot_rps,
                api_rps,
                reserved_gpus: plan.reserved.clone(),
                on_demand_gpus,
                spot_gpus,
                in_use_gpus: in_use,
                tiers,
                cost_usd,
            }
        })
        .collect()
}
