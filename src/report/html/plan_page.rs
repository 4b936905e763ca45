//! `planner solve --format html`: the plan as one page with its charts.

use super::page::{card, page, table};
use super::svg::{bars, esc, legend, log_ticks, nice_ticks, tick_label, Frame};
use crate::base::numbers::{group_thousands, usd};
use crate::money::schedule::Slot;
use crate::replay::verification::QuantileMs;
use crate::solve::Outcome;
use std::fmt::Write as _;

/// x-axis ticks over a horizon: days when it spans two or more, else hours.
fn time_ticks(hours: f64, slot_hours: f64) -> (Vec<(f64, String)>, &'static str) {
    let to_slot = |h: f64| h / slot_hours;
    if hours >= 48.0 {
        let days = (hours / 24.0).round() as usize;
        let ticks = (0..=days)
            .map(|d| (to_slot(d as f64 * 24.0), format!("{d}")))
            .collect();
        (ticks, "day of the horizon")
    } else {
        let ticks = nice_ticks(0.0, hours, 8)
            .into_iter()
            .map(|h| (to_slot(h), tick_label(h)))
            .collect();
        (ticks, "hour of the horizon")
    }
}

fn capacity_chart(outcome: &Outcome, schedule: &[Slot]) -> String {
    let plan = &outcome.plan;
    let n = schedule.len();
    let reserved: Vec<f64> = schedule.iter().map(|s| s.reserved_rps).collect();
    let on_demand: Vec<f64> = schedule
        .iter()
        .map(|s| s.reserved_rps + s.on_demand_rps)
        .collect();
    let spot: Vec<f64> = schedule
        .iter()
        .map(|s| s.reserved_rps + s.on_demand_rps + s.spot_rps)
        .collect();
    let api: Vec<f64> = schedule
        .iter()
        .map(|s| s.reserved_rps + s.on_demand_rps + s.spot_rps + s.api_rps)
        .collect();
    let any_spot = schedule.iter().any(|s| s.spot_rps > 0.0);
    let demand: Vec<f64> = schedule.iter().map(|s| s.demand_rps).collect();
    let top = api.iter().chain(&demand).copied().fold(0.0, f64::max) * 1.08;
    let frame = Frame::new(1100.0, 320.0, (0.0, n as f64), (0.0, top.max(1e-6)));
    let (x_ticks, x_title) = time_ticks(plan.horizon_hours, plan.slot_hours);
    let y_ticks = nice_ticks(0.0, top, 6);
    let zero = vec![0.0; n];
    let mut o = frame.open(
        "capacity",
        "Demand per slot and what carries it, requests/s",
    );
    o.push_str(&frame.axes(&x_ticks, &y_ticks, x_title, "requests/s (all tiers)"));
    o.push_str(&frame.step_band(0.0, &zero, &reserved, "reserved"));
    o.push_str(&frame.step_band(0.0, &reserved, &on_demand, "on-demand"));
    if any_spot {
        o.push_str(&frame.step_band(0.0, &on_demand, &spot, "spot"));
    }
    o.push_str(&frame.step_band(0.0, &spot, &api, "api"));
    o.push_str(&frame.step_line(0.0, &demand, "demand"));
    o.push_str("</svg>");
    let mut entries = vec![
        ("reserved", "reserved GPUs"),
        ("on-demand", "on-demand GPUs"),
    ];
    if any_spot {
        entries.push(("spot", "spot GPUs (expected: requested × yield)"));
    }
    entries.extend([
        ("api", "API"),
        ("demand", "demand (each tier's peak-statistic rate, summed)"),
    ]);
    o.push_str(&legend(&entries));
    o
}

