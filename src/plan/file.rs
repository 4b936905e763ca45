//! The plan file: what `planner solve --plan-out` writes and `planner
//! simulate --plan` reads back — reserved GPUs, on-demand GPUs per slot, and
//! per tier the replicas of each configuration per slot and the API share.
//! Reading checks it against the scenario and collects every mismatch.

use crate::base::error::{PlannerError, Problem};
use crate::capacity::Config;
use crate::plan::Plan;
use crate::profiles::precision::Precision;
use crate::scenario::{GpuOffer, Scenario};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Version of the plan-file format.
pub(crate) const PLAN_FORMAT: u32 = 1;

/// Most GPUs of one type a plan may hold in a slot when the scenario sets no
/// `max_gpus` (the largest `max_gpus` a scenario accepts).
pub(crate) const MAX_GPUS_PER_TYPE: u64 = 100_000;

/// What a planned configuration uses that `offer` does not offer, as
/// (key, problem) pairs.
fn not_offered(offer: &GpuOffer, c: &Config) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let id = &offer.id;
    if !offer.tensor_parallel.contains(&c.tensor_parallel) {
        out.push((
            "tensor_parallel",
            format!(
                "tensor parallel {} is not offered for `{id}`; the scenario offers {:?}",
                c.tensor_parallel, offer.tensor_parallel
            ),
        ));
    } else if !offer.layouts.contains(&c.layout()) {
        out.push((
            "expert_parallel",
            format!(
                "the layout {} is not offered for `{id}`; the scenario offers {}",
                c.layout().label(),
                offer
                    .layouts
                    .iter()
                    .map(crate::perf::Layout::label)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    if let Some(ratio) = c.disaggregated.filter(|r| !offer.disaggregated.contains(r)) {
        out.push((
            "disaggregated",
            format!(
                "the disaggregated unit {} is not offered for `{id}`; the scenario offers {}",
                ratio.label(),
                if offer.disaggregated.is_empty() {
                    "none (`gpus[].disaggregated`)".to_string()
                } else {
                    offer
                        .disaggregated
                        .iter()
                        .map(|r| r.label())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            ),
        ));
    }
    if !offer.max_batch.contains(&c.max_batch) {
        out.push((
            "max_batch",
            format!(
                "max batch {} is not offered for `{id}`; the scenario offers {:?}",
                c.max_batch, offer.max_batch
            ),
        ));
    }
    if !offer.max_batched_tokens.contains(&c.max_batched_tokens) {
        out.push((
            "max_batched_tokens",
            format!(
                "a chunk of {} tokens is not offered for `{id}`; the scenario offers {:?}",
                c.max_batched_tokens, offer.max_batched_tokens
            ),
        ));
    }
    let engine = crate::capacity::config::engine_name(offer);
    if c.engine != engine {
        out.push((
            "engine",
            format!(
                "the configuration runs engine `{}`; the scenario's `{id}` runs `{engine}`: solve the scenario again for a plan of its engine",
                c.engine
            ),
        ));
    }
    if !offer.precision.contains(&c.precision) {
        out.push((
            "precision",
            format!(
                "precision {:?} is not offered for `{id}`; the scenario offers {:?}",
                c.precision, offer.precision
            ),
        ));
    }
    out
}

/// A plan, as written to disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlanFile {
    /// Format version ([`PLAN_FORMAT`]).
    pub plan_format: u32,
    /// The scenario's `name`.
    pub scenario: String,
    pub slot_minutes: u32,
    pub slots: usize,
    /// GPU type → reserved GPUs for the whole horizon.
    pub reserved: BTreeMap<String, u32>,
    /// Per slot: GPU type → GPUs rented on demand.
    pub on_demand: Vec<BTreeMap<String, u32>>,
    /// Tier name → how it is served.
    pub tiers: BTreeMap<String, PlannedTier>,
}

/// How one tier is served.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlannedTier {
    /// Share (0-1) of the tier's requests sent to the API, per slot.
    pub api_share_by_slot: Vec<f64>,
    pub configurations: Vec<PlannedConfig>,
}

/// Replicas of one configuration serving a tier. On disk its configuration's
/// fields sit beside the replica counts ([`PlannedConfigFields`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "PlannedConfigFields", into = "PlannedConfigFields")]
pub(crate) struct PlannedConfig {
    pub config: Config,
    /// Requests/s one replica was sized for (the router's weight).
    pub rps_per_replica: f64,
    pub replicas_by_slot: Vec<u32>,
    /// Spot replicas requested per slot; empty when none.
    pub spot_replicas_by_slot: Vec<u32>,
}

/// A planned configuration as the file writes it: every field named, none
/// guessed when absent (but spot replicas, absent when none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PlannedConfigFields {
    gpu_type: String,
    tensor_parallel: u32,
    /// Expert parallelism and data-parallel attention (a mixture of
    /// experts; absent: 1).
    #[serde(
        default = "crate::capacity::config::one",
        skip_serializing_if = "crate::capacity::config::is_one"
    )]
    expert_parallel: u32,
    #[serde(
        default = "crate::capacity::config::one",
        skip_serializing_if = "crate::capacity::config::is_one"
    )]
    attention_dp: u32,
    max_batch: u32,
    /// Chunked-prefill budget (tokens per step).
    max_batched_tokens: u32,
    precision: Precision,
    /// The engine the replicas run (`roofline` when absent: plans written
    /// before engines were modelled).
    #[serde(default = "roofline")]
    engine: String,
    /// Speculative decoding, by method (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    speculative: Option<String>,
    /// A disaggregated unit's shape, `xPyD` (absent: aggregated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    disaggregated: Option<crate::scenario::pd_ratio::PdRatio>,
    rps_per_replica: f64,
    replicas_by_slot: Vec<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    spot_replicas_by_slot: Vec<u32>,
}

