//! The numeric precision a replica runs its weight GEMMs at.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Precision of the weights and their GEMMs. Attention and the KV cache stay
/// in BF16 (an engine's FP8 recipe may keep the KV cache in FP8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// BF16 weights (2 bytes per weight).
    Bf16,
    /// FP8 (e4m3) weights with per-tensor or per-block scales (1 byte per
    /// weight; DeepSeek's block-scaled FP8 keeps one scale per 128 x 128
    /// block, 0.006% more). Changes answer quality: whether that is
    /// acceptable is the user's call.
    #[serde(alias = "fp8_block")]
    Fp8,
    /// 4-bit floating-point weights with a scale per small block: NVFP4 (e2m1
    /// values, one FP8 scale per 16: 4.5 bits a weight) or MXFP4 (one E8M0
    /// scale per 32: 4.25 bits), counted at NVFP4's 0.5625 bytes. On GPUs
    /// with FP4 units (Blackwell: `fp4_tflops`) the GEMMs run in FP4; on
    /// others the weights are read in 4 bits and computed in BF16
    /// (weight-only, as gpt-oss-120b's MXFP4 experts run on Hopper). A
    /// mixture of experts keeps its dense parts (attention projections,
    /// dense and shared MLPs) in their published format. Changes answer
    /// quality more than FP8: the user's call.
    #[serde(alias = "nvfp4", alias = "mxfp4")]
    Fp4,
}

impl Precision {
    /// The precisions a scenario searches when it pins none (FP4 only when
    /// listed: its quality loss is larger).
    pub const ALL: [Precision; 2] = [Precision::Bf16, Precision::Fp8];

    /// Every precision the planner models.
    pub const EVERY: [Precision; 3] = [Precision::Bf16, Precision::Fp8, Precision::Fp4];

    /// The name used in scenario files and reports: "bf16", "fp8" or "fp4".
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Bf16 => "bf16",
            Precision::Fp8 => "fp8",
            Precision::Fp4 => "fp4",
        }
    }

    /// Parses "bf16", "fp8" or "fp4" (case-insensitive; "nvfp4" and
    /// "mxfp4" are FP4, "fp8_block" is FP8).
    pub fn parse(text: &str) -> Option<Precision> {
        match text.to_ascii_lowercase().as_str() {
            "bf16" => Some(Precision::Bf16),
            "fp8" | "fp8_block" => Some(Precision::Fp8),
            "fp4" | "nvfp4" | "mxfp4" => Some(Precision::Fp4),
            _ => None,
        }
    }

    /// Bytes per weight at this precision (FP4 with its block scales).
    pub fn bytes_per_weight(self) -> f64 {
        match self {
            Precision::Bf16 => 2.0,
            Precision::Fp8 => 1.0,
            Precision::Fp4 => 0.5625,
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in Precision::EVERY {
            assert_eq!(Precision::parse(p.as_str()), Some(p));
        }
        assert_eq!(Precision::parse("FP8"), Some(Precision::Fp8));
        assert_eq!(Precision::parse("int4"), None);
        assert_eq!(Precision::parse("mxfp4"), Some(Precision::Fp4));
    }
}