/// GPUs held and in use per slot: the reserved GPUs as a flat band (paid
/// for every hour; its pale part is idle, its dark part runs replicas),
/// on-demand and spot GPUs stacked above it, and the GPUs running replicas
/// as a line. With the idle reserved GPU-hours and their share.
fn gpus_chart(outcome: &Outcome, schedule: &[Slot]) -> (String, f64, f64) {
    let plan = &outcome.plan;
    let n = schedule.len();
    let sum = |m: &std::collections::BTreeMap<String, u32>| {
        m.values().map(|&v| f64::from(v)).sum::<f64>()
    };
    let held: f64 = plan.reserved.values().map(|&v| f64::from(v)).sum();
    let reserved = vec![held; n];
    let busy_reserved: Vec<f64> = schedule
        .iter()
        .map(|s| {
            s.reserved_gpus
                .iter()
                .map(|(g, &r)| f64::from(r.min(s.in_use_gpus.get(g).copied().unwrap_or(0))))
                .sum()
        })
        .collect();
    let on_demand: Vec<f64> = schedule
        .iter()
        .map(|s| held + sum(&s.on_demand_gpus))
        .collect();
    let spot: Vec<f64> = schedule
        .iter()
        .zip(&on_demand)
        .map(|(s, &o)| o + sum(&s.spot_gpus))
        .collect();
    let in_use: Vec<f64> = schedule
        .iter()
        .map(|s| sum(&s.in_use_gpus) + sum(&s.spot_gpus))
        .collect();
    let any_spot = schedule.iter().any(|s| sum(&s.spot_gpus) > 0.0);
    let idle_gpu_hours: f64 = busy_reserved
        .iter()
        .map(|b| (held - b) * plan.slot_hours)
        .sum();
    let reserved_gpu_hours = held * plan.slot_hours * n as f64;
    let top = spot
        .iter()
        .chain(&in_use)
        .copied()
        .fold(held, f64::max)
        .max(1.0)
        * 1.08;
    let frame = Frame::new(1100.0, 300.0, (0.0, n as f64), (0.0, top));
    let (x_ticks, x_title) = time_ticks(plan.horizon_hours, plan.slot_hours);
    let zero = vec![0.0; n];
    let mut o = frame.open("gpus", "GPUs held and in use per slot");
    o.push_str(&frame.axes(
        &x_ticks,
        &nice_ticks(0.0, top, 6),
        x_title,
        "GPUs (all types)",
    ));
    o.push_str(&frame.step_band(0.0, &zero, &reserved, "idle"));
    o.push_str(&frame.step_band(0.0, &zero, &busy_reserved, "reserved"));
    o.push_str(&frame.step_band(0.0, &reserved, &on_demand, "on-demand"));
    if any_spot {
        o.push_str(&frame.step_band(0.0, &on_demand, &spot, "spot"));
    }
    o.push_str(&frame.step_line(0.0, &in_use, "in-use"));
    o.push_str("</svg>");
    let mut entries = vec![
        ("idle", "reserved, idle (paid for)"),
        ("reserved", "reserved, running replicas"),
        ("on-demand", "rented on demand"),
    ];
    if any_spot {
        entries.push(("spot", "spot GPUs requested"));
    }
    entries.push(("in-use", "GPUs running replicas"));
    o.push_str(&legend(&entries));
    (o, idle_gpu_hours, reserved_gpu_hours)
}

/// The growing term month by month: USD per month on reserved GPUs, on
/// demand, spot and the API, stacked.
fn growth_chart(t: &crate::money::growth::TermProjection) -> String {
    let mut by_month: Vec<[f64; 4]> = Vec::new();
    for p in &t.periods {
        for _ in 0..p.period.months {
            by_month.push([
                p.reserved_usd_per_month,
                p.on_demand_usd_per_month,
                p.spot_usd_per_month,
                p.api_usd_per_month,
            ]);
        }
    }
    let n = by_month.len();
    let stacked = |upto: usize| -> Vec<f64> {
        by_month
            .iter()
            .map(|m| m[..upto].iter().sum::<f64>())
            .collect()
    };
    let layers: Vec<Vec<f64>> = (0..=4).map(stacked).collect();
    let top = layers[4].iter().copied().fold(0.0, f64::max).max(1.0) * 1.08;
    let frame = Frame::new(1100.0, 300.0, (0.0, n as f64), (0.0, top)).with_left_margin(78.0);
    let step = (n / 12).max(1);
    let x_ticks: Vec<(f64, String)> = (0..n)
        .step_by(step)
        .map(|m| (m as f64 + 0.5, format!("{}", m + 1)))
        .collect();
    let mut o = frame.open("growth", "Cost per month over the term, USD");
    o.push_str(&frame.axes(
        &x_ticks,
        &nice_ticks(0.0, top, 6),
        "month of the term",
        "USD per month",
    ));
    let classes = ["reserved", "on-demand", "spot", "api"];
    for (i, class) in classes.iter().enumerate() {
        if layers[i + 1] != layers[i] {
            o.push_str(&frame.step_band(0.0, &layers[i], &layers[i + 1], class));
        }
    }
    o.push_str("</svg>");
    let mut entries = vec![("reserved", "reserved GPUs"), ("on-demand", "on demand")];
    if t.spot_usd > 0.0 {
        entries.push(("spot", "spot"));
    }
    entries.push(("api", "API"));
    o.push_str(&legend(&entries));
    o
}

