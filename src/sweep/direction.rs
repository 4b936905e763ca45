//! The direction each swept key implies for the cost, checked along every
//! line of the sweep: a price or the demand up never lowers the cost, a
//! looser limit or a larger quota never raises it. A pair of neighbouring
//! values (swept, or solved by a bisection) whose costs move the other way
//! by more than the solver's proven gap is a violation: the plan at one of
//! them is not the cheapest the planner can find there.

use super::breakeven::BreakEven;
use super::grid::Grid;
use super::row::{Setting, SweepRow};
use serde::Serialize;

/// Which way the cost must move as a key's value rises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// Never lower (a price, the demand, a stricter percentile, growth).
    NotDown,
    /// Never higher (a looser latency limit, a larger quota).
    NotUp,
}

impl Direction {
    /// The direction `key` implies, when it implies one.
    pub fn of(key: &str) -> Option<Direction> {
        let leaf = key.rsplit('.').next().unwrap_or(key);
        let up = leaf.contains("usd_per")
            || (key.starts_with("demand") && leaf == "scale")
            || leaf == "percentile"
            || leaf == "monthly_growth"
            || leaf == "headroom_replicas";
        let down = leaf == "ttft_ms"
            || leaf == "tpot_ms"
            || leaf == "max_gpus"
            || leaf == "max_tokens_per_minute"
            || leaf == "max_configurations"
            || leaf == "deadline_hours"
            || leaf == "price_decline_per_year";
        match (up, down) {
            (true, false) => Some(Direction::NotDown),
            (false, true) => Some(Direction::NotUp),
            _ => None,
        }
    }

    /// In words, for the report.
    pub fn words(self) -> &'static str {
        match self {
            Direction::NotDown => "a higher value never costs less",
            Direction::NotUp => "a higher value never costs more",
        }
    }
}

/// Two neighbouring values whose costs move against their key's direction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    pub key: String,
    /// The other swept keys' values, held fixed.
    pub with: Vec<Setting>,
    pub direction: Direction,
    pub low_value: f64,
    pub high_value: f64,
    /// The cost compared (the term's when one is stated, else the horizon's).
    pub low_cost_usd: f64,
    pub high_cost_usd: f64,
    /// Whether each end was a swept value (else a bisection's solve).
    pub low_swept: bool,
    pub high_swept: bool,
}

/// Marks each break-even whose swept interval holds a pair of values that
/// `violations` flags on the same line (the same key, the others held).
pub(super) fn flag(break_evens: &mut [BreakEven], violations: &[Violation]) {
    for b in break_evens {
        b.direction_check_broken = violations.iter().any(|v| {
            v.key == b.key
                && v.with == b.with
                && v.low_value >= b.swept_low
                && v.high_value <= b.swept_high
        });
    }
}

