//! A model profile: the transformer shape the latency model needs.

use super::check_bound;
use crate::base::bounds::Bound;
use crate::base::error::Problem;
use crate::profiles::precision::Precision;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The accepted range of every number in a model profile.
pub(crate) const MODEL_BOUNDS: &[Bound] = &[
    Bound::positive("params_billion", 100_000.0, "billion"),
    Bound::positive("active_params_billion", 100_000.0, "billion"),
    Bound::closed("layers", 1.0, 1_000.0, ""),
    Bound::closed("hidden", 1.0, 1_048_576.0, ""),
    Bound::closed("vocab_size", 1.0, 10_000_000.0, "tokens"),
    Bound::closed("heads", 1.0, 4_096.0, ""),
    Bound::closed("kv_heads", 1.0, 4_096.0, ""),
    Bound::closed("head_dim", 1.0, 4_096.0, ""),
    Bound::positive("bytes_per_weight", 8.0, "bytes"),
    Bound::positive("kv_bytes_per_element", 8.0, "bytes"),
    Bound::closed("max_context_tokens", 1.0, 10_000_000.0, "tokens"),
    Bound::closed(
        "extended_context.max_context_tokens",
        1.0,
        10_000_000.0,
        "tokens",
    ),
    Bound::closed(
        "extended_context.original_max_position_embeddings",
        1.0,
        10_000_000.0,
        "tokens",
    ),
    Bound::positive("extended_context.rope_theta", 1e12, ""),
    Bound::closed("moe.experts", 1.0, 65_536.0, "experts"),
    Bound::closed("moe.experts_per_token", 1.0, 65_536.0, "experts"),
    Bound::closed("moe.shared_experts", 0.0, 64.0, "experts"),
    Bound::closed("moe.expert_ffn", 1.0, 1_048_576.0, ""),
    Bound::closed("moe.dense_layers", 0.0, 1_000.0, "layers"),
    Bound::closed("attention.kv_lora_rank", 1.0, 65_536.0, ""),
    Bound::closed("attention.qk_rope_head_dim", 0.0, 4_096.0, ""),
    Bound::closed("attention.qk_nope_head_dim", 0.0, 4_096.0, ""),
    Bound::closed("attention.v_head_dim", 1.0, 4_096.0, ""),
    Bound::closed("attention.sliding_window", 1.0, 10_000_000.0, "tokens"),
    Bound::closed("attention.sliding_window_layers", 1.0, 1_000.0, "layers"),
];

/// Share of the routed parameters (total minus active) that the experts'
/// shape may leave unexplained (routers, biases, a published count's
/// rounding) before a profile is refused.
const MOE_PARAMS_TOLERANCE: f64 = 0.03;

/// A context longer than the published configuration's, reached by YaRN
/// RoPE scaling as the model's publisher documents it: the engines are
/// launched with the scaling (factor = served context / the original
/// positions) and the longer limit.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ExtendedContext {
    /// The longest context documented, in tokens.
    pub max_context_tokens: u32,
    /// The positions the model was trained on (`original_max_position_embeddings`).
    pub original_max_position_embeddings: u32,
    /// The model's RoPE base (config.json `rope_theta`).
    pub rope_theta: f64,
    /// Where the limit is documented.
    pub source: String,
}

/// The routed experts of a mixture-of-experts model: every MoE layer holds
/// `experts` gated MLPs of `expert_ffn` (3 × hidden × expert_ffn weights
/// each: gate, up, down) and sends each token to `experts_per_token` of them;
/// `shared_experts` MLPs of the same size see every token (counted with the
/// dense parts), and the first `dense_layers` layers have a dense MLP instead.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Moe {
    /// Routed experts per MoE layer (config.json `n_routed_experts`,
    /// `num_experts`, `num_local_experts`).
    pub experts: u32,
    /// Routed experts each token goes to (`num_experts_per_tok`,
    /// `experts_per_token`).
    pub experts_per_token: u32,
    /// Experts every token goes to (`n_shared_experts`).
    #[serde(default)]
    pub shared_experts: u32,
    /// Intermediate size of one expert (`moe_intermediate_size`).
    pub expert_ffn: u32,
    /// Leading layers with a dense MLP instead of experts
    /// (`first_k_dense_replace`).
    #[serde(default)]
    pub dense_layers: u32,
}

