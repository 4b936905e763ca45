//! The outcome's facts in words, one sentence each: a missed target, the
//! answers to the four questions, the re-solve kept off the API. The text
//! and HTML reports and the exit-5 message share them.

use super::usd;
use crate::base::numbers::{group_thousands, noun};
use crate::profiles::precision::Precision;
use crate::replay::verification::Verification;
use crate::solve::outcome::MissedTarget;
use crate::solve::questions::{CapacityBasis, Speedup};
use crate::solve::record::WithoutApi;

/// What FP4 weights mean for the answers (text and HTML).
pub(crate) const FP4_QUALITY: &str = "FP4 weights (NVFP4, or MXFP4 experts as gpt-oss-120b publishes them) change the answers more than FP8 unless the model was published or trained in FP4: whether that quality is acceptable is yours to decide, and FP4 is ruled out by leaving \"fp4\" out of gpus[].precision";

/// "tier `x` met both limits for …% of its GPU-served requests …" (or served
/// none of them).
pub fn missed_target(m: &MissedTarget) -> String {
    let window = m.worst_window.map_or(String::new(), |w| {
        format!(
            ", and for {:.3}% in its worst window (slots {}-{})",
            w.attainment * 100.0,
            w.start_slot,
            w.end_slot - 1
        )
    });
    let met = if m.served_requests == 0 {
        "served none of the requests meant for its GPUs (no replica ran them)".to_string()
    } else {
        format!(
            "met both limits for {:.2}% of its GPU-served requests",
            m.attainment * 100.0
        )
    };
    format!(
        "tier `{}` {met} on replay{window}, below its target of {}% (p{} TTFT ≤ {} ms, TPOT ≤ {} ms)",
        m.tier,
        m.percentile,
        m.percentile,
        m.ttft_ms,
        m.tpot_ms
    )
}

/// Every missed target of a solve in words: the plan's replay, then the
/// days set aside; `planner solve` exits 5 when there is one.
pub fn misses(outcome: &crate::solve::Outcome) -> Vec<String> {
    let mut out = missed_targets(&outcome.missed_targets);
    if let Some(h) = &outcome.held_out {
        out.extend(held_out_misses(h));
    }
    out
}

/// Every missed target, one sentence each.
pub fn missed_targets(misses: &[MissedTarget]) -> Vec<String> {
    misses.iter().map(missed_target).collect()
}

/// Question 1 for one tier: its lengths, limits, configurations and the
/// quality its precision implies.
pub fn capacity_basis(b: &CapacityBasis) -> String {
    let runs: Vec<String> = b
        .runs
        .iter()
        .enumerate()
        .map(|(i, c)| {
            format!(
                "{} with chunks of {} tokens in {}{}",
                c.label(),
                c.max_batched_tokens,
                c.precision.as_str().to_uppercase(),
                b.prefix_shares
                    .get(i)
                    .copied()
                    .flatten()
                    .map_or(String::new(), |share| format!(
                        ", its capacity search finding {:.1}% of the sampled prompt tokens in a replica's prefix cache (one cache of its memory fed the tier in order)",
                        share * 100.0
                    ))
            )
        })
        .collect();
    let quality = if b.runs.iter().any(|c| c.precision == Precision::Fp4) {
        FP4_QUALITY
    } else if b.runs.iter().any(|c| c.precision == Precision::Fp8) {
        let key = b
            .model_entry
            .map_or_else(|| "model".to_string(), |j| format!("models[{j}]"));
        &format!("FP8 weights change the answers (usually slightly): whether that quality is acceptable is yours to decide, and FP8 can be ruled out with `{key}.precision = \"bf16\"`")
    } else {
        "BF16 weights: the served model's own answer quality"
    };
    format!(
        "{}: {} on the tier's own lengths (input mean {:.0}, p99 {}; output mean {:.0}, p99 {}), within-minute arrival CV {:.2}, p{} TTFT ≤ {} ms and TPOT ≤ {} ms, fleets sized by simulating n replicas behind the router; runs {}; {}",
        b.tier,
        b.model,
        b.input_tokens_mean,
        b.input_tokens_p99,
        b.output_tokens_mean,
        b.output_tokens_p99,
        b.within_minute_cv,
        b.percentile,
        b.ttft_ms,
        b.tpot_ms,
        if runs.is_empty() {
            "nothing on GPUs".to_string()
        } else {
            runs.join(", ")
        },
        quality
    )
}

