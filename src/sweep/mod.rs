//! `planner sweep`: the scenario solved once per combination of swept values
//! (`--set KEY=V1,V2,…`, one axis per key), one row of figures per variant,
//! and the break-even points where a decision of the plan changes between
//! neighbouring values of a numeric axis, narrowed by bisection.
//!
//! Every variant is a full `solve` (demand, capacity, MILP, replay rounds) of
//! the scenario with its overrides applied before validation; the variants
//! share the on-disk capacity cache, so figures simulated for one are read by
//! the others.

pub(crate) mod breakeven;
pub(crate) mod direction;
pub(crate) mod grid;
pub(crate) mod row;

use crate::base::error::PlannerError;
use crate::scenario::{self, Override};
use crate::solve::SolveOptions;
pub(crate) use breakeven::BreakEven;
pub(crate) use grid::{Axis, Grid};
use row::{Figures, Setting, SweepRow};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;

/// How to run a sweep.
#[derive(Debug, Clone)]
pub(crate) struct SweepOptions {
    /// Options of every variant's solve (its progress bars are hidden).
    pub solve: SolveOptions,
    /// Bisection solves per break-even (0: report the swept neighbours only).
    pub bisect_steps: u32,
    /// One line per finished variant on standard error.
    pub lines: bool,
}

/// A finished sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    pub scenario: String,
    /// Overrides applied to every variant (`--set KEY=VALUE` with one value).
    pub fixed: Vec<Setting>,
    /// The swept keys and their values.
    pub axes: Vec<Axis>,
    /// GPU types and tiers of the scenario, in the rows' order.
    pub gpu_types: Vec<String>,
    pub tiers: Vec<String>,
    /// One row per variant; the last axis varies fastest.
    pub rows: Vec<SweepRow>,
    pub break_evens: Vec<BreakEven>,
    /// The swept keys that imply a direction for the cost, and it.
    pub directions: BTreeMap<String, direction::Direction>,
    /// Neighbouring solved values whose costs move against it by more than
    /// the solver's gap (`mip_gap`, also given).
    pub direction_violations: Vec<direction::Violation>,
    pub mip_gap: f64,
    /// Most bisection solves per break-even (`--bisect`; 0: not narrowed).
    pub bisect_steps: u32,
}

impl Sweep {
    /// Whether some variant states a commitment term.
    pub fn has_term(&self) -> bool {
        self.rows
            .iter()
            .any(|r| r.figures.as_ref().is_some_and(|f| f.term_usd.is_some()))
    }
}

/// Memo of solved variants by their overrides, so a bisection never solves
/// a variant twice.
pub(crate) struct Solver<'a> {
    path: &'a Path,
    options: &'a SweepOptions,
    solved: Mutex<BTreeMap<String, Result<Figures, String>>>,
}

impl Solver<'_> {
    /// Solves the scenario with `overrides`; the error is the reason in words.
    pub(crate) fn figures(&self, overrides: &[Override]) -> Result<Figures, String> {
        let label = label(overrides);
        if let Some(done) = self.solved.lock().expect("no panics").get(&label) {
            return done.clone();
        }
        let t0 = std::time::Instant::now();
        let result = scenario::load_with(self.path, overrides)
            .and_then(|s| crate::solve::solve(&s, &self.options.solve))
            .map(|plan| Figures::of(&plan))
            .map_err(|e| e.to_string());
        if self.options.lines {
            note!(
                "  {} — {} in {:.1} s",
                if label.is_empty() {
                    "as written"
                } else {
                    &label
                },
                match &result {
                    Ok(f) => format!("{} USD", crate::base::numbers::usd(f.total_cost_usd)),
                    Err(_) => "no plan".to_string(),
                },
                t0.elapsed().as_secs_f64()
            );
        }
        self.solved
            .lock()
            .expect("no panics")
            .insert(label, result.clone());
        result
    }
}

fn label(overrides: &[Override]) -> String {
    overrides
        .iter()
        .map(Override::label)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs the sweep of the scenario at `path`: `fixed` overrides apply to every
/// variant, `grid` spans the variants. Every variant is checked before any
/// is solved, so a bad key or value fails at once, naming the key.
pub(crate) fn run(
    path: &Path,
    fixed: &[Override],
    grid: &Grid,
    options: &SweepOptions,
) -> Result<Sweep, PlannerError> {
    let variants = grid.variants();
    let overrides_of = |v: &[usize]| {
        let mut o = fixed.to_vec();
        o.extend(grid.overrides(v));
        o
    };
    // Check every variant first: all problems, each once.
    let mut problems = Vec::new();
    let mut first = None;
    for v in &variants {
        match scenario::load_with(path, &overrides_of(v)) {
            Ok(s) => {
                first.get_or_insert(s);
            }
            Err(PlannerError::Scenario(ps)) => {
                for p in ps {
                    if !problems.contains(&p) {
                        problems.push(p);
                    }
                }
            }
            Err(other) => return Err(other),
        }
    }
    if !problems.is_empty() {
        return Err(PlannerError::Scenario(problems));
    }
    let first = first.expect("a grid has at least one variant");
    let solver = Solver {
        path,
        options,
        solved: Mutex::new(BTreeMap::new()),
    };
    let figures =
        crate::base::parallel::map_in_order(&variants, |v| solver.figures(&overrides_of(v)));
    let rows: Vec<SweepRow> = variants
        .iter()
        .zip(figures)
        .map(|(v, f)| {
            let f = f.unwrap_or_else(|| Err("the variant's solve panicked".into()));
            SweepRow {
                settings: grid
                    .axes
                    .iter()
                    .zip(v)
                    .map(|(a, &i)| Setting {
                        key: a.key.clone(),
                        value: a.values[i].clone(),
                    })
                    .collect(),
                error: f.as_ref().err().cloned(),
                figures: f.ok(),
            }
        })
        .collect();
    let mut break_evens =
        breakeven::find(grid, &variants, &rows, fixed, &solver, options.bisect_steps);
    let mip_gap = first.planning.mip_gap;
    let direction_violations = direction::check(grid, &variants, &rows, &break_evens, mip_gap);
    direction::flag(&mut break_evens, &direction_violations);
    let directions = grid
        .axes
        .iter()
        .filter_map(|a| Some((a.key.clone(), direction::Direction::of(&a.key)?)))
        .collect();
    Ok(Sweep {
        bisect_steps: options.bisect_steps,
        scenario: first.name.clone(),
        fixed: fixed
            .iter()
            .map(|o| Setting {
                key: o.key.clone(),
                value: o.value.clone(),
            })
            .collect(),
        axes: grid.axes.clone(),
        gpu_types: first.gpus.iter().map(|g| g.id.clone()).collect(),
        tiers: first.tiers.iter().map(|t| t.name.clone()).collect(),
        rows,
        break_evens,
        directions,
        direction_violations,
        mip_gap,
    })
}
