//! The ways to solve the MILP behind one trait: the whole model in HiGHS
//! ([`Monolithic`]) or the reserved counts by an outer search over exactly
//! solved slots ([`Decomposed`]). [`chosen`] is the one place that picks
//! between them.

use super::{decomposed, monolithic, Method, MilpError, Problem, Settings, Solution};

/// A method that solves the MILP, and solves it again with the reserved
/// counts fixed.
pub(crate) trait SolveMethod {
    /// The method's name, as plans report it (never `auto`).
    fn name(&self) -> Method;
    /// The cheapest plan of `problem` it finds in the settings' limits.
    fn solve(&self, problem: &Problem, settings: &Settings) -> Result<Solution, MilpError>;
    /// The cheapest plan of `problem` with the reserved counts `reserved`.
    fn with_reserved(
        &self,
        problem: &Problem,
        settings: &Settings,
        reserved: &[u32],
    ) -> Result<Solution, MilpError>;
}

/// The whole model in HiGHS, started from the rounding heuristic's plan
/// ([`monolithic`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Monolithic;

/// Reserved counts by an outer search, each slot solved exactly, and a
/// Lagrangian lower bound ([`decomposed`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Decomposed;

impl SolveMethod for Monolithic {
    fn name(&self) -> Method {
        Method::Monolithic
    }

    fn solve(&self, problem: &Problem, settings: &Settings) -> Result<Solution, MilpError> {
        monolithic::solve(problem, settings)
    }

    fn with_reserved(
        &self,
        problem: &Problem,
        settings: &Settings,
        reserved: &[u32],
    ) -> Result<Solution, MilpError> {
        monolithic::with_reserved(problem, settings, reserved)
    }
}

impl SolveMethod for Decomposed {
    fn name(&self) -> Method {
        Method::Decomposed
    }

    fn solve(&self, problem: &Problem, settings: &Settings) -> Result<Solution, MilpError> {
        decomposed::solve(problem, settings)
    }

    fn with_reserved(
        &self,
        problem: &Problem,
        _settings: &Settings,
        reserved: &[u32],
    ) -> Result<Solution, MilpError> {
        decomposed::with_reserved(problem, reserved)
    }
}

/// The method `setting` names for `problem`: `monolithic` as named;
/// `auto` and `decomposed` decompose when [`Problem::decomposable`] (only
/// then is the decomposition exact), else solve the whole model.
pub(crate) fn chosen(problem: &Problem, setting: Method) -> &'static dyn SolveMethod {
    match setting {
        Method::Auto | Method::Decomposed if problem.decomposable() => &Decomposed,
        _ => &Monolithic,
    }
}
