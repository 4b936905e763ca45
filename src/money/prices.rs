//! The prices a plan was made at, as the scenario states them with their
//! sources: per GPU type reserved, on-demand and spot terms, and the API's.

use crate::scenario::{ApiOffer, Scenario};
use serde::Serialize;
use std::collections::BTreeMap;

/// Prices the optimiser used.
#[derive(Debug, Clone, Serialize)]
pub struct Prices {
    pub gpus: BTreeMap<String, GpuPrice>,
    /// The one model's API offer (`None` in a pooled fleet: `model_api`).
    pub api: Option<ApiOffer>,
    /// Per model of a pooled fleet, its API offer.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub model_api: BTreeMap<String, ApiOffer>,
    /// Per tier of a pooled fleet, the model it serves.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub tier_model: BTreeMap<String, String>,
}

/// Prices of one GPU type.
#[derive(Debug, Clone, Serialize)]
pub struct GpuPrice {
    pub reserved_usd_per_gpu_hour: Option<f64>,
    pub reserved_term: String,
    /// The reserved offer bought, when the scenario lists several
    /// (`reserved_usd_per_gpu_hour` is then its effective price).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reserved_offer: Option<crate::scenario::reserved_offer::ChosenOffer>,
    pub on_demand_usd_per_gpu_hour: Option<f64>,
    pub max_gpus: Option<u32>,
    pub source: String,
    /// Spot terms, if the type is offered as spot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spot: Option<crate::scenario::SpotOffer>,
}

impl Prices {
    /// The scenario's prices.
    pub fn of(scenario: &Scenario) -> Self {
        Prices {
            gpus: scenario
                .gpus
                .iter()
                .map(|g| {
                    (
                        g.id.clone(),
                        GpuPrice {
                            reserved_usd_per_gpu_hour: g.reserved_usd_per_gpu_hour,
                            reserved_term: g.reserved_term.clone(),
                            reserved_offer: g.reserved_offer,
                            on_demand_usd_per_gpu_hour: g.on_demand_usd_per_gpu_hour,
                            max_gpus: g.max_gpus,
                            source: g.price_source.clone(),
                            spot: g.spot,
                        },
                    )
                })
                .collect(),
            api: if scenario.pooled() {
                None
            } else {
                scenario.models.first().and_then(|m| m.api.clone())
            },
            model_api: if scenario.pooled() {
                scenario
                    .models
                    .iter()
                    .filter_map(|m| Some((m.name.clone(), m.api.clone()?)))
                    .collect()
            } else {
                BTreeMap::new()
            },
            tier_model: if scenario.pooled() {
                scenario
                    .tiers
                    .iter()
                    .map(|t| (t.name.clone(), scenario.tier_model(t).name.clone()))
                    .collect()
            } else {
                BTreeMap::new()
            },
        }
    }

    /// The API offer of `tier`'s model.
    pub fn api_for(&self, tier: &str) -> Option<&ApiOffer> {
        match self.tier_model.get(tier) {
            Some(model) => self.model_api.get(model),
            None => self.api.as_ref(),
        }
    }

    /// Every API offer, with the model it sells in a pooled fleet.
    pub fn apis(&self) -> Vec<(Option<&str>, &ApiOffer)> {
        self.api
            .iter()
            .map(|a| (None, a))
            .chain(self.model_api.iter().map(|(m, a)| (Some(m.as_str()), a)))
            .collect()
    }

    /// Whether any model has an API offer.
    pub fn any_api(&self) -> bool {
        self.api.is_some() || !self.model_api.is_empty()
    }
}