fn cost_chart(outcome: &Outcome) -> String {
    let plan = &outcome.plan;
    let mut rows = vec![
        (
            "reserved GPUs".to_string(),
            plan.costs.reserved_usd,
            "reserved",
        ),
        (
            "on-demand GPUs".to_string(),
            plan.costs.on_demand_usd,
            "on-demand",
        ),
        ("API".to_string(), plan.costs.api_usd, "api"),
    ];
    if plan.costs.spot_usd > 0.0 {
        rows.insert(2, ("spot GPUs".to_string(), plan.costs.spot_usd, "spot"));
    }
    for (tier, u) in &outcome.unit_costs.tiers {
        rows.push((format!("tier {tier}"), u.cost_usd, "alt"));
    }
    bars(
        "cost",
        "Cost over the horizon by source and by tier, USD",
        &rows,
        "USD",
    )
}

fn alternatives_chart(outcome: &Outcome) -> String {
    let plan = &outcome.plan;
    let mut rows = vec![("this plan".to_string(), plan.total_cost_usd, "plan-bar")];
    for (name, b) in &outcome.baselines {
        if let Some(cost) = b.total_cost_usd {
            rows.push((name.clone(), cost, "alt"));
        }
    }
    bars(
        "alternatives",
        "This plan against the simple alternatives, USD over the horizon",
        &rows,
        "USD",
    )
}

/// A latency distribution (share of requests at or below x) against the
/// tier's limit and target percentile.
fn distribution_chart(
    id: &str,
    title: &str,
    points: &[QuantileMs],
    limit_ms: f64,
    target: f64,
    metric: &str,
) -> String {
    let finite: Vec<&QuantileMs> = points
        .iter()
        .filter(|p| p.ms.is_finite() && p.ms > 0.0)
        .collect();
    let lo = finite.iter().map(|p| p.ms).fold(limit_ms, f64::min) * 0.8;
    let hi = finite.iter().map(|p| p.ms).fold(limit_ms, f64::max) * 1.25;
    let frame = Frame::new(540.0, 250.0, (lo, hi), (0.0, 100.0)).with_log_x();
    let x_ticks: Vec<(f64, String)> = log_ticks(lo, hi)
        .into_iter()
        .map(|v| (v, tick_label(v)))
        .collect();
    let mut o = frame.open(id, title);
    o.push_str(&frame.axes(
        &x_ticks,
        &[0.0, 25.0, 50.0, 75.0, 90.0, 100.0],
        &format!("{metric}, ms (log scale)"),
        "% of requests ≤ x",
    ));
    o.push_str(&frame.horizontal(
        target * 100.0,
        "target",
        &format!("target p{}", tick_label(target * 100.0)),
    ));
    o.push_str(&frame.vertical(
        limit_ms,
        "limit",
        &format!("limit {} ms", tick_label(limit_ms)),
        true,
    ));
    let line: Vec<(f64, f64)> = finite.iter().map(|p| (p.ms, p.quantile * 100.0)).collect();
    o.push_str(&frame.line(&line, "series0", true));
    o.push_str("</svg>");
    o
}