/// Every violation of the sweep, with `gap` the share of cost within which
/// the solver proves each plan (`planning.mip_gap`): a move within
/// `gap` × the larger cost is the solver's tolerance, not a violation.
pub(crate) fn check(
    grid: &Grid,
    variants: &[Vec<usize>],
    rows: &[SweepRow],
    break_evens: &[BreakEven],
    gap: f64,
) -> Vec<Violation> {
    let mut out = Vec::new();
    for (a, axis) in grid.axes.iter().enumerate() {
        let Some(direction) = Direction::of(&axis.key) else {
            continue;
        };
        // Lines: the other axes' value indices, each once, in order.
        let mut lines: Vec<Vec<usize>> = Vec::new();
        for v in variants {
            let mut other = v.clone();
            other[a] = usize::MAX;
            if !lines.contains(&other) {
                lines.push(other);
            }
        }
        for line in lines {
            let with: Vec<Setting> = grid
                .axes
                .iter()
                .zip(&line)
                .filter(|(_, &i)| i != usize::MAX)
                .map(|(x, &i)| Setting {
                    key: x.key.clone(),
                    value: x.values[i].clone(),
                })
                .collect();
            // (value, cost, swept) of every solved point on the line.
            let mut points: Vec<(f64, f64, bool)> = variants
                .iter()
                .zip(rows)
                .filter(|(v, _)| v.iter().enumerate().all(|(j, &i)| j == a || line[j] == i))
                .filter_map(|(v, r)| {
                    let value: f64 = axis.values[v[a]].parse().ok()?;
                    let f = r.figures.as_ref()?;
                    Some((value, f.term_usd.unwrap_or(f.total_cost_usd), true))
                })
                .collect();
            for b in break_evens
                .iter()
                .filter(|b| b.key == axis.key && b.with == with)
            {
                for p in &b.probes {
                    let (Ok(value), Some(cost)) = (p.value.parse::<f64>(), p.total_cost_usd) else {
                        continue;
                    };
                    // A bisection's cost is the horizon's; with a term the
                    // swept rows' term costs are not comparable to it.
                    if rows
                        .iter()
                        .any(|r| r.figures.as_ref().is_some_and(|f| f.term_usd.is_some()))
                    {
                        continue;
                    }
                    points.push((value, cost, false));
                }
            }
            points.sort_by(|x, y| x.0.total_cmp(&y.0));
            points.dedup_by(|x, y| x.0 == y.0);
            for pair in points.windows(2) {
                let ((lo, lo_cost, lo_swept), (hi, hi_cost, hi_swept)) = (pair[0], pair[1]);
                let tolerance = gap * lo_cost.max(hi_cost);
                let wrong = match direction {
                    Direction::NotDown => hi_cost < lo_cost - tolerance,
                    Direction::NotUp => hi_cost > lo_cost + tolerance,
                };
                if wrong {
                    out.push(Violation {
                        key: axis.key.clone(),
                        with: with.clone(),
                        direction,
                        low_value: lo,
                        high_value: hi,
                        low_cost_usd: lo_cost,
                        high_cost_usd: hi_cost,
                        low_swept: lo_swept,
                        high_swept: hi_swept,
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
    use crate::sweep::row::Figures;
    use std::collections::BTreeMap;

    fn row(key: &str, value: &str, cost: f64) -> SweepRow {
        SweepRow {
            settings: vec![Setting {
                key: key.into(),
                value: value.into(),
            }],
            figures: Some(Figures {
                total_cost_usd: cost,
                cost_per_month_usd: cost,
                commitment_usd_per_year: 0.0,
                reserved: BTreeMap::new(),
                peak_on_demand: BTreeMap::new(),
                api_share: 0.0,
                usd_per_million_tokens: 0.0,
                tiers: BTreeMap::new(),
                missed_targets: Vec::new(),
                term_usd: None,
            }),
            error: None,
        }
    }

    fn sweep(key: &str, costs: &[(&str, f64)], gap: f64) -> Vec<Violation> {
        let values: Vec<&str> = costs.iter().map(|c| c.0).collect();
        let grid = Grid::parse(&[format!("{key}={}", values.join(","))], false).unwrap();
        let variants = grid.variants();
        let rows: Vec<SweepRow> = costs.iter().map(|&(v, c)| row(key, v, c)).collect();
        check(&grid, &variants, &rows, &[], gap)
    }

    #[test]
    fn a_price_up_that_lowers_the_cost_beyond_the_gap_is_flagged() {
        let key = "api.usd_per_million_input_tokens";
        let v = sweep(key, &[("0.6", 100.0), ("0.8", 104.0), ("1.0", 99.0)], 0.01);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!((v[0].low_value, v[0].high_value), (0.8, 1.0));
        assert!(v[0].low_swept && v[0].high_swept);
        // Within the solver's gap it is the solver's tolerance.
        assert!(sweep(key, &[("0.6", 100.0), ("0.8", 99.5)], 0.01).is_empty());
    }

    #[test]
    fn a_looser_limit_that_raises_the_cost_is_flagged() {
        let v = sweep("tiers[0].ttft_ms", &[("400", 100.0), ("450", 103.0)], 0.01);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].direction, Direction::NotUp);
        assert!(sweep("tiers[0].ttft_ms", &[("400", 103.0), ("450", 100.0)], 0.01).is_empty());
        assert!(sweep("simulation.seed", &[("1", 100.0), ("2", 50.0)], 0.01).is_empty());
    }

    #[test]
    fn keys_imply_their_direction() {
        assert_eq!(
            Direction::of("api.usd_per_million_input_tokens"),
            Some(Direction::NotDown)
        );
        assert_eq!(Direction::of("demand[1].scale"), Some(Direction::NotDown));
        assert_eq!(Direction::of("tiers[0].ttft_ms"), Some(Direction::NotUp));
        assert_eq!(Direction::of("gpus[3].max_gpus"), Some(Direction::NotUp));
        assert_eq!(
            Direction::of("commitment.monthly_growth"),
            Some(Direction::NotDown)
        );
        assert_eq!(
            Direction::of("commitment.price_decline_per_year"),
            Some(Direction::NotUp)
        );
        assert_eq!(Direction::of("simulation.seed"), None);
        assert_eq!(Direction::of("shape.scale"), None);
    }

    #[test]
    fn a_break_even_is_flagged_by_a_violation_inside_its_swept_interval_on_its_line() {
        use crate::sweep::row::Decision;
        let decision = Decision::ApiMost("standard".into());
        let held = |v: &str| {
            vec![Setting {
                key: "api.usd_per_million_input_tokens".into(),
                value: v.into(),
            }]
        };
        let b = BreakEven {
            key: "gpus[1].reserved_usd_per_gpu_hour".into(),
            with: held("1"),
            below: decision.describe(true),
            above: decision.describe(false),
            decision,
            low: 1.3,
            high: 1.4,
            swept_low: 1.21,
            swept_high: 1.6,
            low_cost_usd: 159.2,
            high_cost_usd: 122.76,
            low_meets_targets: true,
            high_meets_targets: true,
            probes: Vec::new(),
            direction_check_broken: false,
        };
        let violation = |low_value: f64, high_value: f64, with: Vec<Setting>| Violation {
            key: b.key.clone(),
            with,
            direction: Direction::NotDown,
            low_value,
            high_value,
            low_cost_usd: 159.2,
            high_cost_usd: 122.76,
            low_swept: false,
            high_swept: false,
        };
        let flagged = |violations: &[Violation]| {
            let mut one = [b.clone()];
            flag(&mut one, violations);
            one[0].direction_check_broken
        };
        assert!(!flagged(&[]));
        assert!(flagged(&[violation(1.3, 1.4, held("1"))]));
        assert!(flagged(&[violation(1.21, 1.3, held("1"))]));
        // Another line (the other key held elsewhere), or beyond the interval.
        assert!(!flagged(&[violation(1.3, 1.4, held("2"))]));
        assert!(!flagged(&[violation(1.6, 2.0, held("1"))]));
        assert!(!flagged(&[violation(0.9, 1.21, held("1"))]));
    }
}
