//! The prices a plan was made at, as the scenario states them with their
//! sources: per GPU type reserved, on-demand and spot terms, and the API's.

use crate::scenario::{ApiOffer, Scenario};
use serde::Serialize;
use std::collections::BTreeMap;

/// Prices the optimiser used.
#[derive(Debug, Clone, Serialize)]
pub struct Prices {
    pub gpus: BTreeMap<String, GpuPrice>,
    pub api: Option<ApiOffer>,
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
            api: scenario.api.clone(),
        }
    }
}
