//! Scenario files: the raw TOML form ([`raw`]), command-line changes to it
//! ([`overrides`]), its validation ([`validate`]),
//! and the checked [`Scenario`] the rest of the pipeline reads.

pub mod overrides;
pub mod pd_ratio;
pub mod raw;
pub mod reserved_offer;
mod validate;

pub use overrides::Override;
pub use validate::{load, load_with, DEFAULT_WEIGHTS_LOAD_GB_PER_S, MAX_SLOTS, SCENARIO_BOUNDS};

use crate::profiles::precision::Precision;
use crate::profiles::{GpuProfile, ModelProfile};
use crate::sim::{Router, Scheduler};
use crate::traces::TraceFormat;
use serde::Serialize;
use std::path::PathBuf;

/// A validated scenario: every reference resolved, every number in range.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// The scenario file.
    pub path: PathBuf,
    /// The served models: one (`[model]` with the top-level `[api]`), or
    /// the several of a pooled fleet (`[[models]]`), each tier naming its
    /// own (`Tier::model`).
    pub models: Vec<ServedModel>,
    pub planning: Planning,
    /// The GPU types on offer, their prices, purchase terms and quotas (the
    /// same for every model); the layouts, precisions and chunk sizes each
    /// type runs a model at are that model's (`ServedModel::gpus`).
    pub gpus: Vec<GpuOffer>,
    pub tiers: Vec<Tier>,
    pub demand: Vec<DemandSource>,
    pub shape: Option<ShapeSpec>,
    pub simulation: Simulation,
    /// Months the reservations are committed for (`[commitment]`), if stated.
    pub commitment_term_months: Option<u32>,
    /// Demand growth per month over the term (`[commitment]
    /// monthly_growth`, a share: 0.03 = +3% a month); 0 when not stated.
    pub commitment_monthly_growth: f64,
    /// Months one reservation runs before it is renewed (`[commitment]
    /// renewal_months`), when below the term: the term is planned in stages
    /// of that many months ([`crate::money::growth`]).
    pub commitment_renewal_months: Option<u32>,
    /// Share by which GPU prices fall each year, taken at each renewal
    /// (`[commitment] price_decline_per_year`; 0 unless staged).
    pub commitment_price_decline_per_year: f64,
    /// Days at the end of the horizon set aside (`[check] days`): the plan
    /// is made on the days before them and replayed on them.
    pub check_days: Option<u32>,
}

/// The served model, and the precision it is pinned to if any.
#[derive(Debug, Clone)]
pub struct ServedModel {
    /// The id tiers name the model by: its `[[models]]` entry's `id`, or
    /// the profile id.
    pub name: String,
    /// Profile id (file stem under `profiles/models/`).
    pub id: String,
    /// The profile (weights at their native BF16 size).
    pub profile: ModelProfile,
    /// `Some` when `model.precision` pins every configuration to one
    /// precision; `None` lets each GPU offer list its candidates.
    pub precision: Option<Precision>,
    /// `Some` when `model.kv_cache` pins the KV cache's precision (FP8: one
    /// byte per element, whatever the weights; BF16: two, the engines' FP8
    /// recipes off); `None` keeps each engine's recipe.
    pub kv_cache: Option<Precision>,
    /// `Some` when `model.max_context_tokens` states the context to serve
    /// (the profile's `max_context_tokens` is then that figure).
    pub context: Option<ServedContext>,
    /// `Some` when `model.speculative` states speculative decoding: every
    /// configuration is searched with it and without.
    pub speculative: Option<SpeculativeChoice>,
    /// The model's per-token API offer, if any.
    pub api: Option<ApiOffer>,
    /// The scenario's GPU offers as they run this model, in the scenario's
    /// order: the layouts that can hold it (none on a type that cannot),
    /// its precisions and chunk sizes, and the engine's KV-cache recipe as
    /// the model pins it.
    pub gpus: Vec<GpuOffer>,
}

