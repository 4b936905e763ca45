//! One serving configuration: what a replica runs. The capacity figures, the
//! plan and the plan file all carry this one type.

use crate::perf::{PerfModel, StepModel};
use crate::profiles::precision::Precision;
use crate::scenario::{GpuOffer, ServedModel};
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
}

impl Config {
    /// `<gpu> tp<N> b<max batch> c<chunk> <precision>`, e.g. `h100-sxm tp2
    /// b64 c2048 fp8`.
    pub fn label(&self) -> String {
        format!(
            "{} tp{} b{} c{} {}",
            self.gpu_type,
            self.tensor_parallel,
            self.max_batch,
            self.max_batched_tokens,
            self.precision
        )
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
                                },
                            ));
                        }
                    }
                }
            }
        }
        out
    }

    /// The latency model of one replica of this configuration on `offer`.
    pub fn perf(&self, offer: &GpuOffer, model: &ServedModel) -> StepModel {
        StepModel::Roofline(perf_model(
            offer,
            model,
            self.tensor_parallel,
            self.precision,
        ))
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
