//! `planner sweep` as text: one row per variant, then the break-evens.

use super::sentences::gpu_counts;
use super::{significant, usd};
use crate::sweep::{BreakEven, Sweep};
use std::fmt::Write as _;

fn percent(v: Option<f64>) -> String {
    v.map_or("—".into(), |v| format!("{:.1}%", v * 100.0))
}

/// The sweep as aligned text.
pub fn render(s: &Sweep) -> String {
    let mut o = String::new();
    let keys: Vec<&str> = s.axes.iter().map(|a| a.key.as_str()).collect();
    let _ = writeln!(
        o,
        "planner sweep — scenario `{}`: {} variant{} of {}",
        s.scenario,
        s.rows.len(),
        if s.rows.len() == 1 { "" } else { "s" },
        keys.join(" × ")
    );
    if !s.fixed.is_empty() {
        let fixed: Vec<String> = s
            .fixed
            .iter()
            .map(|f| format!("{}={}", f.key, f.value))
            .collect();
        let _ = writeln!(o, "every variant also sets {}", fixed.join(", "));
    }
    let _ = writeln!(o);
    // Columns: each swept key, then the figures.
    let mut header: Vec<String> = keys.iter().map(std::string::ToString::to_string).collect();
    header.extend(
        [
            "total USD",
            "USD/month",
            "commit USD/yr",
            "reserved",
            "peak rented",
            "API",
            "USD/1M tok",
        ]
        .map(String::from),
    );
    let term = s.has_term();
    if term {
        header.insert(keys.len() + 3, "term USD".into());
    }
    for t in &s.tiers {
        header.push(format!("{t} USD/1M"));
        header.push(format!("{t} met"));
    }
    let mut table: Vec<Vec<String>> = vec![header];
    for row in &s.rows {
        let mut cells: Vec<String> = row.settings.iter().map(|x| x.value.clone()).collect();
        match (&row.figures, &row.error) {
            (Some(f), _) => {
                cells.push(usd(f.total_cost_usd));
                cells.push(usd(f.cost_per_month_usd));
                cells.push(usd(f.commitment_usd_per_year));
                if term {
                    cells.push(f.term_usd.map_or("—".into(), usd));
                }
                cells.push(gpu_counts(&f.reserved, "—"));
                cells.push(gpu_counts(&f.peak_on_demand, "—"));
                cells.push(percent(Some(f.api_share)));
                cells.push(significant(f.usd_per_million_tokens, 3));
                for t in &s.tiers {
                    let tier = f.tiers.get(t);
                    cells.push(
                        tier.map_or("—".into(), |x| significant(x.usd_per_million_tokens, 3)),
                    );
                    cells.push(tier.map_or("—".into(), |x| {
                        let mark = if x.meets_target == Some(false) {
                            " MISS"
                        } else {
                            ""
                        };
                        format!("{}{mark}", percent(x.attainment))
                    }));
                }
            }
            (None, error) => {
                let reason = error.as_deref().unwrap_or("no plan");
                let first = reason.lines().next().unwrap_or(reason);
                cells.push(format!("no plan: {first}"));
            }
        }
        table.push(cells);
    }
    let columns = table.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            table
                .iter()
                .filter(|r| r.len() > c && r.len() == columns)
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in &table {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                if r.len() < columns && c + 1 == r.len() {
                    cell.clone()
                } else if c < keys.len() || c == keys.len() + 3 || c == keys.len() + 4 {
                    format!("{cell:<w$}", w = widths[c])
                } else {
                    format!("{cell:>w$}", w = widths[c])
                }
            })
            .collect();
        let _ = writeln!(o, "  {}", cells.join("  ").trim_end());
    }
    let _ = writeln!(
        o,
        "  USD/1M tok: cost per 1M input + output tokens; peak rented: most on-demand GPUs in any slot; met: replayed attainment of both limits (— when none ran on a GPU)"
    );
    let _ = writeln!(o);
    render_break_evens(&mut o, s);
    render_directions(&mut o, s);
    o
}

fn render_directions(o: &mut String, s: &Sweep) {
    if s.directions.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nDIRECTION CHECK (each swept key's cost may move one way only; a move the other way beyond the solver's {}% gap is flagged)",
        crate::base::numbers::significant(s.mip_gap * 100.0, 3)
    );
    for (key, d) in &s.directions {
        let found: Vec<String> = s
            .direction_violations
            .iter()
            .filter(|v| &v.key == key)
            .map(violation_sentence)
            .collect();
        if found.is_empty() {
            let _ = writeln!(o, "  {key}: {}: holds at every solved value", d.words());
        } else {
            let _ = writeln!(o, "  {key}: {}: BROKEN", d.words());
            for f in found {
                let _ = writeln!(o, "    {f}");
            }
        }
    }
}