impl Scenario {
    /// Warnings for the prefix models the scenario states but does not use:
    /// without `[simulation] prefix_caching` no hit is counted.
    pub fn unused_prefix_models(&self) -> Vec<String> {
        if self.simulation.prefix_caching {
            return Vec::new();
        }
        self.demand
            .iter()
            .enumerate()
            .filter_map(|(i, d)| {
                let key = match (d.shared_prefix_tokens, d.sessions) {
                    (Some(_), _) => "shared_prefix_tokens",
                    (None, Some(_)) => "session_turns",
                    (None, None) => return None,
                };
                Some(format!(
                    "{}: demand[{i}].{key} states a prefix model, but the replicas do not cache prefixes: it counts no hit; set [simulation] prefix_caching = true to plan on it",
                    self.path.display()
                ))
            })
            .collect()
    }

    /// The model tier `k` serves.
    pub fn model_of(&self, k: usize) -> &ServedModel {
        &self.models[self.tiers[k].model]
    }

    /// The model `tier` serves.
    pub fn tier_model(&self, tier: &Tier) -> &ServedModel {
        &self.models[tier.model]
    }

    /// Whether several models share the fleet (`[[models]]` with more than
    /// one entry).
    pub fn pooled(&self) -> bool {
        self.models.len() > 1
    }

    /// The API offer of tier `k`'s model.
    pub fn api_of(&self, k: usize) -> Option<&ApiOffer> {
        self.model_of(k).api.as_ref()
    }

    /// Whether any model has an API offer.
    pub fn any_api(&self) -> bool {
        self.models.iter().any(|m| m.api.is_some())
    }
}

/// Speculative decoding as a scenario states it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpeculativeChoice {
    pub speculation: crate::perf::Speculation,
    /// The draft head's checkpoint (EAGLE-3), as the launch commands name it.
    pub draft: Option<String>,
    /// Where the acceptance rate comes from: the scenario, or the published
    /// figure assumed.
    pub acceptance_source: String,
}

/// The context a scenario serves the model at, when it states one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ServedContext {
    pub max_context_tokens: u32,
    /// With a context over the published one: the YaRN scaling that reaches
    /// it (the profile's `[extended_context]`).
    pub yarn: Option<Yarn>,
}

/// YaRN RoPE scaling as the launch commands state it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Yarn {
    /// Served context over the original positions.
    pub factor: f64,
    pub original_max_position_embeddings: u32,
    pub rope_theta: f64,
}

/// How demand is cut into slots and how the solver runs.
#[derive(Debug, Clone, Serialize)]
pub struct Planning {
    /// Length of one planning slot in minutes (capacity can change per slot).
    pub slot_minutes: u32,
    /// Which per-slot figure sizes capacity.
    pub peak_statistic: PeakStatistic,
    /// Relative MIP gap at which the solver stops (0.01 = 1%).
    pub mip_gap: f64,
    /// Solver time limit in seconds.
    pub time_limit_s: f64,
    /// Solver threads (1 gives reproducible output).
    pub threads: u32,
    /// How the MILP is solved.
    pub milp_method: crate::milp::Method,
    /// The price for complexity: USD a month each deployment a tier runs
    /// (a configuration, whatever its batch cap) costs to operate.
    pub usd_per_deployment_month: f64,
    /// USD a month each GPU vendor the plan runs on costs to operate.
    pub usd_per_gpu_vendor_month: f64,
    /// Of the reservations within `mip_gap` of the proven bound, the plan
    /// takes the fewest GPUs (`milp::fewest_reserved`).
    pub reserve_fewest_within_gap: bool,
}

/// A deployment's operating cost a month by default: about two
/// engineer-hours at 75 USD (its dashboards and alerts, an engine upgrade,
/// a benchmark run again), `docs/scenario-format.md`.
pub const USD_PER_DEPLOYMENT_MONTH: f64 = 150.0;

/// A GPU vendor's operating cost a month by default: about ten
/// engineer-hours at 75 USD (its driver and engine images, its failure
/// modes on call).
pub const USD_PER_GPU_VENDOR_MONTH: f64 = 750.0;

/// The per-slot arrival-rate statistic that sizes capacity.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum PeakStatistic {
    /// The busiest minute of the slot, as requests/s.
    MaxMinute,
    /// The given quantile (0-1) of the slot's per-minute rates.
    QuantileMinute { quantile: f64 },
    /// The slot's mean rate.
    Mean,
}

