//! A model profile: the transformer shape the latency model needs.

use super::check_bound;
use crate::base::bounds::Bound;
use crate::base::error::Problem;
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
];

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
    /// Longest context the model accepts, in tokens.
    pub max_context_tokens: u32,
    /// The model's published name (`Qwen/Qwen3-32B`): how measured runs and
    /// launch commands name it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hf_id: Option<String>,
    /// Where the figures come from.
    pub source: String,
}

fn default_kv_bytes_per_element() -> f64 {
    2.0
}

impl ModelProfile {
    /// KV-cache bytes per token over all layers: 2 x layers x KV heads x head dim
    /// x bytes per element.
    pub fn kv_bytes_per_token(&self) -> f64 {
        2.0 * f64::from(self.layers)
            * f64::from(self.kv_heads)
            * f64::from(self.head_dim)
            * self.kv_bytes_per_element
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
            hf_id: None,
            source: "test".into(),
        };
        // 2 x 80 x 8 x 128 x 2 = 327,680 bytes = 320 KiB.
        assert_eq!(m.kv_bytes_per_token(), 327_680.0);
        assert!(m.check(Path::new("m.toml")).is_empty());
    }
}
