//! What a plan runs, under the scenario's price for complexity: its
//! deployments and GPU vendors, and the saving each deployment buys.

use serde::Serialize;

/// The plan's deployments and vendors with their operating prices over the
/// horizon. The prices decide which deployments are worth running; they are
/// not a provider's bill, so the plan's totals leave them out.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Operations {
    /// USD over the horizon each deployment costs to operate.
    pub usd_per_deployment: f64,
    /// USD over the horizon each GPU vendor costs to operate.
    pub usd_per_vendor: f64,
    /// Deployments × their price + vendors × theirs.
    pub operating_usd: f64,
    pub deployments: Vec<DeploymentRun>,
    pub vendors: Vec<String>,
    /// `tier: deployment` of each deployment the price took out of the
    /// plan the MILP found first.
    pub dropped: Vec<String>,
}

/// One deployment a tier runs.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DeploymentRun {
    pub tier: String,
    /// The configuration's label without its batch cap.
    pub deployment: String,
    /// Its share of the tier's requests over the horizon.
    pub share: f64,
    /// What the GPUs and the API would cost more without it, in USD over
    /// the horizon (`None`: not priced, as the tier runs nothing else and
    /// may not use the API, or no plan serves the tier without it).
    pub saving_usd: Option<f64>,
}
