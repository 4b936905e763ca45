//! The replay's findings as text: per tier attainment against the target,
//! latency percentiles, goodput and the cost of SLO-met output; per
//! configuration utilisation; the solve-and-replay rounds.

use super::group_thousands;
use crate::replay::verification::{TierVerification, Verification, Window};
use crate::solve::record::{Round, Rule, Stop};
use std::fmt::Write;

/// The REPLAY block: `v`, and the `rounds` that led to its plan, which
/// replayed `rounds_seed`'s draw when it is not `v`'s (the plan sized on
/// the capacity seed's replays and checked on another's).
pub fn render(v: &Verification, rounds: &[Round], rounds_seed: Option<u64>) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "REPLAY (trace replay against the plan, seed {})", v.seed);
    let _ = writeln!(o, "  slots: {}", v.method);
    let _ = writeln!(
        o,
        "  {} requests replayed, {} simulator events, at most {} requests in flight",
        group_thousands(v.requests as i64),
        group_thousands(v.events as i64),
        group_thousands(v.peak_in_flight as i64)
    );
    let _ = writeln!(
        o,
        "  {:<14} {:>11} {:>7} {:>9} {:>9} {:>9} {:>9} {:>10} {:>13} {:>13}",
        "tier",
        "attainment",
        "target",
        "TTFT p50",
        "TTFT p99",
        "TPOT p50",
        "TPOT p99",
        "queue p99",
        "USD/1k out",
        "USD/1k good"
    );
    for (name, t) in &v.tiers {
        // A tier none of whose requests ran on a replica has no latency to
        // show, and with none sent to the API either no token to spread its
        // cost over: a dash, not a zero.
        let dash = |none: bool, text: String| if none { "—".to_string() } else { text };
        let no_latency = t.served_requests == 0;
        let no_tokens = no_latency && t.api_requests == 0;
        let shown = |text: String| dash(no_latency, text);
        let _ = writeln!(
            o,
            "  {:<14} {:>11} {:>6.0}% {:>9} {:>9} {:>9} {:>9} {:>10} {:>13} {:>13}{}",
            name,
            // Requests meant for GPUs that none served did miss: 0%, not a dash.
            dash(
                t.served_requests + t.unserved_requests == 0,
                format!("{:.2}%", t.attainment * 100.0)
            ),
            t.target * 100.0,
            shown(format!("{:.0}ms", t.ttft_p50_ms)),
            shown(format!("{:.0}ms", t.ttft_p99_ms)),
            shown(format!("{:.1}ms", t.tpot_p50_ms)),
            shown(format!("{:.1}ms", t.tpot_p99_ms)),
            shown(format!("{:.0}ms", t.queue_p99_ms)),
            dash(no_tokens, format!("{:.5}", t.cost_per_1k_output_tokens_usd)),
            dash(
                no_tokens,
                format!("{:.5}", t.cost_per_1k_goodput_tokens_usd)
            ),
            if t.meets_target {
                ""
            } else {
                "  MISSES TARGET"
            }
        );
    }
    let _ = writeln!(
        o,
        "    USD/1k out: the replayed slots' cost per 1,000 output tokens (all of them); USD/1k good: per 1,000 SLO-met output tokens (of requests meeting both limits); percentiles: from 1% log buckets, within 1% of the exact ones (`planner goodput` on `simulate --requests-out` gives those)"
    );
    for (name, t) in &v.tiers {
        let mut worst = t.worst_slot.map_or(String::new(), |(s, a)| {
            format!("; worst slot {s} at {:.2}%", a * 100.0)
        });
        if let Some(lost) = t.interrupted_requests {
            let _ = write!(
                worst,
                "; {} dropped by spot interruptions",
                group_thousands(lost as i64)
            );
        }
        if let Some(p) = t.prefix_cache {
            let _ = write!(
                worst,
                "; prefix cache held {:.1}% of their prompt tokens ({} of {} not computed, behind the {} router; prefixes from {})",
                p.hit_rate * 100.0,
                group_thousands(p.cached_input_tokens as i64),
                group_thousands(p.input_tokens as i64),
                v.prefix_router.map_or("", |r| r.name()),
                t.prefix_source.as_deref().unwrap_or("the traces")
            );
        }
        if let Some(late) = t.late_requests {
            let _ = write!(
                worst,
                "; {} finished after their deadline",
                group_thousands(late as i64)
            );
        }
        let _ = writeln!(
            o,
            "    {name}: {} of {} requests met TTFT and TPOT ({} TTFT, {} TPOT), {} to the API (outside the attainment, which is of the requests on GPUs; their output tokens counted as SLO-met), {} unserved; {} of {} output tokens SLO-met{worst}",
            group_thousands(t.met_both as i64),
            group_thousands((t.served_requests + t.unserved_requests) as i64),
            group_thousands(t.met_ttft as i64),
            group_thousands(t.met_tpot as i64),
            group_thousands(t.api_requests as i64),
            group_thousands(t.unserved_requests as i64),
            group_thousands(t.goodput_output_tokens as i64),
            group_thousands(t.output_tokens as i64),
        );
        if let Some(line) = windows_line(name, t) {
            let _ = writeln!(o, "{line}");
        }
    }
    if v.configurations.iter().all(|c| c.replicas.is_empty()) {
        let _ = writeln!(o, "  replicas: none was up in the slots replayed");
    } else {
        let _ = writeln!(
            o,
            "  replicas (stepping: share of up time with an engine step running, which a continuous-batching engine does while any request is in flight, so 100% is not a full replica: the load against SLO capacity is the GPU utilisation in the COST section of `planner solve`; batch: mean decoding sequences per step):"
        );
    }
    // A configuration with no replica up in the slots replayed (`simulate
    // --slot N` of a slot it does not run in) has nothing to say.
    for c in v.configurations.iter().filter(|c| !c.replicas.is_empty()) {
        let spread = if c.replicas.len() > 1 {
            let lo = c.replicas.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = c.replicas.iter().copied().fold(0.0, f64::max);
            format!(
                " ({} {}, each stepping {:.1}-{:.1}%)",
                c.replicas.len(),
                if c.sides.is_some() {
                    "units"
                } else {
                    "replicas"
                },
                lo * 100.0,
                hi * 100.0
            )
        } else {
            String::new()
        };
        let spread = match &c.sides {
            Some(s) => format!(
                "{spread}; {} units: prefill replicas stepping {:.1}%, decode replicas {:.1}%",
                s.shape.label(),
                s.prefill_stepping * 100.0,
                s.decode_stepping * 100.0
            ),
            None => spread,
        };
        let _ = writeln!(
            o,
            "    {:<14} {:<20} stepping {:>5.1}%, batch {:>5.1} of {}{}{spread}",
            c.tier,
            c.config,
            c.utilisation * 100.0,
            c.mean_batch,
            c.max_batch,
            if c.preemptions > 0 {
                format!(", {} preemptions", c.preemptions)
            } else {
                String::new()
            }
        );
    }
    if rounds.len() > 1 {
        let on = rounds_seed.map_or(String::new(), |s| {
            format!("on the replays of capacity seed {s}, which sized the plan; ")
        });
        let _ = writeln!(
            o,
            "  rounds ({on}per tier: capacity factor → replayed attainment, the rule that moved the factor, and where to):"
        );
        for r in rounds {
            let _ = writeln!(o, "    {}", round_line(r));
        }
    }
    o
}

