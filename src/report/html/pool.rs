//! The HTML section of a pooled fleet (`[[models]]`): the GPUs each model
//! holds slot by slot, stacked, against the reserved pool, and the table of
//! each model's share beside its plan alone ([`crate::money::pool`]).

use super::page::table;
use super::svg::{esc, legend, nice_ticks, Frame};
use crate::base::numbers::usd;
use crate::money::pool::Pool;
use crate::solve::Outcome;
use std::fmt::Write as _;

/// The section, or nothing for a plan of one model.
pub(crate) fn section(outcome: &Outcome) -> String {
    let Some(pool) = &outcome.purchase.pool else {
        return String::new();
    };
    let plan = &outcome.plan;
    let n = plan.solver.slots;
    // GPUs each model holds per slot, all types together, stacked in the
    // models' order.
    let mut lower = vec![0.0; n];
    let mut bands = Vec::new();
    for (i, m) in pool.models.keys().enumerate() {
        let upper: Vec<f64> = lower
            .iter()
            .zip(pool.gpus_of(m, n))
            .map(|(lo, g)| lo + f64::from(g))
            .collect();
        bands.push((i, m.clone(), lower.clone(), upper.clone()));
        lower = upper;
    }
    let reserved: f64 = plan.reserved.values().map(|&v| f64::from(v)).sum();
    let top = lower.iter().copied().fold(reserved, f64::max).max(1.0) * 1.1;
    let frame = Frame::new(1100.0, 300.0, (0.0, n as f64), (0.0, top));
    let x_ticks: Vec<(f64, String)> = (0..=n)
        .step_by((n / 12).max(1))
        .map(|t| (t as f64, format!("{:.0}", t as f64 * plan.slot_hours)))
        .collect();
    let mut chart = frame.open("pool", "GPUs each model holds per slot");
    chart.push_str(&frame.axes(
        &x_ticks,
        &nice_ticks(0.0, top, 6),
        "hours from the horizon's start",
        "GPUs (all types)",
    ));
    let classes: Vec<String> = (0..bands.len())
        .map(|i| format!("model{}", i % 6))
        .collect();
    for (i, _, lo, hi) in &bands {
        chart.push_str(&frame.step_band(0.0, lo, hi, &classes[*i]));
    }
    chart.push_str(&frame.horizontal(reserved, "reserved-line", "reserved"));
    chart.push_str("</svg>");
    let entries: Vec<(&str, &str)> = bands
        .iter()
        .map(|(i, m, _, _)| (classes[*i].as_str(), m.as_str()))
        .collect();
    chart.push_str(&legend(&entries));
    let mut o = String::from("<section><h2>The pool by model</h2>");
    let _ = write!(o, "<p class=\"lead\">{}</p>", esc(&lead(pool)));
    o.push_str(&chart);
    o.push_str(&share_table(pool));
    o.push_str("</section>");
    o
}

/// What pooling saves and where the models meet, in words.
fn lead(pool: &Pool) -> String {
    format!(
        "The pooled plan costs {} USD over the horizon; {}. {} GPUs switch model over the horizon; each serves nothing while its model loads.",
        usd(pool.pooled_usd),
        crate::report::pool_text::saving_sentence(pool),
        pool.gpus_switched
    )
}

/// One row per model: its tiers, cost and share, GPU-hours, cost per 1M
/// tokens, API share and its plan alone.
fn share_table(pool: &Pool) -> String {
    let header: Vec<String> = [
        "model",
        "tiers",
        "cost USD",
        "share of cost",
        "GPU-hours",
        "USD / 1M in+out",
        "to its API",
        "alone USD",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = pool
        .models
        .iter()
        .map(|(m, s)| {
            vec![
                m.clone(),
                s.tiers.join(", "),
                usd(s.cost_usd),
                format!(
                    "{:.1}%",
                    if pool.pooled_usd > 0.0 {
                        s.cost_usd / pool.pooled_usd * 100.0
                    } else {
                        0.0
                    }
                ),
                format!("{:.1}", s.gpu_hours),
                format!("{:.3}", s.usd_per_million_tokens),
                if s.has_api {
                    format!("{:.1}%", s.api_share * 100.0)
                } else {
                    "no API offer".into()
                },
                s.alone_usd.map_or("—".into(), usd),
            ]
        })
        .collect();
    table(&header, &rows, None)
}
