//! The MILP's input from the scenario, its demand and the capacity table:
//! dominated configurations pruned, API prices per request.

use super::SolveOptions;
use crate::capacity::fleet::FleetCapacity;
use crate::capacity::{self, CapacityEntry, Verdict};
use crate::demand::{Demand, TierDemand};
use crate::milp::{
    ApiTerms, ConfigOption, GpuType, Problem, Purchase, Settings, Solution, SpotTerms, TierInput,
    TierRules,
};
use crate::scenario::{Scenario, Simulation};

pub(super) fn api_usd_per_request(scenario: &Scenario, k: usize, d: &TierDemand) -> Option<f64> {
    scenario.api_of(k).map(|a| {
        (d.input_tokens.mean * a.usd_per_million_input_tokens
            + d.output_tokens.mean * a.usd_per_million_output_tokens)
            / 1e6
    })
}

/// Replicas a slot whose peak is `peak_rps` needs: the fleet step function
/// read at `peak_rps / factor` (a factor below 1 tightens, above 1 loosens),
/// and never fewer than keep the slot's queues bounded: its sustained rate
/// `mean_rps` within the stability ceiling (`max_utilisation` × saturated
/// throughput per replica). The ceiling holds over the slot, not its
/// busiest minute: a burst above it queues for a minute, which the replay
/// measures and the rounds answer.
pub(super) fn replicas_for(
    fleet: &FleetCapacity,
    peak_rps: f64,
    mean_rps: f64,
    factor: f64,
    simulation: &Simulation,
) -> u32 {
    let stable_per_replica = simulation.max_utilisation * fleet.saturated_rps_per_replica;
    let floor = if stable_per_replica > 0.0 {
        (mean_rps / stable_per_replica - 1e-9).ceil().max(1.0) as u32
    } else {
        1
    };
    fleet.replicas_needed(peak_rps / factor).max(floor)
}

/// The rate tier `k`'s fleets are sized for in slot `t`, and the rate they
/// sustain over it: the slot's peak and mean less what the previous round
/// sent to the API (all of it in the first round); a deadline tier's
/// replicas serve a volume the MILP places, each sized at the rate of the
/// fleet its busiest mean slot needs, in every slot.
/// `busiest_mean_rps` is the deadline tier's busiest mean slot (`None`
/// for a tier without a deadline).
fn served_rps(
    d: &TierDemand,
    gpu_share: &[Vec<f64>],
    k: usize,
    t: usize,
    busiest_mean_rps: Option<f64>,
) -> (f64, f64) {
    let peak = d.peak_rps[t];
    let share = gpu_share.get(k).and_then(|v| v.get(t)).copied();
    let mean = d.mean_rps.get(t).copied().unwrap_or(peak);
    match (busiest_mean_rps, share) {
        (Some(busiest), _) => (busiest, busiest),
        (None, Some(x)) if x > 0.0 => (peak * x, mean * x),
        _ => (peak, mean),
    }
}

/// A deadline tier's busiest mean slot, `None` for a tier without one.
fn busiest_mean_rps(scenario: &Scenario, k: usize, d: &TierDemand) -> Option<f64> {
    let tier = &scenario.tiers[k];
    tier.rules
        .deadline_slots(scenario.planning.slot_minutes)
        .map(|_| d.mean_rps.iter().copied().fold(0.0, f64::max))
}

/// Per tier, the share of its factors down to which the horizon's plan
/// `used` (a solution of `problem`, the MILP of `sizing`) stays the MILP's
/// answer: each configuration the plan runs in a slot keeps the replicas it
/// needs there (`n` while `served / factor ≤ capacity(n)`), and every
/// other one only needs more. The share is the largest `served / (factor ×
/// capacity(n))` over the configurations with a step function the plan runs
/// and their slots (1 where there is none). The replay checked fleets, not
/// factors: past this share a factor is where the rounds' last step
/// happened to land (a tier held at one replica far over its target keeps
/// whatever factor its loosening reached), and sizing a grown month with it
/// would carry that seed-dependent excess into the term.
pub(super) fn least_equivalent_shares(
    scenario: &Scenario,
    demand: &Demand,
    capacity: &[Vec<CapacityEntry>],
    sizing: Sizing<'_>,
    (problem, used): (&Problem, &Solution),
) -> Vec<f64> {
    problem
        .tiers
        .iter()
        .enumerate()
        .map(|(k, tier)| {
            let d = &demand.tiers[k];
            let busiest = busiest_mean_rps(scenario, k, d);
            let mut share: f64 = 0.0;
            for (c, option) in tier.options.iter().enumerate() {
                let Some(f) = capacity[k][option.entry].fleet.as_ref() else {
                    continue;
                };
                // Slots where the plan runs it, reserved, on demand or spot.
                let runs = (0..d.peak_rps.len())
                    .filter(|&t| used.replicas[k][c][t] + used.spot[k][c][t] > 0);
                for t in runs {
                    let (served, sustained) = served_rps(d, sizing.gpu_share, k, t, busiest);
                    if served <= 0.0 {
                        continue;
                    }
                    let factor = sizing.factor(k, t);
                    let n = replicas_for(f, served, sustained, factor, &scenario.simulation);
                    let capacity_rps = f.capacity_rps(n);
                    if capacity_rps > 0.0 {
                        share = share.max(served / (factor * capacity_rps));
                    }
                }
            }
            // A hair above, so that the read at the share rounds to the same
            // replicas.
            if share > 0.0 {
                (share * (1.0 + 1e-9)).min(1.0)
            } else {
                1.0
            }
        })
        .collect()
}