/// A tier's windows in one line: how many meet the target, the worst, and
/// the first few that miss.
fn windows_line(name: &str, t: &TierVerification) -> Option<String> {
    let worst = t.worst_window?;
    if t.windows.iter().all(|w| w.requests == 0) {
        return Some(format!(
            "    {name} by {} window: none of its requests ran on GPUs, so no window has an attainment to judge",
            t.slo_window.name()
        ));
    }
    let span = |w: &Window| {
        if w.end_slot - w.start_slot == 1 {
            format!("slot {}", w.start_slot)
        } else {
            format!("slots {}-{}", w.start_slot, w.end_slot - 1)
        }
    };
    let sampled = if t.windows.iter().any(|w| !w.complete) {
        " (sampled slots; a window decides the target only when replayed whole)"
    } else {
        ""
    };
    let missing: Vec<String> = t
        .windows
        .iter()
        .filter(|w| !w.meets_target)
        .take(6)
        .map(|w| format!("{} {:.2}%", span(w), w.attainment * 100.0))
        .collect();
    let misses = t.windows.len() - t.windows_meeting;
    let listed = if missing.is_empty() {
        String::new()
    } else {
        format!(
            "; missing: {}{}",
            missing.join(", "),
            if misses > missing.len() { ", …" } else { "" }
        )
    };
    Some(format!(
        "    {name} by {} window{sampled}: {} of {} meet {:.0}%; worst {} at {:.2}% of {} requests{listed}",
        t.slo_window.name(),
        t.windows_meeting,
        t.windows.len(),
        t.target * 100.0,
        span(&worst),
        worst.attainment * 100.0,
        group_thousands(worst.requests as i64),
    ))
}

