//! `planner calibrate --runs` as text: the fitted figures per engine, the
//! median errors per (model, GPU, engine, precision) group before and after
//! the fit and held out, and every run's errors.

use crate::capacity::runs::calibration::{Calibration, Medians};
use crate::capacity::runs::disaggregated_check::DisaggregatedCheck;
use std::fmt::Write;

fn pct(x: f64) -> String {
    if x.is_finite() {
        // A median error that rounds to zero from below reads +0.0%.
        let s = format!("{:+.1}%", 100.0 * x);
        if s == "-0.0%" {
            "+0.0%".into()
        } else {
            s
        }
    } else {
        "n/a".into()
    }
}

fn abs_pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}%", 100.0 * x)
    } else {
        "n/a".into()
    }
}

fn medians_row(label: &str, m: &Medians) -> String {
    let unserved = if m.unserved > 0 {
        format!(" ({} cannot run)", m.unserved)
    } else {
        String::new()
    };
    format!(
        "    {label:<10} TTFT {:>7} (|{:>6}|)   TPOT {:>7} (|{:>6}|){unserved}",
        pct(m.ttft_error),
        abs_pct(m.ttft_abs_error),
        pct(m.tpot_error),
        abs_pct(m.tpot_abs_error)
    )
}

pub(crate) fn render(c: &Calibration, per_run: bool) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "Engine profiles fitted to {} measured {} (median error of mean TTFT and mean TPOT, (predicted - measured) / measured; |median absolute error|)",
        c.all.before.runs,
        runs(c.all.before.runs)
    );
    let drawn = c
        .runs
        .iter()
        .filter(|r| r.run.lengths == crate::capacity::runs::RunLengths::InferenceX)
        .count();
    if drawn > 0 {
        let _ = writeln!(
            o,
            "{drawn} runs are InferenceX's, replayed with its client's lengths (each drawn uniformly from {} to 1 times the stated one); the other {} with their stated lengths",
            crate::capacity::runs::RunLengths::INFERENCEX_FLOOR,
            c.runs.len() - drawn
        );
    }
    let launched: Vec<u32> = c
        .runs
        .iter()
        .map(|r| r.run.recv_interval_steps)
        .filter(|&n| n > 1)
        .collect();
    if !launched.is_empty() {
        let mut intervals = launched.clone();
        intervals.sort_unstable();
        intervals.dedup();
        let _ = writeln!(
            o,
            "{} SGLang runs replayed with the scheduler's receive interval their launch set (--scheduler-recv-interval {}: new requests taken every that many decode steps; InferenceX's B200 and B300 scripts, docs/model.md §6.5)",
            launched.len(),
            intervals
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(" or ")
        );
    }
    for e in &c.engines {
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "{} ({} {}): loss ({}) {:.4} -> {:.4} in {} evaluations",
            e.engine.as_str(),
            e.runs,
            runs(e.runs),
            c.loss.describe(),
            e.loss_before,
            e.loss_after,
            e.evaluations
        );
        for (k, before, after) in &e.figures {
            let _ = writeln!(o, "    {k:<30} {before:>10.4} -> {after:>10.4}");
        }
        if let Some(b) = e.beyond_cap {
            let _ = writeln!(
                o,
                "    beyond the cap (predicted more than {}x off, counted at ln {}): {} of {} runs' TTFT, {} runs' TPOT",
                crate::capacity::runs::fit::CAPPED_FACTOR,
                crate::capacity::runs::fit::CAPPED_FACTOR,
                b.ttft,
                e.runs,
                b.tpot
            );
        }
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "Groups (model, GPU, engine, precision; a mixture of experts' layout):"
    );
    let several_models = c.models.len() > 1;
    // Each row with its name, and whether it sums several groups (a
    // model's, or all).
    let rows = c
        .groups
        .iter()
        .map(|g| (g, g.group.clone(), false))
        .chain(
            c.models
                .iter()
                .filter(|_| several_models)
                .map(|m| (m, format!("{}, every group", m.group), true)),
        )
        .chain(std::iter::once((&c.all, c.all.group.clone(), true)));
    let several_groups = c.groups.len() > 1;
    for (g, name, summary) in rows {
        let _ = writeln!(o, "  {name} ({} {})", g.before.runs, runs(g.before.runs));
        let _ = writeln!(o, "{}", medians_row("roofline", &g.roofline));
        let _ = writeln!(o, "{}", medians_row("before", &g.before));
        let _ = writeln!(o, "{}", medians_row("after", &g.after));
        if summary && several_groups {
            let _ = writeln!(o, "{}", medians_row("centred", &g.centred));
        }
        if c.held_out {
            let held = if g.held_out_from_start {
                "held out*"
            } else {
                "held out"
            };
            let _ = writeln!(o, "{}", medians_row(held, &g.held_out));
        }
        if c.model_out {
            let _ = writeln!(o, "{}", medians_row("model out", &g.model_out));
        }
    }
    if several_groups {
        let _ = writeln!(
            o,
            "  centred: after, with each group's median log error divided out (its signed median near 0 by construction);\n  what is left is each group's scatter over concurrency and lengths, which no offset per group takes away"
        );
    }
    if !c.held_out {
        let _ = writeln!(o, "  (no group was held out: --no-held-out)");
    }
    if c.model_out {
        let _ = writeln!(
            o,
            "  model out: predicted by each engine's fit to the other models' runs alone (no run of the model seen)"
        );
        if let Some(caution) = &c.model_out_caution {
            let _ = writeln!(o, "  caution on model out: {caution}");
        }
    }
    if c.groups.iter().any(|g| g.held_out_from_start) {
        let _ = writeln!(
            o,
            "  * no other group of the engine to fit on: held out with the median of the other engines' fitted figures"
        );
    }
    if !c.set_aside.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(o, "Rows set aside:");
        for (why, n) in &c.set_aside {
            let _ = writeln!(o, "  {n:>5}  {why}");
        }
    }
    if !c.memory_raised.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "Runs the engine's default memory fraction cannot hold, replayed with the least fraction that holds their requests (at most {}; a measured run proves it fitted, its launch flags are not recorded):",
            crate::capacity::runs::MEASURED_MEMORY_FRACTION_MAX
        );
        for (label, f) in &c.memory_raised {
            let _ = writeln!(o, "  {label}: {f:.2}");
        }
    }
    if !c.refused.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "Rows not predicted ({}), each with why:",
            c.refused.len()
        );
        for r in &c.refused {
            let _ = writeln!(o, "  {} ({}): {}", r.label, r.location, r.reason);
        }
    }
    if let Some(check) = &c.disaggregated {
        let _ = writeln!(o);
        o.push_str(&render_disaggregated(check, per_run));
    }
    if per_run {
        let _ = writeln!(o);
        let _ = writeln!(o, "Runs (measured; predicted before -> after -> held out):");
        for r in &c.runs {
            let _ = writeln!(
                o,
                "  {} ({} tp{} {}x{} c{}): TTFT {:.1} ms; {} -> {} -> {}   TPOT {:.2} ms; {} -> {} -> {}",
                r.run.label,
                r.group,
                r.run.tp,
                r.run.input_tokens,
                r.run.output_tokens,
                r.run.concurrency,
                r.run.ttft_ms,
                predicted(r.before_ms, 0),
                predicted(r.after_ms, 0),
                predicted(r.held_out_ms, 0),
                r.run.tpot_ms,
                predicted(r.before_ms, 1),
                predicted(r.after_ms, 1),
                predicted(r.held_out_ms, 1),
            );
        }
    }
    o
}

