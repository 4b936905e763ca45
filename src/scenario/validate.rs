//! Raw scenario → [`Scenario`]: resolves profile references and file paths,
//! applies defaults, and collects every problem instead of stopping at the first.

use super::overrides::{self, Override};
use super::raw::{
    RawCommitment, RawDemand, RawGpuOffer, RawScenario, RawShape, RawSimulation, RawSpot, RawTier,
};
use super::{
    ApiOffer, CapacitySource, DemandSource, GpuOffer, PeakStatistic, Planning, PurchaseTerms,
    Scenario, ServedModel, ServingRules, ShapeAnchor, ShapeSpec, Simulation, SpotOffer, Tier,
    VerifySlots,
};
use crate::base::bounds::{self, Bound};
use crate::base::error::{PlannerError, Problem};
use crate::base::located::line_col;
use crate::base::toml_file::{parse_toml, read_toml_file, read_toml_text};
use crate::milp::Method;
use crate::profiles::precision::Precision;
use crate::profiles::{GpuProfile, ModelProfile};
use crate::scenario::reserved_offer::{self, ReservedOffer};
use crate::sim::{Router, Scheduler};
use crate::traces::TraceFormat;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Default batch-size caps considered for every GPU type.
pub(super) const DEFAULT_MAX_BATCH: [u32; 6] = [8, 16, 32, 64, 128, 256];

/// Default chunked-prefill budgets (tokens per step) tried on every GPU type.
pub(super) const DEFAULT_MAX_BATCHED_TOKENS: [u32; 4] = [512, 2048, 8192, 16384];

/// Smallest chunk size accepted.
pub(super) const MIN_BATCHED_TOKENS: u32 = 64;

/// Most planning slots a scenario may have (traces or rate-curve days divided
/// by `planning.slot_minutes`): the MILP and the replay grow with them.
pub const MAX_SLOTS: u64 = 2_000;

/// Largest factor (and smallest, inverted) between the term's last month's
/// demand and the planned pattern's that a scenario may state.
pub(super) const MAX_TERM_GROWTH_FACTOR: f64 = 100.0;

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
    Bound::positive("tiers[].ttft_ms", 600_000.0, "ms"),
    Bound::positive("tiers[].tpot_ms", 60_000.0, "ms"),
    Bound::positive("tiers[].percentile", 100.0, ""),
    Bound::closed("tiers[].max_configurations", 1.0, 64.0, "configurations"),
    Bound::closed("tiers[].headroom_replicas", 0.0, 8.0, "replicas"),
    Bound::positive("tiers[].deadline_hours", 672.0, "hours"),
    Bound::positive("demand[].scale", 1_000.0, "× the trace's rate"),
    Bound::closed("shape.days", 1.0, 366.0, "days"),
    Bound::closed("commitment.term_months", 1.0, 120.0, "months"),
    Bound::closed("commitment.monthly_growth", -0.5, 1.0, "share per month"),
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
];

/// Prices a GPU type's reservations at the offer with the lowest
/// effective price over the commitment term (exact: see
/// [`crate::scenario::reserved_offer`]).
fn choose_reserved_offer(mut g: GpuOffer, commitment_term_months: Option<u32>) -> GpuOffer {
    if let Some(chosen) = reserved_offer::cheapest(&g.reserved_offers, commitment_term_months) {
        g.reserved_usd_per_gpu_hour = Some(chosen.effective_usd_per_gpu_hour);
        let over = if chosen.term_stated {
            format!("the {}-month commitment term", chosen.planning_term_months)
        } else {
            format!(
                "{} months, the longest offered (no [commitment] term stated)",
                chosen.planning_term_months
            )
        };
        g.reserved_term = format!(
            "{}-month offer at {:.3} USD/GPU-h, the cheapest of {} over {over}",
            chosen.term_months, chosen.usd_per_gpu_hour, chosen.offers_listed
        );
        g.reserved_offer = Some(chosen);
    }
    g
}

/// Scenario-wide settings that pin a configuration dimension of every offer.
struct Pins {
    precision: Option<Precision>,
    max_batched_tokens: Option<u32>,
    max_context_tokens: Option<u32>,
}

/// Reads, resolves and checks the scenario at `path`.
pub fn load(path: &Path) -> Result<Scenario, PlannerError> {
    load_with(path, &[])
}

