//! `planner sweep --format csv`: one line per variant, one column per swept
//! key and per figure.

use super::csv::{line, number};
use crate::sweep::Sweep;

/// The direction violations a row is an end of: `KEY LOW->HIGH`, joined by
/// `; ` (empty when none).
fn flags(s: &Sweep, row: &crate::sweep::row::SweepRow) -> String {
    let mine = |key: &str, value: f64, swept: bool| {
        swept
            && row.settings.iter().all(|x| {
                if x.key == key {
                    x.value.parse::<f64>().ok() == Some(value)
                } else {
                    true
                }
            })
    };
    s.direction_violations
        .iter()
        .filter(|v| {
            v.with.iter().all(|w| {
                row.settings
                    .iter()
                    .any(|x| x.key == w.key && x.value == w.value)
            }) && (mine(&v.key, v.low_value, v.low_swept)
                || mine(&v.key, v.high_value, v.high_swept))
        })
        .map(|v| format!("{} {}->{}", v.key, v.low_value, v.high_value))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The sweep as CSV.
pub fn render(s: &Sweep) -> String {
    let mut header: Vec<String> = s.axes.iter().map(|a| a.key.clone()).collect();
    header.extend(
        [
            "total_cost_usd",
            "cost_per_month_usd",
            "commitment_usd_per_year",
        ]
        .map(String::from),
    );
    let term = s.has_term();
    if term {
        header.push("term_usd".into());
    }
    for g in &s.gpu_types {
        header.push(format!("reserved_{g}"));
    }
    for g in &s.gpu_types {
        header.push(format!("peak_on_demand_{g}"));
    }
    header.push("api_share".into());
    header.push("usd_per_million_tokens".into());
    for t in &s.tiers {
        header.push(format!("{t}_api_share"));
        header.push(format!("{t}_usd_per_million_tokens"));
        header.push(format!("{t}_usd_per_million_output_tokens"));
        header.push(format!("{t}_attainment"));
    }
    header.push("direction_violation".into());
    header.push("error".into());
    let mut out = line(&header);
    for row in &s.rows {
        let mut cells: Vec<String> = row.settings.iter().map(|x| x.value.clone()).collect();
        if let Some(f) = &row.figures {
            cells.push(number(f.total_cost_usd));
            cells.push(number(f.cost_per_month_usd));
            cells.push(number(f.commitment_usd_per_year));
            if term {
                cells.push(f.term_usd.map_or(String::new(), number));
            }
            for g in &s.gpu_types {
                cells.push(f.reserved.get(g).copied().unwrap_or(0).to_string());
            }
            for g in &s.gpu_types {
                cells.push(f.peak_on_demand.get(g).copied().unwrap_or(0).to_string());
            }
            cells.push(number(f.api_share));
            cells.push(number(f.usd_per_million_tokens));
            for t in &s.tiers {
                match f.tiers.get(t) {
                    Some(x) => {
                        cells.push(number(x.api_share));
                        cells.push(number(x.usd_per_million_tokens));
                        cells.push(number(x.usd_per_million_output_tokens));
                        cells.push(x.attainment.map_or(String::new(), number));
                    }
                    None => cells.extend(std::iter::repeat_n(String::new(), 4)),
                }
            }
            cells.push(flags(s, row));
            cells.push(String::new());
        } else {
            let blanks = header.len() - cells.len() - 1;
            cells.extend(std::iter::repeat_n(String::new(), blanks));
            cells.push(row.error.clone().unwrap_or_default());
        }
        out.push_str(&line(&cells));
    }
    out
}
