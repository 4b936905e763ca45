//! Text rendering of a plan: the answer first (cost, GPUs), then how each tier
//! is served, the alternatives, the four questions, and the inputs.

use super::usd;
use crate::capacity::Verdict;
use crate::demand::source::CapacityLengths;
use crate::milp::Method;
use crate::solve::Outcome;
use std::fmt::Write as _;

/// On-demand GPUs of each rented type, slot by slot, 24 slots a row.
fn on_demand_grid(o: &mut String, outcome: &Outcome) {
    let plan = &outcome.plan;
    for gpu in plan.reserved.keys() {
        let rented: Vec<u32> = plan
            .on_demand
            .iter()
            .map(|s| s.get(gpu).copied().unwrap_or(0))
            .collect();
        if rented.iter().all(|&n| n == 0) {
            continue;
        }
        let _ = writeln!(o, "  on-demand {gpu} by slot:");
        slot_rows(o, &rented);
    }
}

/// Spot GPUs requested of each type, slot by slot, 24 slots a row.
fn spot_grid(o: &mut String, outcome: &Outcome) {
    let plan = &outcome.plan;
    let Some(spot) = &plan.spot else { return };
    for (gpu, price) in &outcome.prices.gpus {
        let Some(terms) = price.spot else { continue };
        let requested: Vec<u32> = spot
            .iter()
            .map(|s| s.get(gpu).copied().unwrap_or(0))
            .collect();
        if requested.iter().all(|&n| n == 0) {
            continue;
        }
        let _ = writeln!(
            o,
            "  spot {gpu} requested by slot ({:.0}% expected granted, {} interruptions per GPU-hour):",
            terms.availability * 100.0,
            terms.interruptions_per_hour
        );
        slot_rows(o, &requested);
    }
}

/// Counts per slot, 24 slots a row, each row headed by its slot range.
fn slot_rows(o: &mut String, counts: &[u32]) {
    for (row, chunk) in counts.chunks(24).enumerate() {
        let first = row * 24;
        let cells: Vec<String> = chunk.iter().map(|n| format!("{n:>3}")).collect();
        let _ = writeln!(
            o,
            "    {:>4}-{:<4}{}",
            first,
            first + chunk.len() - 1,
            cells.join("")
        );
    }
}

fn percentile_of(outcome: &Outcome, tier: &str) -> f64 {
    outcome.slo.get(tier).map_or(0.0, |s| s.percentile)
}

/// The yearly commitment of the reserved GPUs, per GPU type.
fn commitment_lines(o: &mut String, outcome: &Outcome) {
    let c = &outcome.commitment;
    if c.gpu_types.is_empty() {
        let _ = writeln!(
            o,
            "  reservation commitment   {:>14}   (nothing reserved)",
            "0"
        );
        return;
    }
    let _ = writeln!(
        o,
        "  reservation commitment   {:>14}   per year (reserved GPUs × reserved price × 8,760 h, paid used or not)",
        usd(c.usd_per_year)
    );
    for (gpu, line) in &c.gpu_types {
        let _ = writeln!(
            o,
            "    {gpu:<22} {:>14}   {} {} × {:.3} USD/GPU-h; term: {}",
            usd(line.usd_per_year),
            line.gpus,
            crate::base::numbers::noun(u64::from(line.gpus), "GPU", "GPUs"),
            line.reserved_usd_per_gpu_hour,
            line.term
        );
    }
    if let Some(term) = &c.term {
        let what = if term.first_reservation {
            "first reservation"
        } else {
            "term"
        };
        let _ = writeln!(
            o,
            "  over the {}-month {what}   {:>14}   buys {} reserved GPU-hours; the planned pattern, repeated unchanged, occupies {:.1}% of them",
            term.months,
            usd(term.usd),
            crate::base::numbers::group_thousands(term.reserved_gpu_hours.round() as i64),
            term.occupied_share * 100.0
        );
        for (gpu, line) in &c.gpu_types {
            if let Some(offer) = line.offer_term_months.filter(|&t| t > term.months) {
                let _ = writeln!(
                    o,
                    "    {gpu}: its {offer}-month offer is paid for all {offer} months, past the {}-month {what}",
                    term.months
                );
            }
        }
    }
    if let Some(warning) = &c.short_horizon_warning {
        let _ = writeln!(o, "  WARNING: {warning}");
    }
}