/// How attention keeps its keys and values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AttentionKind {
    /// Grouped-query attention: `kv_heads` keys and values of `head_dim`
    /// per token per layer.
    #[default]
    GroupedQuery,
    /// Multi-head latent attention (DeepSeek-V2/V3): one compressed latent
    /// of `kv_lora_rank` plus a rotary key of `qk_rope_head_dim` per token
    /// per layer, shared by every head, so not split by tensor parallelism.
    Latent,
}

/// The attention's shape beyond the heads: latent attention's ranks, and a
/// sliding window on some layers.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Attention {
    /// `grouped-query` (default) or `latent`.
    #[serde(default)]
    pub kind: AttentionKind,
    /// Latent attention: the compressed KV's rank (`kv_lora_rank`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_lora_rank: Option<u32>,
    /// Latent attention: the rotary part of each key (`qk_rope_head_dim`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qk_rope_head_dim: Option<u32>,
    /// Latent attention: the rest of each query/key head (`qk_nope_head_dim`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qk_nope_head_dim: Option<u32>,
    /// Latent attention: each value head (`v_head_dim`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v_head_dim: Option<u32>,
    /// Tokens a sliding-window layer attends to (`sliding_window`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sliding_window: Option<u32>,
    /// Layers that attend within the window (the rest attend to the whole
    /// context): gpt-oss alternates, 18 of 36.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sliding_window_layers: Option<u32>,
}

impl Attention {
    fn is_plain(&self) -> bool {
        *self == Attention::default()
    }
}

/// The published checkpoint's weight formats, by part.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WeightFormats {
    /// The routed experts' format (gpt-oss-120b: `fp4`, MXFP4).
    pub experts: crate::profiles::precision::Precision,
    /// Everything else: attention projections, dense and shared MLPs.
    pub dense: crate::profiles::precision::Precision,
}

/// One served model, as read from `profiles/models/<id>.toml`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelProfile {
    /// Human-readable name, e.g. "Llama 3.1 70B".
    pub name: String,
    /// All parameters, in billions (sets the weight memory), the input
    /// embedding and the LM head included.
    pub params_billion: f64,
    /// Parameters active per token, in billions; equals `params_billion` for
    /// dense models. They split into the input embedding (vocabulary ×
    /// hidden, a lookup: no GEMM), the LM head (vocabulary × hidden, a GEMM
    /// only for the tokens that produce logits) and the layers' GEMM
    /// parameters (the rest: 2 × them FLOPs per token through the weights).
    pub active_params_billion: f64,
    /// Transformer layers.
    pub layers: u32,
    /// Hidden size.
    pub hidden: u32,
    /// Vocabulary size: rows of the input embedding and of the LM head (the
    /// profiles' models keep the two separate, untied).
    pub vocab_size: u32,
    /// Attention (query) heads.
    pub heads: u32,
    /// Key/value heads (grouped-query attention).
    pub kv_heads: u32,
    /// Dimension of one head.
    pub head_dim: u32,
    /// Bytes per weight at the profile's native precision (2 for BF16).
    pub bytes_per_weight: f64,
    /// Bytes per KV-cache element (2 for BF16).
    #[serde(default = "default_kv_bytes_per_element")]
    pub kv_bytes_per_element: f64,
    /// Longest context the model accepts as published, in tokens
    /// (config.json `max_position_embeddings`).
    pub max_context_tokens: u32,
    /// A longer context the model's publisher documents by RoPE scaling
    /// (Qwen3's YaRN to 131,072 tokens); a scenario may serve up to it
    /// (`model.max_context_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_context: Option<ExtendedContext>,
    /// The routed experts of a mixture of experts; absent for a dense model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moe: Option<Moe>,
    /// Latent attention or a sliding window; absent: grouped-query attention
    /// over the whole context on every layer.
    #[serde(default, skip_serializing_if = "Attention::is_plain")]
    pub attention: Attention,
    /// The published checkpoint's formats by part; absent: every part at
    /// `bytes_per_weight`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<WeightFormats>,
    /// The model's published name (`Qwen/Qwen3-32B`): how measured runs and
    /// launch commands name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hf_id: Option<String>,
    /// Other published checkpoints of the same weights (an FP8 or FP4
    /// export): measured runs that name one of them are runs of this model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checkpoints: Vec<String>,
    /// The draft heads published for the model, which speculative decoding
    /// can run (`[model] speculative`); absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speculative: Option<Drafts>,
    /// Where the figures come from.
    pub source: String,
}

