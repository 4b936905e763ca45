//! A pooled fleet's purchase by model: what each model of `[[models]]`
//! takes of the pool (GPU-hours, cost, cost per 1M tokens, API share), the
//! slots in which models share a GPU type, and the GPUs that move between
//! models ([`crate::plan::switches`]); against the plan of each model alone
//! (the `each-model-alone` alternative, [`super::baselines`]).

use crate::demand::summary::DemandSummary;
use crate::money::baselines::Baseline;
use crate::money::unit_costs::UnitCosts;
use crate::plan::switches::{self, TypeSwitches};
use crate::plan::Plan;
use serde::Serialize;
use std::collections::BTreeMap;

/// The pool and each model's share of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pool {
    /// By model id, in the order of the ids.
    pub models: BTreeMap<String, ModelShare>,
    /// Per GPU type the plan runs: each model's GPUs slot by slot, the
    /// slots shared, the GPUs switched and loaded.
    pub gpu_types: BTreeMap<String, TypeSwitches>,
    /// GPUs that left one model for another, summed over types and slots.
    pub gpus_switched: u32,
    /// GPUs that started serving a model, summed over types and slots.
    pub gpus_loaded: u32,
    /// The pooled plan's cost over the horizon, USD.
    pub pooled_usd: f64,
    /// The plans of each model alone added up (`baselines.each-model-alone`),
    /// when every one of them could be planned.
    pub each_model_alone_usd: Option<f64>,
    /// What pooling saves against them, as a share of their sum.
    pub saving_vs_each_alone: Option<f64>,
}

impl Pool {
    /// The GPUs `model` holds in each of `slots` slots, every type together.
    pub(crate) fn gpus_of(&self, model: &str, slots: usize) -> Vec<u32> {
        let mut by_slot = vec![0; slots];
        for t in self.gpu_types.values() {
            for (slot, n) in t.gpus_by_model.get(model).into_iter().flatten().enumerate() {
                if let Some(x) = by_slot.get_mut(slot) {
                    *x += n;
                }
            }
        }
        by_slot
    }
}

/// One model's share of the pool over the horizon.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelShare {
    pub tiers: Vec<String>,
    /// GPU-hours its replicas occupy (reserved or rented).
    pub gpu_hours: f64,
    /// Its tiers' cost (their API spend and the GPU spend where they spend
    /// it, by GPU type and slot, as `unit_costs` splits it), USD.
    pub cost_usd: f64,
    /// That cost over its tiers' input and output tokens, per 10⁶.
    pub usd_per_million_tokens: f64,
    /// Share of its requests sent to its API (0 without one).
    pub api_share: f64,
    /// Whether the model has an API offer.
    pub has_api: bool,
    /// What the model planned alone costs (`each-model-alone`), USD.
    pub alone_usd: Option<f64>,
}

/// The pool of a plan whose tiers name their models; `None` for a plan of
/// one model.
pub(crate) fn of(
    plan: &Plan,
    demand: &BTreeMap<String, DemandSummary>,
    unit_costs: &UnitCosts,
    baselines: &BTreeMap<String, Baseline>,
    prices: &crate::money::prices::Prices,
) -> Option<Pool> {
    if plan.models.is_empty() {
        return None;
    }
    let slot_s = plan.slot_hours * 3600.0;
    let alone = baselines.get("each-model-alone");
    let mut models: BTreeMap<String, ModelShare> = plan
        .models
        .keys()
        .map(|m| {
            let share = ModelShare {
                tiers: Vec::new(),
                gpu_hours: 0.0,
                cost_usd: 0.0,
                usd_per_million_tokens: 0.0,
                api_share: 0.0,
                has_api: false,
                alone_usd: alone.and_then(|b| b.parts.get(m).copied().flatten()),
            };
            (m.clone(), share)
        })
        .collect();
    // Per model: requests, requests to the API, tokens.
    let mut counts: BTreeMap<&str, (f64, f64, f64)> = BTreeMap::new();
    for (name, tier) in &plan.tiers {
        let Some(model) = tier.model.as_deref() else {
            continue;
        };
        let Some(share) = models.get_mut(model) else {
            continue;
        };
        share.tiers.push(name.clone());
        share.gpu_hours += tier
            .configurations
            .iter()
            .map(|c| {
                let replicas: u32 = c.replicas_by_slot.iter().sum();
                f64::from(replicas * c.gpus_per_replica) * plan.slot_hours
            })
            .sum::<f64>();
        let c = counts.entry(model).or_default();
        if let Some(u) = unit_costs.tiers.get(name) {
            share.cost_usd += u.cost_usd;
            c.2 += u.input_tokens + u.output_tokens;
        }
        if let Some(d) = demand.get(name) {
            for (t, rps) in d.mean_rps.iter().enumerate() {
                let requests = rps * slot_s;
                c.0 += requests;
                c.1 += requests * tier.api_share_by_slot.get(t).copied().unwrap_or(0.0);
            }
        }
    }
    for (model, share) in &mut models {
        share.has_api = prices.model_api.contains_key(model);
        let (requests, api, tokens) = counts.get(model.as_str()).copied().unwrap_or_default();
        share.api_share = if requests > 0.0 { api / requests } else { 0.0 };
        share.usd_per_million_tokens = if tokens > 0.0 {
            share.cost_usd / tokens * 1e6
        } else {
            0.0
        };
    }
    let gpu_types = switches::of(plan);
    let each_model_alone_usd = alone.and_then(|b| b.total_cost_usd);
    Some(Pool {
        models,
        gpus_switched: gpu_types.values().map(|t| t.gpus_switched).sum(),
        gpus_loaded: gpu_types.values().map(|t| t.gpus_loaded).sum(),
        pooled_usd: plan.total_cost_usd,
        gpu_types,
        each_model_alone_usd,
        saving_vs_each_alone: each_model_alone_usd
            .filter(|&a| a > 0.0)
            .map(|a| 1.0 - plan.total_cost_usd / a),
    })
}