/// The deployments the plan runs under the price for complexity, with the
/// saving each buys, and what the price took out.
fn operations_lines(o: &mut String, ops: &crate::plan::Operations) {
    let _ = writeln!(
        o,
        "OPERATIONS (a price for complexity: {} USD per deployment and {} per GPU vendor over the horizon, [planning] usd_per_deployment_month and usd_per_gpu_vendor_month; it decides what runs and is not in the totals)",
        usd(ops.usd_per_deployment),
        usd(ops.usd_per_vendor)
    );
    let _ = writeln!(
        o,
        "  {} deployment{} on {} vendor{} ({}): {} USD to operate",
        ops.deployments.len(),
        if ops.deployments.len() == 1 { "" } else { "s" },
        ops.vendors.len(),
        if ops.vendors.len() == 1 { "" } else { "s" },
        ops.vendors.join(", "),
        usd(ops.operating_usd)
    );
    for d in &ops.deployments {
        let why = match d.saving_usd {
            Some(saving) => format!("running without it costs {} USD more", usd(saving)),
            None => "not priced without it: its tier runs nothing else and may not use the API, or no plan serves the tier without it".to_string(),
        };
        let _ = writeln!(
            o,
            "  {:<12} {:<34} {:>5.1}% of its requests; {why}",
            d.tier,
            d.deployment,
            d.share * 100.0
        );
    }
    for d in &ops.dropped {
        let _ = writeln!(
            o,
            "  left out: {d} (it saved less than it costs to operate)"
        );
    }
    if !ops.dropped.is_empty() {
        let _ = writeln!(
            o,
            "  the solver line's bound and gap are those of the plans without what was left out"
        );
    }
}