fn roofline() -> String {
    crate::capacity::config::ROOFLINE.to_string()
}

impl From<PlannedConfigFields> for PlannedConfig {
    fn from(f: PlannedConfigFields) -> Self {
        PlannedConfig {
            config: Config {
                gpu_type: f.gpu_type,
                tensor_parallel: f.tensor_parallel,
                expert_parallel: f.expert_parallel,
                attention_dp: f.attention_dp,
                max_batch: f.max_batch,
                max_batched_tokens: f.max_batched_tokens,
                precision: f.precision,
                engine: f.engine,
                speculative: f.speculative,
                disaggregated: f.disaggregated,
            },
            rps_per_replica: f.rps_per_replica,
            replicas_by_slot: f.replicas_by_slot,
            spot_replicas_by_slot: f.spot_replicas_by_slot,
        }
    }
}

impl From<PlannedConfig> for PlannedConfigFields {
    fn from(p: PlannedConfig) -> Self {
        PlannedConfigFields {
            gpu_type: p.config.gpu_type,
            tensor_parallel: p.config.tensor_parallel,
            expert_parallel: p.config.expert_parallel,
            attention_dp: p.config.attention_dp,
            max_batch: p.config.max_batch,
            max_batched_tokens: p.config.max_batched_tokens,
            precision: p.config.precision,
            engine: p.config.engine,
            speculative: p.config.speculative,
            disaggregated: p.config.disaggregated,
            rps_per_replica: p.rps_per_replica,
            replicas_by_slot: p.replicas_by_slot,
            spot_replicas_by_slot: p.spot_replicas_by_slot,
        }
    }
}

impl PlanFile {
    /// The plan file of a solved plan.
    pub(crate) fn of(plan: &Plan, slot_minutes: u32) -> Self {
        PlanFile {
            plan_format: PLAN_FORMAT,
            scenario: plan.scenario.clone(),
            slot_minutes,
            slots: plan.solver.slots,
            reserved: plan.reserved.clone(),
            on_demand: plan.on_demand.clone(),
            tiers: plan
                .tiers
                .iter()
                .map(|(name, t)| {
                    let configurations = t
                        .configurations
                        .iter()
                        .map(|c| PlannedConfig {
                            config: c.config.clone(),
                            rps_per_replica: c.rps_per_replica,
                            replicas_by_slot: c.replicas_by_slot.clone(),
                            spot_replicas_by_slot: c.spot_replicas_by_slot.clone(),
                        })
                        .collect();
                    let tier = PlannedTier {
                        api_share_by_slot: t.api_share_by_slot.clone(),
                        configurations,
                    };
                    (name.clone(), tier)
                })
                .collect(),
        }
    }

