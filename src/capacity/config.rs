//! One serving configuration: what a replica runs. The capacity figures, the
//! plan and the plan file all carry this one type.

use crate::perf::engine::engine_model_shape;
use crate::perf::{EngineModel, Layout, PerfModel, StepModel};
use crate::profiles::precision::Precision;
use crate::profiles::{ModelProfile, Scheduler};
use crate::scenario::pd_ratio::PdRatio;
use crate::scenario::{GpuOffer, ServedModel};
use crate::sim::ReplicaSpec;
use crate::sim::{KvTransfer, SplitSpec};
use serde::{Deserialize, Serialize};

/// GPU type, parallel layout, batch cap, chunked-prefill budget and weight
/// precision of one replica.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// GPU profile id.
    pub gpu_type: String,
    pub tensor_parallel: u32,
    /// Expert-parallel degree (a mixture of experts; 1 otherwise).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub expert_parallel: u32,
    /// Data-parallel attention ranks (a mixture of experts; 1 otherwise):
    /// GPUs per replica = TP x attention-DP.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub attention_dp: u32,
    pub max_batch: u32,
    /// Most tokens per engine step (the chunked-prefill budget).
    pub max_batched_tokens: u32,
    pub precision: Precision,
    /// The engine the replica runs: its id in the scenario (`vllm`, a
    /// calibrated profile's path), or `roofline`.
    pub engine: String,
    /// The speculative decoding the replica runs (`[model] speculative`),
    /// by its method's name; `None`: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speculative: Option<String>,
    /// A disaggregated unit: x prefill and y decode replicas of this
    /// layout, caps and precision, the KV cache moved between them
    /// (`gpus[].disaggregated`); `None`: one aggregated replica.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disaggregated: Option<PdRatio>,
}

pub(crate) fn one() -> u32 {
    1
}

#[allow(clippy::trivially_copy_pass_by_ref)]
pub(crate) fn is_one(v: &u32) -> bool {
    *v == 1
}

#[allow(clippy::trivially_copy_pass_by_ref)]
pub(crate) fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// The name of the speculative method `model` states, which every
/// configuration is searched with beside running without.
pub(crate) fn speculative_method(model: &ServedModel) -> Option<&'static str> {
    model
        .speculative
        .as_ref()
        .map(|s| s.speculation.method.name())
}

/// The engine name of an offer that runs none (the roofline model).
pub(crate) const ROOFLINE: &str = "roofline";

/// The engine name of `offer`'s replicas.
pub(crate) fn engine_name(offer: &GpuOffer) -> String {
    offer
        .engine
        .as_ref()
        .map_or_else(|| ROOFLINE.to_string(), |e| e.id.clone())
}

impl Config {
    /// `<gpu> tp<N> b<max batch> c<chunk> <precision>` and the engine
    /// unless it is the roofline model, e.g. `h100-sxm tp2 b64 c2048 fp8
    /// vllm`; a disaggregated unit names its shape after the layout
    /// (`h200 tp4 1P2D b64 ...`: each replica TP4).
    pub fn label(&self) -> String {
        self.describe(true)
    }

    /// The deployment the configuration is: its label without the batch
    /// cap (configurations that differ only in it are one deployment).
    pub fn deployment_label(&self) -> String {
        self.describe(false)
    }

    /// GPU, layout, batch cap (when `with_batch`), chunk, precision and
    /// engine, in words.
    fn describe(&self, with_batch: bool) -> String {
        let batch = if with_batch {
            format!(" b{}", self.max_batch)
        } else {
            String::new()
        };
        let unit = self
            .disaggregated
            .map_or(String::new(), |r| format!(" {}", r.label()));
        let mut label = format!(
            "{} {}{unit}{batch} c{} {}",
            self.gpu_type,
            self.layout().label(),
            self.max_batched_tokens,
            self.precision
        );
        if self.engine != ROOFLINE {
            label.push(' ');
            label.push_str(&self.engine);
        }
        if let Some(method) = &self.speculative {
            label.push(' ');
            label.push_str(method);
        }
        label
    }

    /// The speculative method the configuration runs, if any.
    pub fn speculative_method(&self) -> Option<crate::perf::SpecMethod> {
        self.speculative
            .as_deref()
            .and_then(crate::perf::SpecMethod::from_name)
    }

    /// The replica's parallel layout.
    pub fn layout(&self) -> Layout {
        Layout {
            tp: self.tensor_parallel,
            ep: self.expert_parallel,
            attention_dp: self.attention_dp,
        }
    }

    /// GPUs per replica (a disaggregated unit: per unit, its replicas
    /// together): TP x attention-DP per replica.
    pub fn gpus_per_replica(&self) -> u32 {
        self.layout().gpus() * self.disaggregated.map_or(1, PdRatio::replicas)
    }

