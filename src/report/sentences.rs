//! The outcome's facts in words, one sentence each: a missed target, the
//! answers to the four questions, the re-solve kept off the API. The text
//! and HTML reports and the exit-5 message share them.

use super::usd;
use crate::base::numbers::group_thousands;
use crate::profiles::precision::Precision;
use crate::replay::verification::Verification;
use crate::solve::outcome::MissedTarget;
use crate::solve::questions::{CapacityBasis, Speedup};
use crate::solve::record::WithoutApi;

/// "tier `x` met both limits for …% of its GPU-served requests …".
pub fn missed_target(m: &MissedTarget) -> String {
    format!(
        "tier `{}` met both limits for {:.2}% of its GPU-served requests on replay, below its target of {}% (p{} TTFT ≤ {} ms, TPOT ≤ {} ms)",
        m.tier,
        m.attainment * 100.0,
        m.percentile,
        m.percentile,
        m.ttft_ms,
        m.tpot_ms
    )
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
        .map(|c| {
            format!(
                "{} with chunks of {} tokens in {}",
                c.label(),
                c.max_batched_tokens,
                c.precision.as_str().to_uppercase()
            )
        })
        .collect();
    let quality = if b.runs.iter().any(|c| c.precision == Precision::Fp8) {
        "FP8 weights change the answers (usually slightly): whether that quality is acceptable is yours to decide, and FP8 can be ruled out with `model.precision = \"bf16\"`"
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
    format!(
        "{} on {}: {} at the busiest slot; with {:.0}% {} FLOPS and bandwidth the same traffic needs {}{}",
        s.tier,
        s.config,
        replicas_and_gpus(s.replicas, s.gpus_per_replica),
        s.faster_by.abs() * 100.0,
        if s.faster_by >= 0.0 { "more" } else { "less" },
        replicas_and_gpus(s.replicas_after, s.gpus_per_replica),
        if s.replicas_after == s.replicas {
            " — no change: whole replicas absorb the difference"
        } else {
            ""
        }
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