/// What a round sizes fleets with: per tier the factor its demand read from
/// the step functions is divided by, per tier and slot a further factor for
/// the slots of windows that missed their target (1 until one does), and per
/// tier and slot the share of the peak its GPUs carry (1 until a round sends
/// some of it to the API).
#[derive(Debug, Clone, Copy)]
pub(super) struct Sizing<'a> {
    pub factors: &'a [f64],
    pub window_factors: &'a [Vec<f64>],
    pub gpu_share: &'a [Vec<f64>],
}

impl Sizing<'_> {
    /// Tier `k`'s factor in slot `t`.
    pub(super) fn factor(&self, k: usize, t: usize) -> f64 {
        let w = self
            .window_factors
            .get(k)
            .and_then(|v| v.get(t))
            .copied()
            .unwrap_or(1.0);
        self.factors[k] * w
    }
}

/// The MILP's problem; each option's `entry` is its configuration's index
/// in the tier's capacity table: with capacity by simulation, the
/// configurations that have a fleet step function; with the analytic
/// model, those not dominated.
pub(super) fn milp_input(
    scenario: &Scenario,
    demand: &Demand,
    capacity: &[Vec<CapacityEntry>],
    sizing: Sizing<'_>,
) -> Problem {
    let gpu_share = sizing.gpu_share;
    let gpus = scenario
        .gpus
        .iter()
        .map(|g| GpuType {
            id: g.id.clone(),
            reserved_usd_per_gpu_hour: g.reserved_usd_per_gpu_hour,
            on_demand_usd_per_gpu_hour: g.on_demand_usd_per_gpu_hour,
            max_gpus: g.max_gpus,
            purchase: Purchase {
                unit_gpus: g.purchase.unit_gpus,
                min_rental_slots: g.purchase.min_rental_slots(scenario.planning.slot_minutes),
            },
            spot: g.spot.map(|s| SpotTerms {
                usd_per_gpu_hour: s.usd_per_gpu_hour,
                availability: s.availability,
                yield_share: s.yield_share(f64::from(scenario.planning.slot_minutes) / 60.0),
            }),
        })
        .collect();
    let tiers = scenario
        .tiers
        .iter()
        .enumerate()
        .map(|(k, tier)| {
            let d = &demand.tiers[k];
            let deadline_slots = tier.rules.deadline_slots(scenario.planning.slot_minutes);
            let busiest = busiest_mean_rps(scenario, k, d);
            let with_fleet: Vec<usize> = (0..capacity[k].len())
                .filter(|&i| capacity[k][i].fleet.is_some())
                .collect();
            let kept = if with_fleet.is_empty() {
                let all: Vec<usize> = (0..capacity[k].len()).collect();
                capacity::non_dominated(&capacity[k], &all)
            } else {
                with_fleet
            };
            let options = kept
                .iter()
                .map(|&i| {
                    let e = &capacity[k][i];
                    // One replica's figure; a pooling candidate (one replica
                    // cannot, a fleet can) has a step function instead.
                    let single_rps = match (&e.verdict, &e.fleet) {
                        (Verdict::Serves(s), _) => s.max_rps,
                        (Verdict::Cannot { .. }, Some(f)) => {
                            f.capacity_rps(f.max_replicas()) / f64::from(f.max_replicas().max(1))
                        }
                        (Verdict::Cannot { .. }, None) => {
                            unreachable!("only serving entries and fleets are kept")
                        }
                    };
                    let rps_by_slot = (0..d.peak_rps.len())
                        .map(|t| {
                            let (served, sustained) = served_rps(d, gpu_share, k, t, busiest);
                            match &e.fleet {
                                Some(f) if served > 0.0 => {
                                    let factor = sizing.factor(k, t);
                                    let n = replicas_for(
                                        f,
                                        served,
                                        sustained,
                                        factor,
                                        &scenario.simulation,
                                    );
                                    served / f64::from(n)
                                }
                                Some(_) => single_rps,
                                None => single_rps * sizing.factor(k, t),
                            }
                        })
                        .collect();
                    ConfigOption {
                        gpu: e.gpu,
                        gpus_per_replica: e.gpus_per_replica,
                        rps_by_slot,
                        entry: i,
                    }
                })
                .collect();
            let api = if tier.api_allowed {
                api_usd_per_request(scenario, k, d).map(|usd| ApiTerms {
                    usd_per_request: usd,
                    tokens_per_request: d.input_tokens.mean + d.output_tokens.mean,
                })
            } else {
                None
            };
            TierInput {
                name: tier.name.clone(),
                peak_rps: d.peak_rps.clone(),
                mean_rps: d.mean_rps.clone(),
                options,
                api,
                rules: TierRules {
                    max_configurations: tier.rules.max_configurations,
                    headroom_replicas: tier.rules.headroom_replicas,
                    deadline_slots,
                    spot_allowed: tier.rules.spot_allowed,
                },
            }
        })
        .collect();
    Problem {
        slot_hours: demand.slot_hours(),
        gpus,
        tiers,
        // One API's rate limit (a pooled fleet's models each state their
        // own: `scenario::validate` refuses more than one there).
        api_max_tokens_per_minute: scenario
            .models
            .iter()
            .find_map(|m| m.api.as_ref()?.max_tokens_per_minute),
        block_slots: None,
    }
}

/// The solver's settings: the scenario's `[planning]`, with the log file and
/// warm start the run asks for.
pub(super) fn settings(scenario: &Scenario, options: &SolveOptions) -> Settings {
    Settings {
        mip_gap: scenario.planning.mip_gap,
        time_limit_s: scenario.planning.time_limit_s,
        threads: scenario.planning.threads,
        log_file: options.solver_log.clone(),
        warm_start: options.warm_start,
        method: scenario.planning.milp_method,
        node_limit: None,
        branch_prices: crate::milp::decomposed::BRANCH_PRICES,
    }
}
