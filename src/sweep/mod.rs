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
    /// The scenario's solves the break-evens' bisections made: each value
    /// once, however many break-evens narrowed through it (they share the
    /// memo of [`Solver`]).
    pub fn bisection_solves(&self) -> usize {
        distinct_probes(&self.break_evens)
    }

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

/// The distinct variants the break-evens' probes solved: the swept key at
/// the probe's value, with the other keys' values held.
fn distinct_probes(break_evens: &[breakeven::BreakEven]) -> usize {
    break_evens
        .iter()
        .flat_map(|b| {
            let with: Vec<String> = b
                .with
                .iter()
                .map(|s| format!("{}={}", s.key, s.value))
                .collect();
            b.probes
                .iter()
                .map(move |p| format!("{}={} {}", b.key, p.value, with.join(" ")))
        })
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}

#[cfg(test)]
mod tests {
    use super::breakeven::{BreakEven, Probe};
    use super::distinct_probes;
    use super::row::{Decision, Setting};

    fn break_even(decision: Decision, with: &str, values: &[&str]) -> BreakEven {
        BreakEven {
            key: "demand[1].scale".into(),
            with: vec![Setting {
                key: "api.usd_per_million_input_tokens".into(),
                value: with.into(),
            }],
            decision,
            below: String::new(),
            above: String::new(),
            low: 2.0,
            high: 3.0,
            swept_low: 2.0,
            swept_high: 3.0,
            low_cost_usd: 1.0,
            high_cost_usd: 1.0,
            low_meets_targets: true,
            high_meets_targets: true,
            probes: values
                .iter()
                .map(|v| Probe {
                    value: (*v).into(),
                    total_cost_usd: Some(1.0),
                    holds: Some(true),
                    meets_targets: Some(true),
                })
                .collect(),
            direction_check_broken: false,
        }
    }

    #[test]
    fn break_evens_narrowed_over_the_same_values_count_their_solves_once() {
        // Two decisions that change between 2 and 3 bisect through the same
        // values: three solves, not six; the same values with another
        // held setting are other solves.
        let api = || Decision::ApiAny("standard".into());
        let most = || Decision::ApiMost("standard".into());
        let shared = [
            break_even(api(), "0.88", &["2.5", "2.2", "2.1"]),
            break_even(most(), "0.88", &["2.5", "2.2", "2.1"]),
        ];
        assert_eq!(distinct_probes(&shared), 3);
        let apart = [
            break_even(api(), "0.88", &["2.5", "2.2"]),
            break_even(api(), "1.0", &["2.5", "2.2"]),
        ];
        assert_eq!(distinct_probes(&apart), 4);
        assert_eq!(distinct_probes(&[]), 0);
    }
}