/// The proposers speculative decoding can run for a model.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Drafts {
    /// A published EAGLE-3 draft head for the model (its checkpoint name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eagle3_draft: Option<String>,
    /// Multi-token-prediction modules the checkpoint carries (DeepSeek-V3's
    /// `num_nextn_predict_layers`); absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtp_modules: Option<u32>,
}

fn default_kv_bytes_per_element() -> f64 {
    2.0
}

impl ModelProfile {
    /// The precision of the published checkpoint's weights: its routed
    /// experts' format where `[weights]` states one (gpt-oss-120b's MXFP4,
    /// DeepSeek-V3's FP8), else what `bytes_per_weight` says (2: BF16).
    /// Serving it at this precision needs no quantisation step.
    pub fn published_precision(&self) -> Precision {
        if let Some(w) = &self.weights {
            return w.experts;
        }
        Precision::EVERY
            .into_iter()
            .find(|p| (p.bytes_per_weight() - self.bytes_per_weight).abs() < 0.1)
            .unwrap_or(Precision::Bf16)
    }

    /// KV-cache bytes per token of context that grows with the context: 2 x
    /// layers x KV heads x head dim x bytes per element for grouped-query
    /// attention over every layer; latent attention keeps layers x
    /// (kv_lora_rank + qk_rope_head_dim) x bytes; sliding-window layers hold
    /// only their window (see [`Self::sliding_kv_bytes_per_token`]) and are
    /// left out.
    pub fn kv_bytes_per_token(&self) -> f64 {
        match self.attention.kind {
            AttentionKind::Latent => {
                f64::from(self.layers) * self.latent_width() * self.kv_bytes_per_element
            }
            AttentionKind::GroupedQuery if self.sliding_layers() > 0 => {
                2.0 * f64::from(self.layers - self.sliding_layers())
                    * f64::from(self.kv_heads)
                    * f64::from(self.head_dim)
                    * self.kv_bytes_per_element
            }
            AttentionKind::GroupedQuery => {
                2.0 * f64::from(self.layers)
                    * f64::from(self.kv_heads)
                    * f64::from(self.head_dim)
                    * self.kv_bytes_per_element
            }
        }
    }

    /// KV bytes per token of the sliding-window layers (held and read only
    /// for the last `sliding_window` tokens of each sequence).
    pub fn sliding_kv_bytes_per_token(&self) -> f64 {
        2.0 * f64::from(self.sliding_layers())
            * f64::from(self.kv_heads)
            * f64::from(self.head_dim)
            * self.kv_bytes_per_element
    }

    /// Layers that attend within a sliding window.
    pub fn sliding_layers(&self) -> u32 {
        match (
            self.attention.sliding_window,
            self.attention.sliding_window_layers,
        ) {
            (Some(_), Some(n)) => n.min(self.layers),
            _ => 0,
        }
    }

    /// The sliding window in tokens (0 without one).
    pub fn sliding_window(&self) -> f64 {
        if self.sliding_layers() == 0 {
            return 0.0;
        }
        f64::from(self.attention.sliding_window.unwrap_or(0))
    }

    /// Latent attention's cached width per token per layer:
    /// kv_lora_rank + qk_rope_head_dim (576 for DeepSeek-V3).
    fn latent_width(&self) -> f64 {
        f64::from(self.attention.kv_lora_rank.unwrap_or(0))
            + f64::from(self.attention.qk_rope_head_dim.unwrap_or(0))
    }