fn replay_section(outcome: &Outcome) -> String {
    let Some(v) = &outcome.verification else {
        return String::from("<section><h2>Replay</h2><p class=\"lead\">The replay was switched off (`simulation.verify = \"off\"`).</p></section>");
    };
    let mut o = String::from("<section><h2>Replay: latency distributions against the limits</h2>");
    let _ = write!(
        o,
        "<p class=\"lead\">Trace replay of the plan in the simulator ({}), seed {}: the share of GPU-served requests at or below each TTFT and TPOT, with the tier's limit (dashed) and target percentile (dotted).</p>",
        esc(&v.method),
        v.seed
    );
    if let Some(w) = &outcome.without_api {
        let _ = write!(
            o,
            "<p class=\"lead\">{}.</p>",
            esc(&crate::report::sentences::without_api(w))
        );
    }
    for (name, t) in &v.tiers {
        let slo = &outcome.slo[name];
        let verdict = if t.meets_target {
            format!(
                "attainment {:.2}% (target {:.0}%)",
                t.attainment * 100.0,
                t.target * 100.0
            )
        } else {
            format!(
                "attainment {:.2}%, MISSES its {:.0}% target",
                t.attainment * 100.0,
                t.target * 100.0
            )
        };
        let _ = write!(
            o,
            "<h3>{} — p{} TTFT ≤ {} ms and TPOT ≤ {} ms; <span class=\"{}\">{}</span></h3><div class=\"row\"><div>{}</div><div>{}</div></div>",
            esc(name),
            slo.percentile,
            slo.ttft_ms,
            slo.tpot_ms,
            if t.meets_target { "" } else { "miss" },
            esc(&verdict),
            distribution_chart(&format!("ttft-{name}"), &format!("{name}: TTFT distribution"), &t.ttft_distribution_ms, slo.ttft_ms, t.target, "TTFT"),
            distribution_chart(&format!("tpot-{name}"), &format!("{name}: TPOT distribution"), &t.tpot_distribution_ms, slo.tpot_ms, t.target, "TPOT"),
        );
        if let Some(p) = t.prefix_cache {
            let _ = write!(
                o,
                "<p>Prefix cache: the replicas held {:.1}% of {}'s prompt tokens when its requests were admitted ({} of {} tokens not prefilled, behind the {} router).</p>",
                p.hit_rate * 100.0,
                esc(name),
                group_thousands(p.cached_input_tokens as i64),
                group_thousands(p.input_tokens as i64),
                v.prefix_router.map_or("", |r| r.name())
            );
        }
    }
    o.push_str("</section>");
    o
}

fn unit_cost_table(outcome: &Outcome) -> String {
    let with_api = outcome.prices.any_api();
    let mut header: Vec<String> = [
        "tier",
        "cost USD",
        "USD / 1M in+out",
        "USD / 1M out",
        "USD / 1k out",
    ]
    .map(String::from)
    .to_vec();
    if with_api {
        header.extend(["API USD / 1M in+out", "API USD / 1M out"].map(String::from));
    }
    let fmt = crate::report::unit_costs_text::per_token_usd;
    let row = |name: &str, u: &crate::money::unit_costs::UnitCost| {
        let mut r = vec![
            name.to_string(),
            usd(u.cost_usd),
            fmt(u.usd_per_million_tokens),
            fmt(u.usd_per_million_output_tokens),
            fmt(u.usd_per_1k_output_tokens),
        ];
        if with_api {
            r.push(u.api_usd_per_million_tokens.map_or("—".into(), fmt));
            r.push(u.api_usd_per_million_output_tokens.map_or("—".into(), fmt));
        }
        r
    };
    let mut rows: Vec<Vec<String>> = outcome
        .unit_costs
        .tiers
        .iter()
        .map(|(n, u)| row(n, u))
        .collect();
    rows.push(row("all tiers", &outcome.unit_costs.total));
    table(&header, &rows, None)
}

/// `min / mean / max` of a per-slot count of `gpu` in `slots`.
fn spread(slots: &[std::collections::BTreeMap<String, u32>], gpu: &str) -> (String, u32) {
    let counts: Vec<u32> = slots
        .iter()
        .map(|s| s.get(gpu).copied().unwrap_or(0))
        .collect();
    let max = counts.iter().max().copied().unwrap_or(0);
    let min = counts.iter().min().copied().unwrap_or(0);
    let mean = counts.iter().map(|&n| f64::from(n)).sum::<f64>() / counts.len().max(1) as f64;
    (format!("{min} / {mean:.1} / {max}"), max)
}

