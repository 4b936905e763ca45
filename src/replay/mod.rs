//! Plans verified by replay: builds the simulator's fleet from a plan file,
//! replays the scenario's traces against it (all slots, or a sample), and
//! reports per tier attainment, latency percentiles, goodput and the cost of
//! SLO-met output. Used by `planner simulate` and inside `planner solve`.

mod apart;
pub(crate) mod goodput;
pub(crate) mod slots;
pub(crate) mod verification;

use crate::base::progress::Progress;
use crate::demand::source::KeptSource;
use crate::demand::workload::{SourceReplay, TierReplay, TraceReplay};
use crate::demand::Demand;
use crate::plan::file::{PlanFile, PlannedConfig};
use crate::plan::switches;
use crate::replay::slots::{Reuse, SlotReplays};
use crate::replay::verification::{
    ConfigUtilisation, PrefixCacheUse, TierVerification, Verification,
};
use crate::scenario::{Scenario, VerifySlots};
use crate::sim::kv_cache::PrefixSource;
use crate::sim::metrics::{GroupTally, SlotTally};
use crate::sim::{
    simulate_observed, Completed, Fleet, FleetTier, Group, Limits, ReplicaSpec, SimResult, Spot,
    TierTally,
};
use crate::traces::block_chains::{shared_prefix, BlockChains, SHARED_PREFIX_LATER};
use crate::traces::prefix_reuse::PrefixReuse;
use std::sync::Arc;

/// Slots replayed in "sample" mode besides each tier's most loaded slot and
/// the busiest slot: this many, evenly spaced.
pub(crate) const EVENLY_SPACED_SLOTS: usize = 4;

/// The replica of a planned configuration of the scenario's GPU types.
/// on tier `k`'s model.
pub(crate) fn replica_spec(
    scenario: &Scenario,
    k: usize,
    c: &PlannedConfig,
) -> Option<ReplicaSpec> {
    let c = &c.config;
    let model = scenario.model_of(k);
    let offer = model.gpus.iter().find(|g| g.id == c.gpu_type)?;
    Some(c.replica(offer, model, scenario.simulation.scheduler))
}

/// The fleet of a checked plan: a group per (tier, configuration).
pub(crate) fn fleet(
    scenario: &Scenario,
    demand: &Demand,
    plan: &PlanFile,
    replay: &TraceReplay,
) -> Fleet {
    let mut groups = Vec::new();
    let mut tiers = Vec::new();
    for (k, tier) in scenario.tiers.iter().enumerate() {
        let planned = &plan.tiers[&tier.name];
        for c in &planned.configurations {
            let Some(spec) = replica_spec(scenario, k, c) else {
                continue; // `PlanFile::check` has rejected unknown GPU types
            };
            let config_label = c.config.label();
            let offer = scenario.gpus.iter().find(|g| g.id == c.config.gpu_type);
            let spot = offer.and_then(|g| g.spot);
            // In a pooled fleet a replica that starts in a slot loads its
            // model first (`plan::switches`).
            let (loading, load_s) = match offer.filter(|_| scenario.pooled()) {
                Some(o) => (
                    switches::starts(&c.replicas_by_slot),
                    switches::load_s(spec.perf.weight_bytes_per_gpu(), o.weights_load_gb_per_s),
                ),
                None => (Vec::new(), 0.0),
            };
            if let (Some(terms), false) = (spot, c.spot_replicas_by_slot.is_empty()) {
                groups.push(Group {
                    tier: k,
                    label: format!("{config_label} spot"),
                    spec: spec.clone(),
                    replicas_by_slot: c.spot_replicas_by_slot.clone(),
                    rps_per_replica: c.rps_per_replica,
                    spot: Some(Spot {
                        availability: terms.availability,
                        interruptions_per_hour: terms.interruptions_per_hour,
                    }),
                    loading_by_slot: Vec::new(),
                    load_s: 0.0,
                });
            }
            let spot_only =
                !c.spot_replicas_by_slot.is_empty() && c.replicas_by_slot.iter().all(|&n| n == 0);
            if !spot_only {
                groups.push(Group {
                    tier: k,
                    label: config_label,
                    spec,
                    replicas_by_slot: c.replicas_by_slot.clone(),
                    rps_per_replica: c.rps_per_replica,
                    spot: None,
                    loading_by_slot: loading,
                    load_s,
                });
            }
        }
        tiers.push(FleetTier {
            name: tier.name.clone(),
            limits: Limits {
                ttft_ms: tier.ttft_ms,
                tpot_ms: tier.tpot_ms,
            },
            api_share_by_slot: planned.api_share_by_slot.clone(),
            mean_output_tokens: demand.tiers[k].output_tokens.mean,
            deadline_s: tier.rules.deadline_hours.map(|h| h * 3600.0),
        });
    }
    Fleet {
        slot_s: f64::from(scenario.planning.slot_minutes) * 60.0,
        tiers,
        groups,
        router: scenario.simulation.router,
        prefixes: PrefixSource::of_replay(replay.chains.as_ref(), replay.reuse.as_ref()),
    }
}