    /// Attention FLOPs per (query, key) pair summed over the layers, as
    /// (decode, prefill). Grouped-query: 4 L H d both (scores and values).
    /// Latent: decode runs the absorbed form over the latent,
    /// 2 L H (2 r + d_rope); prefill the expanded heads,
    /// 2 L H (d_nope + d_rope + d_v).
    pub fn attention_flops_per_pair(&self) -> (f64, f64) {
        let (l, h) = (f64::from(self.layers), f64::from(self.heads));
        match self.attention.kind {
            AttentionKind::GroupedQuery => {
                let f = 4.0 * l * h * f64::from(self.head_dim);
                (f, f)
            }
            AttentionKind::Latent => {
                let a = &self.attention;
                let r = f64::from(a.kv_lora_rank.unwrap_or(0));
                let rope = f64::from(a.qk_rope_head_dim.unwrap_or(0));
                let nope = f64::from(a.qk_nope_head_dim.unwrap_or(self.head_dim));
                let v = f64::from(a.v_head_dim.unwrap_or(self.head_dim));
                (
                    2.0 * l * h * (2.0 * r + rope),
                    2.0 * l * h * (nope + rope + v),
                )
            }
        }
    }

    /// Whether every tensor-parallel rank holds each token's whole KV
    /// (latent attention's latent is shared by the heads).
    pub fn kv_replicated_over_tp(&self) -> bool {
        self.attention.kind == AttentionKind::Latent
    }

    /// Weights of one routed expert in one layer: 3 × hidden × expert_ffn.
    pub fn expert_params(&self) -> f64 {
        self.moe.as_ref().map_or(0.0, |m| {
            3.0 * f64::from(self.hidden) * f64::from(m.expert_ffn)
        })
    }

    /// Layers whose MLP is routed experts.
    pub fn moe_layers(&self) -> u32 {
        self.moe
            .as_ref()
            .map_or(0, |m| self.layers.saturating_sub(m.dense_layers))
    }

    /// Weights of every routed expert of every MoE layer.
    pub fn routed_params_total(&self) -> f64 {
        self.moe.as_ref().map_or(0.0, |m| {
            f64::from(self.moe_layers()) * f64::from(m.experts) * self.expert_params()
        })
    }

    /// Routed-expert weights one token goes through.
    pub fn routed_params_active(&self) -> f64 {
        self.moe.as_ref().map_or(0.0, |m| {
            f64::from(self.moe_layers()) * f64::from(m.experts_per_token) * self.expert_params()
        })
    }

    /// GEMM weights per token outside the routed experts (attention
    /// projections, dense and shared MLPs, routers).
    pub fn dense_gemm_params(&self) -> f64 {
        self.gemm_params() - self.routed_params_active()
    }

    /// The precisions of the routed experts and of the rest of the model at
    /// `precision`: every part at `precision`, except that FP4 applies to a
    /// mixture's routed experts only and its dense parts keep their
    /// published format (gpt-oss-120b: BF16, DeepSeek-V3: FP8).
    pub fn part_precisions(
        &self,
        precision: crate::profiles::precision::Precision,
    ) -> (
        crate::profiles::precision::Precision,
        crate::profiles::precision::Precision,
    ) {
        use crate::profiles::precision::Precision;
        if precision != Precision::Fp4 || self.moe.is_none() {
            return (precision, precision);
        }
        let published = self.weights.as_ref().map_or(
            if self.bytes_per_weight >= 2.0 {
                Precision::Bf16
            } else {
                Precision::Fp8
            },
            |w| w.dense,
        );
        (precision, published)
    }

    /// Bytes per weight of the routed experts and of the rest of the model
    /// at `precision` ([`Self::part_precisions`]).
    pub fn bytes_per_weight_at(
        &self,
        precision: crate::profiles::precision::Precision,
    ) -> (f64, f64) {
        let (experts, dense) = self.part_precisions(precision);
        (experts.bytes_per_weight(), dense.bytes_per_weight())
    }

    /// Weight bytes of the whole model.
    pub fn weight_bytes(&self) -> f64 {
        self.params_billion * 1e9 * self.bytes_per_weight
    }

    /// Active parameters per token.
    pub fn active_params(&self) -> f64 {
        self.active_params_billion * 1e9
    }

    /// Parameters of the LM head (and as many in the input embedding):
    /// vocabulary × hidden.
    pub fn lm_head_params(&self) -> f64 {
        f64::from(self.vocab_size) * f64::from(self.hidden)
    }

