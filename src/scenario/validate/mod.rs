//! Raw scenario → [`Scenario`]: resolves profile references and file paths,
//! applies defaults, and collects every problem instead of stopping at the first.
//! The top-level pass and the shared checks are here; each section of the file
//! (model, planning, GPU offers, tiers, demand, shape, simulation, commitment)
//! has its own `impl Validator` block in a child module.

use super::overrides::{self, Override};
use super::raw::RawScenario;
use super::{CapacitySource, GpuOffer, Scenario, ServedModel};
use crate::base::bounds::{self, Bound};
use crate::base::error::{PlannerError, Problem};
use crate::base::located::line_col;
use crate::base::toml_collect::collect;
use crate::base::toml_file::{read_toml_file, read_toml_text};
use crate::profiles::precision::Precision;
use crate::profiles::{GpuProfile, ModelProfile};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use toml::Spanned;

mod commitment;
mod demand;
mod disaggregation;
mod gpu_offers;
mod model;
mod planning;
mod shape;
mod simulation;
mod tiers;

use gpu_offers::choose_reserved_offer;
pub use gpu_offers::DEFAULT_WEIGHTS_LOAD_GB_PER_S;

/// Most planning slots a scenario may have (traces or rate-curve days divided
/// by `planning.slot_minutes`): the MILP and the replay grow with them.
pub const MAX_SLOTS: u64 = 2_000;