/// Reads the scenario at `path`, applies `overrides` (`--set KEY=VALUE`) to
/// the parsed document, then resolves and checks it like a file: a problem
/// on a line an override wrote names its `--set` key.
pub fn load_with(path: &Path, overrides: &[Override]) -> Result<Scenario, PlannerError> {
    if overrides.is_empty() {
        let (raw, text) = read_toml_file::<RawScenario>(path).map_err(PlannerError::Scenario)?;
        return validate(path, &raw, text);
    }
    let text = read_toml_text(path).map_err(|p| PlannerError::Scenario(vec![p]))?;
    let edited = overrides::apply(path, &text, overrides).map_err(PlannerError::Scenario)?;
    let locate = |p: Problem| edited.locate(p, overrides);
    let raw = parse_toml::<RawScenario>(path, &edited.text)
        .map_err(|ps| PlannerError::Scenario(ps.into_iter().map(locate).collect()))?;
    validate(path, &raw, edited.text.clone()).map_err(|e| match e {
        PlannerError::Scenario(problems) => {
            PlannerError::Scenario(problems.into_iter().map(locate).collect())
        }
        other => other,
    })
}

fn validate(path: &Path, raw: &RawScenario, text: String) -> Result<Scenario, PlannerError> {
    let mut v = Validator {
        file: path.to_path_buf(),
        text,
        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        problems: Vec::new(),
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
        let model = self.model(raw, &profiles_dir);
        let planning = self.planning(raw);
        let pins = Pins {
            precision: model.as_ref().and_then(|m| m.precision),
            max_batched_tokens: self.chunk_pin(raw.simulation.as_ref()),
            max_context_tokens: model.as_ref().map(|m| m.profile.max_context_tokens),
        };
        if raw.gpus.is_empty() {
            self.at_key(
                "gpus",
                "the scenario offers no GPU type: add at least one [[gpus]] table",
            );
        }
        let mut seen = BTreeSet::new();
        let gpus: Vec<_> = raw
            .gpus
            .iter()
            .enumerate()
            .filter_map(|(i, g)| {
                if !seen.insert(g.profile.get_ref().clone()) {
                    self.at_span(
                        &g.profile,
                        format!(
                            "GPU type `{}` is offered twice; merge the two [[gpus]] tables",
                            g.profile.get_ref()
                        ),
                    );
                }
                self.gpu(i, g, &profiles_dir, &pins)
            })
            .collect();
        let api = raw.api.as_ref().map(|a| {
            self.bounded(
                "api.usd_per_million_input_tokens",
                a.usd_per_million_input_tokens,
            );
            self.bounded(
                "api.usd_per_million_output_tokens",
                a.usd_per_million_output_tokens,
            );
            if let Some(limit) = a.max_tokens_per_minute {
                self.bounded("api.max_tokens_per_minute", limit);
            }
            ApiOffer {
                name: a.name.clone(),
                usd_per_million_input_tokens: a.usd_per_million_input_tokens,
                usd_per_million_output_tokens: a.usd_per_million_output_tokens,
                max_tokens_per_minute: a.max_tokens_per_minute,
                price_source: a.price_source.clone(),
            }
        });
        let tiers = self.tiers(&raw.tiers, planning.slot_minutes);
        let demand = self.demand(&raw.demand, &tiers);
        let shape = raw.shape.as_ref().and_then(|s| self.shape(s));
        let simulation = self.simulation(raw.simulation.as_ref());
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
                    "`[commitment]` needs `term_months`, the months the reservations are committed for (e.g. `term_months = 12`); `monthly_growth` projects demand over them".to_string(),
                );
                return None;
            };
            self.bounded("commitment.term_months", f64::from(months));
            Some(months)
        });
        let commitment_monthly_growth = self.monthly_growth(raw.commitment.as_ref());
        let gpus = gpus
            .into_iter()
            .map(|g| choose_reserved_offer(g, commitment_term_months))
            .collect();
        Some(Scenario {
            name: raw.name.clone(),
            description: raw.description.clone().unwrap_or_default(),
            path: self.file.clone(),
            model: model?,
            planning,
            gpus,
            api,
            tiers,
            demand,
            shape,
            simulation,
            commitment_term_months,
            commitment_monthly_growth,
        })
    }

    /// `commitment.monthly_growth`, bounded, and the demand it reaches by
    /// the term's last month at most [`MAX_TERM_GROWTH_FACTOR`] times (and
    /// at least its inverse) the planned pattern's.
    fn monthly_growth(&mut self, commitment: Option<&RawCommitment>) -> f64 {
        let Some(c) = commitment else {
            return 0.0;
        };
        let (Some(growth), Some(months)) = (c.monthly_growth, c.term_months) else {
            return 0.0;
        };
        if !self.bounded("commitment.monthly_growth", growth) {
            return 0.0;
        }
        if growth != 0.0 && months < 2 {
            self.at_key(
                "commitment.monthly_growth",
                format!("a growth of {growth} a month needs a term of at least 2 months to grow over; `term_months` is {months}: lengthen the term or remove `monthly_growth`"),
            );
            return 0.0;
        }
        let last = (1.0 + growth).powi(months.saturating_sub(1) as i32);
        if !(1.0 / MAX_TERM_GROWTH_FACTOR..=MAX_TERM_GROWTH_FACTOR).contains(&last) {
            let direction = if growth > 0.0 { "lower" } else { "milder" };
            self.at_key(
                "commitment.monthly_growth",
                format!(
                    "{growth} a month over {months} months makes the last month's demand {last:.3e} × the planned pattern's, outside [1/{MAX_TERM_GROWTH_FACTOR}, {MAX_TERM_GROWTH_FACTOR}]; use a {direction} growth or a shorter term"
                ),
            );
            return 0.0;
        }
        growth
    }

    fn model(&mut self, raw: &RawScenario, profiles_dir: &Path) -> Option<ServedModel> {
        let id = raw.model.profile.get_ref().clone();
        let precision = match raw.model.precision.as_ref() {
            None => None,
            Some(p) => {
                if let Some(precision) = Precision::parse(p.get_ref()) {
                    Some(precision)
                } else {
                    self.at_span(
                    p,
                    format!(
                        "unknown precision `{}`; accepted: \"bf16\", \"fp8\" (or leave it out to let each GPU type try both)",
                        p.get_ref()
                    ),
                );
                    return None;
                }
            }
        };
        let profile: ModelProfile =
            self.profile(&raw.model.profile, &profiles_dir.join("models"), "model")?;
        Some(ServedModel {
            id,
            profile,
            precision,
        })
    }

    /// Reads `<dir>/<id>.toml` as a profile; reports unknown ids with the list of
    /// known ones, and range problems of the profile itself.
    fn profile<T>(&mut self, id: &Spanned<String>, dir: &Path, kind: &str) -> Option<T>
    where
        T: serde::de::DeserializeOwned + CheckedProfile,
    {
        let file = dir.join(format!("{}.toml", id.get_ref()));
        if !file.is_file() {
            let known = crate::profiles::known_ids(dir);
            self.at_span(
                id,
                format!(
                    "unknown {kind} profile `{}` (no file {}); known: {}",
                    id.get_ref(),
                    file.display(),
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

    fn planning(&mut self, raw: &RawScenario) -> Planning {
        let p = raw.planning.as_ref();
        let slot_minutes = p.and_then(|p| p.slot_minutes).unwrap_or(60);
        if self.bounded("planning.slot_minutes", f64::from(slot_minutes))
            && 1440 % slot_minutes != 0
        {
            self.at_key(
                "planning.slot_minutes",
                format!("`planning.slot_minutes` must divide a day (1440) evenly, e.g. 15, 30, 60, 120; got {slot_minutes}"),
            );
        }
        let quantile = p.and_then(|p| p.peak_quantile);
        let peak_statistic = match p.and_then(|p| p.peak_statistic.as_ref()) {
            None => PeakStatistic::MaxMinute,
            Some(s) => match s.get_ref().as_str() {
                "max-minute" => PeakStatistic::MaxMinute,
                "mean" => PeakStatistic::Mean,
                "quantile-minute" => {
                    let q = quantile.unwrap_or(0.95);
                    self.bounded("planning.peak_quantile", q);
                    PeakStatistic::QuantileMinute { quantile: q }
                }
                other => {
                    self.at_span(s, format!("unknown peak statistic `{other}`; accepted: \"max-minute\", \"quantile-minute\", \"mean\""));
                    PeakStatistic::MaxMinute
                }
            },
        };
        let mip_gap = p.and_then(|p| p.mip_gap).unwrap_or(0.01);
        self.bounded("planning.mip_gap", mip_gap);
        let time_limit_s = p.and_then(|p| p.time_limit_s).unwrap_or(60.0);
        self.bounded("planning.time_limit_s", time_limit_s);
        let threads = p.and_then(|p| p.threads).unwrap_or(1);
        self.bounded("planning.threads", f64::from(threads));
        let milp_method = match p.and_then(|p| p.milp_method.as_ref()) {
            None => Method::Auto,
            Some(s) => match s.get_ref().as_str() {
                "auto" => Method::Auto,
                "monolithic" => Method::Monolithic,
                "decomposed" => Method::Decomposed,
                other => {
                    self.at_span(s, format!("unknown MILP method `{other}`; accepted: \"auto\", \"monolithic\", \"decomposed\""));
                    Method::Auto
                }
            },
        };
        Planning {
            slot_minutes,
            peak_statistic,
            mip_gap,
            time_limit_s,
            threads,
            milp_method,
        }
    }

    /// `simulation.max_batched_tokens`: one chunk size for every offer.
    fn chunk_pin(&mut self, raw: Option<&RawSimulation>) -> Option<u32> {
        let pinned = raw?.max_batched_tokens?;
        self.bounded("simulation.max_batched_tokens", f64::from(pinned));
        Some(pinned)
    }

    fn simulation(&mut self, raw: Option<&RawSimulation>) -> Simulation {
        let d = Simulation::default();
        let Some(r) = raw else { return d };
        let capacity = match r.capacity.as_ref() {
            None => d.capacity,
            Some(s) => match s.get_ref().as_str() {
                "simulated" => CapacitySource::Simulated,
                "analytic" => CapacitySource::Analytic,
                other => {
                    self.at_span(s, format!("unknown capacity source `{other}`; accepted: \"simulated\", \"analytic\""));
                    d.capacity
                }
            },
        };
        let capacity_requests = r.capacity_requests.unwrap_or(d.capacity_requests);
        self.bounded("simulation.capacity_requests", f64::from(capacity_requests));
        let verify = match r.verify.as_ref() {
            None => d.verify,
            Some(s) => {
                match s.get_ref().as_str() {
                    "sample" => VerifySlots::Sample,
                    "all" => VerifySlots::All,
                    "off" => VerifySlots::Off,
                    other => {
                        self.at_span(s, format!("unknown verify mode `{other}`; accepted: \"sample\", \"all\", \"off\""));
                        d.verify
                    }
                }
            }
        };
        let max_rounds = r.max_rounds.unwrap_or(d.max_rounds);
        self.bounded("simulation.max_rounds", f64::from(max_rounds));
        let tighten_factor = r.tighten_factor.unwrap_or(d.tighten_factor);
        self.bounded("simulation.tighten_factor", tighten_factor);
        let attainment_margin_points = r
            .attainment_margin_points
            .unwrap_or(d.attainment_margin_points);
        self.bounded(
            "simulation.attainment_margin_points",
            attainment_margin_points,
        );
        let max_utilisation = r.max_utilisation.unwrap_or(d.max_utilisation);
        if !self.bounded("simulation.max_utilisation", max_utilisation) {
            self.at_key(
                "simulation.max_utilisation",
                "a queue fed at or above its service rate grows without bound",
            );
        }
        let fleet_requests_per_replica = r
            .fleet_requests_per_replica
            .unwrap_or(d.fleet_requests_per_replica);
        self.bounded(
            "simulation.fleet_requests_per_replica",
            f64::from(fleet_requests_per_replica),
        );
        let burst_scale_max = r.burst_scale_max.unwrap_or(d.burst_scale_max);
        self.bounded("simulation.burst_scale_max", burst_scale_max);
        let fleet_max_replicas = r.fleet_max_replicas.unwrap_or(d.fleet_max_replicas);
        self.bounded(
            "simulation.fleet_max_replicas",
            f64::from(fleet_max_replicas),
        );
        let scheduler = match r.scheduler.as_ref() {
            None => d.scheduler,
            Some(s) => Scheduler::from_name(s.get_ref()).unwrap_or_else(|| {
                let accepted = Scheduler::ALL.map(|a| format!("\"{}\"", a.name()));
                self.at_span(
                    s,
                    format!(
                        "unknown scheduler `{}`; accepted: {}",
                        s.get_ref(),
                        accepted.join(", ")
                    ),
                );
                d.scheduler
            }),
        };
        let router = match r.router.as_ref() {
            None => d.router,
            Some(s) => Router::from_name(s.get_ref()).unwrap_or_else(|| {
                let accepted = Router::ALL.map(|a| format!("\"{}\"", a.name()));
                self.at_span(
                    s,
                    format!(
                        "unknown router `{}`; accepted: {}",
                        s.get_ref(),
                        accepted.join(", ")
                    ),
                );
                d.router
            }),
        };
        Simulation {
            seed: r.seed.unwrap_or(d.seed),
            capacity,
            capacity_requests,
            verify,
            max_rounds,
            tighten_factor,
            attainment_margin_points,
            max_utilisation,
            fleet_requests_per_replica,
            burst_scale_max,
            fleet_max_replicas,
            scheduler,
            router,
        }
    }

    fn gpu(
        &mut self,
        i: usize,
        g: &RawGpuOffer,
        profiles_dir: &Path,
        pins: &Pins,
    ) -> Option<GpuOffer> {
        let key = |k: &str| format!("gpus[{i}].{k}");
        if let Some(price) = g.on_demand_usd_per_gpu_hour {
            self.bounded(&key("on_demand_usd_per_gpu_hour"), price);
        }
        if let Some(price) = g.reserved_usd_per_gpu_hour {
            self.bounded(&key("reserved_usd_per_gpu_hour"), price);
        }
        let reserved_offers = self.reserved_offers(i, g);
        if g.on_demand_usd_per_gpu_hour.is_none()
            && g.reserved_usd_per_gpu_hour.is_none()
            && reserved_offers.is_empty()
        {
            self.at_key(
                key("on_demand_usd_per_gpu_hour"),
                "a GPU type needs an on-demand or a reserved price (or both)",
            );
        }
        if let Some(n) = g.max_gpus {
            self.bounded(&key("max_gpus"), f64::from(n));
        }
        let profile: GpuProfile = self.profile(&g.profile, &profiles_dir.join("gpus"), "GPU")?;
        let node = profile.gpus_per_node;
        let tensor_parallel = match &g.tensor_parallel {
            // Those that fit a node and, with a purchase unit, divide it.
            None => (0..=node.ilog2())
                .map(|e| 1 << e)
                .filter(|tp| *tp <= node)
                .filter(|tp| match g.purchase_unit_gpus {
                    Some(unit) if unit > 1 => unit.is_multiple_of(*tp),
                    _ => true,
                })
                .collect(),
            Some(list) => {
                for tp in list {
                    if !tp.is_power_of_two() || *tp > node {
                        self.at_key(
                            key("tensor_parallel"),
                            format!("tensor-parallel degree {tp} is not a power of two at most {node} (GPUs per node of `{}`)", g.profile.get_ref()),
                        );
                    }
                }
                if list.is_empty() {
                    self.at_key(
                        key("tensor_parallel"),
                        "`tensor_parallel` must list at least one degree",
                    );
                }
                list.clone()
            }
        };
        let max_batch = match &g.max_batch {
            None => DEFAULT_MAX_BATCH.to_vec(),
            Some(list) => {
                if list.is_empty() {
                    self.at_key(
                        key("max_batch"),
                        "`max_batch` must list at least one batch cap",
                    );
                }
                for &b in list {
                    self.bounded(&key("max_batch"), f64::from(b));
                }
                list.clone()
            }
        };
        let purchase = self.purchase(i, g, &tensor_parallel);
        let max_batched_tokens = self.chunk_sizes(i, g, pins);
        let precision = self.precisions(i, g, &profile, pins);
        Some(GpuOffer {
            id: g.profile.get_ref().clone(),
            profile,
            on_demand_usd_per_gpu_hour: g.on_demand_usd_per_gpu_hour,
            reserved_usd_per_gpu_hour: g.reserved_usd_per_gpu_hour,
            reserved_term: g
                .reserved_term
                .clone()
                .unwrap_or_else(|| "not stated".into()),
            reserved_offers,
            reserved_offer: None,
            price_source: g.price_source.clone(),
            max_gpus: g.max_gpus,
            purchase,
            spot: g.spot.as_ref().map(|s| self.spot(i, s)),
            tensor_parallel,
            max_batch,
            max_batched_tokens,
            precision,
        })
    }

    /// The `reserved_offers` of offer `i`, each bounded; they replace the
    /// single `reserved_usd_per_gpu_hour` / `reserved_term` keys.
    fn reserved_offers(&mut self, i: usize, g: &RawGpuOffer) -> Vec<ReservedOffer> {
        let Some(list) = &g.reserved_offers else {
            return Vec::new();
        };
        let key = format!("gpus[{i}].reserved_offers");
        if list.is_empty() {
            self.at_key(
                key.clone(),
                "`reserved_offers` must list at least one offer; remove the key if the type cannot be reserved",
            );
        }
        if g.reserved_usd_per_gpu_hour.is_some() || g.reserved_term.is_some() {
            self.at_key(
                key.clone(),
                "`reserved_offers` replaces `reserved_usd_per_gpu_hour` and `reserved_term`; state the reserved price one way only",
            );
        }
        for (j, o) in list.iter().enumerate() {
            if let Some(first) = list[..j]
                .iter()
                .position(|p| p.term_months == o.term_months)
            {
                self.at_key(
                    format!("{key}[{j}].term_months"),
                    format!(
                        "two offers of {} months ({key}[{first}] and [{j}]); list one price per term, the one you can buy",
                        o.term_months
                    ),
                );
            }
        }
        list.iter()
            .enumerate()
            .map(|(j, o)| {
                self.bounded(&format!("{key}[{j}].term_months"), f64::from(o.term_months));
                self.bounded(&format!("{key}[{j}].usd_per_gpu_hour"), o.usd_per_gpu_hour);
                ReservedOffer {
                    term_months: o.term_months,
                    usd_per_gpu_hour: o.usd_per_gpu_hour,
                }
            })
            .collect()
    }

    /// The purchase unit and minimum rental of offer `i`. A unit of N > 1
    /// GPUs is a node: it must hold whole tensor-parallel groups (every
    /// degree divides N), since a group split across nodes would run its
    /// all-reduces over the network.
    fn purchase(&mut self, i: usize, g: &RawGpuOffer, tensor_parallel: &[u32]) -> PurchaseTerms {
        let d = PurchaseTerms::default();
        let unit_gpus = g.purchase_unit_gpus.unwrap_or(d.unit_gpus);
        let key = format!("gpus[{i}].purchase_unit_gpus");
        if self.bounded(&key, f64::from(unit_gpus)) && unit_gpus > 1 {
            for &tp in tensor_parallel {
                if tp > 0 && !unit_gpus.is_multiple_of(tp) {
                    self.at_key(
                        &key,
                        format!("a node of {unit_gpus} GPUs does not hold whole tensor-parallel groups of {tp} GPUs (a group must not span nodes): use a node size that is a multiple of {tp}, or drop {tp} from `gpus[{i}].tensor_parallel`"),
                    );
                }
            }
        }
        let min_rental_hours = g.min_rental_hours.unwrap_or(d.min_rental_hours);
        if self.bounded(&format!("gpus[{i}].min_rental_hours"), min_rental_hours)
            && min_rental_hours > 0.0
            && g.on_demand_usd_per_gpu_hour.is_none()
        {
            self.at_key(
                format!("gpus[{i}].min_rental_hours"),
                "`min_rental_hours` applies to on-demand rentals, and this GPU type has no `on_demand_usd_per_gpu_hour`",
            );
        }
        PurchaseTerms {
            unit_gpus,
            min_rental_hours,
        }
    }

    /// The spot terms of offer `i`.
    fn spot(&mut self, i: usize, s: &RawSpot) -> SpotOffer {
        let key = |k: &str| format!("gpus[{i}].spot.{k}");
        self.bounded(&key("usd_per_gpu_hour"), s.usd_per_gpu_hour);
        // The share of requested spot GPUs the provider grants.
        self.bounded(&key("availability"), s.availability);
        self.bounded(&key("interruptions_per_hour"), s.interruptions_per_hour);
        SpotOffer {
            usd_per_gpu_hour: s.usd_per_gpu_hour,
            availability: s.availability,
            interruptions_per_hour: s.interruptions_per_hour,
        }
    }

    /// The chunk sizes an offer tries: its own list, else the scenario-wide
    /// pin `simulation.max_batched_tokens`, else [`DEFAULT_MAX_BATCHED_TOKENS`]
    /// up to the model's context.
    fn chunk_sizes(&mut self, i: usize, g: &RawGpuOffer, pins: &Pins) -> Vec<u32> {
        let key = format!("gpus[{i}].max_batched_tokens");
        let context = pins.max_context_tokens;
        match (&g.max_batched_tokens, pins.max_batched_tokens) {
            (Some(list), _) => {
                if list.is_empty() {
                    self.at_key(
                        &key,
                        "`max_batched_tokens` must list at least one chunk size",
                    );
                }
                for &c in list {
                    if self.bounded(&key, f64::from(c)) && context.is_some_and(|ctx| c > ctx) {
                        self.at_key(
                            &key,
                            format!(
                                "chunk size {c} is outside [{MIN_BATCHED_TOKENS}, {}] (at least {MIN_BATCHED_TOKENS} tokens, at most the model's context)",
                                context.map_or("the model's context".to_string(), |c| c.to_string())
                            ),
                        );
                    }
                }
                list.clone()
            }
            (None, Some(pinned)) => vec![pinned],
            (None, None) => DEFAULT_MAX_BATCHED_TOKENS
                .iter()
                .copied()
                .filter(|&c| context.is_none_or(|ctx| c <= ctx))
                .collect(),
        }
    }

    /// The precisions an offer tries: its own list, else the model's pin,
    /// else BF16 plus FP8 where the GPU has FP8 units.
    fn precisions(
        &mut self,
        i: usize,
        g: &RawGpuOffer,
        profile: &GpuProfile,
        pins: &Pins,
    ) -> Vec<Precision> {
        let has_fp8 = profile.fp8_tflops.is_some();
        let gpu = g.profile.get_ref();
        match (&g.precision, pins.precision) {
            (Some(list), _) => {
                if list.is_empty() {
                    self.at_key(
                        format!("gpus[{i}].precision"),
                        "`precision` must list at least one of \"bf16\", \"fp8\"",
                    );
                }
                let mut out = Vec::new();
                for p in list {
                    match Precision::parse(p.get_ref()) {
                        None => self.at_span(
                            p,
                            format!("unknown precision `{}`; accepted: \"bf16\", \"fp8\"", p.get_ref()),
                        ),
                        Some(Precision::Fp8) if !has_fp8 => self.at_span(
                            p,
                            format!("`{gpu}` has no FP8 units (its profile has no `fp8_tflops`); list only \"bf16\" for it"),
                        ),
                        Some(x) if !out.contains(&x) => out.push(x),
                        Some(_) => {}
                    }
                }
                out
            }
            (None, Some(Precision::Fp8)) if !has_fp8 => {
                self.at_key(
                    "model.precision",
                    format!("`model.precision = \"fp8\"` but GPU type `{gpu}` (gpus[{i}]) has no FP8 units; remove that GPU type or set `gpus[{i}].precision = [\"bf16\"]`"),
                );
                Vec::new()
            }
            (None, Some(pinned)) => vec![pinned],
            (None, None) if has_fp8 => Precision::ALL.to_vec(),
            (None, None) => vec![Precision::Bf16],
        }
    }

    /// A tier's configuration limit, headroom and deadline.
    fn serving_rules(&mut self, i: usize, t: &RawTier, slot_minutes: u32) -> ServingRules {
        let key = |k: &str| format!("tiers[{i}].{k}");
        if let Some(n) = t.max_configurations {
            self.bounded(&key("max_configurations"), f64::from(n));
        }
        let headroom_replicas = t.headroom_replicas.unwrap_or(0);
        self.bounded(&key("headroom_replicas"), f64::from(headroom_replicas));
        if let Some(h) = t.deadline_hours {
            let slot_hours = f64::from(slot_minutes) / 60.0;
            if self.bounded(&key("deadline_hours"), h) && h < slot_hours {
                self.at_key(
                    key("deadline_hours"),
                    format!("`deadline_hours` = {h} is shorter than a planning slot ({slot_hours} h): the plan moves volume between whole slots, so give a deadline of at least {slot_hours} h or shorten `planning.slot_minutes`"),
                );
            }
            if headroom_replicas > 0 {
                self.at_key(
                    key("headroom_replicas"),
                    "a tier with `deadline_hours` is sized on its volume, not its peak: remove `headroom_replicas` or the deadline",
                );
            }
        }
        ServingRules {
            max_configurations: t.max_configurations,
            headroom_replicas,
            deadline_hours: t.deadline_hours,
            spot_allowed: t.spot_allowed.unwrap_or(false),
        }
    }

    fn tiers(&mut self, raw: &[RawTier], slot_minutes: u32) -> Vec<Tier> {
        if raw.is_empty() {
            self.at_key(
                "tiers",
                "the scenario has no tier: add at least one [[tiers]] table",
            );
        }
        let mut names = BTreeSet::new();
        raw.iter()
            .enumerate()
            .map(|(i, t)| {
                if !names.insert(t.name.get_ref().clone()) {
                    self.at_span(
                        &t.name,
                        format!("tier `{}` is defined twice", t.name.get_ref()),
                    );
                }
                self.bounded(&format!("tiers[{i}].ttft_ms"), t.ttft_ms);
                self.bounded(&format!("tiers[{i}].tpot_ms"), t.tpot_ms);
                self.bounded(&format!("tiers[{i}].percentile"), t.percentile);
                Tier {
                    name: t.name.get_ref().clone(),
                    ttft_ms: t.ttft_ms,
                    tpot_ms: t.tpot_ms,
                    percentile: t.percentile,
                    api_allowed: t.api_allowed.unwrap_or(true),
                    rules: self.serving_rules(i, t, slot_minutes),
                }
            })
            .collect()
    }

    fn demand(&mut self, raw: &[RawDemand], tiers: &[Tier]) -> Vec<DemandSource> {
        let mut fed = vec![false; tiers.len()];
        let sources = raw
            .iter()
            .enumerate()
            .filter_map(|(i, d)| {
                let tier = tiers.iter().position(|t| &t.name == d.tier.get_ref());
                if tier.is_none() {
                    let names: Vec<_> = tiers.iter().map(|t| t.name.as_str()).collect();
                    self.at_span(&d.tier, format!("demand names tier `{}`, which is not defined; defined tiers: {}", d.tier.get_ref(), names.join(", ")));
                }
                let (trace, aggregate_tier) = match (&d.trace, &d.aggregate) {
                    (Some(t), None) => {
                        let trace = self.dir.join(t.get_ref());
                        if !trace.is_file() {
                            self.at_span(t, format!("trace file {} does not exist (paths are relative to the scenario file)", trace.display()));
                        }
                        if let Some(at) = &d.aggregate_tier {
                            self.at_span(at, "`aggregate_tier` goes with `aggregate`, not `trace`".to_string());
                        }
                        (trace, None)
                    }
                    (None, Some(a)) => {
                        let dir = self.dir.join(a.get_ref());
                        if !dir.is_dir() {
                            self.at_span(a, format!("aggregate folder {} does not exist (paths are relative to the scenario file; make one with `planner trace aggregate` or sql/aggregate.sql)", dir.display()));
                        }
                        if let Some(f) = &d.format {
                            self.at_span(f, "`format` names a trace format; an aggregate's tables are CSV or Parquet by their file names".to_string());
                        }
                        let name = d.aggregate_tier.as_ref().map_or_else(|| d.tier.get_ref().clone(), |t| t.get_ref().clone());
                        (dir, Some(name))
                    }
                    (Some(t), Some(_)) => {
                        self.at_span(t, format!("demand[{i}] names both a `trace` and an `aggregate`; give one"));
                        (PathBuf::new(), None)
                    }
                    (None, None) => {
                        self.at_span(&d.tier, format!("demand[{i}] needs a `trace` (a per-request file) or an `aggregate` (a folder of aggregate tables)"));
                        (PathBuf::new(), None)
                    }
                };
                let format = match d.format.as_ref() {
                    None => None,
                    Some(f) if f.get_ref() == "auto" => None,
                    Some(f) => if let Some(fmt) = TraceFormat::from_name(f.get_ref()) { Some(fmt) } else {
                        self.at_span(f, format!("unknown trace format `{}`; accepted: \"auto\", \"azure\", \"mooncake\", \"burstgpt\"", f.get_ref()));
                        None
                    },
                };
                let scale = d.scale.unwrap_or(1.0);
                self.bounded(&format!("demand[{i}].scale"), scale);
                let tier = tier?;
                fed[tier] = true;
                if let Some(cv) = d.within_minute_cv {
                    if !(cv.is_finite() && (0.0..=100.0).contains(&cv)) {
                        self.at_key(format!("demand[{i}].within_minute_cv"), format!("`within_minute_cv` must be in [0, 100] (1 = Poisson); got {cv}"));
                    }
                }
                Some(DemandSource { tier, trace, format, scale, aggregate_tier, within_minute_cv: d.within_minute_cv })
            })
            .collect();
        let mut reported = BTreeSet::new();
        for (tier, fed) in tiers.iter().zip(fed) {
            if !fed && !raw.is_empty() && reported.insert(tier.name.clone()) {
                self.at_key(
                    "demand",
                    format!(
                        "tier `{}` has no [[demand]] entry; give it a trace",
                        tier.name
                    ),
                );
            }
        }
        if raw.is_empty() {
            self.at_key(
                "demand",
                "the scenario has no demand: add a [[demand]] table naming a tier and a trace",
            );
        }
        sources
    }

    fn shape(&mut self, s: &RawShape) -> Option<ShapeSpec> {
        let servegen = self.dir.join(s.servegen.get_ref());
        if !servegen.exists() {
            self.at_span(
                &s.servegen,
                format!(
                    "rate curve {} does not exist (a ServeGen CSV file or a folder of them)",
                    servegen.display()
                ),
            );
        }
        let days = s.days.unwrap_or(7);
        self.bounded("shape.days", f64::from(days));
        let anchor = match s.anchor.as_ref().map(|a| a.get_ref().as_str()) {
            None | Some("peak") => ShapeAnchor::Peak,
            Some("mean") => ShapeAnchor::Mean,
            Some(other) => {
                let message = format!("unknown anchor `{other}`; accepted: \"peak\", \"mean\"");
                self.at_span(s.anchor.as_ref()?, message);
                ShapeAnchor::Peak
            }
        };
        Some(ShapeSpec {
            servegen,
            days,
            anchor,
        })
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
