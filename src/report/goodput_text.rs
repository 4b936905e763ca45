//! `planner goodput` as text.

use super::{group_thousands, money};
use crate::replay::goodput::{Goodput, GoodputReport};
use std::fmt::Write;

pub fn render(r: &GoodputReport) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "planner goodput: {}", r.log);
    let _ = writeln!(o, "  limits: {}", r.limits);
    let _ = writeln!(o, "  duration: {}", r.duration);
    if let Some(c) = r.cost_per_hour {
        let _ = writeln!(o, "  cost: {c} {} per hour", r.currency);
    }
    let _ = writeln!(o);
    section(&mut o, "all requests", &r.total, &r.currency);
    if r.cost_per_hour.is_some() && !r.tiers.is_empty() {
        let _ = writeln!(
            o,
            "  (the cost is of all requests: a log does not say which GPUs served which tier, so it is not split between them; `planner solve` splits a plan's cost by the GPU-hours each tier occupies)"
        );
    }
    for (name, g) in &r.tiers {
        let _ = writeln!(o);
        section(&mut o, &format!("tier {name}"), g, &r.currency);
    }
    o
}

fn section(o: &mut String, title: &str, g: &Goodput, currency: &str) {
    let n = |v: u64| group_thousands(v as i64);
    let _ = writeln!(o, "{title}");
    let _ = writeln!(
        o,
        "  requests {}{}: met TTFT {}, met TPOT {}, met both {} (attainment {:.2}%)",
        n(g.requests),
        if g.failed > 0 {
            format!(" ({} failed)", n(g.failed))
        } else {
            String::new()
        },
        n(g.met_ttft),
        n(g.met_tpot),
        n(g.met_both),
        g.attainment * 100.0
    );
    let _ = writeln!(
        o,
        "  output tokens {}, of requests meeting both limits {}",
        n(g.output_tokens),
        n(g.goodput_output_tokens)
    );
    let _ = writeln!(
        o,
        "  TTFT p50 {:.1} ms, p99 {:.1} ms; TPOT p50 {:.2} ms, p99 {:.2} ms",
        g.ttft_p50_ms, g.ttft_p99_ms, g.tpot_p50_ms, g.tpot_p99_ms
    );
    if g.duration_s > 0.0 {
        let _ = writeln!(
            o,
            "  goodput {:.3} requests/s, {:.1} output tokens/s (all output {:.1} tokens/s)",
            g.goodput_requests_per_s, g.goodput_output_tokens_per_s, g.output_tokens_per_s
        );
    }
    if let Some(cost) = g.cost {
        let fmt = |v: Option<f64>| v.map_or("n/a (no such tokens)".to_string(), money);
        let _ = writeln!(o, "  cost {} {currency}", money(cost));
        let _ = writeln!(
            o,
            "  cost per 1,000 output tokens: {} {currency} (all output), {} {currency} (SLO-met output only)",
            fmt(g.cost_per_1k_output_tokens),
            fmt(g.cost_per_1k_goodput_tokens)
        );
    }
}
