//! What one engine step does and what it costs: its work ([`StepWork`]),
//! the input of both step models, and the parts of its time
//! ([`StepParts`]), each at its own bound, that they answer.

use serde::Serialize;

/// The work of one engine step (see [`StepTime::step_s`]).
///
/// [`StepTime::step_s`]: super::StepTime::step_s
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepWork {
    /// Tokens through the weights: prefill chunk tokens + decoding sequences.
    pub tokens: f64,
    /// (query, key) pairs of attention: a decoding sequence contributes its
    /// context; a prefill chunk of c tokens after o cached ones c·o + c²/2.
    pub attention_pairs: f64,
    /// Tokens of KV cache read from memory.
    pub kv_read_tokens: f64,
    /// Tokens that produce logits through the LM head: one per decoding
    /// sequence and one for a prefill chunk that completes its prompt (a
    /// chunk that does not produces none).
    pub logit_tokens: f64,
    /// Sequences in the step: decoding ones and prompts with a chunk (the
    /// engine's CPU time per sequence; a step whose tokens are all one per
    /// sequence is decode-only and may run as a captured graph).
    pub sequences: f64,
}

/// The parts of one step's time, in seconds; they add up to the step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct StepParts {
    /// Weight GEMMs of the layers and the LM head, each at its own bound
    /// (a mixture's dense parts only).
    pub gemm_s: f64,
    /// A mixture's routed-expert GEMMs on the busiest GPU.
    #[serde(skip_serializing_if = "is_zero")]
    pub expert_gemm_s: f64,
    /// Attention at its own bound (BF16 FLOPs or KV-cache bytes read).
    pub attention_s: f64,
    /// Tensor-parallel all-reduces.
    pub allreduce_s: f64,
    /// Expert-parallel all-to-all exchanges (dispatch and combine).
    #[serde(skip_serializing_if = "is_zero")]
    pub all_to_all_s: f64,
    /// Fixed GPU time: layers × `layer_overhead_us`.
    pub fixed_gpu_s: f64,
    /// A mixture's per-expert set-up on a step without a captured graph,
    /// launched while the GPU runs the step's other work: the GPU's part
    /// is at least this long.
    #[serde(skip_serializing_if = "is_zero")]
    pub moe_setup_s: f64,
    /// Engine (CPU) time per step: `step_overhead_ms` in the roofline
    /// model; an engine profile's `cpu_step_ms` + `cpu_per_sequence_us` × the
    /// step's sequences.
    pub cpu_overhead_s: f64,
    /// Whether the CPU's work overlaps the GPU's (the step takes the longer
    /// of the two) rather than adding to it.
    pub cpu_overlaps_gpu: bool,
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl StepParts {
    /// Every part times `factor` (a step counted as 1/`factor` steps, or
    /// back).
    #[must_use]
    pub fn scaled(self, factor: f64) -> StepParts {
        StepParts {
            gemm_s: self.gemm_s * factor,
            expert_gemm_s: self.expert_gemm_s * factor,
            attention_s: self.attention_s * factor,
            allreduce_s: self.allreduce_s * factor,
            all_to_all_s: self.all_to_all_s * factor,
            fixed_gpu_s: self.fixed_gpu_s * factor,
            moe_setup_s: self.moe_setup_s * factor,
            cpu_overhead_s: self.cpu_overhead_s * factor,
            cpu_overlaps_gpu: self.cpu_overlaps_gpu,
        }
    }

    /// The GPU's part of the step: GEMMs, attention, all-reduces and fixed
    /// time.
    pub fn gpu_s(&self) -> f64 {
        (self.gemm_s
            + self.expert_gemm_s
            + self.attention_s
            + self.allreduce_s
            + self.all_to_all_s
            + self.fixed_gpu_s)
            .max(self.moe_setup_s)
    }

    /// The step: the GPU's part plus the CPU's, or the longer of the two
    /// when they overlap.
    pub fn total_s(&self) -> f64 {
        if self.cpu_overlaps_gpu {
            self.gpu_s().max(self.cpu_overhead_s)
        } else {
            self.gpu_s() + self.cpu_overhead_s
        }
    }
}
