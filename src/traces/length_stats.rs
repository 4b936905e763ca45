//! A token-length distribution: its mean and percentiles.

use serde::Serialize;

/// A token-length distribution.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LengthStats {
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
}