/// The scenario's traces ready for replay, from what
/// [`crate::demand::build_keeping`] kept (indexed like `scenario.demand`):
/// a trace's requests, or an aggregate's tier to sample requests from.
pub(crate) fn traces(scenario: &Scenario, demand: &Demand, kept: Vec<KeptSource>) -> TraceReplay {
    let slot_s = f64::from(scenario.planning.slot_minutes) * 60.0;
    let shaped = scenario.shape.is_some();
    let seed = scenario.simulation.seed;
    let mut sources: Vec<Vec<SourceReplay>> = vec![Vec::new(); scenario.tiers.len()];
    // Every trace's chains in one list, each trace's from its own offset;
    // every aggregate's sampled requests' prefix reuse likewise.
    let mut chains: Option<BlockChains> = None;
    let mut reuse: Option<PrefixReuse> = None;
    for (j, (source, kept)) in scenario.demand.iter().zip(kept).enumerate() {
        let replay = match kept {
            KeptSource::Requests(r, None) => SourceReplay::new(r, source.scale, slot_s, shaped),
            KeptSource::Requests(r, Some(own)) => {
                let all = chains.get_or_insert_with(|| BlockChains::new(own.block_tokens));
                let first = all.append(own.as_ref());
                SourceReplay::with_chains(r, first, source.scale, slot_s, shaped)
            }
            KeptSource::Nothing => SourceReplay::new(Vec::new(), source.scale, slot_s, shaped),
            KeptSource::Aggregate(t) => {
                let replay = SourceReplay::from_aggregate(
                    &t,
                    source.scale,
                    slot_s,
                    shaped,
                    (seed, (source.tier as u64, j as u64)),
                );
                let own = t.prefixes.as_ref().filter(|_| {
                    scenario.simulation.prefix_caching && source.shared_prefix_tokens.is_none()
                });
                match own {
                    Some(p) => {
                        let own = PrefixReuse::from_steps(p.block_tokens, &p.steps);
                        match &mut reuse {
                            None => {
                                reuse = Some(own);
                                replay.reusing_from(0)
                            }
                            Some(all) if all.block_tokens() == own.block_tokens() => {
                                replay.reusing_from(all.append(&own))
                            }
                            // Blocks of another size: no hit is invented.
                            Some(_) => replay,
                        }
                    }
                    None => replay,
                }
            }
        };
        // A prefix model: every request of the source begins with the same
        // system prompt (its chain 1, a request after the first).
        let replay = match source.shared_prefix_tokens {
            Some(tokens) if scenario.simulation.prefix_caching => {
                let own = shared_prefix(j, tokens);
                let all = chains.get_or_insert_with(|| BlockChains::new(own.block_tokens));
                replay.sharing_chain(all.append(&own) + SHARED_PREFIX_LATER)
            }
            _ => replay,
        };
        sources[source.tier].push(replay);
    }
    let tiers = sources
        .into_iter()
        .zip(&demand.tiers)
        .map(|(sources, d)| TierReplay {
            sources,
            mean_rps: d.mean_rps.clone(),
        })
        .collect();
    TraceReplay {
        tiers,
        slot_s,
        shaped,
        seed: scenario.simulation.seed,
        first_slot: 0,
        chains: chains.map(Arc::new),
        reuse: reuse.map(Arc::new),
    }
}

