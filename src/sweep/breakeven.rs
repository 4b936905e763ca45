//! Break-even points: where, along a numeric swept key with every other key
//! held, a decision of the plan changes (a tier goes to the API, a GPU type
//! starts being reserved). Found from the sweep's own rows: between two
//! neighbouring values whose plans disagree, then narrowed by bisection —
//! each step solves the midpoint and keeps the half whose ends still
//! disagree. The result is an interval, not a point: the MILP stops within
//! its gap of the optimum, so near the break-even either choice costs within
//! that gap of the other.

use super::grid::Grid;
use super::row::{Decision, Figures, Setting, SweepRow};
use super::Solver;
use crate::scenario::Override;
use serde::Serialize;

/// One solve made by the bisection.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Probe {
    pub value: String,
    /// `None` when no plan meets the variant.
    pub total_cost_usd: Option<f64>,
    /// Whether the decision holds there (`None`: no plan).
    pub holds: Option<bool>,
    /// Whether its plan's replay met every tier's target (`None`: no plan).
    pub meets_targets: Option<bool>,
}

/// A decision that changes between two values of a swept key.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BreakEven {
    /// The swept key.
    pub key: String,
    /// The other swept keys' values, held fixed.
    pub with: Vec<Setting>,
    pub decision: Decision,
    /// The decision at the lower end, in words.
    pub below: String,
    /// The decision at the upper end, in words.
    pub above: String,
    /// The narrowed interval: the decision is `below`'s at `low` and
    /// `above`'s at `high`.
    pub low: f64,
    pub high: f64,
    /// The swept neighbours the change was found between.
    pub swept_low: f64,
    pub swept_high: f64,
    /// Total cost at `low` and `high`.
    pub low_cost_usd: f64,
    pub high_cost_usd: f64,
    /// Whether the plans at `low` and `high` met every tier's target on
    /// replay (a plan that misses is still a plan, and says so).
    pub low_meets_targets: bool,
    pub high_meets_targets: bool,
    /// The bisection's solves, in order.
    pub probes: Vec<Probe>,
    /// Whether the direction check flags two solved values between
    /// `swept_low` and `swept_high` of this line: then a plan there is not
    /// the cheapest the planner can find, and where the decision changes
    /// is not established ([`super::direction::flag`]).
    pub direction_check_broken: bool,
}

fn holds(f: &Figures, d: &Decision) -> Option<bool> {
    f.decisions()
        .into_iter()
        .find(|(x, _)| x == d)
        .map(|(_, h)| h)
}

/// A value strictly between `lo` and `hi`, written with as few digits as
/// that takes (whole numbers for an integer key; `None` when none is left).
fn midpoint(lo: f64, hi: f64, integer: bool) -> Option<String> {
    if integer {
        let mid = f64::midpoint(lo, hi).floor();
        return (mid > lo && mid < hi).then(|| format!("{mid:.0}"));
    }
    let mid = f64::midpoint(lo, hi);
    (2..=12).find_map(|digits| {
        let text = crate::base::numbers::significant(mid, digits);
        let v: f64 = text.parse().ok()?;
        (v > lo && v < hi).then_some(text)
    })
}