    /// GEMM parameters per token in the layers: active parameters minus the
    /// input embedding and the LM head.
    pub fn gemm_params(&self) -> f64 {
        self.active_params() - 2.0 * self.lm_head_params()
    }

    /// GEMM parameters of all the layers (every expert of a mixture).
    pub fn gemm_params_total(&self) -> f64 {
        self.params_billion * 1e9 - 2.0 * self.lm_head_params()
    }

    /// Checks ranges; returns every problem found.
    pub fn check(&self, file: &Path) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut bound =
            |key: &str, value: f64| check_bound(&mut problems, file, MODEL_BOUNDS, key, value);
        bound("params_billion", self.params_billion);
        bound("active_params_billion", self.active_params_billion);
        bound("layers", f64::from(self.layers));
        bound("hidden", f64::from(self.hidden));
        bound("vocab_size", f64::from(self.vocab_size));
        bound("heads", f64::from(self.heads));
        bound("kv_heads", f64::from(self.kv_heads));
        bound("head_dim", f64::from(self.head_dim));
        bound("bytes_per_weight", self.bytes_per_weight);
        bound("kv_bytes_per_element", self.kv_bytes_per_element);
        bound("max_context_tokens", f64::from(self.max_context_tokens));
        if let Some(x) = &self.extended_context {
            bound(
                "extended_context.max_context_tokens",
                f64::from(x.max_context_tokens),
            );
            bound(
                "extended_context.original_max_position_embeddings",
                f64::from(x.original_max_position_embeddings),
            );
            bound("extended_context.rope_theta", x.rope_theta);
            if x.max_context_tokens <= self.max_context_tokens {
                problems.push(Problem::new(
                    file.to_path_buf(),
                    "extended_context.max_context_tokens",
                    format!(
                        "the extended context ({}) must be longer than `max_context_tokens` ({})",
                        x.max_context_tokens, self.max_context_tokens
                    ),
                ));
            }
        }
        if self.kv_heads > self.heads {
            problems.push(Problem::new(file.to_path_buf(), "kv_heads", format!(
                    "`kv_heads` ({}) cannot exceed `heads` ({}): grouped-query attention shares each KV head among query heads",
                    self.kv_heads, self.heads
                )));
        }
        if self.active_params_billion > self.params_billion {
            problems.push(Problem::new(
                file.to_path_buf(),
                "active_params_billion",
                "`active_params_billion` cannot exceed `params_billion`",
            ));
        }
        problems.extend(self.check_moe_and_attention(file));
        if self.gemm_params() <= 0.0 {
            problems.push(Problem::new(
                file.to_path_buf(),
                "vocab_size",
                format!(
                    "the embedding and LM head (2 × vocab_size × hidden = {:.3} billion) leave no \
                     layer parameters in `active_params_billion` ({})",
                    2.0 * self.lm_head_params() / 1e9,
                    self.active_params_billion
                ),
            ));
        }
        problems
    }

    /// The MoE and attention tables' own checks.
    fn check_moe_and_attention(&self, file: &Path) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut bound =
            |key: &str, value: f64| check_bound(&mut problems, file, MODEL_BOUNDS, key, value);
        if let Some(m) = &self.moe {
            bound("moe.experts", f64::from(m.experts));
            bound("moe.experts_per_token", f64::from(m.experts_per_token));
            bound("moe.shared_experts", f64::from(m.shared_experts));
            bound("moe.expert_ffn", f64::from(m.expert_ffn));
            bound("moe.dense_layers", f64::from(m.dense_layers));
        }
        let a = &self.attention;
        for (key, v) in [
            ("attention.kv_lora_rank", a.kv_lora_rank),
            ("attention.qk_rope_head_dim", a.qk_rope_head_dim),
            ("attention.qk_nope_head_dim", a.qk_nope_head_dim),
            ("attention.v_head_dim", a.v_head_dim),
            ("attention.sliding_window", a.sliding_window),
            ("attention.sliding_window_layers", a.sliding_window_layers),
        ] {
            if let Some(v) = v {
                bound(key, f64::from(v));
            }
        }
        let mut problem = |key: &str, message: String| {
            problems.push(Problem::new(file.to_path_buf(), key, message));
        };
        if let Some(m) = &self.moe {
            if m.experts_per_token > m.experts {
                problem(
                    "moe.experts_per_token",
                    format!(
                        "`experts_per_token` ({}) cannot exceed `experts` ({})",
                        m.experts_per_token, m.experts
                    ),
                );
            }
            if m.dense_layers >= self.layers {
                problem(
                    "moe.dense_layers",
                    format!(
                        "`dense_layers` ({}) leaves no MoE layer of the {} layers",
                        m.dense_layers, self.layers
                    ),
                );
            }
            // The experts not taken by a token are the parameters a
            // mixture holds beyond its active ones.
            let idle = f64::from(self.moe_layers())
                * f64::from(m.experts.saturating_sub(m.experts_per_token))
                * self.expert_params();
            let stated = (self.params_billion - self.active_params_billion) * 1e9;
            if m.experts_per_token <= m.experts
                && (idle - stated).abs() > MOE_PARAMS_TOLERANCE * stated.max(idle)
            {
                problem(
                    "moe.expert_ffn",
                    format!(
                        "the experts' shape ({} MoE layers x {} idle experts x 3 x {} x {}) gives {:.2} billion parameters beyond the active ones, but `params_billion` - `active_params_billion` is {:.2}: check `expert_ffn`, `dense_layers` and the two counts against config.json",
                        self.moe_layers(),
                        m.experts.saturating_sub(m.experts_per_token),
                        self.hidden,
                        m.expert_ffn,
                        idle / 1e9,
                        stated / 1e9
                    ),
                );
            }
            if self.dense_gemm_params() <= 0.0 {
                problem(
                    "moe.experts_per_token",
                    "the routed experts a token goes through leave no attention or dense weights in `active_params_billion`".into(),
                );
            }
        }
        if a.kind == AttentionKind::Latent
            && (a.kv_lora_rank.is_none() || a.qk_rope_head_dim.is_none())
        {
            problem(
                "attention.kv_lora_rank",
                "latent attention needs `kv_lora_rank` and `qk_rope_head_dim` (config.json)".into(),
            );
        }
        if a.sliding_window.is_some() != a.sliding_window_layers.is_some() {
            problem(
                "attention.sliding_window_layers",
                "a sliding window needs both `sliding_window` (tokens) and `sliding_window_layers` (how many layers use it)".into(),
            );
        }
        if a.sliding_window_layers.is_some_and(|n| n >= self.layers) {
            problem(
                "attention.sliding_window_layers",
                format!(
                    "`sliding_window_layers` must leave at least one of the {} layers attending to the whole context",
                    self.layers
                ),
            );
        }
        if a.kind == AttentionKind::Latent && a.sliding_window.is_some() {
            problem(
                "attention.sliding_window",
                "a sliding window with latent attention is not modelled".into(),
            );
        }
        problems
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llama_70b_kv_bytes_match_the_reference_table() {
        let m = ModelProfile {
            name: "Llama 3.1 70B".into(),
            params_billion: 70.55,
            active_params_billion: 70.55,
            layers: 80,
            hidden: 8192,
            vocab_size: 128_256,
            heads: 64,
            kv_heads: 8,
            head_dim: 128,
            bytes_per_weight: 2.0,
            kv_bytes_per_element: 2.0,
            max_context_tokens: 131_072,
            extended_context: None,
            moe: None,
            attention: Attention::default(),
            weights: None,
            hf_id: None,
            checkpoints: Vec::new(),
            speculative: None,
            source: "test".into(),
        };
        // 2 x 80 x 8 x 128 x 2 = 327,680 bytes = 320 KiB.
        assert_eq!(m.kv_bytes_per_token(), 327_680.0);
        assert!(m.check(Path::new("m.toml")).is_empty());
        // An extended context no longer than the model's own is refused.
        let extended = |tokens| ModelProfile {
            extended_context: Some(ExtendedContext {
                max_context_tokens: tokens,
                original_max_position_embeddings: 32_768,
                rope_theta: 500_000.0,
                source: "test".into(),
            }),
            ..m.clone()
        };
        assert!(extended(262_144).check(Path::new("m.toml")).is_empty());
        let problems = extended(131_072).check(Path::new("m.toml"));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].location, "extended_context.max_context_tokens");
    }
}