/// The accepted range of every number in a scenario, by key. A number that
/// sizes memory or time (slots, requests, replicas, threads, days) has an
/// upper bound; prices and latencies have the physical range of a serving
/// fleet. Add a row here for every new numeric key and read it with
/// [`Validator::bounded`].
pub const SCENARIO_BOUNDS: &[Bound] = &[
    Bound::closed("planning.slot_minutes", 1.0, 1440.0, "minutes"),
    Bound::open("planning.peak_quantile", 0.0, 1.0),
    Bound::half_open("planning.mip_gap", 0.0, 1.0),
    Bound::positive("planning.time_limit_s", 86_400.0, "s"),
    Bound::closed("planning.threads", 1.0, 64.0, "threads"),
    Bound::closed(
        "planning.usd_per_deployment_month",
        0.0,
        1_000_000.0,
        "USD a month",
    ),
    Bound::closed(
        "planning.usd_per_gpu_vendor_month",
        0.0,
        1_000_000.0,
        "USD a month",
    ),
    Bound::positive(
        "gpus[].on_demand_usd_per_gpu_hour",
        1_000.0,
        "USD per GPU-hour",
    ),
    Bound::positive(
        "gpus[].reserved_usd_per_gpu_hour",
        1_000.0,
        "USD per GPU-hour",
    ),
    Bound::closed("gpus[].reserved_offers[].term_months", 1.0, 120.0, "months"),
    Bound::positive(
        "gpus[].reserved_offers[].usd_per_gpu_hour",
        1_000.0,
        "USD per GPU-hour",
    ),
    Bound::closed("gpus[].max_gpus", 1.0, 100_000.0, "GPUs"),
    Bound::closed("gpus[].purchase_unit_gpus", 1.0, 64.0, "GPUs"),
    Bound::closed("gpus[].min_rental_hours", 0.0, 8_760.0, "hours"),
    Bound::positive("gpus[].spot.usd_per_gpu_hour", 1_000.0, "USD per GPU-hour"),
    Bound::positive("gpus[].spot.availability", 1.0, "of requested GPUs"),
    Bound::closed("gpus[].spot.interruptions_per_hour", 0.0, 60.0, "per hour"),
    Bound::closed("gpus[].max_batch", 1.0, 4_096.0, "sequences"),
    Bound::closed("gpus[].max_batched_tokens", 64.0, 1_048_576.0, "tokens"),
    Bound::positive("api.usd_per_million_input_tokens", 10_000.0, "USD"),
    Bound::positive("api.usd_per_million_output_tokens", 10_000.0, "USD"),
    Bound::positive("api.max_tokens_per_minute", 1e12, "tokens per minute"),
    Bound::positive("models[].api.usd_per_million_input_tokens", 10_000.0, "USD"),
    Bound::positive(
        "models[].api.usd_per_million_output_tokens",
        10_000.0,
        "USD",
    ),
    Bound::positive(
        "models[].api.max_tokens_per_minute",
        1e12,
        "tokens per minute",
    ),
    Bound::positive("tiers[].ttft_ms", 600_000.0, "ms"),
    Bound::positive("tiers[].tpot_ms", 60_000.0, "ms"),
    Bound::positive("tiers[].percentile", 100.0, ""),
    Bound::closed("tiers[].max_configurations", 1.0, 64.0, "configurations"),
    Bound::closed("tiers[].headroom_replicas", 0.0, 8.0, "replicas"),
    Bound::positive("tiers[].deadline_hours", 672.0, "hours"),
    Bound::positive("demand[].scale", 1_000.0, "× the trace's rate"),
    Bound::closed(
        "demand[].shared_prefix_tokens",
        512.0,
        1_048_576.0,
        "tokens",
    ),
    Bound::closed("demand[].session_turns", 2.0, 1_000.0, "turns"),
    Bound::positive("demand[].session_gap_s", 86_400.0, "s"),
    Bound::closed("shape.days", 1.0, 366.0, "days"),
    Bound::closed("commitment.term_months", 1.0, 120.0, "months"),
    Bound::closed("commitment.monthly_growth", -0.5, 1.0, "share per month"),
    Bound::closed("commitment.renewal_months", 1.0, 120.0, "months"),
    Bound::closed(
        "commitment.price_decline_per_year",
        0.0,
        0.5,
        "share per year",
    ),
    Bound::closed("check.days", 1.0, 365.0, "days"),
    Bound::closed("gpus[].weights_load_gb_per_s", 0.05, 100.0, "GB/s"),
    Bound::closed("gpus[].network_gb_s", 1.0, 1_000.0, "GB/s"),
    Bound::closed("demand[].shift_hours", 0.0, 23.0, "hours"),
    Bound::closed("simulation.max_batched_tokens", 64.0, 1_048_576.0, "tokens"),
    Bound::closed("simulation.capacity_requests", 500.0, 50_000.0, "requests"),
    Bound::closed("simulation.max_rounds", 1.0, 20.0, "rounds"),
    Bound::open("simulation.tighten_factor", 0.0, 1.0),
    Bound::positive(
        "simulation.attainment_margin_points",
        100.0,
        "percentage points",
    ),
    Bound::open("simulation.max_utilisation", 0.0, 1.0),
    Bound::closed(
        "simulation.fleet_requests_per_replica",
        100.0,
        100_000.0,
        "requests",
    ),
    Bound::closed("simulation.fleet_max_replicas", 1.0, 1_024.0, "replicas"),
    Bound::closed(
        "simulation.burst_scale_max",
        1.0,
        64.0,
        "× the base requests",
    ),
    Bound::closed("simulation.seed_band", 0.0, 16.0, "further seeds"),
];

/// Whether `model`'s weights fit some layout of `offer` at one of its
/// precisions, with a tenth of the memory left for the KV cache and the
/// engine's own (the capacity search then finds what the cache holds).
fn fits_somewhere(model: &ModelProfile, offer: &GpuOffer) -> bool {
    offer.layouts.iter().any(|l| {
        offer.precision.iter().any(|&p| {
            let per_gpu = model.params_billion * 1e9 * p.bytes_per_weight() / f64::from(l.gpus());
            per_gpu < 0.9 * offer.profile.memory_gb * 1e9
        })
    })
}

