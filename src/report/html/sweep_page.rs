//! `planner sweep --format html`: total cost against each numeric swept
//! value, with the break-evens marked, and the rows as a table.

use super::page::{card, page, table};
use super::svg::{esc, legend, nice_ticks, tick_label, Frame};
use crate::report::{significant, usd};
use crate::sweep::Sweep;
use std::fmt::Write as _;

/// Most lines one chart draws (one per combination of the other keys).
const MAX_SERIES: usize = 6;

/// A swept key in words, with its unit and the key itself:
/// `api.usd_per_million_input_tokens` → "API input price, USD per million
/// tokens (api.usd_per_million_input_tokens)".
pub(crate) fn axis_title(key: &str) -> String {
    let field = key.rsplit_once('.').map_or(key, |(_, f)| f);
    let words = match field {
        "usd_per_million_input_tokens" => "API input price, USD per million tokens".to_string(),
        "usd_per_million_output_tokens" => "API output price, USD per million tokens".to_string(),
        "on_demand_usd_per_gpu_hour" => "on-demand price, USD per GPU-hour".to_string(),
        "reserved_usd_per_gpu_hour" => "reserved price, USD per GPU-hour".to_string(),
        "ttft_ms" => "TTFT limit, ms".to_string(),
        "tpot_ms" => "TPOT limit, ms".to_string(),
        "percentile" => "attainment target, percentile".to_string(),
        "scale" => "demand, × the trace's rate".to_string(),
        "monthly_growth" => "demand growth, share per month".to_string(),
        "term_months" => "commitment term, months".to_string(),
        "max_gpus" => "GPU quota, GPUs".to_string(),
        other => {
            let units = [
                ("_usd_per_gpu_hour", ", USD per GPU-hour"),
                ("_ms", ", ms"),
                ("_s", ", s"),
                ("_hours", ", hours"),
                ("_minutes", ", minutes"),
                ("_tokens", ", tokens"),
            ];
            let (stem, unit) = units
                .iter()
                .find_map(|(suffix, unit)| other.strip_suffix(suffix).map(|s| (s, *unit)))
                .unwrap_or((other, ""));
            format!("{}{unit}", stem.replace('_', " "))
        }
    };
    format!("{words} ({key})")
}

/// The chart class of a break-even: established, or flagged by the
/// direction check.
fn break_even_class(b: &crate::sweep::breakeven::BreakEven) -> &'static str {
    if b.direction_check_broken {
        "breakeven unsettled"
    } else {
        "breakeven"
    }
}

/// The break-evens as a list: one bullet per decision, its break-evens
/// (one per line of the other keys' values) under it; one not established
/// marked as a miss.
fn break_even_list(breaks: &[crate::sweep::breakeven::BreakEven]) -> String {
    let mut o = String::from("<ul>");
    let mut decisions: Vec<(&str, &crate::sweep::row::Decision)> = Vec::new();
    for b in breaks {
        if !decisions.contains(&(b.key.as_str(), &b.decision)) {
            decisions.push((b.key.as_str(), &b.decision));
        }
    }
    for (key, decision) in decisions {
        let these: Vec<&crate::sweep::breakeven::BreakEven> = breaks
            .iter()
            .filter(|b| b.key == key && &b.decision == decision)
            .collect();
        let sentences: Vec<String> = these
            .iter()
            .map(|b| {
                let class = if b.direction_check_broken {
                    " class=\"miss\""
                } else {
                    ""
                };
                format!(
                    "<li{class}>{}</li>",
                    esc(&crate::report::sweep_text::sentence(b))
                )
            })
            .collect();
        if let [one] = sentences.as_slice() {
            o.push_str(one);
        } else {
            let _ = write!(
                o,
                "<li>{} along {} ({} lines of the other keys)<ul>{}</ul></li>",
                esc(&decision.describe(true)),
                esc(key),
                these.len(),
                sentences.join("")
            );
        }
    }
    o.push_str("</ul>");
    o
}