/// The slots "sample" mode replays: per tier the slot with the highest
/// demand per unit of planned GPU capacity, the slot with the highest total
/// demand, and [`EVENLY_SPACED_SLOTS`] evenly spaced ones.
pub(crate) fn sample_slots(demand: &Demand, plan: &PlanFile) -> Vec<usize> {
    let slots = demand.slots;
    let mut chosen = Vec::new();
    for d in &demand.tiers {
        let Some(planned) = plan.tiers.get(&d.tier) else {
            continue;
        };
        let load = |t: usize| {
            let capacity: f64 = planned
                .configurations
                .iter()
                .map(|c| f64::from(c.replicas_by_slot[t]) * c.rps_per_replica)
                .sum();
            let on_gpus = d.peak_rps[t] * (1.0 - planned.api_share_by_slot[t]);
            if capacity > 0.0 {
                on_gpus / capacity
            } else if on_gpus > 0.0 {
                f64::INFINITY
            } else {
                0.0
            }
        };
        if let Some(t) = (0..slots).max_by(|&a, &b| load(a).total_cmp(&load(b)).then(b.cmp(&a))) {
            chosen.push(t);
        }
    }
    let total = |t: usize| demand.tiers.iter().map(|d| d.peak_rps[t]).sum::<f64>();
    if let Some(t) = (0..slots).max_by(|&a, &b| total(a).total_cmp(&total(b)).then(b.cmp(&a))) {
        chosen.push(t);
    }
    for i in 0..EVENLY_SPACED_SLOTS.min(slots) {
        chosen.push((2 * i + 1) * slots / (2 * EVENLY_SPACED_SLOTS));
    }
    chosen.sort_unstable();
    chosen.dedup();
    chosen
}

/// Replays `slots` of `replay` against the plan. `All` replays every slot in
/// one continuous run; `Sample` replays [`sample_slots`], each from an empty
/// fleet, on all cores.
pub(crate) fn verify(
    scenario: &Scenario,
    demand: &Demand,
    plan: &PlanFile,
    replay: &TraceReplay,
    mode: VerifySlots,
    progress: Progress,
) -> Verification {
    verify_with(
        scenario,
        demand,
        plan,
        replay,
        mode,
        &SlotReplays::default(),
        progress,
    )
}

/// Whether the slots of the scenario can be replayed one at a time: not
/// when a deadline tier's volume crosses slots (only a continuous replay
/// carries its backlog from one slot to the next).
pub(crate) fn slots_independent(scenario: &Scenario) -> bool {
    scenario
        .tiers
        .iter()
        .all(|t| t.rules.deadline_hours.is_none())
}

/// Every slot of the horizon replayed alone from an empty fleet, through
/// `cache` (the slots whose fleet an earlier plan of the solve ran are not
/// replayed again); a scenario with a deadline tier is replayed in one
/// continuous run instead (no reuse then).
pub(crate) fn verify_every_slot(
    scenario: &Scenario,
    demand: &Demand,
    plan: &PlanFile,
    replay: &TraceReplay,
    cache: &SlotReplays,
    progress: Progress,
) -> (Verification, Option<Reuse>) {
    if !slots_independent(scenario) {
        return (verify_whole(scenario, demand, plan, replay, progress), None);
    }
    let slots: Vec<usize> = (0..demand.slots).collect();
    let method = format!(
        "all {} slots, each replayed alone from an empty fleet",
        demand.slots
    );
    let (v, reuse) = verify_alone(
        scenario,
        demand,
        plan,
        replay,
        (slots, method),
        cache,
        progress,
    );
    (v, Some(reuse))
}