/// The disaggregated runs, checked with the starting and the fitted
/// profiles: median errors per group, per model and over all, and with
/// `per_run` every run.
pub(crate) fn render_disaggregated(check: &DisaggregatedCheck, per_run: bool) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "Disaggregated runs ({} {}), checked and not fitted: each run's prefill and decode workers replayed as one unit behind its client (docs/model.md §4.3), with the starting profiles (before) and {}:",
        check.all.before.runs,
        runs(check.all.before.runs),
        if check.fitted {
            "the profiles fitted above to the aggregated runs (after)"
        } else {
            "no fit (no aggregated run was given: after is before)"
        }
    );
    let several = check.models.len() > 1;
    let rows = check
        .groups
        .iter()
        .map(|g| (g, g.group.clone()))
        .chain(
            check
                .models
                .iter()
                .filter(|_| several)
                .map(|m| (m, format!("{}, every group", m.group))),
        )
        .chain(std::iter::once((&check.all, check.all.group.clone())));
    for (g, name) in rows {
        let _ = writeln!(o, "  {name} ({} {})", g.before.runs, runs(g.before.runs));
        let _ = writeln!(o, "{}", medians_row("before", &g.before));
        if check.fitted {
            let _ = writeln!(o, "{}", medians_row("after", &g.after));
        }
    }
    if !check.set_aside.is_empty() {
        let _ = writeln!(o, "Rows set aside:");
        for (why, n) in &check.set_aside {
            let _ = writeln!(o, "  {n:>5}  {why}");
        }
    }
    if per_run {
        let _ = writeln!(o, "  Runs (measured; predicted before -> after):");
        for r in &check.runs {
            let Some(d) = &r.run.disaggregated else {
                continue;
            };
            let _ = writeln!(
                o,
                "    {} ({}P {} + {}D {}, {}x{} c{}): TTFT {:.1} ms; {} -> {}   TPOT {:.2} ms; {} -> {}",
                r.run.label,
                d.prefill.workers,
                d.prefill.layout.label(),
                d.decode.workers,
                d.decode.layout.label(),
                r.run.input_tokens,
                r.run.output_tokens,
                r.run.concurrency,
                r.run.ttft_ms,
                predicted(r.before_ms, 0),
                predicted(r.after_ms, 0),
                r.run.tpot_ms,
                predicted(r.before_ms, 1),
                predicted(r.after_ms, 1),
            );
            if let Some(why) = &r.refusal {
                let _ = writeln!(o, "      not predicted: {why}");
            }
        }
    }
    o
}

/// A run's predicted mean TTFT (`which` 0) or TPOT (1) in ms, right
/// aligned; `n/a` when it was not predicted.
fn predicted(p: Option<(f64, f64)>, which: usize) -> String {
    p.map_or("   n/a".to_string(), |v| {
        format!("{:>7.1}", if which == 0 { v.0 } else { v.1 })
    })
}

/// "run" or "runs" after a count.
fn runs<N: TryInto<u64>>(count: N) -> &'static str {
    crate::base::numbers::noun(count.try_into().unwrap_or(0), "run", "runs")
}