fn gpu_table(outcome: &Outcome) -> String {
    let plan = &outcome.plan;
    let with_spot = plan.spot.is_some();
    let mut header: Vec<String> = ["GPU type", "reserved", "on demand min / mean / max"]
        .map(String::from)
        .to_vec();
    if with_spot {
        header.push("spot requested min / mean / max".into());
    }
    header.extend(["commitment USD / year", "term"].map(String::from));
    let mut rows = Vec::new();
    for (gpu, &reserved) in &plan.reserved {
        let (rented, rented_max) = spread(&plan.on_demand, gpu);
        let (spot, spot_max) = plan
            .spot
            .as_deref()
            .map_or((String::new(), 0), |s| spread(s, gpu));
        if reserved == 0 && rented_max == 0 && spot_max == 0 {
            continue;
        }
        let line = outcome.commitment.gpu_types.get(gpu);
        let mut row = vec![gpu.clone(), reserved.to_string(), rented];
        if with_spot {
            row.push(spot);
        }
        row.push(line.map_or("—".into(), |l| usd(l.usd_per_year)));
        row.push(line.map_or("—".into(), |l| l.term.clone()));
        rows.push(row);
    }
    table(&header, &rows, None)
}

/// The plan as a self-contained HTML page.
/// Each configuration's launch command and the benchmark that checks it.
fn how_to_run_section(outcome: &Outcome) -> String {
    if outcome.how_to_run.is_empty() {
        return String::new();
    }
    let mut o = String::from(
        "<section><h2>How to run and check</h2><p class=\"lead\">One replica of each configuration: the engine's launch command, and the benchmark that checks its capacity figure on real hardware.</p>",
    );
    for r in &outcome.how_to_run {
        let _ = write!(
            o,
            "<h3>{} / {} ({})</h3><p>Launch:</p><pre>{}</pre><p>Benchmark:</p><pre>{}</pre><p>Passes if {}.</p>",
            esc(&r.tier),
            esc(&r.config),
            esc(&r.engine),
            esc(&r.launch_command),
            esc(&r.benchmark_command),
            esc(&r.passes_if)
        );
    }
    o.push_str("</section>");
    o
}

