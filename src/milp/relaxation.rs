//! The LP relaxation: a lower bound on the optimum, the fractional plan the
//! heuristics round, and each slot's price of one more GPU.

use super::heuristic::Relaxation;
use super::model::{build, map_error, Mode};
use super::{MilpError, Problem, Settings};
use good_lp::solvers::DualValues;
use good_lp::{Solution as _, SolutionWithDual, SolverModel};

/// The LP relaxation's answer.
pub(super) struct LpRelaxation {
    pub values: Relaxation,
    /// The LP optimum, USD: a lower bound on the MILP's.
    pub objective_usd: f64,
    /// `[t][g]`: USD one more GPU of type `g` in slot `t` would save (the
    /// dual value of the `gpus[g,t]` row).
    pub gpu_usd: Vec<Vec<f64>>,
}

/// Solves the LP relaxation of `input`.
pub(super) fn solve(input: &Problem, settings: &Settings) -> Result<LpRelaxation, MilpError> {
    let built = build(
        input,
        settings,
        Mode {
            integer: false,
            fixed_reserved: None,
            warm_start: None,
        },
    )?;
    let mut lp = built.problem.solve().map_err(map_error)?;
    let value = |v: &Option<good_lp::Variable>| v.map_or(0.0, |v| lp.value(v));
    let values = Relaxation {
        // In GPUs: the model counts purchase units.
        reserved: built
            .reserved
            .iter()
            .zip(&input.gpus)
            .map(|(v, g)| value(v) * f64::from(g.purchase.unit_gpus))
            .collect(),
        replicas: built
            .replicas
            .iter()
            .map(|tier| {
                tier.iter()
                    .map(|opt| opt.iter().map(value).collect())
                    .collect()
            })
            .collect(),
        api: built
            .api
            .iter()
            .map(|tier| tier.iter().map(value).collect())
            .collect(),
    };
    let objective_usd = lp.eval(&built.objective);
    let duals = lp.compute_dual();
    let gpu_usd = built
        .gpu_rows
        .iter()
        .map(|row| row.iter().map(|r| duals.dual(r.clone()).abs()).collect())
        .collect();
    Ok(LpRelaxation {
        values,
        objective_usd,
        gpu_usd,
    })
}