/// Slot spans (first slot, the slot after the last) as the ranges they
/// cover, adjacent spans merged: `3, 5-9, 12`.
fn slot_ranges(spans: &[(usize, usize)]) -> String {
    let mut sorted = spans.to_vec();
    sorted.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (s, e) in sorted {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
        .iter()
        .map(|&(s, e)| {
            if e - s == 1 {
                s.to_string()
            } else {
                format!("{s}-{}", e - 1)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// One round in one line: its cost, each tier's factor, attainment and move,
/// the steps taken after it, and why the rounds stopped if they did.
pub fn round_line(r: &Round) -> String {
    let parts: Vec<String> = r
        .moves
        .iter()
        .map(|m| {
            let to = if !m.windows.is_empty() {
                format!(" (slots {})", slot_ranges(&m.windows))
            } else if m.factor_after == m.factor_before {
                String::new()
            } else {
                format!(" to ×{:.3}", m.factor_after)
            };
            match m.rule {
                Rule::RepeatSkipped | Rule::SameFleets | Rule::KeptOffApi => {
                    format!("then {} {}{to}", m.tier, rule_name(m.rule))
                }
                _ => format!(
                    "{} ×{:.3} → {:.2}% {}{to}",
                    m.tier,
                    m.factor_before,
                    m.attainment * 100.0,
                    rule_name(m.rule)
                ),
            }
        })
        .collect();
    let stop = match r.stop {
        None => "",
        Some(Stop::Settled) => "; stopped: settled",
        Some(Stop::RoundLimit) => "; stopped: round limit",
        Some(Stop::FleetsUnchanged) => "; stopped: no step changes the fleets",
    };
    format!(
        "{}: {} USD; {}{stop}",
        r.round,
        super::usd(r.total_cost_usd),
        parts.join(", ")
    )
}

/// A rule's name, as the JSON spells it.
pub fn rule_name(rule: Rule) -> &'static str {
    match rule {
        Rule::Hold => "hold",
        Rule::Tighten => "tighten",
        Rule::Loosen => "loosen",
        Rule::Bisect => "bisect",
        Rule::Settle => "settle",
        Rule::ResizeAfterApiShare => "resize-after-api-share",
        Rule::TightenWindows => "tighten-windows",
        Rule::UndoLoosening => "undo-loosening",
        Rule::LoosenSlots => "loosen-slots",
        Rule::RepeatSkipped => "repeat-skipped",
        Rule::SameFleets => "same-fleets",
        Rule::KeptOffApi => "kept-off-api",
    }
}

#[cfg(test)]
mod tests {
    use super::slot_ranges;

    #[test]
    fn adjacent_slots_read_as_one_range() {
        let spans = [(50, 51), (48, 49), (51, 52), (52, 53), (24, 48), (60, 61)];
        assert_eq!(slot_ranges(&spans), "24-48, 50-52, 60");
    }
}