pub fn render(outcome: &Outcome) -> String {
    let plan = &outcome.plan;
    let schedule = crate::money::schedule::of(plan, &outcome.demand, &outcome.prices);
    let mut body = String::new();
    let misses = crate::report::sentences::misses(outcome);
    if !misses.is_empty() {
        let _ = write!(
            body,
            "<div class=\"warn\"><strong>Target missed</strong> — this plan's own replay does not keep its promise: {}</div>",
            esc(&misses.join("; "))
        );
    }
    for dropped in crate::report::sentences::dropped_over_context(outcome) {
        let _ = write!(
            body,
            "<div class=\"warn\"><strong>Demand left out</strong> — {}</div>",
            esc(&dropped)
        );
    }
    if let Some(w) = &outcome.commitment.short_horizon_warning {
        let _ = write!(body, "<div class=\"warn\">{}</div>", esc(w));
    }
    body.push_str(&super::purchase::section(outcome));
    if let Some(w) = &outcome.without_units {
        let _ = write!(
            body,
            "<p><strong>Prefill and decode apart.</strong> {}.</p>",
            esc(&crate::report::sentences::without_units(w))
        );
    }
    if let Some(h) = &outcome.held_out {
        let _ = write!(
            body,
            "<p><strong>Days set aside.</strong> {}</p>",
            esc(&crate::report::sentences::held_out(h))
        );
    }
    body.push_str("<div class=\"cards\">");
    body.push_str(&card(
        "Total over the horizon",
        &format!("{} USD", usd(plan.total_cost_usd)),
        &format!(
            "{:.0} h; {} USD per 730-h month",
            plan.horizon_hours,
            usd(plan.cost_per_month_usd)
        ),
    ));
    body.push_str(&card(
        "Reservation commitment",
        &format!("{} USD/yr", usd(outcome.commitment.usd_per_year)),
        "reserved GPUs × reserved price × 8,760 h",
    ));
    body.push_str(&card(
        "Cost per 1M tokens",
        &format!(
            "{} USD",
            crate::report::unit_costs_text::per_token_usd(
                outcome.unit_costs.total.usd_per_million_tokens
            )
        ),
        &outcome.unit_costs.total.api_usd_per_million_tokens.map_or(
            "input + output tokens together".to_string(),
            |a| {
                format!(
                    "input + output; the API: {}",
                    crate::report::unit_costs_text::per_token_usd(a)
                )
            },
        ),
    ));
    body.push_str(&card(
        "Sent to the API",
        &format!("{:.1}%", plan.api_share * 100.0),
        "of all requests over the horizon",
    ));
    body.push_str(&card(
        "GPU utilisation",
        &format!("{:.1}%", plan.gpu_utilisation * 100.0),
        "mean traffic / SLO capacity paid for",
    ));
    body.push_str("</div>");
    let _ = write!(
        body,
        "<section><h2>Demand per slot and what carries it</h2><p class=\"lead\">Requests/s each source of capacity carries in each {}-minute slot (reserved GPUs are used first within a GPU type), stacked, against the demand capacity must cover.</p>{}</section>",
        (plan.slot_hours * 60.0).round(),
        capacity_chart(outcome, &schedule)
    );
    body.push_str(&super::pool::section(outcome));
    let (gpus, idle, held) = gpus_chart(outcome, &schedule);
    let idle_note = if held > 0.0 {
        format!(
            "Reserved GPUs are paid for every hour: {} of their {} GPU-hours over the horizon ({:.1}%) run no replica (the pale band).",
            crate::base::numbers::group_thousands(idle.round() as i64),
            crate::base::numbers::group_thousands(held.round() as i64),
            idle / held * 100.0
        )
    } else {
        "Nothing is reserved: every GPU is rented for the slots it runs in.".to_string()
    };
    let _ = write!(
        body,
        "<section><h2>GPUs held and in use</h2><p class=\"lead\">{}</p>{gpus}</section>",
        esc(&idle_note)
    );
    let _ = write!(
        body,
        "<section><h2>GPUs and commitment</h2>{}</section>",
        gpu_table(outcome)
    );
    if let Some(t) = &outcome.commitment.growth {
        use crate::report::growth_text;
        let (header, rows) = growth_text::rows(t);
        let notes = growth_text::notes(t)
            .iter()
            .fold(String::new(), |mut s, n| {
                let _ = write!(s, "<p class=\"lead\">{}</p>", esc(n));
                s
            });
        let (year_header, year_rows) = growth_text::year_rows(t);
        let _ = write!(
            body,
            "<section><h2>{}</h2>{}{}<h3>By year</h3>{}{notes}</section>",
            esc(&growth_text::title(t)),
            growth_chart(t),
            table(&header, &rows, Some("whole term")),
            table(&year_header, &year_rows, Some("average year"))
        );
    }
    let _ = write!(
        body,
        "<section><h2>Cost breakdown</h2><p class=\"lead\">Where the money goes, and each tier's share (its API spend plus its part of GPU spend, by the GPUs it occupies of each type in each slot).</p>{}<h3>Cost per token</h3>{}<p class=\"lead\">in+out: cost over input and output tokens together, as API prices are compared; out: over output tokens alone; 1k out: the mission's unit, all output tokens whether or not their request met the SLO.</p></section>",
        cost_chart(outcome),
        unit_cost_table(outcome)
    );
    body.push_str(&replay_section(outcome));
    body.push_str(&how_to_run_section(outcome));
    let _ = write!(
        body,
        "<section><h2>Alternatives</h2><p class=\"lead\">The same demand and capacity figures under simpler policies.</p>{}</section>",
        alternatives_chart(outcome)
    );
    page(
        &format!("Capacity plan — {}", plan.scenario),
        &format!(
            "{} ({}), {} slots × {} min; solver: {}",
            plan.model.name,
            plan.model.precision,
            plan.solver.slots,
            (plan.slot_hours * 60.0).round(),
            crate::report::solver_status(plan.solver.status, plan.solver.mip_gap_tolerance)
        ),
        &body,
    )
}
