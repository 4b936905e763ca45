//! The `[[gpus]]` section: each GPU type offered, its prices, reserved offers,
//! purchase terms, spot terms and the configurations it tries.

use super::{Pins, Validator};
use crate::profiles::precision::Precision;
use crate::profiles::GpuProfile;
use crate::profiles::{engine_file, is_engine_path, known_ids, load_engine};
use crate::scenario::raw::{RawGpuOffer, RawSpot};
use crate::scenario::reserved_offer::{self, ReservedOffer};
use crate::scenario::{GpuOffer, OfferEngine, PurchaseTerms, SpotOffer};
use std::path::Path;

/// The engine a GPU type runs when its offer names none.
pub(super) const DEFAULT_ENGINE: &str = "vllm";

/// The engine name that asks for the roofline model with the GPU profile's
/// eager fixed costs.
pub(super) const ROOFLINE_ENGINE: &str = "roofline";

/// Default batch-size caps considered for every GPU type.
pub(super) const DEFAULT_MAX_BATCH: [u32; 6] = [8, 16, 32, 64, 128, 256];

/// Default chunked-prefill budgets (tokens per step) tried on every GPU type.
pub(super) const DEFAULT_MAX_BATCHED_TOKENS: [u32; 4] = [512, 2048, 8192, 16384];

/// GB/s a GPU reads a model's weights at when it is moved to another
/// model, by default. Two vLLM start-up logs bracket it: 12.66 GiB read in
/// 24.84 s on one GPU (0.55 GB/s, a checkpoint read from disk,
/// vllm-project/vllm#38820) and 3.42 GiB in 0.69 s (5.3 GB/s, a checkpoint
/// already in the page cache, vllm-project/vllm#20264). 2 GB/s is between
/// them, an assumption: state the rate your storage measures.
pub const DEFAULT_WEIGHTS_LOAD_GB_PER_S: f64 = 2.0;

/// Smallest chunk size accepted.
pub(super) const MIN_BATCHED_TOKENS: u32 = 64;