    /// Reads a plan file; a syntax or type error names its line, column and
    /// field path.
    pub(crate) fn read(path: &Path) -> Result<Self, PlannerError> {
        let problem = |location: String, message: String| {
            PlannerError::Plan(vec![Problem::new(path.to_path_buf(), location, message)])
        };
        let text = crate::base::text::read_text(path).map_err(|e| PlannerError::Plan(vec![e]))?;
        let mut de = serde_json::Deserializer::from_str(&text);
        serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let inner = e.inner();
            let what = inner.to_string();
            // The location goes before the message, as `line:column`.
            let what = crate::base::toml_file::plain_type_names(
                what.split(" at line ").next().unwrap_or_default(),
            );
            let field = e.path().to_string();
            let at = format!("{}:{}", inner.line(), inner.column());
            let message = if field.is_empty() || field == "." {
                format!("{what}; a plan file is what `planner solve --plan-out` writes")
            } else {
                format!(
                    "at `{field}`: {what}; a plan file is what `planner solve --plan-out` writes"
                )
            };
            problem(at, message)
        })
    }

    /// Every way the plan does not fit `scenario` with `slots` slots.
    pub(crate) fn check(&self, scenario: &Scenario, slots: usize, path: &Path) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut add = |location: String, message: String| {
            problems.push(Problem::new(path.to_path_buf(), location, message));
        };
        if self.plan_format != PLAN_FORMAT {
            add(
                "plan_format".into(),
                format!(
                    "plan format {} is not understood; this planner reads format {PLAN_FORMAT}",
                    self.plan_format
                ),
            );
        }
        if self.slot_minutes != scenario.planning.slot_minutes {
            add(
                "slot_minutes".into(),
                format!(
                    "the plan has {}-minute slots but the scenario plans in {}-minute slots; solve the scenario again",
                    self.slot_minutes, scenario.planning.slot_minutes
                ),
            );
        }
        if self.slots != slots {
            add(
                "slots".into(),
                format!("the plan has {} slots but the scenario's demand has {slots}; solve the scenario again", self.slots),
            );
        }
        let offered: Vec<&str> = scenario.gpus.iter().map(|g| g.id.as_str()).collect();
        let known = |id: &str| offered.contains(&id);
        let list = offered.join(", ");
        for id in self.reserved.keys() {
            if !known(id) {
                add(
                    format!("reserved.{id}"),
                    format!("unknown GPU type `{id}`; the scenario offers: {list}"),
                );
            }
        }
        if self.on_demand.len() != self.slots {
            add(
                "on_demand".into(),
                format!(
                    "{} slots of on-demand GPUs for a {}-slot plan",
                    self.on_demand.len(),
                    self.slots
                ),
            );
        }
        for (t, slot) in self.on_demand.iter().enumerate() {
            for id in slot.keys().filter(|id| !known(id)) {
                add(
                    format!("on_demand[{t}].{id}"),
                    format!("unknown GPU type `{id}`; the scenario offers: {list}"),
                );
            }
        }
        for tier in &scenario.tiers {
            if !self.tiers.contains_key(&tier.name) {
                add(
                    "tiers".into(),
                    format!(
                        "tier `{}` of the scenario is missing from the plan",
                        tier.name
                    ),
                );
            }
        }
        for (name, tier) in &self.tiers {
            let at = |k: &str| format!("tiers.{name}.{k}");
            if !scenario.tiers.iter().any(|t| &t.name == name) {
                add(
                    format!("tiers.{name}"),
                    format!("tier `{name}` is not in the scenario"),
                );
            }
            if tier.api_share_by_slot.len() != self.slots {
                add(
                    at("api_share_by_slot"),
                    format!(
                        "{} values for {} slots",
                        tier.api_share_by_slot.len(),
                        self.slots
                    ),
                );
            }
            for (bad, share) in tier
                .api_share_by_slot
                .iter()
                .enumerate()
                .filter(|(_, s)| !(0.0..=1.0).contains(*s))
            {
                add(
                    format!("tiers.{name}.api_share_by_slot[{bad}]"),
                    format!("an API share must be in [0, 1], got {share}"),
                );
            }
            // The offers as the tier's model runs them.
            let offers = scenario
                .tiers
                .iter()
                .find(|t| &t.name == name)
                .map_or(&scenario.gpus, |t| &scenario.tier_model(t).gpus);
            for (c, config) in tier.configurations.iter().enumerate() {
                let at = |k: &str| format!("tiers.{name}.configurations[{c}].{k}");
                match offers.iter().find(|g| g.id == config.config.gpu_type) {
                    None => add(
                        at("gpu_type"),
                        format!(
                            "unknown GPU type `{}`; the scenario offers: {list}",
                            config.config.gpu_type
                        ),
                    ),
                    Some(offer) => {
                        for (key, problem) in not_offered(offer, &config.config) {
                            add(at(key), problem);
                        }
                    }
                }
                // A configuration that speculates runs the scenario's own
                // speculation: the plan names only its method.
                let served = scenario.tiers.iter().find(|t| &t.name == name);
                let stated = served
                    .and_then(|t| crate::capacity::speculative_method(scenario.tier_model(t)));
                if let Some(method) = config.config.speculative.as_deref() {
                    if stated != Some(method) {
                        add(
                            at("speculative"),
                            format!(
                                "the plan runs `{method}` speculative decoding, {}; state the same [model] speculative (method, tokens, acceptance) as the solve that wrote the plan",
                                match stated {
                                    Some(other) => format!("the scenario states `{other}`"),
                                    None => "the scenario states none".to_string(),
                                }
                            ),
                        );
                    }
                }
                if !(config.rps_per_replica.is_finite() && config.rps_per_replica > 0.0) {
                    add(
                        at("rps_per_replica"),
                        format!("must be a positive number, got {}", config.rps_per_replica),
                    );
                }
                if config.replicas_by_slot.len() != self.slots {
                    add(
                        at("replicas_by_slot"),
                        format!(
                            "{} values for {} slots",
                            config.replicas_by_slot.len(),
                            self.slots
                        ),
                    );
                }
                if !config.spot_replicas_by_slot.is_empty() {
                    if config.spot_replicas_by_slot.len() != self.slots {
                        add(
                            at("spot_replicas_by_slot"),
                            format!(
                                "{} values for {} slots",
                                config.spot_replicas_by_slot.len(),
                                self.slots
                            ),
                        );
                    }
                    let spot_offered = scenario
                        .gpus
                        .iter()
                        .any(|g| g.id == config.config.gpu_type && g.spot.is_some());
                    if !spot_offered {
                        add(
                            at("spot_replicas_by_slot"),
                            format!(
                                "spot replicas on `{}`, but the scenario offers no spot capacity for it",
                                config.config.gpu_type
                            ),
                        );
                    }
                }
            }
        }
        for offer in &scenario.gpus {
            let id = offer.id.as_str();
            let reserved = self.reserved.get(id).copied().unwrap_or(0);
            if reserved > 0 && offer.reserved_usd_per_gpu_hour.is_none() {
                add(
                    format!("reserved.{id}"),
                    format!("{reserved} {id} GPUs reserved, but the scenario offers no reserved price for `{id}`"),
                );
            }
            let limit = offer.max_gpus.map_or(MAX_GPUS_PER_TYPE, u64::from);
            for (t, slot) in self.on_demand.iter().enumerate() {
                let rented = slot.get(id).copied().unwrap_or(0);
                if rented > 0 && offer.on_demand_usd_per_gpu_hour.is_none() {
                    add(
                        format!("on_demand[{t}].{id}"),
                        format!("{rented} {id} GPUs rented in slot {t}, but the scenario offers no on-demand price for `{id}`"),
                    );
                }
                let held = u64::from(reserved) + u64::from(rented);
                if held > limit {
                    add(
                        format!("on_demand[{t}].{id}"),
                        format!(
                            "slot {t} holds {held} {id} GPUs (reserved + on demand), more than {}",
                            match offer.max_gpus {
                                Some(m) => format!("the scenario's `max_gpus = {m}`"),
                                None =>
                                    format!("the {MAX_GPUS_PER_TYPE} a plan may hold of one type"),
                            }
                        ),
                    );
                }
            }
        }
        if problems.is_empty() {
            for (t, slot) in self.on_demand.iter().enumerate() {
                for id in &offered {
                    let held = u64::from(self.reserved.get(*id).copied().unwrap_or(0))
                        + u64::from(slot.get(*id).copied().unwrap_or(0));
                    let used: u64 = self
                        .tiers
                        .values()
                        .flat_map(|tier| &tier.configurations)
                        .filter(|c| c.config.gpu_type == *id)
                        .map(|c| {
                            u64::from(c.replicas_by_slot[t])
                                * u64::from(c.config.gpus_per_replica())
                        })
                        .sum();
                    if used > held {
                        problems.push(Problem::new(path.to_path_buf(), format!("on_demand[{t}].{id}"), format!("slot {t} runs replicas on {used} {id} GPUs but holds only {held} (reserved + on demand)")));
                    }
                }
            }
        }
        problems
    }
}