/// [`verify`], the sampled slots replayed through `cache`.
pub(crate) fn verify_with(
    scenario: &Scenario,
    demand: &Demand,
    plan: &PlanFile,
    replay: &TraceReplay,
    mode: VerifySlots,
    cache: &SlotReplays,
    progress: Progress,
) -> Verification {
    let sampled = matches!(mode, VerifySlots::Sample | VerifySlots::SampleOnly);
    if !sampled || !slots_independent(scenario) {
        return verify_whole(scenario, demand, plan, replay, progress);
    }
    let slots = sample_slots(demand, plan);
    let method = if slots.len() == demand.slots {
        format!(
            "all {} slots (the sample holds every one), each replayed from an empty fleet",
            demand.slots
        )
    } else {
        format!(
            "{} of {} slots (each tier's most loaded, the busiest, {EVENLY_SPACED_SLOTS} evenly spaced), each replayed from an empty fleet",
            slots.len(),
            demand.slots
        )
    };
    verify_alone(
        scenario,
        demand,
        plan,
        replay,
        (slots, method),
        cache,
        progress,
    )
    .0
}

/// Every slot in one continuous run.
fn verify_whole(
    scenario: &Scenario,
    demand: &Demand,
    plan: &PlanFile,
    replay: &TraceReplay,
    progress: Progress,
) -> Verification {
    verify_range(
        scenario,
        demand,
        plan,
        replay,
        0..demand.slots,
        progress,
        None,
    )
}

/// `slots`, each replayed alone through `cache`, reported under `method`.
fn verify_alone(
    scenario: &Scenario,
    demand: &Demand,
    plan: &PlanFile,
    replay: &TraceReplay,
    (slots, method): (Vec<usize>, String),
    cache: &SlotReplays,
    progress: Progress,
) -> (Verification, Reuse) {
    let fleet = fleet(scenario, demand, plan, replay);
    let (result, reuse) = cache.replay(&fleet, &slots, replay, scenario.simulation.seed, progress);
    (
        report(scenario, plan, &fleet, slots, &result, method),
        reuse,
    )
}

/// Replays the slots in `range` in one continuous run from an empty fleet
/// (a one-slot range is that slot replayed alone). Without `on_completed`
/// its tiers run at once on separate threads where that is the same replay
/// ([`apart::simulate_apart`]); with it (`simulate --requests-out`) every
/// completed request is handed to it in completion order, in one run.
pub(crate) fn verify_range(
    scenario: &Scenario,
    demand: &Demand,
    plan: &PlanFile,
    replay: &TraceReplay,
    range: std::ops::Range<usize>,
    progress: Progress,
    on_completed: Option<&mut dyn FnMut(&Completed)>,
) -> Verification {
    let fleet = fleet(scenario, demand, plan, replay);
    let bar = progress.steps("replaying slots", range.len() as u64);
    let start = range.start;
    let seed = scenario.simulation.seed;
    let on_slot = |s: usize| bar.set_position((s - start) as u64);
    let apart = match on_completed {
        Some(_) => None,
        None => apart::simulate_apart(&fleet, range.clone(), replay, seed, on_slot),
    };
    let r = apart.unwrap_or_else(|| {
        let mut on_completed = on_completed;
        replay.with_arrivals_ahead(range.clone(), |arrivals| {
            simulate_observed(&fleet, range.clone(), arrivals, seed, on_slot, |c| {
                if let Some(f) = on_completed.as_mut() {
                    f(c);
                }
            })
        })
    });
    bar.finish_and_clear();
    let method = continuous_method(&range, demand.slots);
    report(scenario, plan, &fleet, range.collect(), &r, method)
}

/// How a continuous replay of `range` (of `slots`) is described.
fn continuous_method(range: &std::ops::Range<usize>, slots: usize) -> String {
    if range.len() == slots {
        format!("all {slots} slots, replayed in one continuous run")
    } else if range.len() == 1 {
        format!(
            "slot {} of {slots}, replayed alone from an empty fleet",
            range.start
        )
    } else {
        format!(
            "slots {}-{} of {slots}, replayed in one continuous run from an empty fleet",
            range.start,
            range.end - 1
        )
    }
}