/// The other axes' settings of a row, `key=value, key=value`.
fn settings(with: &[crate::sweep::row::Setting]) -> String {
    let w: Vec<String> = with
        .iter()
        .map(|x| format!("{}={}", x.key, x.value))
        .collect();
    w.join(", ")
}

/// One direction violation in words.
pub fn violation_sentence(v: &crate::sweep::direction::Violation) -> String {
    let end = |value: f64, swept: bool| {
        if swept {
            format!("{value}")
        } else {
            format!("{value} (a bisection's solve)")
        }
    };
    let with = if v.with.is_empty() {
        String::new()
    } else {
        format!(" with {}", settings(&v.with))
    };
    format!(
        "{} costs {} USD, {} costs {} USD ({:+.1}%){with}: one of these plans is not the cheapest that meets; solve each on its own, or over several seeds, before reading this step",
        end(v.low_value, v.low_swept),
        crate::base::numbers::usd(v.low_cost_usd),
        end(v.high_value, v.high_swept),
        crate::base::numbers::usd(v.high_cost_usd),
        (v.high_cost_usd / v.low_cost_usd - 1.0) * 100.0
    )
}

fn render_break_evens(o: &mut String, s: &Sweep) {
    let _ = writeln!(
        o,
        "BREAK-EVEN (where a decision changes between neighbouring swept values, {})",
        if s.bisect_steps > 0 {
            "narrowed by bisection"
        } else {
            "not narrowed: --bisect 0"
        }
    );
    if s.break_evens.is_empty() {
        let numeric = s.axes.iter().any(|a| a.numeric() && a.values.len() > 1);
        let _ = writeln!(
            o,
            "  none: {}",
            if numeric {
                "between neighbouring values no tier starts or stops using the API (1%) or sending it most (50%) of its requests, and no GPU type starts or stops being reserved (counts may still change: see the reserved column)"
            } else {
                "no swept key has two or more numeric values"
            }
        );
        return;
    }
    for b in &s.break_evens {
        let _ = writeln!(o, "  {}", sentence(b));
    }
}

/// One break-even in words.
pub fn sentence(b: &BreakEven) -> String {
    let with = if b.with.is_empty() {
        String::new()
    } else {
        format!(" (with {})", settings(&b.with))
    };
    let narrowed = if b.probes.is_empty() {
        "between the swept values".to_string()
    } else {
        format!(
            "{} bisection solve{} from {}–{}",
            b.probes.len(),
            if b.probes.len() == 1 { "" } else { "s" },
            b.swept_low,
            b.swept_high
        )
    };
    let miss = |meets: bool| {
        if meets {
            ""
        } else {
            "; its replay misses a target"
        }
    };
    let between = format!("between {} and {} ({narrowed})", b.low, b.high);
    let (lead, between) = if b.direction_check_broken {
        (
            ": NOT ESTABLISHED",
            format!(
                "its solves change the decision {between}, but the direction check below flags costs between {} and {}: a plan there is not the cheapest the planner can find, so the decision may change elsewhere",
                b.swept_low, b.swept_high
            ),
        )
    } else {
        ("", between)
    };
    format!(
        "{}{with}{lead}: {between}. At {}: {} ({} USD{}); at {}: {} ({} USD{})",
        b.key,
        b.low,
        b.below,
        usd(b.low_cost_usd),
        miss(b.low_meets_targets),
        b.high,
        b.above,
        usd(b.high_cost_usd),
        miss(b.high_meets_targets)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::row::Decision;

    #[test]
    fn a_break_even_says_when_a_plan_at_its_ends_misses() {
        let decision = Decision::ApiMost("standard".into());
        let mut b = BreakEven {
            key: "demand[1].scale".into(),
            with: Vec::new(),
            below: decision.describe(true),
            above: decision.describe(false),
            decision,
            low: 2.8,
            high: 2.9,
            swept_low: 2.0,
            swept_high: 3.0,
            low_cost_usd: 7_999.0,
            high_cost_usd: 7_745.0,
            low_meets_targets: true,
            high_meets_targets: true,
            probes: Vec::new(),
            direction_check_broken: false,
        };
        assert!(!sentence(&b).contains("misses"), "{}", sentence(&b));
        b.high_meets_targets = false;
        let text = sentence(&b);
        assert!(
            text.ends_with("(7,745 USD; its replay misses a target)"),
            "{text}"
        );
        assert_eq!(text.matches("misses").count(), 1, "{text}");
        assert!(!text.contains("NOT ESTABLISHED"), "{text}");
        b.direction_check_broken = true;
        let text = sentence(&b);
        assert!(
            text.starts_with("demand[1].scale: NOT ESTABLISHED: its solves change the decision between 2.8 and 2.9 (between the swept values), but the direction check below flags costs between 2 and 3:"),
            "{text}"
        );
    }
}
