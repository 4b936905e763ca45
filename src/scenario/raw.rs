//! The scenario file exactly as written: serde structs with
//! `deny_unknown_fields`. [`super::validate`] turns it into a [`super::Scenario`].

use serde::Deserialize;
use toml::Spanned;

/// The top level of a scenario file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
    /// Folder holding `gpus/` and `models/`, relative to the scenario file.
    #[serde(default)]
    pub profiles_dir: Option<String>,
    /// The one served model (`[model]`), or
    #[serde(default)]
    pub model: Option<RawModel>,
    /// the served models of a pooled fleet (`[[models]]`), each with its id
    /// and its own API offer.
    #[serde(default)]
    pub models: Option<Vec<RawModel>>,
    #[serde(default)]
    pub planning: Option<RawPlanning>,
    pub gpus: Vec<RawGpuOffer>,
    #[serde(default)]
    pub api: Option<RawApi>,
    pub tiers: Vec<RawTier>,
    pub demand: Vec<RawDemand>,
    #[serde(default)]
    pub shape: Option<RawShape>,
    #[serde(default)]
    pub simulation: Option<RawSimulation>,
    #[serde(default)]
    pub commitment: Option<RawCommitment>,
    #[serde(default)]
    pub check: Option<RawCheck>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCheck {
    #[serde(default)]
    pub days: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCommitment {
    #[serde(default)]
    pub term_months: Option<u32>,
    #[serde(default)]
    pub monthly_growth: Option<f64>,
    #[serde(default)]
    pub renewal_months: Option<u32>,
    #[serde(default)]
    pub price_decline_per_year: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawModel {
    /// The id tiers name it by (`[[models]]` only).
    #[serde(default)]
    pub id: Option<Spanned<String>>,
    pub profile: Spanned<String>,
    #[serde(default)]
    pub precision: Option<Spanned<String>>,
    #[serde(default)]
    pub kv_cache: Option<Spanned<String>>,
    #[serde(default)]
    pub max_context_tokens: Option<Spanned<u32>>,
    #[serde(default)]
    pub speculative: Option<RawSpeculative>,
    /// The model's own API offer (`[[models]]` only; `[model]` takes the
    /// top-level `[api]`).
    #[serde(default)]
    pub api: Option<RawApi>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSpeculative {
    pub method: Spanned<String>,
    #[serde(default)]
    pub tokens: Option<u32>,
    #[serde(default)]
    pub acceptance: Option<f64>,
    #[serde(default)]
    pub draft: Option<String>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawPlanning {
    pub slot_minutes: Option<u32>,
    pub peak_statistic: Option<Spanned<String>>,
    pub peak_quantile: Option<f64>,
    pub mip_gap: Option<f64>,
    pub time_limit_s: Option<f64>,
    pub threads: Option<u32>,
    pub milp_method: Option<Spanned<String>>,
    pub usd_per_deployment_month: Option<f64>,
    pub usd_per_gpu_vendor_month: Option<f64>,
    pub reserve_fewest_within_gap: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGpuOffer {
    pub profile: Spanned<String>,
    #[serde(default)]
    pub engine: Option<Spanned<String>>,
    #[serde(default)]
    pub on_demand_usd_per_gpu_hour: Option<f64>,
    #[serde(default)]
    pub reserved_usd_per_gpu_hour: Option<f64>,
    #[serde(default)]
    pub reserved_term: Option<String>,
    #[serde(default)]
    pub reserved_offers: Option<Vec<RawReservedOffer>>,
    pub price_source: String,
    #[serde(default)]
    pub max_gpus: Option<u32>,
    #[serde(default)]
    pub purchase_unit_gpus: Option<u32>,
    #[serde(default)]
    pub min_rental_hours: Option<f64>,
    #[serde(default)]
    pub spot: Option<RawSpot>,
    #[serde(default)]
    pub tensor_parallel: Option<Vec<u32>>,
    #[serde(default)]
    pub expert_parallel: Option<Vec<u32>>,
    #[serde(default)]
    pub attention_dp: Option<Vec<u32>>,
    #[serde(default)]
    pub cross_node: Option<bool>,
    #[serde(default)]
    pub max_batch: Option<Vec<u32>>,
    #[serde(default)]
    pub max_batched_tokens: Option<Vec<u32>>,
    #[serde(default)]
    pub precision: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub weights_load_gb_per_s: Option<f64>,
    #[serde(default)]
    pub disaggregated: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub network_gb_s: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawApi {
    pub name: String,
    pub usd_per_million_input_tokens: f64,
    pub usd_per_million_output_tokens: f64,
    #[serde(default)]
    pub max_tokens_per_minute: Option<f64>,
    pub price_source: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTier {
    pub name: Spanned<String>,
    /// The id of the `[[models]]` entry the tier serves.
    #[serde(default)]
    pub model: Option<Spanned<String>>,
    pub ttft_ms: f64,
    pub tpot_ms: f64,
    pub percentile: f64,
    #[serde(default)]
    pub api_allowed: Option<bool>,
    #[serde(default)]
    pub max_configurations: Option<u32>,
    #[serde(default)]
    pub headroom_replicas: Option<u32>,
    #[serde(default)]
    pub deadline_hours: Option<f64>,
    #[serde(default)]
    pub spot_allowed: Option<bool>,
    #[serde(default)]
    pub slo_window: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawReservedOffer {
    pub term_months: u32,
    pub usd_per_gpu_hour: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSpot {
    pub usd_per_gpu_hour: f64,
    pub availability: f64,
    pub interruptions_per_hour: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDemand {
    pub tier: Spanned<String>,
    #[serde(default)]
    pub trace: Option<Spanned<String>>,
    #[serde(default)]
    pub aggregate: Option<Spanned<String>>,
    #[serde(default)]
    pub aggregate_tier: Option<Spanned<String>>,
    #[serde(default)]
    pub within_minute_cv: Option<f64>,
    #[serde(default)]
    pub format: Option<Spanned<String>>,
    #[serde(default)]
    pub scale: Option<f64>,
    #[serde(default)]
    pub over_context: Option<Spanned<String>>,
    #[serde(default)]
    pub shared_prefix_tokens: Option<u32>,
    #[serde(default)]
    pub session_turns: Option<u32>,
    #[serde(default)]
    pub session_gap_s: Option<f64>,
    #[serde(default)]
    pub shift_hours: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawShape {
    pub servegen: Spanned<String>,
    #[serde(default)]
    pub days: Option<u32>,
    #[serde(default)]
    pub anchor: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct RawSimulation {
    pub seed: Option<u64>,
    pub capacity_seed: Option<u64>,
    pub max_batched_tokens: Option<u32>,
    pub capacity: Option<Spanned<String>>,
    pub capacity_requests: Option<u32>,
    pub verify: Option<Spanned<String>>,
    pub max_rounds: Option<u32>,
    pub tighten_factor: Option<f64>,
    pub attainment_margin_points: Option<f64>,
    pub max_utilisation: Option<f64>,
    pub fleet_requests_per_replica: Option<u32>,
    pub burst_scale_max: Option<f64>,
    pub seed_band: Option<u32>,
    pub fleet_max_replicas: Option<u32>,
    pub scheduler: Option<Spanned<String>>,
    pub router: Option<Spanned<String>>,
    pub prefix_caching: Option<bool>,
}
