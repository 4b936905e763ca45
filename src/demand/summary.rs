//! The demand figures of one tier as a plan's inputs report them: per slot
//! peak and mean requests/s, input and output tokens/s, and the tier's
//! figures.

use super::{Demand, TierDemand};
use serde::Serialize;

/// Demand the optimiser used for one tier.
#[derive(Debug, Clone, Serialize)]
pub struct DemandSummary {
    pub peak_rps: Vec<f64>,
    pub mean_rps: Vec<f64>,
    pub input_tokens_per_s: Vec<f64>,
    pub output_tokens_per_s: Vec<f64>,
    #[serde(flatten)]
    pub tier: TierDemand,
}

impl DemandSummary {
    /// The demand figures of one tier.
    pub fn of(t: &TierDemand) -> Self {
        let scale = |v: &[f64], f: f64| v.iter().map(|x| x * f).collect();
        DemandSummary {
            input_tokens_per_s: scale(&t.mean_rps, t.input_tokens.mean),
            output_tokens_per_s: scale(&t.mean_rps, t.output_tokens.mean),
            peak_rps: t.peak_rps.clone(),
            mean_rps: t.mean_rps.clone(),
            tier: t.clone(),
        }
    }
}

/// Output tokens of all tiers over the horizon.
pub(crate) fn total_output_tokens(demand: &Demand) -> f64 {
    demand
        .tiers
        .iter()
        .map(|t| t.output_tokens_total(demand.slot_hours()))
        .sum()
}