/// Sums independent single-slot replays, slot rows in order.
pub(crate) fn merge<'a>(
    results: impl IntoIterator<Item = &'a SimResult>,
    tiers: usize,
    groups: usize,
) -> SimResult {
    let mut total = SimResult {
        tiers: vec![TierTally::default(); tiers],
        slots: Vec::new(),
        groups: vec![GroupTally::default(); groups],
        requests: 0,
        events: 0,
        peak_in_flight: 0,
    };
    for r in results {
        for (a, b) in total.tiers.iter_mut().zip(&r.tiers) {
            a.merge(b);
        }
        total.slots.extend(r.slots.iter().cloned());
        for (a, b) in total.groups.iter_mut().zip(&r.groups) {
            a.merge(b);
        }
        total.requests += r.requests;
        total.events += r.events;
        total.peak_in_flight = total.peak_in_flight.max(r.peak_in_flight);
    }
    total
}

/// GPU spend of each replayed slot, allocated to tiers by the GPUs their
/// replicas occupy; spend on GPUs no tier occupies is shared in proportion to
/// the GPUs each tier occupies in that slot (or equally when none).
fn gpu_cost_by_tier(scenario: &Scenario, plan: &PlanFile, slots: &[usize]) -> Vec<f64> {
    let slot_h = f64::from(plan.slot_minutes) / 60.0;
    let mut cost = vec![0.0; scenario.tiers.len()];
    for &t in slots {
        let mut slot_cost = vec![0.0; scenario.tiers.len()];
        let mut unallocated = 0.0;
        for offer in &scenario.gpus {
            let reserved = f64::from(plan.reserved.get(&offer.id).copied().unwrap_or(0));
            let rented = f64::from(plan.on_demand[t].get(&offer.id).copied().unwrap_or(0));
            let spend = (reserved * offer.reserved_usd_per_gpu_hour.unwrap_or(0.0)
                + rented * offer.on_demand_usd_per_gpu_hour.unwrap_or(0.0))
                * slot_h;
            let used: Vec<f64> = scenario
                .tiers
                .iter()
                .map(|tier| {
                    plan.tiers[&tier.name]
                        .configurations
                        .iter()
                        .filter(|c| c.config.gpu_type == offer.id)
                        .map(|c| f64::from(c.replicas_by_slot[t] * c.config.gpus_per_replica()))
                        .sum()
                })
                .collect();
            // Spot GPUs are paid for the share granted, by the tier using them.
            if let Some(spot) = offer.spot {
                for (tier_cost, tier) in slot_cost.iter_mut().zip(&scenario.tiers) {
                    let gpus: f64 = plan.tiers[&tier.name]
                        .configurations
                        .iter()
                        .filter(|c| c.config.gpu_type == offer.id)
                        .map(|c| {
                            f64::from(c.spot_replicas_by_slot.get(t).copied().unwrap_or(0))
                                * f64::from(c.config.gpus_per_replica())
                        })
                        .sum();
                    *tier_cost += gpus * spot.availability * spot.usd_per_gpu_hour * slot_h;
                }
            }
            let all: f64 = used.iter().sum();
            if all > 0.0 {
                for (c, u) in slot_cost.iter_mut().zip(&used) {
                    *c += spend * u / all;
                }
            } else {
                unallocated += spend;
            }
        }
        let allocated: f64 = slot_cost.iter().sum();
        let n = slot_cost.len() as f64;
        for (c, s) in cost.iter_mut().zip(&slot_cost) {
            *c += s + if allocated > 0.0 {
                unallocated * s / allocated
            } else {
                unallocated / n
            };
        }
    }
    cost
}