impl PeakStatistic {
    /// A short label for reports.
    pub fn label(&self) -> String {
        match self {
            PeakStatistic::MaxMinute => "busiest minute".into(),
            PeakStatistic::QuantileMinute { quantile } => {
                format!("p{} of per-minute rates", quantile * 100.0)
            }
            PeakStatistic::Mean => "mean rate".into(),
        }
    }
}

/// One GPU type on offer, with its prices and the configurations to consider.
#[derive(Debug, Clone)]
pub struct GpuOffer {
    /// Profile id (file stem under `profiles/gpus/`).
    pub id: String,
    pub profile: GpuProfile,
    /// The serving engine every replica of this type runs; `None` for the
    /// roofline model with the GPU profile's eager fixed costs (`engine =
    /// "roofline"`).
    pub engine: Option<OfferEngine>,
    /// On-demand price; `None` when the type cannot be rented by the hour.
    pub on_demand_usd_per_gpu_hour: Option<f64>,
    /// Reserved price, paid for every hour of the horizon whether used or not;
    /// `None` when the type cannot be reserved.
    /// With `reserved_offers`, the chosen offer's effective price over the
    /// commitment term (see [`crate::scenario::reserved_offer`]).
    pub reserved_usd_per_gpu_hour: Option<f64>,
    pub reserved_term: String,
    /// The offers listed under `reserved_offers` (empty with the single
    /// `reserved_usd_per_gpu_hour` key).
    pub reserved_offers: Vec<crate::scenario::reserved_offer::ReservedOffer>,
    /// The offer the reservations are bought under, when offers are listed.
    pub reserved_offer: Option<crate::scenario::reserved_offer::ChosenOffer>,
    pub price_source: String,
    /// Most GPUs of this type available in any slot (quota).
    pub max_gpus: Option<u32>,
    /// How the type is bought: unit size and minimum on-demand rental.
    pub purchase: PurchaseTerms,
    /// Spot capacity of this type, if offered.
    pub spot: Option<SpotOffer>,
    /// Tensor-parallel degrees to consider.
    pub tensor_parallel: Vec<u32>,
    /// Expert-parallel degrees and data-parallel attention ranks to
    /// consider (a mixture of experts; `[1]` otherwise).
    pub expert_parallel: Vec<u32>,
    pub attention_dp: Vec<u32>,
    /// Whether a replica may span more GPUs than one NVLink domain.
    pub cross_node: bool,
    /// Every (TP, EP, attention-DP) combination of the lists that can run
    /// the model ([`crate::perf::layout_problem`]), in TP, EP, DP order.
    pub layouts: Vec<crate::perf::Layout>,
    /// Batch-size caps to consider.
    pub max_batch: Vec<u32>,
    /// Chunked-prefill token budgets per step to consider (vLLM
    /// `max_num_batched_tokens`).
    pub max_batched_tokens: Vec<u32>,
    /// Weight precisions to consider.
    pub precision: Vec<Precision>,
    /// GB/s a GPU of this type reads a model's weights from storage at when
    /// a pooled fleet moves it to another model
    /// (`gpus[].weights_load_gb_per_s`).
    pub weights_load_gb_per_s: f64,
    /// Disaggregated units searched beside the aggregated replicas
    /// (`gpus[].disaggregated`): x prefill and y decode replicas of each
    /// layout; empty: aggregated only.
    pub disaggregated: Vec<pd_ratio::PdRatio>,
    /// Scale-out network GB/s per GPU, one way, that moves a unit's KV
    /// cache between nodes (`gpus[].network_gb_s`, else the profile's
    /// `scaleout_gb_s`); `None`: a unit must fit one NVLink domain.
    pub network_gb_s: Option<f64>,
}

/// The engine a GPU type's replicas run.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferEngine {
    /// As the scenario names it: an id under `profiles/engines/` or a path.
    pub id: String,
    pub profile: crate::profiles::EngineProfile,
}

/// How a GPU type is bought.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PurchaseTerms {
    /// GPUs per purchase unit: a whole node of N GPUs, or 1 (single GPUs).
    /// Reserved and on-demand counts are whole units.
    pub unit_gpus: u32,
    /// Hours an on-demand unit stays rented once started; 0 rents by the
    /// slot.
    pub min_rental_hours: f64,
}

