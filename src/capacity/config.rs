//! One serving configuration: what a replica runs. The capacity figures, the
//! plan and the plan file all carry this one type.

use crate::perf::engine::engine_model_shape;
use crate::perf::{EngineModel, PerfModel, StepModel};
use crate::profiles::precision::Precision;
use crate::profiles::{ModelProfile, Scheduler};
use crate::scenario::{GpuOffer, ServedModel};
use crate::sim::ReplicaSpec;
use serde::{Deserialize, Serialize};

/// GPU type, tensor-parallel degree, batch cap, chunked-prefill budget and
/// weight precision of one replica.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Config {
    /// GPU profile id.
    pub gpu_type: String,
    pub tensor_parallel: u32,
    pub max_batch: u32,
    /// Most tokens per engine step (the chunked-prefill budget).
    pub max_batched_tokens: u32,
    pub precision: Precision,
    /// The engine the replica runs: its id in the scenario (`vllm`, a
    /// calibrated profile's path), or `roofline`.
    pub engine: String,
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
    /// vllm`.
    pub fn label(&self) -> String {
        let mut label = format!(
            "{} tp{} b{} c{} {}",
            self.gpu_type,
            self.tensor_parallel,
            self.max_batch,
            self.max_batched_tokens,
            self.precision
        );
        if self.engine != ROOFLINE {
            label.push(' ');
            label.push_str(&self.engine);
        }
        label
    }

    /// Every configuration the scenario's offers list, with the index of its
    /// offer, in offer, TP, precision, chunk size, batch order.
    pub fn candidates(offers: &[GpuOffer]) -> Vec<(usize, Config)> {
        let mut out = Vec::new();
        for (g, offer) in offers.iter().enumerate() {
            for &tp in &offer.tensor_parallel {
                for &precision in &offer.precision {
                    for &chunk in &offer.max_batched_tokens {
                        for &b in &offer.max_batch {
                            out.push((
                                g,
                                Config {
                                    gpu_type: offer.id.clone(),
                                    tensor_parallel: tp,
                                    max_batch: b,
                                    max_batched_tokens: chunk,
                                    precision,
                                    engine: engine_name(offer),
                                },
                            ));
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
            Some(engine) => StepModel::Engine(Box::new(EngineModel::new(
                &engine.id,
                &engine.profile,
                &offer.profile,
                &model.profile,
                self.tensor_parallel,
                self.precision,
            ))),
            None => StepModel::Roofline(perf_model(
                offer,
                model,
                self.tensor_parallel,
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
        ReplicaSpec::new(
            self.perf(offer, model),
            self.max_batch,
            self.max_batched_tokens,
            scheduler.unwrap_or(engine_scheduler),
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

/// The latency model of `tp` GPUs of `offer` running `model` at `precision`.
pub(crate) fn perf_model(
    offer: &GpuOffer,
    model: &ServedModel,
    tp: u32,
    precision: Precision,
) -> PerfModel {
    PerfModel::new(&offer.profile, &model.profile, tp, precision)
}