/// Why no offered type can run `model`: its weights against the most
/// memory a replica of each type may span.
fn cannot_hold(model: &ModelProfile, offers: &[GpuOffer]) -> String {
    let at = |p: Precision| model.params_billion * p.bytes_per_weight();
    let weights_gb = at(Precision::Bf16);
    let smallest_gb = offers
        .iter()
        .flat_map(|o| o.precision.iter())
        .map(|&p| at(p))
        .fold(weights_gb, f64::min);
    let each: Vec<String> = offers
        .iter()
        .map(|o| {
            let most = o.tensor_parallel.iter().copied().max().unwrap_or(1)
                * o.expert_parallel.iter().copied().max().unwrap_or(1).max(1);
            format!(
                "{} holds {:.0} GB on {} GPU{}",
                o.id,
                o.profile.memory_gb * f64::from(most),
                most,
                if most == 1 { "" } else { "s" }
            )
        })
        .collect();
    format!(
        "no offered GPU type can hold `{}` at any listed layout: its weights are {weights_gb:.0} GB at BF16 ({smallest_gb:.0} GB at the lowest precision offered), and the KV cache needs room beside them; {}; list larger `tensor_parallel` degrees, a type with more memory, or FP8/FP4 in `precision`",
        model.name,
        each.join(", ")
    )
}

/// Scenario-wide settings that pin a configuration dimension of every offer.
struct Pins<'a> {
    /// The served model's profile (the layouts it can run).
    model: Option<&'a crate::profiles::ModelProfile>,
    precision: Option<Precision>,
    max_batched_tokens: Option<u32>,
    max_context_tokens: Option<u32>,
    /// Several models share the offers (`[[models]]`): a type that cannot
    /// run one of them is no problem of the offer's, as long as some type
    /// can.
    pooled: bool,
}

/// Reads, resolves and checks the scenario at `path`.
pub fn load(path: &Path) -> Result<Scenario, PlannerError> {
    load_with(path, &[])
}

/// Reads the scenario at `path`, applies `overrides` (`--set KEY=VALUE`) to
/// the parsed document, then resolves and checks it like a file: a problem
/// on a line an override wrote names its `--set` key.
pub fn load_with(path: &Path, overrides: &[Override]) -> Result<Scenario, PlannerError> {
    let text = read_toml_text(path).map_err(|p| PlannerError::Scenario(vec![p]))?;
    let (edited, set_problems) = if overrides.is_empty() {
        (None, Vec::new())
    } else {
        let (edited, problems) =
            overrides::apply(path, &text, overrides).map_err(PlannerError::Scenario)?;
        (Some(edited), problems)
    };
    // An override that could not be applied is said first, beside every
    // problem of the document the others made.
    let result = checked(path, &text, overrides, edited.as_ref());
    if set_problems.is_empty() {
        return result;
    }
    Err(PlannerError::Scenario(match result {
        Err(PlannerError::Scenario(more)) => set_problems.into_iter().chain(more).collect(),
        _ => set_problems,
    }))
}

/// The scenario of `text` (or of its `edited` form), checked.
fn checked(
    path: &Path,
    text: &str,
    overrides: &[Override],
    edited: Option<&overrides::Overridden>,
) -> Result<Scenario, PlannerError> {
    let locate = |problems: Vec<Problem>| {
        PlannerError::Scenario(match edited {
            Some(e) => problems
                .into_iter()
                .map(|p| e.locate(p, overrides))
                .collect(),
            None => problems,
        })
    };
    // Every unknown key and wrong type at once; the rest of the checks then
    // run on the document patched past them, and report what the patches
    // did not touch.
    let source = edited.map_or(text, |e| e.text.as_str());
    let collected = collect::<RawScenario>(path, source);
    let Some(raw) = &collected.value else {
        return Err(locate(collected.problems));
    };
    let mut problems = collected.problems.clone();
    match validate(path, raw, collected.text.clone()) {
        Ok(scenario) if problems.is_empty() => Ok(scenario),
        Err(PlannerError::Scenario(more)) => {
            problems.extend(more.into_iter().filter(|p| !collected.at_a_patch(p)));
            Err(locate(problems))
        }
        Err(other) if problems.is_empty() => Err(other),
        Ok(_) | Err(_) => Err(locate(problems)),
    }
}