/// Every break-even of the sweep, each narrowed with up to `steps` solves.
pub(super) fn find(
    grid: &Grid,
    variants: &[Vec<usize>],
    rows: &[SweepRow],
    fixed: &[Override],
    solver: &Solver,
    steps: u32,
) -> Vec<BreakEven> {
    let mut out = Vec::new();
    for (a, axis) in grid.axes.iter().enumerate() {
        if !axis.numeric() || axis.values.len() < 2 {
            continue;
        }
        let value = |i: usize| axis.values[i].parse::<f64>().unwrap_or(f64::NAN);
        // Value indices of this axis in increasing order.
        let mut order: Vec<usize> = (0..axis.values.len()).collect();
        order.sort_by(|&x, &y| value(x).total_cmp(&value(y)));
        // Each line of the grid along this axis: the other axes held.
        let mut lines: Vec<Vec<usize>> = variants
            .iter()
            .map(|v| {
                let mut key = v.clone();
                key[a] = 0;
                key
            })
            .collect();
        lines.dedup();
        lines.sort();
        lines.dedup();
        for line in lines {
            let row_at = |i: usize| {
                let mut v = line.clone();
                v[a] = i;
                variants.iter().position(|x| *x == v).map(|r| &rows[r])
            };
            let with: Vec<Setting> = grid
                .axes
                .iter()
                .enumerate()
                .filter(|&(b, _)| b != a)
                .map(|(b, other)| Setting {
                    key: other.key.clone(),
                    value: other.values[line[b]].clone(),
                })
                .collect();
            let overrides_at = |v: &str| {
                let mut o = fixed.to_vec();
                for (b, other) in grid.axes.iter().enumerate() {
                    o.push(if b == a {
                        other.at(v)
                    } else {
                        other.at(&other.values[line[b]])
                    });
                }
                o
            };
            // Whole-number values bisect in whole steps only where the key
            // rejects a fraction (a count); a price written `1,3` takes 2, 1.5, …
            let integer = axis.integer()
                && crate::scenario::load_with(solver.path, &overrides_at("0.5")).is_err();
            for pair in order.windows(2) {
                let (Some(lo_row), Some(hi_row)) = (row_at(pair[0]), row_at(pair[1])) else {
                    continue;
                };
                let (Some(lo_f), Some(hi_f)) = (&lo_row.figures, &hi_row.figures) else {
                    continue;
                };
                for (decision, lo_holds) in lo_f.decisions() {
                    let Some(hi_holds) = holds(hi_f, &decision) else {
                        continue;
                    };
                    if lo_holds == hi_holds {
                        continue;
                    }
                    let (mut lo, mut hi) = (value(pair[0]), value(pair[1]));
                    let (mut lo_cost, mut hi_cost) = (lo_f.total_cost_usd, hi_f.total_cost_usd);
                    let (mut lo_meets, mut hi_meets) = (
                        lo_f.missed_targets.is_empty(),
                        hi_f.missed_targets.is_empty(),
                    );
                    let mut probes = Vec::new();
                    for _ in 0..steps {
                        let Some(mid) = midpoint(lo, hi, integer) else {
                            break;
                        };
                        let at = solver.figures(&overrides_at(&mid));
                        let mid_value: f64 = mid.parse().unwrap_or(f64::NAN);
                        let state = at.as_ref().ok().and_then(|f| holds(f, &decision));
                        probes.push(Probe {
                            value: mid.clone(),
                            total_cost_usd: at.as_ref().ok().map(|f| f.total_cost_usd),
                            holds: state,
                            meets_targets: at.as_ref().ok().map(|f| f.missed_targets.is_empty()),
                        });
                        let cost = at.as_ref().map_or(f64::NAN, |f| f.total_cost_usd);
                        let meets = at.as_ref().is_ok_and(|f| f.missed_targets.is_empty());
                        match state {
                            Some(h) if h == lo_holds => {
                                lo = mid_value;
                                lo_cost = cost;
                                lo_meets = meets;
                            }
                            Some(_) => {
                                hi = mid_value;
                                hi_cost = cost;
                                hi_meets = meets;
                            }
                            // No plan at the midpoint: stop narrowing.
                            None => break,
                        }
                    }
                    out.push(BreakEven {
                        key: axis.key.clone(),
                        with: with.clone(),
                        below: decision.describe(lo_holds),
                        above: decision.describe(hi_holds),
                        decision,
                        low: lo,
                        high: hi,
                        swept_low: value(pair[0]),
                        swept_high: value(pair[1]),
                        low_cost_usd: lo_cost,
                        high_cost_usd: hi_cost,
                        low_meets_targets: lo_meets,
                        high_meets_targets: hi_meets,
                        probes,
                        direction_check_broken: false,
                    });
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn midpoints_are_short_and_strictly_inside() {
        assert_eq!(midpoint(0.6, 0.7, false).as_deref(), Some("0.65"));
        assert_eq!(midpoint(2.0, 6.0, true).as_deref(), Some("4"));
        assert_eq!(midpoint(2.0, 3.0, true), None);
        let m: f64 = midpoint(1.0, 1.0 + 1e-9, false).unwrap().parse().unwrap();
        assert!(m > 1.0 && m < 1.0 + 1e-9);
    }
}