/// The plan as aligned text.
pub fn render(outcome: &Outcome) -> String {
    let plan = &outcome.plan;
    let mut out = String::new();
    let o = &mut out;
    let misses = super::sentences::misses(outcome);
    if !misses.is_empty() {
        let _ = writeln!(
            o,
            "TARGET MISSED — this plan's own replay does not keep its promise:"
        );
        for miss in misses {
            let _ = writeln!(o, "  {miss}");
        }
        let _ = writeln!(o);
    }
    let _ = writeln!(
        o,
        "planner — scenario `{}`: {} ({})",
        plan.scenario,
        plan.model.name,
        match plan.model.precision.as_str() {
            "bf16" | "fp8" | "fp4" => plan.model.precision.to_uppercase(),
            other => other.to_string(),
        }
    );
    if let Some(s) = &plan.model.speculative {
        let _ = writeln!(
            o,
            "speculative decoding searched beside running without: {}, {} draft token{} a step{}, acceptance {:.2} ({}); its figures are modelled (docs/model.md §2.3), not fitted to measured speculative runs",
            s.speculation.method.name(),
            s.speculation.tokens,
            if s.speculation.tokens == 1 { "" } else { "s" },
            s.draft.as_ref().map_or(String::new(), |d| format!(" drafted by {d}")),
            s.speculation.acceptance,
            s.acceptance_source
        );
    }
    let _ = writeln!(
        o,
        "horizon {} slots × {} min = {:.1} h; solver{}: {} ({} integer variables)",
        plan.solver.slots,
        (plan.slot_hours * 60.0).round(),
        plan.horizon_hours,
        plan.solver
            .term_months
            .map_or(String::new(), |m| format!(" over the {m}-month term")),
        crate::report::solver_status(plan.solver.status, plan.solver.mip_gap_tolerance),
        plan.solver.integer_variables
    );
    let method = match plan.solver.method {
        Method::Decomposed => "decomposed",
        Method::Monolithic | Method::Auto => "monolithic",
    };
    match &outcome.commitment.growth {
        Some(t) => {
            let _ = writeln!(o, "{}", super::growth_text::solver_line(t, method));
        }
        None => {
            let _ = writeln!(
                o,
                "  {method} method: proven within {}% of the optimum (no plan costs less than {} USD)",
                // Rounded toward what is proven: the gap up, the bound down.
                super::gap_percent_up(plan.solver.proven_gap),
                floor_usd(plan.solver.lower_bound_usd, plan.total_cost_usd),
            );
        }
    }
    for dropped in super::sentences::dropped_over_context(outcome) {
        let _ = writeln!(o, "DEMAND LEFT OUT — {dropped}");
    }
    let _ = writeln!(o);
    o.push_str(&super::purchase_text::render(
        &outcome.purchase,
        outcome.design_check.as_ref(),
        &outcome.tier_order,
        plan.horizon_hours,
    ));
    if let Some(w) = &outcome.without_units {
        let _ = writeln!(o, "  units      {}", super::sentences::without_units(w));
    }
    for (name, reason) in unservable_tiers(outcome) {
        let _ = writeln!(
            o,
            "  WARNING    tier {name}: no configuration on the offered GPUs meets its limits ({reason}), so all of its requests go to the API; if that is not meant, check the tier's ttft_ms, tpot_ms and percentile (INPUTS names each GPU type's reason)"
        );
    }
    // A plan replayed on a sample of its slots met there, which is not the
    // contract's every window: the purchase says so where it is signed.
    if let Some(v) = outcome
        .verification
        .as_ref()
        .filter(|v| v.replayed_slots.len() < plan.solver.slots)
    {
        let _ = writeln!(
            o,
            "  replayed   on {} of {} slots only (`simulation.verify = \"sample-only\"`): the windows the targets are judged on were not replayed whole; `planner simulate --plan PLAN.json --slots all` (or a solve without sample-only) is the check before signing",
            v.replayed_slots.len(),
            plan.solver.slots
        );
    }
    if let Some(h) = &outcome.held_out {
        let _ = writeln!(o, "\nDAYS SET ASIDE ([check] days)");
        let _ = writeln!(o, "  {}", super::sentences::held_out(h));
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "COST (USD; prices are the scenario's, with their sources below, not live quotes)"
    );
    let _ = writeln!(
        o,
        "  total over the horizon   {:>14}   ({} per 730-h month)",
        usd(plan.total_cost_usd),
        usd(plan.cost_per_month_usd)
    );
    let _ = writeln!(
        o,
        "    reserved               {:>14}",
        usd(plan.costs.reserved_usd)
    );
    let _ = writeln!(
        o,
        "    on demand              {:>14}",
        usd(plan.costs.on_demand_usd)
    );
    let _ = writeln!(
        o,
        "    API                    {:>14}",
        usd(plan.costs.api_usd)
    );
    if plan.costs.spot_usd > 0.0 {
        let _ = writeln!(
            o,
            "    spot                   {:>14}   (granted spot GPUs × spot price)",
            usd(plan.costs.spot_usd)
        );
    }
    commitment_lines(o, outcome);
    let _ = writeln!(
        o,
        "  per 1,000 output tokens  {:>14.5}   (total cost over the {:.3e} output tokens of the horizon at each slot's mean demand, SLO met or not)",
        plan.cost_per_1k_output_tokens_usd, plan.output_tokens
    );
    let _ = writeln!(
        o,
        "  GPU utilisation          {:>13.1}%   (mean traffic / SLO capacity paid for)",
        plan.gpu_utilisation * 100.0
    );
    let _ = writeln!(
        o,
        "  sent to the API          {:>13.1}%   of requests",
        plan.api_share * 100.0
    );
    let _ = writeln!(o);
    super::growth_text::section(o, outcome);
    super::unit_costs_text::render(o, &outcome.unit_costs, outcome.prices.any_api());
    let _ = writeln!(o);
    let _ = writeln!(o, "GPUS");
    let _ = writeln!(
        o,
        "  {:<14} {:>9}  {:>26}  {:>10}",
        "type", "reserved", "on demand min/mean/max", "peak total"
    );
    for (gpu, &reserved) in &plan.reserved {
        let rented: Vec<u32> = plan
            .on_demand
            .iter()
            .map(|s| s.get(gpu).copied().unwrap_or(0))
            .collect();
        let (min, max) = (
            rented.iter().min().copied().unwrap_or(0),
            rented.iter().max().copied().unwrap_or(0),
        );
        let mean = rented.iter().map(|&n| f64::from(n)).sum::<f64>() / rented.len().max(1) as f64;
        if reserved == 0 && max == 0 {
            continue;
        }
        let _ = writeln!(
            o,
            "  {gpu:<14} {reserved:>9}  {:>26}  {:>10}",
            format!("{min} / {mean:.1} / {max}"),
            reserved + max
        );
    }
    on_demand_grid(o, outcome);
    spot_grid(o, outcome);
    if let Some(idle) = &plan.idle_reserved {
        let _ = writeln!(
            o,
            "  idle reserved GPU-hours  {:.1}; {:.1} without the deadline tiers' replicas (their volume fills {:.1})",
            idle.gpu_hours,
            idle.gpu_hours_without_deadline_tiers,
            idle.gpu_hours_without_deadline_tiers - idle.gpu_hours
        );
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "TIERS");
    for (name, tier) in &plan.tiers {
        let d = &outcome.demand[name];
        let peak = d.peak_rps.iter().copied().fold(0.0, f64::max);
        let slo = &outcome.slo[name];
        let deadline = slo
            .rules
            .deadline_hours
            .map_or(String::new(), |h| format!(", done within {h} h of arrival"));
        let factor = if (tier.capacity_factor - 1.0).abs() > 1e-9 {
            format!(
                "; fleets sized for its demand ÷ {:.3}, the factor of the round whose plan is kept (REPLAY, rounds), on the per-replica figures below",
                tier.capacity_factor
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            o,
            "  {name}: p{} TTFT ≤ {} ms and TPOT ≤ {} ms{deadline}; busiest slot {peak:.2} req/s{factor}",
            slo.percentile, slo.ttft_ms, slo.tpot_ms
        );
        for c in &tier.configurations {
            let max = c.replicas_by_slot.iter().max().copied().unwrap_or(0);
            let min = c.replicas_by_slot.iter().min().copied().unwrap_or(0);
            let spot = match (
                c.spot_replicas_by_slot.iter().min(),
                c.spot_replicas_by_slot.iter().max(),
            ) {
                (Some(lo), Some(hi)) => format!(
                    "   spot replicas requested {lo}–{hi} (each expected to yield {:.0}%)",
                    c.spot_yield_share.unwrap_or(0.0) * 100.0
                ),
                _ => String::new(),
            };
            let (one, many) = if c.config.disaggregated.is_some() {
                ("unit", "units")
            } else {
                ("replica", "replicas")
            };
            let _ = writeln!(
                o,
                "    {:<30} {:>8.3} req/s per {one} ({} GPU{})   {many} {min}–{max}   serves {:>5.1}% of the tier's requests{spot}",
                c.label,
                c.rps_per_replica,
                c.gpus_per_replica,
                if c.gpus_per_replica == 1 { "" } else { "s" },
                c.share * 100.0
            );
        }
        if tier.api_share > 0.0 {
            let _ = writeln!(
                o,
                "    {:<30} {:>52} serves {:>5.1}% of the tier's requests",
                "API",
                "",
                tier.api_share * 100.0
            );
        }
    }
    how_to_run(o, outcome);
    let _ = writeln!(o);
    let _ = writeln!(o, "ALTERNATIVES (the plan's MILP on the same demand, capacity figures and rules, one choice taken away)");
    if outcome.commitment.growth.is_some() {
        let _ = writeln!(
            o,
            "  on the horizon alone: the plan's reservations are sized for the term's growth, so an alternative may cost less here"
        );
    }
    for (name, b) in &outcome.baselines {
        match b.total_cost_usd {
            Some(cost) => {
                let delta = if plan.total_cost_usd > 0.0 {
                    (cost / plan.total_cost_usd - 1.0) * 100.0
                } else {
                    0.0
                };
                let _ = writeln!(
                    o,
                    "  {name:<22} {:>14}  {:>+7.1}% vs plan   {}",
                    usd(cost),
                    delta,
                    b.description
                );
            }
            None => {
                let _ = writeln!(
                    o,
                    "  {name:<22} {:>14}  {:>16}   {}",
                    "n/a", "", b.description
                );
            }
        }
    }
    let _ = writeln!(o);
    if let Some(ops) = &plan.operations {
        operations_lines(o, ops);
        let _ = writeln!(o);
    }
    if let Some(v) = &outcome.verification {
        o.push_str(&super::verification_text::render(
            v,
            &outcome.rounds,
            outcome
                .design_check
                .as_ref()
                .filter(|c| c.met)
                .map(|c| c.design_seed),
        ));
        if let Some(w) = &outcome.without_api {
            let _ = writeln!(o, "  {}", super::sentences::without_api(w));
        }
        let _ = writeln!(o);
    }
    let _ = writeln!(o, "QUESTIONS");
    let _ = writeln!(
        o,
        "  1. At which lengths, model and quality was the capacity obtained?"
    );
    for basis in &outcome.questions.capacity_basis {
        let _ = writeln!(o, "     - {}", super::sentences::capacity_basis(basis));
    }
    let _ = writeln!(
        o,
        "  2. How many requests and output tokens met both latency limits?"
    );
    let _ = writeln!(
        o,
        "     {}",
        super::sentences::slo_met(outcome.verification.as_ref(), &outcome.tier_order)
    );
    let _ = writeln!(
        o,
        "  3. Cost over all output tokens or over SLO-met output tokens?"
    );
    let _ = writeln!(
        o,
        "     {}",
        super::sentences::cost_basis(outcome.verification.as_ref())
    );
    let _ = writeln!(
        o,
        "  4. Does a speed-up (or a slow-down) change the number of servers?"
    );
    for s in &outcome.questions.speedup {
        let _ = writeln!(o, "     - {}", super::sentences::speedup(s));
    }
    for p in &outcome.questions.speed_plans {
        let _ = writeln!(o, "     - {}", super::sentences::speed_plan(p));
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "INPUTS");
    let _ = writeln!(o, "  demand: {}", outcome.demand_method);
    for (name, d) in &outcome.demand {
        for s in &d.tier.sources {
            let what = match &s.aggregate_tier {
                Some(t) => format!(
                    "aggregate {}, tier `{t}`; capacity runs on {}; replay samples its requests",
                    s.trace,
                    match s.capacity_lengths {
                        CapacityLengths::AggregateBins => "lengths drawn from its bins (its format version records no length sample)",
                        _ => "its recorded length sample (the trace's own requests)",
                    }
                ),
                None => s.trace.clone(),
            };
            let _ = writeln!(
                o,
                "    {name}: {what} ({} requests over {:.0} s, scale {})",
                s.requests, s.span_s, s.scale
            );
            if let Some(step) = s.quantised_step_s {
                let _ = writeln!(
                    o,
                    "      timestamps quantised to about {step:.1} s: the measured within-minute CV is an artefact of the rounding; planned with {:.2} ({}; set [[demand]] within_minute_cv to change it)",
                    s.within_minute_cv,
                    if s.within_minute_cv == crate::traces::quantised::FALLBACK_WITHIN_MINUTE_CV { "the Poisson assumption" } else { "the scenario's figure" }
                );
            }
        }
    }
    let _ = writeln!(
        o,
        "  capacity of one replica facing the whole tier (the screen; fleet step functions: `planner capacity`), best configuration per GPU type and tier:"
    );
    let mut trickle = false;
    for (name, entries) in &outcome.capacity {
        let mut best: std::collections::BTreeMap<&str, (f64, String)> =
            std::collections::BTreeMap::new();
        let mut reasons: std::collections::BTreeMap<&str, String> =
            std::collections::BTreeMap::new();
        for e in entries {
            match &e.verdict {
                Verdict::Serves(s) => {
                    let per_gpu = s.max_rps / f64::from(e.gpus_per_replica);
                    let cur = best
                        .entry(&e.config.gpu_type)
                        .or_insert((0.0, String::new()));
                    if per_gpu > cur.0 {
                        trickle |= s.max_rps < 0.1;
                        *cur = (per_gpu, format!("{} → {:.3} req/s per replica, at that rate p{} TTFT {:.0} ms, TPOT {:.1} ms, limited by {}", e.config.label(), s.max_rps, percentile_of(outcome, name), s.ttft_ms, s.tpot_ms, s.binding));
                    }
                }
                Verdict::Cannot { reason, .. } => {
                    reasons
                        .entry(&e.config.gpu_type)
                        .or_insert_with(|| reason.clone());
                }
            }
        }
        for (gpu, reason) in &reasons {
            if !best.contains_key(gpu) {
                let _ = writeln!(o, "    {name} on {gpu}: cannot serve ({reason})");
            }
        }
        for (_, (_, line)) in best {
            let _ = writeln!(o, "    {name}: {line}");
        }
    }
    if trickle {
        let _ = writeln!(
            o,
            "    (a figure below 0.1 req/s means one replica alone meets the limits only at a trickle: the tier's bursts arrive together and wait on it; behind the router a fleet pools them, so the per-replica rates the plan uses, under TIERS, come from simulated fleets, not from these)"
        );
    }
    let _ = writeln!(o, "  prices:");
    for (gpu, p) in &outcome.prices.gpus {
        let fmt = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.3}"));
        let reserved = match p.reserved_usd_per_gpu_hour {
            Some(price) => match p.reserved_offer {
                Some(_) => format!(
                    "reserved {price:.3} effective over the term ({})",
                    p.reserved_term
                ),
                None => format!("reserved {price:.3} ({})", p.reserved_term),
            },
            None => "no reservation".to_string(),
        };
        let _ = writeln!(
            o,
            "    {gpu:<14} {reserved}, on demand {} USD/GPU-h; {}",
            fmt(p.on_demand_usd_per_gpu_hour),
            p.source
        );
    }
    for (model, api) in outcome.prices.apis() {
        let _ = writeln!(
            o,
            "    API {}{}: {} / {} USD per 1M input / output tokens; {}",
            model.map_or(String::new(), |m| format!("for {m} ")),
            api.name,
            api.usd_per_million_input_tokens,
            api.usd_per_million_output_tokens,
            api.price_source
        );
    }
    out
}