impl Default for PurchaseTerms {
    fn default() -> Self {
        PurchaseTerms {
            unit_gpus: 1,
            min_rental_hours: 0.0,
        }
    }
}

impl PurchaseTerms {
    /// Slots an on-demand unit stays rented once started (at least 1).
    pub fn min_rental_slots(&self, slot_minutes: u32) -> u32 {
        let slot_hours = f64::from(slot_minutes) / 60.0;
        ((self.min_rental_hours / slot_hours - 1e-9).ceil().max(1.0)) as u32
    }
}

/// Spot (preemptible) capacity of a GPU type.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SpotOffer {
    /// Price of a GPU granted, per hour.
    pub usd_per_gpu_hour: f64,
    /// Share (0-1] of the spot GPUs requested that the provider grants.
    pub availability: f64,
    /// Rate at which a granted spot replica is taken back, per hour.
    pub interruptions_per_hour: f64,
}

impl SpotOffer {
    /// Expected share of a requested spot replica's capacity over a slot of
    /// `slot_hours`: granted with probability `availability`, then up until
    /// its first interruption (Poisson at `interruptions_per_hour`) or the
    /// slot's end: availability × (1 − e^(−λh)) / (λh).
    pub fn yield_share(&self, slot_hours: f64) -> f64 {
        let lh = self.interruptions_per_hour * slot_hours;
        let uptime = if lh > 1e-12 {
            (1.0 - (-lh).exp()) / lh
        } else {
            1.0
        };
        self.availability * uptime
    }
}

/// A per-token API offer for the same model.
#[derive(Debug, Clone, Serialize)]
pub struct ApiOffer {
    pub name: String,
    pub usd_per_million_input_tokens: f64,
    pub usd_per_million_output_tokens: f64,
    /// Rate limit over input plus output tokens.
    pub max_tokens_per_minute: Option<f64>,
    pub price_source: String,
}

/// A customer tier with its latency promise.
#[derive(Debug, Clone, Serialize)]
pub struct Tier {
    pub name: String,
    /// TTFT limit in milliseconds.
    pub ttft_ms: f64,
    /// TPOT limit in milliseconds.
    pub tpot_ms: f64,
    /// Percentile (0-100] at which both limits must hold.
    pub percentile: f64,
    /// Whether part of this tier may be sent to the API.
    pub api_allowed: bool,
    /// Index into [`Scenario::models`] of the model the tier serves.
    #[serde(skip)]
    pub model: usize,
    /// Configuration limit, headroom and deadline (all off by default).
    #[serde(flatten)]
    pub rules: ServingRules,
}

/// Optional rules of a tier's plan.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ServingRules {
    /// Most configurations the tier may use over the horizon.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_configurations: Option<u32>,
    /// Replicas of any one configuration the tier may lose in a slot and
    /// still cover its peak (1 = N+1).
    #[serde(skip_serializing_if = "is_zero")]
    pub headroom_replicas: u32,
    /// Hours a request may wait before it must be complete (a batch tier):
    /// the plan may serve a slot's volume in later slots within it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deadline_hours: Option<f64>,
    /// Whether the tier may run replicas on spot GPUs.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub spot_allowed: bool,
    /// The span over which the attainment target is measured.
    pub slo_window: SloWindow,
}

/// The span over which a tier's attainment target is measured, as a
/// contract measures it: every window of the horizon must meet it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SloWindow {
    /// Each planning slot on its own.
    Slot,
    /// Each day (24 hours of slots from the horizon's start; the last may
    /// be shorter).
    #[default]
    Day,
    /// The whole horizon at once.
    Horizon,
}

impl SloWindow {
    /// The windows of a horizon of `slots` slots of `slot_minutes`: slot
    /// ranges in order, covering every slot once.
    pub fn windows(self, slots: usize, slot_minutes: u32) -> Vec<std::ops::Range<usize>> {
        let per_window = match self {
            SloWindow::Slot => 1,
            SloWindow::Day => (24 * 60 / slot_minutes.max(1)).max(1) as usize,
            SloWindow::Horizon => slots.max(1),
        };
        (0..slots)
            .step_by(per_window)
            .map(|start| start..(start + per_window).min(slots))
            .collect()
    }