/// Question 2: how many requests and output tokens met both limits, from
/// the replay (or why it is not known), tier by tier in `tiers`' order.
pub fn slo_met(verification: Option<&Verification>, tiers: &[String]) -> String {
    let Some(v) = verification else {
        return "not measured yet: this plan sizes every slot so that each tier's percentile TTFT and TPOT limits hold under the queueing model; counting the requests and output tokens that met both limits needs the trace replay against the plan".into();
    };
    let tiers: Vec<String> = tiers
        .iter()
        .filter_map(|name| v.tiers.get(name).map(|r| (name, r)))
        .map(|(name, r)| {
            if r.served_requests + r.unserved_requests == 0 {
                return format!(
                    "{name}: no request ran on GPUs ({} sent to the API), {} output tokens SLO-met",
                    group_thousands(r.api_requests as i64),
                    group_thousands(r.goodput_output_tokens as i64)
                );
            }
            format!(
                "{name}: {} of {} GPU-served requests met both limits ({:.2}%, target {:.0}%){}, {} output tokens SLO-met",
                group_thousands(r.met_both as i64),
                group_thousands((r.served_requests + r.unserved_requests) as i64),
                r.attainment * 100.0,
                r.target * 100.0,
                if r.api_requests > 0 {
                    format!(", plus {} sent to the API", group_thousands(r.api_requests as i64))
                } else {
                    String::new()
                },
                group_thousands(r.goodput_output_tokens as i64)
            )
        })
        .collect();
    format!("on replay of {}: {}", v.method, tiers.join("; "))
}

/// Question 3: cost over all output tokens and over SLO-met ones.
pub fn cost_basis(verification: Option<&Verification>) -> String {
    let Some(v) = verification else {
        return "cost per 1,000 output tokens divides the plan's total cost by all output tokens of the horizon; the cost per 1,000 SLO-met output tokens needs the replay's count of requests meeting both limits, which this plan does not report yet".into();
    };
    let tiers: Vec<String> = v
        .tiers
        .iter()
        .map(|(name, r)| {
            format!(
                "{name} {:.4} USD per 1,000 output tokens, {:.4} per 1,000 SLO-met output tokens",
                r.cost_per_1k_output_tokens_usd, r.cost_per_1k_goodput_tokens_usd
            )
        })
        .collect();
    format!(
        "over the replayed slots, each slot's GPU spend allocated to tiers by the GPUs they occupy, plus their API spend: {}",
        tiers.join("; ")
    )
}

/// Question 4 for one configuration.
pub fn speedup(s: &Speedup) -> String {
    let after = match s.replicas_after {
        Some(n) if n == s.replicas => format!(
            "the same traffic needs {} — no change: whole replicas absorb the difference",
            replicas_and_gpus(n, s.gpus_per_replica)
        ),
        Some(n) => format!(
            "the same traffic needs {}",
            replicas_and_gpus(n, s.gpus_per_replica)
        ),
        None => "no fleet of this configuration keeps the tier's limits: one replica alone cannot"
            .to_string(),
    };
    format!(
        "{} on {}: {} at the busiest slot; with {:.0}% {} FLOPS and bandwidth {after}",
        s.tier,
        s.config,
        replicas_and_gpus(s.replicas, s.gpus_per_replica),
        s.faster_by.abs() * 100.0,
        if s.faster_by >= 0.0 { "more" } else { "less" },
    )
}

