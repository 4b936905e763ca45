//! The numeric precision a replica runs its weight GEMMs at.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Precision of the weights and their GEMMs. Attention and the KV cache stay
/// in BF16 in both cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// BF16 weights (2 bytes per weight).
    Bf16,
    /// FP8 (e4m3) weights with per-tensor scales (1 byte per weight). Changes
    /// answer quality: whether that is acceptable is the user's call.
    Fp8,
}

impl Precision {
    /// Every precision, in the order reports list them.
    pub const ALL: [Precision; 2] = [Precision::Bf16, Precision::Fp8];

    /// The name used in scenario files and reports: "bf16" or "fp8".
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::Bf16 => "bf16",
            Precision::Fp8 => "fp8",
        }
    }

    /// Parses "bf16" or "fp8" (case-insensitive).
    pub fn parse(text: &str) -> Option<Precision> {
        match text.to_ascii_lowercase().as_str() {
            "bf16" => Some(Precision::Bf16),
            "fp8" => Some(Precision::Fp8),
            _ => None,
        }
    }

    /// Bytes per weight at this precision.
    pub fn bytes_per_weight(self) -> f64 {
        match self {
            Precision::Bf16 => 2.0,
            Precision::Fp8 => 1.0,
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
        for p in Precision::ALL {
            assert_eq!(Precision::parse(p.as_str()), Some(p));
        }
        assert_eq!(Precision::parse("FP8"), Some(Precision::Fp8));
        assert_eq!(Precision::parse("int4"), None);
    }
}
