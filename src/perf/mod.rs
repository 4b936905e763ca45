//! The performance model: what one engine step of a replica costs. The
//! roofline step model ([`step`]) at a weight precision, the engine-aware
//! model on top of it ([`engine`]: CUDA graphs, custom all-reduce, CPU
//! overlap), the physical ceiling on a replica's throughput ([`roofline`]),
//! and the fit of the roofline's efficiency factors to measured kernel
//! timings ([`kernels`]). Both step models answer [`StepTime`]; a replica
//! holds one as a [`StepModel`].

pub mod decode_run;
pub mod engine;
pub mod gain;
pub mod kernels;
pub mod layout;
pub(crate) mod moe;
pub mod roofline;
pub mod speculation;
pub mod step;
pub mod step_work;

pub use decode_run::*;
pub use engine::EngineModel;
pub use gain::{Fp8Gain, FP8_GEMM_GAIN};
pub use layout::{engine_layout_problem, layout_problem, Layout, LayoutFix, LayoutProblem};
pub use step::*;
pub use step_work::*;

use crate::profiles::precision::Precision;
pub use speculation::{SpecMethod, Speculation};

/// What a step model answers: the time of one engine step, a run of decode
/// steps in closed form, and the KV cache a replica holds.
pub trait StepTime {
    /// The parts of one engine step; all zero for a step without tokens.
    fn step_parts(&self, work: &StepWork) -> StepParts;

    /// One engine step, in seconds.
    fn step_s(&self, work: &StepWork) -> f64 {
        self.step_parts(work).total_s()
    }

    /// A run of decode-only steps of `batch` sequences whose contexts sum to
    /// `context_tokens` at the first step (each step adds `batch` tokens).
    fn decode_run(&self, batch: u32, context_tokens: f64) -> DecodeRun;

    /// Tokens of KV cache the whole replica holds after the weights;
    /// negative when the weights alone do not fit.
    fn kv_capacity_tokens(&self) -> f64;

    /// Prefill time of one prompt of `tokens` tokens, in seconds: a step of
    /// `tokens` tokens with S²/2 pairs of causal attention, no cached KV and
    /// one logit (the prompt's last token).
    fn prefill_s(&self, tokens: f64) -> f64 {
        self.step_s(&StepWork {
            tokens,
            attention_pairs: tokens * tokens / 2.0,
            kv_read_tokens: 0.0,
            logit_tokens: 1.0,
            sequences: 1.0,
        })
    }

    /// One decode step of `batch` sequences whose mean context is
    /// `mean_context` tokens, in seconds: a step of `batch` tokens, each with
    /// a logit, `batch × mean_context` pairs of attention and as many tokens
    /// of KV cache read.
    fn decode_step_s(&self, batch: f64, mean_context: f64) -> f64 {
        if batch <= 0.0 {
            return 0.0;
        }
        self.step_s(&StepWork {
            tokens: batch,
            attention_pairs: batch * mean_context,
            kv_read_tokens: batch * mean_context,
            logit_tokens: batch,
            sequences: batch,
        })
    }
}

/// The step model a replica runs: the roofline model with a GPU profile's
/// fixed costs (an eager engine), or an engine profile on top of it.
#[derive(Debug, Clone)]
// The roofline variant is held by value: it is read on every engine step.
#[allow(clippy::large_enum_variant)]
pub enum StepModel {
    Roofline(PerfModel),
    Engine(Box<EngineModel>),
    /// A step model whose decode-only steps speculate
    /// ([`speculation`]).
    Speculative(Box<StepModel>, Speculation),
}

impl StepModel {
    /// The roofline model underneath (the kernel physics).
    pub fn roofline(&self) -> &PerfModel {
        match self {
            StepModel::Roofline(m) => m,
            StepModel::Engine(e) => e.roofline(),
            StepModel::Speculative(inner, _) => inner.roofline(),
        }
    }

    /// The model with `speculation` on its decode-only steps.
    #[must_use]
    pub fn speculating(self, speculation: Speculation) -> Self {
        StepModel::Speculative(Box::new(self), speculation)
    }

    /// The speculation its decode steps run, if any.
    pub fn speculation(&self) -> Option<&Speculation> {
        match self {
            StepModel::Speculative(_, s) => Some(s),
            _ => None,
        }
    }

    /// The tokens `work` runs as: a decode-only step that replays a captured
    /// graph runs the graph's batch, padding included (as its parts are
    /// timed); any other step its own tokens.
    pub fn run_tokens(&self, work: &StepWork) -> f64 {
        self.graph_batch(work).unwrap_or(work.tokens)
    }

    /// The captured CUDA graph's batch that `work` replays (a decode-only
    /// step within the engine's largest graph), `None` when it runs eagerly
    /// (a step with a prompt, a batch past the graphs, the roofline model).
    pub fn graph_batch(&self, work: &StepWork) -> Option<f64> {
        match self {
            StepModel::Roofline(_) => None,
            StepModel::Engine(e) => e.captured(work),
            StepModel::Speculative(inner, _) => inner.graph_batch(work),
        }
    }

    /// Tensor-parallel degree.
    pub fn tp(&self) -> u32 {
        self.roofline().tp
    }

    /// Precision of the weights.
    pub fn precision(&self) -> Precision {
        self.roofline().precision
    }

    /// Weight bytes held by each GPU of the replica.
    pub fn weight_bytes_per_gpu(&self) -> f64 {
        self.roofline().weight_bytes_per_gpu()
    }