/// A lower bound rounded down, to the cent (whole dollars from 1,000 up),
/// or to a hundredth of a cent under a dollar and where rounding down to
/// the cent would print it a cent under a `total` it rounds to.
fn floor_usd(amount: f64, total: f64) -> String {
    let cents = (amount * 100.0).floor() / 100.0;
    let total_cents = (total * 100.0).round() / 100.0;
    let rounds_to_total = amount >= total_cents - 0.005 && cents < total_cents;
    if amount.abs() >= 1000.0 {
        usd(amount.floor())
    } else if amount.abs() >= 1.0 && !rounds_to_total {
        usd(cents)
    } else {
        format!("{:.4}", (amount * 10_000.0).floor() / 10_000.0)
    }
}

/// Each configuration's launch command and the benchmark that checks it.
fn how_to_run(o: &mut String, outcome: &Outcome) {
    if outcome.how_to_run.is_empty() {
        return;
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "HOW TO RUN AND CHECK (one replica of each configuration; the capacity figures are predictions for these engines)"
    );
    for r in &outcome.how_to_run {
        let _ = writeln!(o, "  {} / {} ({}):", r.tier, r.config, r.engine);
        let _ = writeln!(o, "    launch:    {}", r.launch_command);
        let _ = writeln!(o, "    benchmark: {}", r.benchmark_command);
        let _ = writeln!(o, "    passes if: {}", r.passes_if);
    }
}