/// GPU counts by type as `16 h100-sxm + 32 mi300x` (types with none left
/// out), or `none` when every count is zero.
pub(crate) fn gpu_counts(counts: &std::collections::BTreeMap<String, u32>, none: &str) -> String {
    let parts: Vec<String> = counts
        .iter()
        .filter(|(_, &n)| n > 0)
        .map(|(g, n)| format!("{n} {g}"))
        .collect();
    if parts.is_empty() {
        none.to_string()
    } else {
        parts.join(" + ")
    }
}

/// Question 4 for the whole plan at one speed.
pub fn speed_plan(p: &crate::solve::questions::SpeedPlan) -> String {
    format!(
        "with {} {:.0}% {}: the plan re-priced by the MILP reserves {} and costs {} USD over the horizon ({:+.1}%; capacity scaled by the replica ratio above, not replayed)",
        p.gpu_types.join(", "),
        p.faster_by.abs() * 100.0,
        if p.faster_by >= 0.0 { "faster" } else { "slower" },
        gpu_counts(&p.reserved, "nothing"),
        crate::base::numbers::usd(p.total_cost_usd),
        p.vs_plan * 100.0
    )
}

/// "3 replicas (12 GPUs)".
pub fn replicas_and_gpus(replicas: u32, gpus_per_replica: u32) -> String {
    let plural = |n: u32, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "{} ({})",
        plural(replicas, "replica"),
        plural(replicas * gpus_per_replica, "GPU")
    )
}

/// What the solve without disaggregated units found, in one sentence.
pub fn without_units(w: &crate::solve::units::WithoutUnits) -> String {
    let verdict = |meets: bool| {
        if meets {
            "meets every target"
        } else {
            "misses a target"
        }
    };
    let saving = |a: f64, b: f64| {
        if b > 0.0 {
            format!("{:.1}%", 100.0 * (b - a) / b)
        } else {
            "n/a".into()
        }
    };
    // The tiers whose fleets the replays sized differently in the two.
    let factors: Vec<String> = w
        .factors_with_units
        .iter()
        .filter_map(|(tier, a)| {
            let b = w.factors_without_units.get(tier)?;
            ((a - b).abs() > 1e-9)
                .then(|| format!("{tier} sized at demand ÷ {a:.3} with units, ÷ {b:.3} without"))
        })
        .collect();
    let why = if factors.is_empty() {
        String::new()
    } else {
        format!(" ({})", factors.join("; "))
    };
    let alone = match (w.without_units_usd, &w.without_units_error) {
        (Some(usd_alone), _) => format!(
            "{} USD, {}",
            usd(usd_alone),
            verdict(w.without_units_meets_targets)
        ),
        (None, Some(e)) => format!("no plan ({e})"),
        (None, None) => "no plan".to_string(),
    };
    let chosen = match w.without_units_usd {
        Some(alone) if w.aggregated_chosen => format!(
            "aggregated replicas alone are chosen, {} cheaper{why}",
            saving(alone, w.with_units_usd)
        ),
        Some(alone) if w.without_units_meets_targets => format!(
            "the units are chosen, {} cheaper{why}",
            saving(w.with_units_usd, alone)
        ),
        _ => "the units are chosen: without them no plan meets every target".to_string(),
    };
    format!(
        "{} offered: the plan with them {} USD, {}; with aggregated replicas alone {alone}; {chosen}",
        w.offered.join(", "),
        usd(w.with_units_usd),
        verdict(w.with_units_meets_targets),
    )
}

/// What the re-solve with tiers kept off the API found, in one sentence.
pub fn without_api(w: &WithoutApi) -> String {
    let verdict = |meets: bool| {
        if meets {
            "meets every target"
        } else {
            "misses a target"
        }
    };
    format!(
        "{} kept off the API (solved again because part of {} went to it): {} USD, {}; with the API {} USD, {}; this plan is the one {}",
        w.tiers.join(", "),
        if w.tiers.len() == 1 { "it" } else { "them" },
        usd(w.total_cost_usd),
        verdict(w.meets_targets),
        usd(w.with_api_total_cost_usd),
        verdict(w.with_api_meets_targets),
        if w.chosen {
            "without the API"
        } else {
            "with the API"
        }
    )
}