fn axis_chart(s: &Sweep, a: usize) -> String {
    let axis = &s.axes[a];
    let value = |v: &str| v.parse::<f64>().unwrap_or(f64::NAN);
    // One series per combination of the other axes' values.
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for row in &s.rows {
        let others: Vec<String> = row
            .settings
            .iter()
            .enumerate()
            .filter(|&(b, _)| b != a)
            .map(|(_, x)| format!("{}={}", x.key, x.value))
            .collect();
        let name = if others.is_empty() {
            "total cost".to_string()
        } else {
            others.join(", ")
        };
        let Some(f) = &row.figures else { continue };
        let point = (value(&row.settings[a].value), f.total_cost_usd);
        match series.iter_mut().find(|(n, _)| *n == name) {
            Some((_, points)) => points.push(point),
            None => series.push((name, vec![point])),
        }
    }
    // Every solve is drawn: the bisection's too, on the line of the other
    // keys' values it held (where the cost may step the wrong way).
    let mut probes: Vec<(f64, f64)> = Vec::new();
    for b in s.break_evens.iter().filter(|b| b.key == axis.key) {
        let name = if b.with.is_empty() {
            "total cost".to_string()
        } else {
            b.with
                .iter()
                .map(|x| format!("{}={}", x.key, x.value))
                .collect::<Vec<_>>()
                .join(", ")
        };
        for probe in &b.probes {
            let Some(cost) = probe.total_cost_usd else {
                continue;
            };
            let point = (value(&probe.value), cost);
            probes.push(point);
            if let Some((_, points)) = series.iter_mut().find(|(n, _)| *n == name) {
                points.push(point);
            }
        }
    }
    let drawn = series.len().min(MAX_SERIES);
    for (_, points) in &mut series {
        points.sort_by(|p, q| p.0.total_cmp(&q.0));
    }
    let xs: Vec<f64> = axis.values.iter().map(|v| value(v)).collect();
    let (x_lo, x_hi) = (
        xs.iter().copied().fold(f64::INFINITY, f64::min),
        xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    let costs: Vec<f64> = series
        .iter()
        .take(drawn)
        .flat_map(|(_, p)| p.iter().map(|q| q.1))
        .collect();
    let c_hi = costs.iter().copied().fold(0.0, f64::max);
    // From zero: a cost axis that starts above it makes a 2% change look
    // like a doubling.
    let y = (0.0, c_hi * 1.08);
    let x_pad = (x_hi - x_lo) * 0.03;
    let frame = Frame::new(1100.0, 340.0, (x_lo - x_pad, x_hi + x_pad), y).with_left_margin(78.0);
    let x_ticks: Vec<(f64, String)> = xs.iter().map(|&x| (x, tick_label(x))).collect();
    let mut o = frame.open(
        &format!("sweep-{a}"),
        &format!("Total cost against {}", axis_title(&axis.key)),
    );
    o.push_str(&frame.axes(
        &x_ticks,
        &nice_ticks(y.0, y.1, 6),
        &axis_title(&axis.key),
        "total cost over the horizon, USD",
    ));
    for b in s.break_evens.iter().filter(|b| b.key == axis.key) {
        o.push_str(&frame.band(b.low, b.high, break_even_class(b)));
    }
    for (i, (_, points)) in series.iter().take(drawn).enumerate() {
        o.push_str(&frame.line(points, &format!("series{i}"), true));
    }
    if !probes.is_empty() {
        probes.sort_by(|p, q| p.0.total_cmp(&q.0));
        o.push_str(&frame.line(&probes, "probe", true));
    }
    let mut labelled = Vec::new();
    for b in s.break_evens.iter().filter(|b| b.key == axis.key) {
        let mid = f64::midpoint(b.low, b.high);
        if !labelled
            .iter()
            .any(|&m: &f64| (m - mid).abs() < (x_hi - x_lo) * 0.08)
        {
            let what = if b.direction_check_broken {
                "not established"
            } else {
                "break-even"
            };
            o.push_str(&frame.vertical(
                mid,
                break_even_class(b),
                &format!("{what} {}–{}", tick_label(b.low), tick_label(b.high)),
                false,
            ));
            labelled.push(mid);
        }
    }
    o.push_str("</svg>");
    let classes: Vec<String> = (0..drawn).map(|i| format!("series{i}")).collect();
    let mut entries: Vec<(&str, &str)> = series
        .iter()
        .take(drawn)
        .zip(&classes)
        .map(|((name, _), class)| (class.as_str(), name.as_str()))
        .collect();
    let on_axis = || s.break_evens.iter().filter(|b| b.key == axis.key);
    if on_axis().any(|b| !b.direction_check_broken) {
        entries.push((
            "breakeven",
            "break-even interval (a decision changes inside it)",
        ));
    }
    if on_axis().any(|b| b.direction_check_broken) {
        entries.push((
            "breakeven unsettled",
            "not established: the direction check flags a cost near it",
        ));
    }
    if !probes.is_empty() {
        entries.push(("probe", "bisection solve"));
    }
    o.push_str(&legend(&entries));
    if series.len() > drawn {
        let _ = write!(o, "<p class=\"lead\">{} of {} combinations of the other keys drawn; the table lists all.</p>", drawn, series.len());
    }
    o
}

fn rows_table(s: &Sweep) -> String {
    let mut header: Vec<String> = s.axes.iter().map(|a| a.key.clone()).collect();
    header.extend(
        [
            "total USD",
            "USD / month",
            "commitment USD / yr",
            "reserved",
            "peak rented",
            "API share",
            "USD / 1M tokens",
        ]
        .map(String::from),
    );
    let term = s.has_term();
    if term {
        header.insert(s.axes.len() + 3, "term USD".into());
    }
    for t in &s.tiers {
        header.push(format!("{t} USD / 1M"));
        header.push(format!("{t} met"));
    }
    let gpus = |m| crate::report::sentences::gpu_counts(m, "—");
    let rows: Vec<Vec<String>> = s
        .rows
        .iter()
        .map(|r| {
            let mut cells: Vec<String> = r.settings.iter().map(|x| x.value.clone()).collect();
            match &r.figures {
                Some(f) => {
                    cells.extend([
                        usd(f.total_cost_usd),
                        usd(f.cost_per_month_usd),
                        usd(f.commitment_usd_per_year),
                    ]);
                    if term {
                        cells.push(f.term_usd.map_or("—".into(), usd));
                    }
                    cells.extend([
                        gpus(&f.reserved),
                        gpus(&f.peak_on_demand),
                        format!("{:.1}%", f.api_share * 100.0),
                        significant(f.usd_per_million_tokens, 3),
                    ]);
                    for t in &s.tiers {
                        let x = f.tiers.get(t);
                        cells.push(
                            x.map_or("—".into(), |x| significant(x.usd_per_million_tokens, 3)),
                        );
                        cells.push(
                            x.and_then(|x| x.attainment)
                                .map_or("—".into(), |a| format!("{:.2}%", a * 100.0)),
                        );
                    }
                }
                None => cells.push(format!(
                    "no plan: {}",
                    r.error
                        .as_deref()
                        .unwrap_or("")
                        .lines()
                        .next()
                        .unwrap_or("")
                )),
            }
            cells
        })
        .collect();
    table(&header, &rows, None)
}

/// The sweep as a self-contained HTML page.
pub fn render(s: &Sweep) -> String {
    let mut body = String::from("<div class=\"cards\">");
    let solved: Vec<&crate::sweep::row::Figures> =
        s.rows.iter().filter_map(|r| r.figures.as_ref()).collect();
    let (lo, hi) = solved.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), f| {
        (lo.min(f.total_cost_usd), hi.max(f.total_cost_usd))
    });
    body.push_str(&card(
        "Variants",
        &s.rows.len().to_string(),
        &format!("{} solved", solved.len()),
    ));
    if !solved.is_empty() {
        body.push_str(&card(
            "Total cost range",
            &format!("{}–{} USD", usd(lo), usd(hi)),
            "over the horizon, across variants",
        ));
    }
    body.push_str(&card(
        "Break-evens",
        &s.break_evens.len().to_string(),
        "decisions that change between swept values",
    ));
    body.push_str("</div>");
    for (a, axis) in s.axes.iter().enumerate() {
        if !axis.numeric() || axis.values.len() < 2 {
            continue;
        }
        let _ = write!(
            body,
            "<section><h2>Total cost against {}</h2>{}</section>",
            esc(&axis_title(&axis.key)),
            axis_chart(s, a)
        );
    }
    body.push_str("<section><h2>Break-even points</h2>");
    if s.break_evens.is_empty() {
        body.push_str("<p class=\"lead\">Between neighbouring swept values no tier starts or stops using the API (1%) or sending it most (50%) of its requests, and no GPU type starts or stops being reserved (counts may still change: see the variants).</p>");
    } else {
        body.push_str(&break_even_list(&s.break_evens));
    }
    body.push_str("</section>");
    if !s.directions.is_empty() {
        body.push_str("<section><h2>Direction check</h2><ul>");
        for (key, d) in &s.directions {
            let found: Vec<String> = s
                .direction_violations
                .iter()
                .filter(|v| &v.key == key)
                .map(|v| esc(&crate::report::sweep_text::violation_sentence(v)))
                .collect();
            if found.is_empty() {
                let _ = write!(
                    body,
                    "<li>{}: {}: holds at every solved value</li>",
                    esc(key),
                    d.words()
                );
            } else {
                let _ = write!(
                    body,
                    "<li class=\"miss\"><strong>{}: {}: broken</strong><ul><li>{}</li></ul></li>",
                    esc(key),
                    d.words(),
                    found.join("</li><li>")
                );
            }
        }
        body.push_str("</ul></section>");
    }
    let _ = write!(
        body,
        "<section><h2>Variants</h2>{}</section>",
        rows_table(s)
    );
    let keys: Vec<&str> = s.axes.iter().map(|a| a.key.as_str()).collect();
    page(
        &format!("Sweep — {}", s.scenario),
        &format!("{} variants of {}", s.rows.len(), keys.join(" × ")),
        &body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::breakeven::BreakEven;
    use crate::sweep::row::{Decision, Setting};

    fn break_even(with: &str, broken: bool) -> BreakEven {
        BreakEven {
            key: "api.usd_per_million_input_tokens".into(),
            with: vec![Setting {
                key: "demand[1].scale".into(),
                value: with.into(),
            }],
            decision: Decision::ApiAny("standard".into()),
            below: "`standard` sends 1% or more of its requests to the API".into(),
            above: "`standard` sends less than 1% of its requests to the API".into(),
            low: 0.7,
            high: 0.8,
            swept_low: 0.6,
            swept_high: 1.0,
            low_cost_usd: 100.0,
            high_cost_usd: 101.0,
            low_meets_targets: true,
            high_meets_targets: true,
            probes: Vec::new(),
            direction_check_broken: broken,
        }
    }

    #[test]
    fn one_bullet_per_decision_with_a_break_even_not_established_marked() {
        let list = break_even_list(&[break_even("2", false), break_even("3", true)]);
        assert_eq!(list.matches("<li>").count(), 2, "{list}");
        assert!(list.contains("(2 lines of the other keys)"), "{list}");
        assert_eq!(list.matches("<li class=\"miss\">").count(), 1, "{list}");
        assert!(list.contains("NOT ESTABLISHED"), "{list}");
        let single = break_even_list(&[break_even("2", false)]);
        assert_eq!(single.matches("<li").count(), 1, "{single}");
        assert_eq!(
            break_even_class(&break_even("2", true)),
            "breakeven unsettled"
        );
        assert_eq!(break_even_class(&break_even("2", false)), "breakeven");
    }
}