    /// Its name in a scenario.
    pub fn name(self) -> &'static str {
        match self {
            SloWindow::Slot => "slot",
            SloWindow::Day => "day",
            SloWindow::Horizon => "horizon",
        }
    }
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's `skip_serializing_if` passes a reference
fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl ServingRules {
    /// Later slots a slot's volume may move to: whole slots within the
    /// deadline, less the arrival slot itself.
    pub fn deadline_slots(&self, slot_minutes: u32) -> Option<usize> {
        let slot_hours = f64::from(slot_minutes) / 60.0;
        self.deadline_hours
            .map(|h| ((h / slot_hours + 1e-9).floor() as usize).saturating_sub(1))
    }
}

/// One trace feeding one tier.
#[derive(Debug, Clone)]
pub struct DemandSource {
    /// Index into [`Scenario::tiers`].
    pub tier: usize,
    /// The trace file, or the aggregate folder when `aggregate_tier` is set.
    pub trace: PathBuf,
    /// `None`: detected from the content.
    pub format: Option<TraceFormat>,
    /// The tier of the aggregate folder `trace` to read (`None`: a trace).
    pub aggregate_tier: Option<String>,
    /// Burstiness to use instead of the one measured (or assumed, for a
    /// trace with quantised timestamps).
    pub within_minute_cv: Option<f64>,
    /// Multiplies the arrival rate.
    pub scale: f64,
    /// Hours the `[shape]` rate curve is moved later for this source's
    /// tier (another region's day, a batch window): 0 by default.
    pub shift_hours: f64,
    /// What to do with requests longer than the model's context.
    pub over_context: OverContext,
    /// A prefix model for the source's prompts: every request begins with
    /// the same system prompt of this many tokens (its hashes, if any, not
    /// read).
    pub shared_prefix_tokens: Option<u32>,
    /// A prefix model for the source's prompts: sessions of a few turns,
    /// each turn's prompt beginning with the previous turn's
    /// ([`crate::traces::sessions`]; its hashes, if any, not read).
    pub sessions: Option<Sessions>,
}

/// Sessions of turns, for [`DemandSource::sessions`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sessions {
    /// Turns a session has at most.
    pub turns: u32,
    /// Seconds at least between a session's turns.
    pub gap_s: f64,
}

/// What a demand entry does with requests whose prompt and output exceed
/// the model's context (`demand[i].over_context`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OverContext {
    /// Refuse the trace at the first such request, counting them all.
    #[default]
    Refuse,
    /// Plan without them; the report states how many were dropped.
    Drop,
}

/// A rate curve that shapes demand over days.
#[derive(Debug, Clone)]
pub struct ShapeSpec {
    /// A ServeGen trace file, or a folder of them (summed).
    pub servegen: PathBuf,
    /// Days of the curve to plan over.
    pub days: u32,
    /// Which slot of the curve the trace's measured rate corresponds to.
    pub anchor: ShapeAnchor,
}

/// Where a trace sits on the rate curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShapeAnchor {
    /// The trace's mean rate is the curve's busiest slot.
    Peak,
    /// The trace's mean rate is the curve's mean.
    Mean,
}

