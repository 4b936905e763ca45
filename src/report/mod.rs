//! Rendering plans and trace statistics as text for people and JSON for tools.

pub mod calibration_text;
pub mod capacity_text;
pub mod csv;
pub mod goodput_text;
pub mod growth_text;
pub mod html;
pub mod json;
pub mod kernels_text;
pub(crate) mod pool_text;
pub(crate) mod predict_text;
pub(crate) mod purchase_text;
pub(crate) mod runs_text;
pub mod schedule_csv;
pub mod sentences;
pub mod sweep_csv;
pub mod sweep_text;
pub mod text;
pub mod trace_text;
pub mod unit_costs_text;
pub mod verification_text;

/// Output format chosen on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned text for a person.
    Text,
    /// Pretty-printed JSON with stable key order.
    Json,
}

/// Output format of `solve` and `sweep`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Aligned text for a person.
    Text,
    /// Pretty-printed JSON with stable key order.
    Json,
    /// Comma-separated values for a spreadsheet (`solve`: the per-slot
    /// schedule; `sweep`: one line per variant).
    Csv,
    /// One self-contained HTML page with inline SVG charts.
    Html,
}

pub use crate::base::numbers::{group_thousands, money, significant, usd};

/// A proven gap (0-1) as a percentage rounded up to hundredths, as what is
/// proven; a gap equal to a round figure up to floating-point noise (0.005
/// from HiGHS as 0.00500000000007) reads as that figure.
pub(crate) fn gap_percent_up(gap: f64) -> f64 {
    (gap * 10_000.0 - 1e-6).ceil().max(0.0) / 100.0
}

/// How a solver status reads in a report, at the scenario's `mip_gap`.
pub(crate) fn solver_status(status: crate::milp::SolveStatus, mip_gap: f64) -> String {
    use crate::milp::SolveStatus;
    match status {
        SolveStatus::Optimal => "optimal".into(),
        SolveStatus::GapLimit => format!(
            "stopped within the {}% gap planning.mip_gap asks for",
            mip_gap * 100.0
        ),
        SolveStatus::TimeLimit => "best plan found in the time limit (gap not proven)".into(),
        SolveStatus::Unproven => format!(
            "best plan found; the {}% gap is not proven",
            mip_gap * 100.0
        ),
    }
}