fn validate(path: &Path, raw: &RawScenario, text: String) -> Result<Scenario, PlannerError> {
    let mut v = Validator {
        file: path.to_path_buf(),
        text,
        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        problems: Vec::new(),
        profiles_missing: false,
    };
    let scenario = v.scenario(raw);
    match scenario {
        Some(s) if v.problems.is_empty() => Ok(s),
        _ => Err(PlannerError::Scenario(v.problems)),
    }
}

struct Validator {
    file: PathBuf,
    text: String,
    dir: PathBuf,
    problems: Vec<Problem>,
    /// Whether the profiles folder does not exist (said once; the profiles
    /// it would hold are then not reported one by one).
    profiles_missing: bool,
}

impl Validator {
    fn at_key(&mut self, key: impl Into<String>, message: impl Into<String>) {
        self.problems
            .push(Problem::new(self.file.clone(), key.into(), message.into()));
    }

    fn at_span<T>(&mut self, spanned: &Spanned<T>, message: impl Into<String>) {
        let location = line_col(&self.text, spanned.span().start);
        self.problems
            .push(Problem::new(self.file.clone(), location, message.into()));
    }

    /// Checks `value` against the row of [`SCENARIO_BOUNDS`] for `key`
    /// (indices in `key` are ignored for the lookup and kept in the message).
    fn bounded(&mut self, key: &str, value: f64) -> bool {
        match bounds::find(SCENARIO_BOUNDS, key).check(key, value) {
            None => true,
            Some(message) => {
                self.at_key(key, message);
                false
            }
        }
    }