/// The days set aside in one sentence: the reservation held to them,
/// whether every target was met there, and what they cost a day.
pub fn held_out(h: &crate::solve::check::HeldOut) -> String {
    let span = format!(
        "the last {} day{} (slots {}-{}), set aside and not planned on",
        h.days,
        if h.days == 1 { "" } else { "s" },
        h.start_slot,
        h.end_slot - 1
    );
    let reserved = gpu_counts(&h.reserved, "no GPUs");
    if let Some(why) = &h.not_served {
        return format!(
            "{span}, cannot be served with the reservation of {reserved} and the GPU quotas: {why}"
        );
    }
    let verdict = match h.meets_targets {
        None => "not replayed (`simulation.verify = \"off\"`)".to_string(),
        Some(met) => {
            let tiers: Vec<String> = h
                .tiers
                .iter()
                .map(|(name, t)| {
                    format!(
                        "{name} {:.2}%, {} of {} windows",
                        t.attainment * 100.0,
                        t.windows_meeting,
                        t.windows
                    )
                })
                .collect();
            format!(
                "{} ({})",
                if met {
                    "every tier meets its target in every window there"
                } else {
                    "a target is MISSED there"
                },
                tiers.join("; ")
            )
        }
    };
    let cost = h.usd_per_day.map_or(String::new(), |d| {
        format!(
            "; they cost {} USD a day against {} on the days planned ({:+.1}%), renting up to {} and sending {:.1}% of requests to the API",
            usd(d),
            usd(h.planned_usd_per_day),
            (d / h.planned_usd_per_day - 1.0) * 100.0,
            gpu_counts(&h.on_demand_peak_gpus, "nothing"),
            h.api_share * 100.0
        )
    });
    format!("{span}, replayed against the reservation of {reserved} with rentals planned for them: {verdict}{cost}")
}

/// Each tier that misses its target on the days set aside, one sentence
/// each (part of exit 5's message).
pub fn held_out_misses(h: &crate::solve::check::HeldOut) -> Vec<String> {
    if let Some(why) = &h.not_served {
        return vec![format!(
            "the {} {} set aside (`[check] days`) cannot be served with the plan's reservation: {why}",
            h.days,
            noun(u64::from(h.days), "day", "days")
        )];
    }
    h.tiers
        .iter()
        .filter(|(_, t)| !t.meets_target)
        .map(|(name, t)| {
            let worst = t.worst_window.map_or(String::new(), |w| {
                format!(
                    "; worst window slots {}-{} at {:.2}%",
                    w.start_slot,
                    w.end_slot - 1,
                    w.attainment * 100.0
                )
            });
            format!(
                "on the {} {} set aside (`[check] days`), tier `{name}` met both limits for {:.2}% of its GPU-served requests, below its target of {}% ({} of {} windows meet{worst})",
                h.days,
                noun(u64::from(h.days), "day", "days"),
                t.attainment * 100.0,
                t.target * 100.0,
                t.windows_meeting,
                t.windows
            )
        })
        .collect()
}

#[cfg(test)]
mod held_out_tests {
    use super::{held_out, held_out_misses};
    use crate::solve::check::{HeldOut, HeldOutTier};
    use std::collections::BTreeMap;