/// How the replay simulator runs: capacity search and plan verification.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Simulation {
    /// Seed of every random draw in the replays of a plan (the arrivals the
    /// traces' shape draws and the replay's own draws).
    pub seed: u64,
    /// Seed of the capacity searches' simulated streams. Apart from `seed` so
    /// that the per-replica figures a plan is built on are the same whatever
    /// replay seed checks it (common random numbers across seeds).
    pub capacity_seed: u64,
    /// Where per-replica capacity comes from.
    pub capacity: CapacitySource,
    /// Requests per simulated run of the capacity search.
    pub capacity_requests: u32,
    /// Which slots `solve` replays to verify its plan.
    pub verify: VerifySlots,
    /// Most solve-replay rounds (the first included).
    pub max_rounds: u32,
    /// Factor applied to a failing tier's capacity coefficients per round
    /// (its inverse loosens a tier far over its target).
    pub tighten_factor: f64,
    /// A tier is over-built when its replayed attainment exceeds its target
    /// by more than this many percentage points (and it holds more than one
    /// replica); the loop then loosens it.
    pub attainment_margin_points: f64,
    /// Highest offered load, as a share of the fleet's saturated throughput,
    /// that a capacity figure may claim (stability: offered work must fit
    /// within service capacity).
    pub max_utilisation: f64,
    /// Requests simulated per replica in each run of a fleet capacity search
    /// (the run has at least `capacity_requests`).
    pub fleet_requests_per_replica: u32,
    /// Most by which a bursty tier's capacity runs are lengthened: a run
    /// holds its base requests × min(max(1, CV²), this), CV being the tier's
    /// within-minute arrival CV, so that it holds about as many independent
    /// bursts as a Poisson run of the base length.
    pub burst_scale_max: f64,
    /// Further seeds (`seed` + 1 … `seed` + this) the whole solve is run
    /// again with, to state how far the purchase moves with the seed.
    pub seed_band: u32,
    /// Largest fleet simulated per configuration; above it the step function
    /// continues at the per-replica capacity of this fleet.
    pub fleet_max_replicas: u32,
    /// How every replica fills its engine steps; `None`: as its engine does
    /// (decode-first chunked for the roofline model).
    pub scheduler: Option<Scheduler>,
    /// How a request picks one of its tier's replicas.
    pub router: Router,
    /// Whether the replicas cache prompt prefixes (vLLM's automatic prefix
    /// caching, SGLang's radix cache): a request's prompt blocks already
    /// cached on its replica are not computed again. Only traces that name
    /// their blocks (Mooncake's `hash_ids`) or state a prefix model
    /// (`demand[].shared_prefix_tokens`) have hits; no hit is invented.
    pub prefix_caching: bool,
}

impl Default for Simulation {
    fn default() -> Self {
        Simulation {
            seed: 1,
            capacity_seed: 1,
            capacity: CapacitySource::Simulated,
            capacity_requests: 4000,
            verify: VerifySlots::Sample,
            max_rounds: 4,
            tighten_factor: 0.9,
            attainment_margin_points: 0.3,
            max_utilisation: 0.95,
            fleet_requests_per_replica: 500,
            burst_scale_max: 4.0,
            seed_band: 0,
            fleet_max_replicas: 48,
            scheduler: None,
            router: Router::default(),
            prefix_caching: false,
        }
    }
}

/// Where per-replica capacity coefficients come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapacitySource {
    /// Bisection on the offered rate in the replay simulator.
    Simulated,
    /// The closed-form queueing model.
    Analytic,
}

/// Which slots `solve` replays against its plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerifySlots {
    /// Each tier's most loaded slot, the busiest slot, and four evenly
    /// spaced; the plan is then replayed over every slot, where its windows
    /// are judged (unless a tier missed the sample by over twice its allowed
    /// misses: that tier is tightened whole).
    Sample,
    /// The sample alone, never the whole horizon: quicker, but a window is
    /// judged only on its replayed slots (what-ifs, not a purchase).
    SampleOnly,
    /// Every slot of the horizon, in one continuous replay.
    All,
    /// No replay.
    Off,
}

/// `tests/fixtures/ok/tiny.toml`, loaded: the small scenario unit tests
/// solve and replay.
#[cfg(test)]
pub(crate) fn tiny_fixture() -> Scenario {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/ok/tiny.toml");
    load(std::path::Path::new(path)).expect("the tiny fixture loads")
}

#[cfg(test)]
mod docs {
    use crate::base::bounds::markdown;

    #[test]
    fn the_scenario_format_lists_every_bound() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/scenario-format.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let mut missing = String::new();
        for (name, table) in [
            ("Scenario", crate::scenario::SCENARIO_BOUNDS),
            ("GPU profiles", crate::profiles::GPU_BOUNDS),
            ("Model profiles", crate::profiles::MODEL_BOUNDS),
            ("Engine profiles", crate::profiles::ENGINE_BOUNDS),
        ] {
            let expected = format!("### {name}\n\n{}", markdown(table));
            if !doc.contains(&expected) {
                missing.push_str(&expected);
                missing.push('\n');
            }
        }
        assert!(
            missing.is_empty(),
            "docs/scenario-format.md lacks, under `## Accepted ranges`:\n{missing}"
        );
    }
}
