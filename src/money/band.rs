//! The confidence band on a purchase: the plan's reservation and cost when
//! every configuration's steps run slower by the measured error of its
//! engine's profile on its GPU and precision (the band's pessimistic edge),
//! beside the plan's own. Computed by `solve::band`; formulas in
//! `docs/model.md` §5.

use serde::Serialize;
use std::collections::BTreeMap;

/// The purchase at the band's pessimistic edge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BandEdge {
    /// The configurations the plan runs at each tier's busiest slot, with
    /// their group's error and the replicas the slower steps need.
    pub configurations: Vec<BandConfiguration>,
    /// GPU type → GPUs reserved at the edge.
    pub reserved: BTreeMap<String, u32>,
    /// The horizon's cost at the edge, and over the plan's, less 1.
    pub total_cost_usd: f64,
    pub vs_plan: f64,
    /// `<engine> <GPU> <precision>` groups the plan runs whose error no run
    /// measured: their steps are kept as the figures say.
    pub not_measured: Vec<String>,
}

/// One configuration at the band's edge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BandConfiguration {
    pub tier: String,
    /// The configuration's label.
    pub config: String,
    /// The measured median |error| of mean TTFT and mean TPOT of its
    /// engine on its GPU and precision (`None`: not measured).
    pub ttft_error: Option<f64>,
    pub tpot_error: Option<f64>,
    /// The runs the errors were measured on: the GPU and precision's own,
    /// or, when fewer than 10 measured it, all of the engine's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_basis: Option<String>,
    /// Replicas the plan runs there, and the replicas the same traffic
    /// needs with steps slower by the errors (`None`: no fleet of the
    /// configuration keeps the tier's limits then).
    pub replicas: u32,
    pub replicas_at_edge: Option<u32>,
}