/// Prices a GPU type's reservations at the offer with the lowest
/// effective price over the commitment term (exact: see
/// [`crate::scenario::reserved_offer`]).
pub(super) fn choose_reserved_offer(
    mut g: GpuOffer,
    commitment_term_months: Option<u32>,
    renewed: bool,
) -> GpuOffer {
    if let Some(chosen) = reserved_offer::cheapest(&g.reserved_offers, commitment_term_months) {
        g.reserved_usd_per_gpu_hour = Some(chosen.effective_usd_per_gpu_hour);
        let over = if renewed {
            format!(
                "the first {}-month reservation period (each period's offer is chosen over its own months)",
                chosen.planning_term_months
            )
        } else if chosen.term_stated {
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

impl Validator {
    pub(super) fn gpu(
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
        let engine = self.engine(i, g, profiles_dir);
        let profile: GpuProfile = self.profile(&g.profile, &profiles_dir.join("gpus"), "GPU")?;
        let engine = engine.ok()?;
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
            // The default caps, up to the engine's own cap on sequences.
            None => DEFAULT_MAX_BATCH
                .iter()
                .copied()
                .filter(|&b| engine.as_ref().is_none_or(|e| b <= e.profile.max_num_seqs))
                .collect(),
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
        let (expert_parallel, attention_dp, layouts) =
            self.layouts(i, g, &profile, pins, &tensor_parallel, engine.as_ref());
        // The replica sizes a purchase unit must hold: the layouts', or the
        // listed TP degrees when no layout could be formed (the model's own
        // problems are reported; the unit's are checked all the same).
        let gpus_per_replica: Vec<u32> = if layouts.is_empty() {
            tensor_parallel.clone()
        } else {
            let mut v: Vec<u32> = layouts.iter().map(crate::perf::Layout::gpus).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let purchase = self.purchase(i, g, &gpus_per_replica);
        let network_gb_s = self.network(i, g, &profile);
        let disaggregated = self.disaggregated(i, g, &profile, &layouts, network_gb_s);
        let max_batched_tokens = self.chunk_sizes(i, g, pins, engine.as_ref());
        let precision = self.precisions(i, g, &profile, pins);
        Some(GpuOffer {
            id: g.profile.get_ref().clone(),
            profile,
            engine,
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
            expert_parallel,
            attention_dp,
            cross_node: g.cross_node.unwrap_or(false),
            layouts,
            max_batch,
            max_batched_tokens,
            precision,
            weights_load_gb_per_s: self.weights_load(i, g),
            disaggregated,
            network_gb_s,
        })
    }

    /// `gpus[i].weights_load_gb_per_s`, bounded, or the default
    /// ([`DEFAULT_WEIGHTS_LOAD_GB_PER_S`]).
    fn weights_load(&mut self, i: usize, g: &RawGpuOffer) -> f64 {
        match g.weights_load_gb_per_s {
            Some(rate) => {
                self.bounded(&format!("gpus[{i}].weights_load_gb_per_s"), rate);
                rate
            }
            None => DEFAULT_WEIGHTS_LOAD_GB_PER_S,
        }
    }

    /// The expert-parallel and data-parallel attention lists of offer `i`
    /// and every layout of them with its TP list that can run the model: a
    /// listed degree that no combination can run is a problem, named with
    /// why (EP not dividing the experts or the GPUs, a dense model, a
    /// replica past the NVLink domain without `cross_node = true`).
    fn layouts(
        &mut self,
        i: usize,
        g: &RawGpuOffer,
        profile: &GpuProfile,
        pins: &Pins,
        tensor_parallel: &[u32],
        engine: Option<&crate::scenario::OfferEngine>,
    ) -> (Vec<u32>, Vec<u32>, Vec<crate::perf::Layout>) {
        use crate::perf::{
            engine_layout_problem, layout_problem, Layout, LayoutFix, LayoutProblem,
        };
        let key = |k: &str| format!("gpus[{i}].{k}");
        let mut list = |name: &str, given: &Option<Vec<u32>>| -> Vec<u32> {
            match given {
                None => vec![1],
                Some(v) if v.is_empty() => {
                    self.at_key(
                        key(name),
                        format!("`{name}` must list at least one degree (1 for none)"),
                    );
                    vec![1]
                }
                Some(v) => {
                    for &d in v {
                        if d == 0 || d > 1024 {
                            self.at_key(
                                key(name),
                                format!("degree {d} is not between 1 and 1,024"),
                            );
                        }
                    }
                    v.iter()
                        .copied()
                        .filter(|d| (1..=1024).contains(d))
                        .collect()
                }
            }
        };
        let expert_parallel = list("expert_parallel", &g.expert_parallel);
        let attention_dp = list("attention_dp", &g.attention_dp);
        let Some(model) = pins.model else {
            return (expert_parallel, attention_dp, Vec::new());
        };
        let cross = g.cross_node.unwrap_or(false);
        let mut layouts = Vec::new();
        let mut why: std::collections::BTreeMap<(&str, u32), LayoutProblem> =
            std::collections::BTreeMap::default();
        for &tp in tensor_parallel {
            for &ep in &expert_parallel {
                for &dp in &attention_dp {
                    let layout = Layout {
                        tp,
                        ep,
                        attention_dp: dp,
                    };
                    let problem = layout_problem(profile, model, layout, cross).or_else(|| {
                        engine
                            .and_then(|e| engine_layout_problem(e.profile.family, layout))
                            .map(|why| LayoutProblem {
                                why,
                                fix: LayoutFix::OtherDegrees,
                            })
                    });
                    match problem {
                        None => layouts.push(layout),
                        Some(problem) => {
                            why.entry(("expert_parallel", ep))
                                .or_insert_with(|| problem.clone());
                            why.entry(("attention_dp", dp)).or_insert(problem);
                        }
                    }
                }
            }
        }
        if pins.pooled {
            // Each model runs on the types it fits; a model that fits none
            // is reported at its own entry.
            return (expert_parallel, attention_dp, layouts);
        }
        for (name, values) in [
            ("expert_parallel", &expert_parallel),
            ("attention_dp", &attention_dp),
        ] {
            for &d in values {
                let used = layouts.iter().any(|l| {
                    if name == "expert_parallel" {
                        l.ep == d
                    } else {
                        l.attention_dp == d
                    }
                });
                if !used && d > 1 {
                    let problem = why.get(&(name, d));
                    let reason = problem.map_or("", |p| p.why.as_str());
                    let fix = match problem.map(|p| p.fix) {
                        Some(LayoutFix::ExpertParallel) => "list an `expert_parallel` degree above 1 that divides the replica's GPUs, or remove it",
                        Some(LayoutFix::ExpertsDivisible) => "remove it (an expert-parallel degree must divide the model's experts)",
                        _ => "remove it, or change `tensor_parallel` or `attention_dp` (or the engine)",
                    };
                    self.at_key(
                        key(name),
                        format!("{name} {d} runs with none of the tensor-parallel degrees {tensor_parallel:?}: {reason}; {fix}"),
                    );
                }
            }
        }
        if layouts.is_empty() && !tensor_parallel.is_empty() {
            self.at_key(
                key("tensor_parallel"),
                format!("no layout of these lists can run `{}`; check `tensor_parallel`, `expert_parallel` and `attention_dp`", model.name),
            );
        }
        (expert_parallel, attention_dp, layouts)
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
                        if g.attention_dp.as_ref().is_some_and(|l| l.iter().any(|&d| d > 1)) {
                            format!("a node of {unit_gpus} GPUs does not hold whole replicas of {tp} GPUs (TP x attention-DP; a replica must not span purchase units): use a node size that is a multiple of {tp}, or drop the degrees that make {tp} from `gpus[{i}].tensor_parallel` and `gpus[{i}].attention_dp`")
                        } else {
                            format!("a node of {unit_gpus} GPUs does not hold whole tensor-parallel groups of {tp} GPUs (a group must not span nodes): use a node size that is a multiple of {tp}, or drop {tp} from `gpus[{i}].tensor_parallel`")
                        },
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

    /// The engine offer `i` runs: `engine = "<id>"` under
    /// `profiles/engines/`, a calibrated profile's path (relative to the
    /// scenario), or `"roofline"` for the eager roofline model; default
    /// [`DEFAULT_ENGINE`]. `Ok(None)`: the roofline model; `Err` when the
    /// name is unknown or the profile bad (the problem recorded).
    fn engine(
        &mut self,
        i: usize,
        g: &RawGpuOffer,
        profiles_dir: &Path,
    ) -> Result<Option<OfferEngine>, ()> {
        let name = g
            .engine
            .as_ref()
            .map_or(DEFAULT_ENGINE, |e| e.get_ref().as_str());
        if name == ROOFLINE_ENGINE {
            return Ok(None);
        }
        let file = engine_file(profiles_dir, &self.dir, name);
        if !file.is_file() && self.profiles_missing && !is_engine_path(name) {
            return Err(()); // the missing profiles folder is reported once
        }
        if !file.is_file() {
            let mut known = known_ids(&profiles_dir.join("engines"));
            known.push(ROOFLINE_ENGINE.to_string());
            let message = if is_engine_path(name) {
                format!(
                    "engine file `{name}` not found (looked for {}); name an engine ({}) or the path of a profile `planner calibrate --runs --out` wrote",
                    file.display(),
                    known.join(", ")
                )
            } else {
                format!(
                    "unknown engine `{name}` (no file {}); known: {}, or the path of a calibrated engine profile",
                    file.display(),
                    known.join(", ")
                )
            };
            match &g.engine {
                Some(span) => self.at_span(span, message),
                None => self.at_key(format!("gpus[{i}].engine"), message),
            }
            return Err(());
        }
        match load_engine(&file) {
            Ok(profile) => Ok(Some(OfferEngine {
                id: name.to_string(),
                profile,
            })),
            Err(p) => {
                self.problems.push(p);
                Err(())
            }
        }
    }

    /// The chunk sizes an offer tries: its own list, else the scenario-wide
    /// pin `simulation.max_batched_tokens`, else its engine's token budget
    /// (the roofline model: [`DEFAULT_MAX_BATCHED_TOKENS`] up to the model's
    /// context).
    fn chunk_sizes(
        &mut self,
        i: usize,
        g: &RawGpuOffer,
        pins: &Pins,
        engine: Option<&OfferEngine>,
    ) -> Vec<u32> {
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
            (None, None) if engine.is_some() => {
                let budget = engine.map_or(0, |e| e.profile.max_num_batched_tokens);
                vec![context.map_or(budget, |ctx| budget.min(ctx))]
            }
            (None, None) => DEFAULT_MAX_BATCHED_TOKENS
                .iter()
                .copied()
                .filter(|&c| context.is_none_or(|ctx| c <= ctx))
                .collect(),
        }
    }

    /// The precisions an offer tries: its own list, else the model's pin,
    /// else the published checkpoint's: BF16 plus FP8 where the GPU has FP8
    /// units for a BF16 checkpoint, the checkpoint's own format for one
    /// published quantised (gpt-oss-120b's MXFP4, DeepSeek-V3's FP8), which
    /// the engines serve as it is and do not quantise again.
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
                        "`precision` must list at least one of \"bf16\", \"fp8\", \"fp4\"",
                    );
                }
                let mut out = Vec::new();
                for p in list {
                    match Precision::parse(p.get_ref()) {
                        None => self.at_span(
                            p,
                            format!("unknown precision `{}`; accepted: \"bf16\", \"fp8\", \"fp4\"", p.get_ref()),
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
            (None, None) => match pins
                .model
                .map(crate::profiles::ModelProfile::published_precision)
            {
                Some(Precision::Fp4) => vec![Precision::Fp4],
                Some(Precision::Fp8) if has_fp8 => vec![Precision::Fp8],
                _ if has_fp8 => Precision::ALL.to_vec(),
                _ => vec![Precision::Bf16],
            },
        }
    }
}