    fn scenario(&mut self, raw: &RawScenario) -> Option<Scenario> {
        let profiles_dir = self
            .dir
            .join(raw.profiles_dir.as_deref().unwrap_or("../profiles"));
        if !profiles_dir.is_dir() {
            self.profiles_missing = true;
            self.at_key(
                "profiles_dir",
                format!(
                    "the profiles folder {} does not exist (`profiles_dir`, relative to the scenario file, is `../profiles` by default): set `profiles_dir` to the folder that holds models/, gpus/ and engines/ (the repository's `profiles/`)",
                    profiles_dir.display()
                ),
            );
        }
        let entries = self.model_entries(raw);
        let pooled = raw.models.is_some();
        let mut models: Vec<Option<ServedModel>> = entries
            .iter()
            .map(|e| self.model(e, &profiles_dir))
            .collect();
        let planning = self.planning(raw);
        let chunk_pin = self.chunk_pin(raw.simulation.as_ref());
        if raw.gpus.is_empty() {
            self.at_key(
                "gpus",
                "the scenario offers no GPU type: add at least one [[gpus]] table",
            );
        }
        let mut seen = BTreeSet::new();
        for g in &raw.gpus {
            if !seen.insert(g.profile.get_ref().clone()) {
                self.at_span(
                    &g.profile,
                    format!(
                        "GPU type `{}` is offered twice; merge the two [[gpus]] tables",
                        g.profile.get_ref()
                    ),
                );
            }
        }
        // The offers as each model runs them; an offer's problems that do
        // not depend on the model are said once.
        let mut per_model: Vec<Vec<GpuOffer>> = Vec::with_capacity(models.len().max(1));
        for j in 0..models.len().max(1) {
            let model = models.get(j).and_then(Option::as_ref);
            let pins = Pins {
                model: model.map(|m| &m.profile),
                precision: model.and_then(|m| m.precision),
                max_batched_tokens: chunk_pin,
                max_context_tokens: model.map(|m| m.profile.max_context_tokens),
                pooled,
            };
            let before = self.problems.len();
            let offers: Vec<GpuOffer> = raw
                .gpus
                .iter()
                .enumerate()
                .filter_map(|(i, g)| self.gpu(i, g, &profiles_dir, &pins))
                .collect();
            let found: Vec<Problem> = self.problems.drain(before..).collect();
            for p in found {
                if !self.problems.contains(&p) {
                    self.problems.push(p);
                }
            }
            per_model.push(offers);
        }
        // A model that no offered type can hold is named at its own entry
        // (the offers' own problems said, when some offer was refused).
        for (j, m) in models.iter().enumerate() {
            let Some(m) = m else { continue };
            let holds = per_model[j].iter().any(|o| fits_somewhere(&m.profile, o));
            if !holds && !per_model[j].is_empty() && per_model[j].len() == raw.gpus.len() {
                let key = if pooled {
                    format!("models[{j}].profile")
                } else {
                    "model.profile".to_string()
                };
                self.at_key(key, cannot_hold(&m.profile, &per_model[j]));
            }
        }
        let with_api = models.iter().flatten().filter(|m| m.api.is_some()).count();
        for (j, m) in models.iter().enumerate() {
            let limited = m
                .as_ref()
                .and_then(|m| m.api.as_ref()?.max_tokens_per_minute);
            if limited.is_some() && with_api > 1 {
                self.at_key(
                    format!("models[{j}].api.max_tokens_per_minute"),
                    "an API rate limit is planned for one API at a time: with several models selling to an API, state no `max_tokens_per_minute` (or keep one model's API offer)",
                );
            }
        }
        let ids: Vec<(String, bool)> = entries
            .iter()
            .zip(&models)
            .map(|(e, m)| (e.id.clone(), m.as_ref().is_some_and(|m| m.api.is_some())))
            .collect();
        let tiers = self.tiers(&raw.tiers, planning.slot_minutes, &ids, pooled);
        let demand = self.demand(&raw.demand, &tiers);
        if pooled {
            self.api_for_every_tier(&raw.demand, &raw.tiers, &tiers, &ids);
            self.every_model_served(&tiers, &ids);
        }
        let shape = raw.shape.as_ref().and_then(|s| self.shape(s));
        let simulation = self.simulation(raw.simulation.as_ref());
        if simulation.capacity == CapacitySource::Analytic {
            for (i, t) in tiers
                .iter()
                .enumerate()
                .filter(|(_, t)| t.percentile >= 100.0)
            {
                self.at_key(
                    format!("tiers[{i}].percentile"),
                    format!("tier `{}` asks for its 100th percentile, which the queueing model (`simulation.capacity = \"analytic\"`) does not bound: random arrivals queue without limit at any load; use a percentile below 100 (e.g. 99.9), or the simulated capacity (`simulation.capacity = \"simulated\"`), which replays the requests", t.name),
                );
            }
            for (i, g) in raw.gpus.iter().enumerate() {
                if g.disaggregated.as_ref().is_some_and(|d| !d.is_empty()) {
                    self.at_key(
                        format!("gpus[{i}].disaggregated"),
                        "disaggregated units are sized by replaying them (`simulation.capacity = \"simulated\"`, the default); the queueing model (`\"analytic\"`) has no prefill and decode apart: drop `disaggregated` or use the simulated capacity",
                    );
                }
            }
        }
        if let Some(shape) = &shape {
            let slots = u64::from(shape.days) * 1440 / u64::from(planning.slot_minutes.max(1));
            if slots > MAX_SLOTS {
                self.at_key(
                    "planning.slot_minutes",
                    format!("{} days of the rate curve in {}-minute slots make {slots} slots, more than the {MAX_SLOTS} a plan may have; use longer slots or fewer `shape.days`", shape.days, planning.slot_minutes),
                );
            }
        }
        let commitment_term_months = raw.commitment.as_ref().and_then(|c| {
            let Some(months) = c.term_months else {
                self.at_key(
                    "commitment.term_months",
                    "`[commitment]` needs `term_months`, the months the reservations are committed for (e.g. `term_months = 12`, or `--set commitment.term_months=36`); `monthly_growth` projects demand over them and `renewal_months` cuts them into reservations".to_string(),
                );
                return None;
            };
            self.bounded("commitment.term_months", f64::from(months));
            Some(months)
        });
        let commitment_monthly_growth = self.monthly_growth(raw.commitment.as_ref());
        let (commitment_renewal_months, commitment_price_decline_per_year) =
            self.renewals(raw.commitment.as_ref());
        let check_days = raw.check.as_ref().and_then(|c| {
            let Some(days) = c.days else {
                self.at_key(
                    "check.days",
                    "`[check]` needs `days`, the days at the end of the horizon to set aside and replay the plan on (e.g. `days = 2`)".to_string(),
                );
                return None;
            };
            self.bounded("check.days", f64::from(days));
            if 1440 % planning.slot_minutes.max(1) != 0 {
                self.at_key(
                    "check.days",
                    format!("days can be set aside only when a day is a whole number of slots; `planning.slot_minutes` = {} does not divide 1440", planning.slot_minutes),
                );
            }
            if let Some(shape) = shape.as_ref().filter(|s| days >= s.days) {
                self.at_key(
                    "check.days",
                    format!("{days} days set aside leave none of the rate curve's {} to plan on; set `check.days` below `shape.days`", shape.days),
                );
            }
            Some(days)
        });
        let renewal = commitment_renewal_months;
        let term = commitment_term_months;
        // Offers are compared over one reservation's months: the renewal
        // period when the term is staged, else the term; a pinned KV-cache
        // precision replaces the engines' recipes.
        let finish = |offers: Vec<GpuOffer>, kv_cache: Option<Precision>| -> Vec<GpuOffer> {
            offers
                .into_iter()
                .map(|g| choose_reserved_offer(g, renewal.or(term), renewal.is_some()))
                .map(|mut g| {
                    if let (Some(kv), Some(engine)) = (kv_cache, g.engine.as_mut()) {
                        engine.profile.fp8_kv_cache = kv == Precision::Fp8;
                    }
                    g
                })
                .collect()
        };
        for (m, offers) in models.iter_mut().zip(per_model) {
            if let Some(m) = m {
                m.gpus = finish(offers, m.kv_cache);
            }
        }
        if models.is_empty() || models.iter().any(Option::is_none) {
            return None;
        }
        // The shared offers (prices, units, quotas) as the first model runs
        // them.
        let gpus = models[0]
            .as_ref()
            .map(|m| m.gpus.clone())
            .unwrap_or_default();
        let models: Vec<ServedModel> = models.into_iter().flatten().collect();
        Some(Scenario {
            name: raw.name.clone(),
            description: raw.description.clone().unwrap_or_default(),
            path: self.file.clone(),
            models,
            planning,
            gpus,
            tiers,
            demand,
            shape,
            simulation,
            commitment_term_months,
            commitment_monthly_growth,
            commitment_renewal_months,
            commitment_price_decline_per_year,
            check_days,
        })
    }