    /// Every configuration the scenario's offers list, with the index of its
    /// offer, in offer, layout (TP, then EP and attention-DP), precision,
    /// chunk size, batch order; each also with `speculative`'s method when
    /// the model states one (searched as a choice beside running without),
    /// then as each of the offer's disaggregated units whose replicas can
    /// reach each other (within one NVLink domain, or with a network).
    pub fn candidates(offers: &[GpuOffer], speculative: Option<&str>) -> Vec<(usize, Config)> {
        let mut out = Vec::new();
        for (g, offer) in offers.iter().enumerate() {
            for layout in &offer.layouts {
                for &precision in &offer.precision {
                    for &chunk in &offer.max_batched_tokens {
                        for &b in &offer.max_batch {
                            out.push((
                                g,
                                Config {
                                    gpu_type: offer.id.clone(),
                                    tensor_parallel: layout.tp,
                                    expert_parallel: layout.ep,
                                    attention_dp: layout.attention_dp,
                                    max_batch: b,
                                    max_batched_tokens: chunk,
                                    precision,
                                    engine: engine_name(offer),
                                    speculative: None,
                                    disaggregated: None,
                                },
                            ));
                            let plain = out[out.len() - 1].1.clone();
                            if let Some(method) = speculative {
                                out.push((
                                    g,
                                    Config {
                                        speculative: Some(method.to_string()),
                                        ..plain.clone()
                                    },
                                ));
                            }
                            // A unit past the NVLink domain needs a network
                            // to move its KV cache (validation refuses a list
                            // whose every unit crosses it without one).
                            let domain = offer.profile.nvlink_domain();
                            let reachable = |r: &PdRatio| {
                                offer.network_gb_s.is_some()
                                    || layout.gpus() * r.replicas() <= domain
                            };
                            for &ratio in offer.disaggregated.iter().filter(|r| reachable(r)) {
                                out.push((
                                    g,
                                    Config {
                                        disaggregated: Some(ratio),
                                        ..plain.clone()
                                    },
                                ));
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// The latency model of one replica of this configuration on `offer`:
    /// its engine's, or the roofline model's when the offer runs none.
    pub fn perf(&self, offer: &GpuOffer, model: &ServedModel) -> StepModel {
        match &offer.engine {
            Some(engine) => StepModel::Engine(Box::new(EngineModel::with_layout(
                &engine.id,
                &match self.speculative_method() {
                    Some(method) => crate::perf::speculation::engine_under(&engine.profile, method),
                    None => engine.profile.clone(),
                },
                &offer.profile,
                &model.profile,
                self.layout(),
                self.precision,
            ))),
            None => StepModel::Roofline(PerfModel::with_layout(
                &offer.profile,
                &model.profile,
                self.layout(),
                self.precision,
            )),
        }
    }

    /// One replica of this configuration on `offer`: its step model, batch
    /// cap and token budget, and the scheduler `scheduler` names, else its
    /// engine's.
    pub(crate) fn replica(
        &self,
        offer: &GpuOffer,
        model: &ServedModel,
        scheduler: Option<Scheduler>,
    ) -> ReplicaSpec {
        let engine_scheduler = offer
            .engine
            .as_ref()
            .map_or(Scheduler::default(), |e| e.profile.scheduler);
        let spec = ReplicaSpec::new(
            self.perf(offer, model),
            self.max_batch,
            self.max_batched_tokens,
            scheduler.unwrap_or(engine_scheduler),
        );
        let spec = match (&self.speculative, &model.speculative) {
            (Some(_), Some(s)) => spec.speculating(s.speculation),
            _ => spec,
        };
        match self.disaggregated {
            None => spec,
            Some(ratio) => {
                let prefill = Config {
                    disaggregated: None,
                    speculative: None,
                    ..self.clone()
                }
                .replica(offer, model, scheduler);
                spec.split(SplitSpec {
                    prefill,
                    prefill_replicas: ratio.prefill,
                    decode_replicas: ratio.decode,
                    transfer: self.kv_transfer(offer, model, ratio),
                })
            }
        }
    }

    /// How a unit of `ratio` moves a prompt's KV cache from a prefill to a
    /// decode replica ([`KvTransfer::between`]): across nodes at the
    /// offer's network (validation refuses a unit past the NVLink domain
    /// without one).
    pub(crate) fn kv_transfer(
        &self,
        offer: &GpuOffer,
        model: &ServedModel,
        ratio: PdRatio,
    ) -> KvTransfer {
        let unit_gpus = self.layout().gpus() * ratio.replicas();
        debug_assert!(
            offer.network_gb_s.is_some() || unit_gpus <= offer.profile.nvlink_domain(),
            "a unit past the NVLink domain with no network is not a candidate"
        );
        KvTransfer::between(
            &offer.profile,
            &self.model_shape(offer, model),
            self.layout(),
            unit_gpus,
            offer.network_gb_s.unwrap_or(f64::INFINITY),
        )
    }

    /// The model shape a replica of this configuration holds (its engine's
    /// KV-cache precision).
    pub(crate) fn model_shape(&self, offer: &GpuOffer, model: &ServedModel) -> ModelProfile {
        match &offer.engine {
            Some(e) => engine_model_shape(&model.profile, &e.profile, self.precision),
            None => model.profile.clone(),
        }
    }
}