    fn held(standard: f64) -> HeldOut {
        let tier = |attainment: f64| HeldOutTier {
            attainment,
            target: 0.99,
            meets_target: attainment >= 0.99,
            requests: 1000,
            windows: 2,
            windows_meeting: if attainment >= 0.99 { 2 } else { 1 },
            worst_window: None,
        };
        let tiers: BTreeMap<String, HeldOutTier> = [
            ("interactive".to_string(), tier(0.995)),
            ("standard".to_string(), tier(standard)),
        ]
        .into();
        HeldOut {
            days: 2,
            start_slot: 120,
            end_slot: 168,
            planned_days: 5.0,
            reserved: [("mi300x".to_string(), 30)].into(),
            total_cost_usd: Some(2200.0),
            usd_per_day: Some(1100.0),
            planned_usd_per_day: 1000.0,
            on_demand_peak_gpus: [("mi300x".to_string(), 24)].into(),
            api_share: 0.0,
            meets_targets: Some(tiers.values().all(|t| t.meets_target)),
            not_served: None,
            tiers,
        }
    }

    #[test]
    fn a_tier_missing_on_the_days_set_aside_is_a_missed_target() {
        assert!(held_out_misses(&held(0.992)).is_empty());
        let misses = held_out_misses(&held(0.985));
        assert_eq!(misses.len(), 1);
        assert!(misses[0].contains("tier `standard` met both limits for 98.50%"));
        assert!(misses[0].contains("1 of 2 windows meet"));
        let s = held_out(&held(0.985));
        assert!(s.contains("a target is MISSED there"), "{s}");
        assert!(
            s.contains("1,100 USD a day against 1,000 on the days planned (+10.0%)"),
            "{s}"
        );
    }

    #[test]
    fn a_reservation_that_cannot_serve_the_days_set_aside_says_why() {
        let mut h = held(0.995);
        h.not_served = Some("the quotas cover 10 GPUs".into());
        h.meets_targets = Some(false);
        assert_eq!(held_out_misses(&h).len(), 1);
        assert!(held_out(&h).contains("cannot be served with the reservation of 30 mi300x"));
    }
}

#[cfg(test)]
mod speedup_tests {
    use super::speedup;
    use crate::solve::questions::Speedup;

    fn case(replicas_after: Option<u32>, faster_by: f64) -> Speedup {
        Speedup {
            tier: "chat".into(),
            config: "b200 tp4 b8".into(),
            replicas: 5,
            gpus_per_replica: 4,
            faster_by,
            replicas_after,
        }
    }

    #[test]
    fn a_slowed_configuration_that_cannot_serve_is_not_called_unchanged() {
        let s = speedup(&case(None, -0.2));
        assert!(s.contains("20% less"), "{s}");
        assert!(s.contains("one replica alone cannot"), "{s}");
        assert!(!s.contains("no change"), "{s}");
        let same = speedup(&case(Some(5), -0.2));
        assert!(
            same.ends_with(
                "needs 5 replicas (20 GPUs) — no change: whole replicas absorb the difference"
            ),
            "{same}"
        );
        let more = speedup(&case(Some(7), -0.2));
        assert!(more.ends_with("needs 7 replicas (28 GPUs)"), "{more}");
    }
}

/// One sentence per trace whose requests over the model's context were
/// left out (`over_context = "drop"`): how many, and their share of the
/// trace's requests and prompt tokens.
pub fn dropped_over_context(outcome: &crate::solve::Outcome) -> Vec<String> {
    let mut out = Vec::new();
    for (tier, d) in &outcome.demand {
        for s in &d.tier.sources {
            let Some(x) = &s.dropped_over_context else {
                continue;
            };
            let total = s.requests + x.requests;
            let (is, was) = if x.requests == 1 {
                ("is", "was")
            } else {
                ("are", "were")
            };
            out.push(format!(
                "tier `{tier}`: {} of the {} requests of {} ({:.1}%; {:.1}% of its prompt tokens, {} prompt and {} output tokens) {is} over the model's context of {} tokens and {was} dropped (over_context = \"drop\"); the plan serves the rest",
                x.requests,
                total,
                s.trace,
                x.share_of_requests * 100.0,
                x.share_of_input_tokens * 100.0,
                x.input_tokens,
                x.output_tokens,
                x.context_tokens
            ));
        }
    }
    out
}