    /// Reads `<dir>/<id>.toml` as a profile; reports unknown ids with the list of
    /// known ones, and range problems of the profile itself.
    fn profile<T>(&mut self, id: &Spanned<String>, dir: &Path, kind: &str) -> Option<T>
    where
        T: serde::de::DeserializeOwned + CheckedProfile,
    {
        let file = dir.join(format!("{}.toml", id.get_ref()));
        if !file.is_file() && self.profiles_missing {
            return None; // the missing folder is reported once
        }
        if !file.is_file() {
            let known = crate::profiles::known_ids(dir);
            self.at_span(
                id,
                format!(
                    "unknown {kind} profile `{}` (no file {}); {}known: {}",
                    id.get_ref(),
                    file.display(),
                    crate::base::nearest::nearest(id.get_ref(), known.iter().map(String::as_str))
                        .map_or_else(String::new, |n| format!("did you mean `{n}`? ")),
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ),
            );
            return None;
        }
        match read_toml_file::<T>(&file) {
            Ok((profile, _)) => {
                let problems = profile.check_profile(&file);
                let ok = problems.is_empty();
                self.problems.extend(problems);
                ok.then_some(profile)
            }
            Err(p) => {
                self.problems.extend(p);
                None
            }
        }
    }
}

/// Profiles that can range-check themselves.
trait CheckedProfile {
    fn check_profile(&self, file: &Path) -> Vec<Problem>;
}

impl CheckedProfile for GpuProfile {
    fn check_profile(&self, file: &Path) -> Vec<Problem> {
        self.check(file)
    }
}

impl CheckedProfile for ModelProfile {
    fn check_profile(&self, file: &Path) -> Vec<Problem> {
        self.check(file)
    }
}