/// The tiers none of whose configurations serves at any rate, each with the
/// first configuration's reason: the plan sends them wholly to the API.
fn unservable_tiers(outcome: &Outcome) -> Vec<(&str, &str)> {
    outcome
        .capacity
        .iter()
        .filter(|(_, entries)| {
            !entries.is_empty()
                && entries
                    .iter()
                    .all(|e| !matches!(&e.verdict, Verdict::Serves(s) if s.max_rps > 0.0))
        })
        .filter_map(|(name, entries)| {
            entries.iter().find_map(|e| match &e.verdict {
                Verdict::Cannot { reason, .. } => Some((name.as_str(), reason.as_str())),
                Verdict::Serves(_) => None,
            })
        })
        .collect()
}

#[cfg(test)]
mod bound_tests {
    use super::floor_usd;
    use crate::report::gap_percent_up;

    #[test]
    fn a_bound_a_cent_under_its_total_by_rounding_shows_its_hundredths() {
        assert_eq!(floor_usd(5.81999, 5.82), "5.8199");
        assert_eq!(floor_usd(115.0598, 115.06), "115.0598");
        assert_eq!(floor_usd(5.70, 5.82), "5.70");
        assert_eq!(floor_usd(188.151, 188.16), "188.15");
        assert_eq!(floor_usd(6569.2, 6569.24), "6,569");
    }

    #[test]
    fn a_gap_is_rounded_up_but_not_past_floating_point_noise() {
        assert_eq!(gap_percent_up(0.005_000_000_000_07), 0.5);
        assert_eq!(gap_percent_up(0.005_01), 0.51);
        assert_eq!(gap_percent_up(1.2e-6), 0.01);
        assert_eq!(gap_percent_up(0.0), 0.0);
    }
}