    /// Memory per GPU for weights and KV cache, in bytes.
    pub fn usable_memory_bytes_per_gpu(&self) -> f64 {
        self.roofline().usable_memory_bytes_per_gpu()
    }

    /// KV-cache bytes per token of context (halved where the engine keeps an
    /// FP8 KV cache).
    pub fn kv_bytes_per_token(&self) -> f64 {
        self.roofline().kv_bytes_per_token()
    }

    /// The engine's id, or `None` for the roofline model.
    pub fn engine_id(&self) -> Option<&str> {
        match self {
            StepModel::Roofline(_) => None,
            StepModel::Engine(e) => Some(e.id()),
            StepModel::Speculative(inner, _) => inner.engine_id(),
        }
    }

    /// Whether the engine admits a request only when the KV cache holds its
    /// whole output too (false for the roofline model).
    pub fn reserve_output_kv(&self) -> bool {
        match self {
            StepModel::Roofline(_) => false,
            StepModel::Engine(e) => e.reserve_output_kv(),
            StepModel::Speculative(inner, _) => inner.reserve_output_kv(),
        }
    }

    /// How data-parallel attention ranks share the token budget (the
    /// engine's `attention_dp_budget`; each rank its own under the roofline
    /// alone, as vLLM does).
    pub fn attention_dp_budget(&self) -> crate::profiles::engine::AttentionDpBudget {
        match self {
            StepModel::Roofline(_) => crate::profiles::engine::AttentionDpBudget::PerRank,
            StepModel::Engine(e) => e.attention_dp_budget(),
            StepModel::Speculative(inner, _) => inner.attention_dp_budget(),
        }
    }

    /// Seconds the front end takes per request before the engine sees it
    /// (0 for the roofline model).
    pub fn frontend_s(&self) -> f64 {
        match self {
            StepModel::Roofline(_) => 0.0,
            StepModel::Engine(e) => e.frontend_s(),
            StepModel::Speculative(inner, _) => inner.frontend_s(),
        }
    }

    /// Seconds the server adds to the first token of a request of
    /// `input_tokens` outside the GPU's steps (0 for the roofline model):
    /// its fixed handling and its tokenising of the prompt.
    pub fn server_s(&self, input_tokens: u32) -> f64 {
        match self {
            StepModel::Roofline(_) => 0.0,
            StepModel::Engine(e) => e.server_s(input_tokens),
            StepModel::Speculative(inner, _) => inner.server_s(input_tokens),
        }
    }
}

impl StepTime for StepModel {
    fn step_parts(&self, work: &StepWork) -> StepParts {
        match self {
            StepModel::Roofline(m) => m.step_parts(work),
            StepModel::Engine(e) => e.step_parts(work),
            StepModel::Speculative(inner, s) => speculative_parts(inner, s, work),
        }
    }

    fn decode_run(&self, batch: u32, context_tokens: f64) -> DecodeRun {
        match self {
            StepModel::Roofline(m) => m.decode_run(batch, context_tokens),
            StepModel::Engine(e) => e.decode_run(batch, context_tokens),
            StepModel::Speculative(inner, s) => {
                let verified = s.verified_tokens();
                inner
                    .decode_run(batch.saturating_mul(verified), 0.0)
                    .speculative(
                        f64::from(batch),
                        context_tokens,
                        f64::from(verified),
                        draft_s(inner, s, f64::from(batch)),
                        s.tokens_per_step(),
                    )
            }
        }
    }

    fn kv_capacity_tokens(&self) -> f64 {
        match self {
            StepModel::Roofline(m) => m.kv_capacity_tokens(),
            StepModel::Engine(e) => e.kv_capacity_tokens(),
            // The draft head's weights take their share of the memory.
            StepModel::Speculative(inner, s) => {
                let roofline = inner.roofline();
                inner.kv_capacity_tokens()
                    - s.draft_share * roofline.weight_bytes_per_gpu() * f64::from(roofline.gpus())
                        / roofline.kv_bytes_per_token()
            }
        }
    }
}

/// Whether `work` is a decode-only step: one token, with its logit, per
/// sequence.
pub fn decode_only(work: &StepWork) -> bool {
    work.tokens > 0.0 && work.tokens == work.sequences && work.logit_tokens == work.tokens
}

/// The GPU seconds of the proposer's `k` passes over `batch` sequences.
fn draft_s(inner: &StepModel, s: &Speculation, batch: f64) -> f64 {
    if s.draft_share == 0.0 || batch <= 0.0 {
        return 0.0;
    }
    let pass = inner.step_parts(&StepWork {
        tokens: batch,
        attention_pairs: 0.0,
        kv_read_tokens: 0.0,
        logit_tokens: batch,
        sequences: batch,
    });
    f64::from(s.tokens) * s.draft_share * pass.gpu_s()
}

/// A step of `inner` under speculation `s`: a decode-only step verifies
/// `k + 1` tokens a sequence and drafts `k`, and is counted as τ steps of a
/// token each (its parts divided by τ); any other step is `inner`'s.
fn speculative_parts(inner: &StepModel, s: &Speculation, work: &StepWork) -> StepParts {
    if !decode_only(work) {
        return inner.step_parts(work);
    }
    let verified = f64::from(s.verified_tokens());
    let mut parts = inner.step_parts(&StepWork {
        tokens: work.tokens * verified,
        attention_pairs: work.attention_pairs * verified,
        kv_read_tokens: work.kv_read_tokens,
        logit_tokens: work.logit_tokens * verified,
        sequences: work.sequences * verified,
    });
    parts.gemm_s += draft_s(inner, s, work.sequences);
    parts.scaled(1.0 / s.tokens_per_step())
}