/// What the replay says about sources it sampled instead of replaying.
pub(crate) fn sampling_note(scenario: &Scenario) -> Option<String> {
    let sampled: Vec<String> = scenario
        .demand
        .iter()
        .filter_map(|d| {
            let name = d.aggregate_tier.as_ref()?;
            Some(format!(
                "{} (tier `{name}` of the aggregate {})",
                scenario.tiers[d.tier].name,
                d.trace.display()
            ))
        })
        .collect();
    (!sampled.is_empty()).then(|| {
        format!(
            "requests of {} sampled from the aggregate (each second's recorded arrivals, or a minute's count and dispersion before format version 3; lengths from its pairs and length sample), not replayed",
            sampled.join(", ")
        )
    })
}

fn report(
    scenario: &Scenario,
    plan: &PlanFile,
    fleet: &Fleet,
    slots: Vec<usize>,
    r: &SimResult,
    method: String,
) -> Verification {
    let method = match sampling_note(scenario) {
        Some(note) => format!("{method}; {note}"),
        None => method,
    };
    let gpu_cost = gpu_cost_by_tier(scenario, plan, &slots);
    let per_1k = |usd: f64, tokens: u64| {
        if tokens > 0 {
            usd / tokens as f64 * 1e3
        } else {
            0.0
        }
    };
    let tiers = scenario
        .tiers
        .iter()
        .enumerate()
        .map(|(k, tier)| {
            let t = &r.tiers[k];
            let api_usd = scenario.api_of(k).map_or(0.0, |a| {
                (t.api_input_tokens as f64 * a.usd_per_million_input_tokens
                    + t.api_output_tokens as f64 * a.usd_per_million_output_tokens)
                    / 1e6
            });
            let cost_usd = gpu_cost[k] + api_usd;
            let output_tokens = t.output_tokens + t.api_output_tokens;
            let goodput = t.goodput_output_tokens + t.api_output_tokens;
            let target = tier.percentile / 100.0;
            let slot_attainment: Vec<(usize, u64, f64)> = slots
                .iter()
                .zip(&r.slots)
                .filter(|(_, s)| s[k].on_gpus > 0)
                .map(|(&slot, s)| (slot, s[k].on_gpus, attainment(&s[k])))
                .collect();
            let worst_slot = slot_attainment
                .iter()
                .map(|&(slot, _, a)| (slot, a))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            let windows = crate::replay::verification::windows(
                tier.rules.slo_window,
                (plan.slots, plan.slot_minutes),
                &slots,
                &r.slots,
                k,
                target,
            );
            let windows_meeting = windows.iter().filter(|w| w.meets_target).count();
            let any_complete = windows.iter().any(|w| w.complete);
            let worst_window = windows
                .iter()
                .copied()
                .filter(|w| w.complete || !any_complete)
                .min_by(|a, b| a.attainment.total_cmp(&b.attainment));
            let windows_missing = windows
                .iter()
                .filter(|w| w.complete && !w.meets_target)
                .count();
            let v = TierVerification {
                attainment: t.attainment(),
                target,
                meets_target: t.attainment() >= target && windows_missing == 0,
                requests: t.requests,
                api_requests: t.api_requests,
                served_requests: t.served_requests,
                unserved_requests: t.unserved_requests,
                late_requests: tier.rules.deadline_hours.map(|_| t.late),
                interrupted_requests: plan.tiers[&tier.name]
                    .configurations
                    .iter()
                    .any(|c| !c.spot_replicas_by_slot.is_empty())
                    .then_some(t.interrupted),
                prefix_cache: fleet
                    .prefixes
                    .is_some()
                    .then(|| PrefixCacheUse::of(t.served_input_tokens, t.cached_input_tokens)),
                prefix_source: fleet.prefixes.is_some().then(|| prefix_source(scenario, k)),
                met_ttft: t.met_ttft,
                met_tpot: t.met_tpot,
                met_both: t.met_both,
                ttft_p50_ms: t.ttft_quantile_ms(0.5, tier.ttft_ms),
                ttft_p99_ms: t.ttft_quantile_ms(0.99, tier.ttft_ms),
                tpot_p50_ms: t.tpot_quantile_ms(0.5, tier.tpot_ms),
                tpot_p99_ms: t.tpot_quantile_ms(0.99, tier.tpot_ms),
                ttft_distribution_ms: crate::replay::verification::distribution(|q| {
                    t.ttft_quantile_ms(q, tier.ttft_ms)
                }),
                tpot_distribution_ms: crate::replay::verification::distribution(|q| {
                    t.tpot_quantile_ms(q, tier.tpot_ms)
                }),
                e2e_p99_ms: t.e2e.quantile_ms(0.99),
                queue_p99_ms: t.queue.quantile_ms(0.99),
                output_tokens,
                goodput_output_tokens: goodput,
                cost_usd,
                cost_per_1k_output_tokens_usd: per_1k(cost_usd, output_tokens),
                cost_per_1k_goodput_tokens_usd: per_1k(cost_usd, goodput),
                worst_slot,
                slot_attainment,
                slo_window: tier.rules.slo_window,
                windows,
                windows_meeting,
                worst_window,
            };
            (tier.name.clone(), v)
        })
        .collect();
    let configurations = fleet
        .groups
        .iter()
        .zip(&r.groups)
        .map(|(g, tally)| ConfigUtilisation {
            tier: fleet.tiers[g.tier].name.clone(),
            config: g.label.clone(),
            utilisation: if tally.up_s > 0.0 {
                tally.busy_s / tally.up_s
            } else {
                0.0
            },
            mean_batch: if tally.busy_s > 0.0 {
                tally.batch_s / tally.busy_s
            } else {
                0.0
            },
            max_batch: g.spec.max_batch,
            preemptions: tally.preemptions,
            replicas: tally
                .replicas
                .iter()
                .filter(|(up, _)| *up > 0.0)
                .map(|(up, busy)| busy / up)
                .collect(),
            sides: g.spec.split.as_ref().and_then(|split| {
                let (x, y) = (split.prefill_replicas, split.decode_replicas);
                let per_replica_up = tally.up_s / f64::from(x + y);
                let busy = |i: usize| tally.sides_busy_s.get(i).copied().unwrap_or(0.0);
                (per_replica_up > 0.0).then(|| crate::replay::verification::UnitSides {
                    shape: crate::scenario::pd_ratio::PdRatio {
                        prefill: x,
                        decode: y,
                    },
                    prefill_stepping: busy(0) / (per_replica_up * f64::from(x)),
                    decode_stepping: busy(1) / (per_replica_up * f64::from(y)),
                })
            }),
        })
        .collect();
    Verification {
        method,
        replayed_slots: slots,
        seed: scenario.simulation.seed,
        requests: r.requests,
        events: r.events,
        peak_in_flight: r.peak_in_flight,
        tiers,
        configurations,
        prefix_router: fleet.prefixes.as_ref().map(|_| fleet.router),
    }
}

/// Where tier `k`'s prefix-cache hits come from, source by source: what
/// the report says beside the hit rate, so that a stated model's hits do not
/// read as measured.
fn prefix_source(scenario: &Scenario, k: usize) -> String {
    let sources: Vec<String> = scenario
        .demand
        .iter()
        .filter(|d| d.tier == k)
        .map(|d| match (&d.sessions, d.shared_prefix_tokens, &d.aggregate_tier) {
            (Some(s), _, _) => format!(
                "stated sessions of up to {} turns at least {} s apart (a model, not the trace's)",
                s.turns, s.gap_s
            ),
            (None, Some(n), _) => format!(
                "a stated system prompt of {n} tokens (a model, not the trace's)"
            ),
            (None, None, Some(_)) => "the aggregate's prefixes table, where it has one (each request finds what one cache of its replica's memory finds over the whole log; the router plays no part)".to_string(),
            (None, None, None) => "the trace's block hashes, where it names them".to_string(),
        })
        .collect();
    sources.join("; ")
}

fn attainment(s: &SlotTally) -> f64 {
    if s.on_gpus == 0 {
        1.0
    } else {
        s.met_both as f64 / s.on_gpus as f64
    }
}
