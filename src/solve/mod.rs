//! The `solve` pipeline: scenario → demand → capacity → MILP → plan → replay,
//! re-solved with tighter capacity while a tier misses its target.

use crate::base::error::PlannerError;
use crate::base::progress::Progress;
use crate::capacity::simulated;
use crate::capacity::{self, CapacityEntry};
use crate::demand::{self, Demand};
use crate::milp::{self, MilpError};
use crate::money::baselines;
use crate::plan::file::PlanFile;
use crate::plan::{Plan, Round, WithoutApi};
use crate::replay;
use crate::replay::verification::Verification;
use crate::scenario::{self, CapacitySource, Scenario, VerifySlots};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod assemble;
mod feasibility;
mod input;
mod term;

use assemble::{api_prices, assemble, cost_basis_answer, slo_met_answer};
use feasibility::{check_servable, explain_infeasible};
use input::milp_input;

/// Speed-up factor used to answer "does a faster chip change the GPU count?".
pub const SPEEDUP_FACTOR: f64 = 1.25;

/// How to run the pipeline.
#[derive(Debug, Clone)]
pub struct SolveOptions {
    pub progress: Progress,
    /// Where HiGHS writes its log, if anywhere.
    pub solver_log: Option<PathBuf>,
    /// Start the MILP from the rounding heuristic's plan (the default).
    pub warm_start: bool,
    /// Where simulated capacities are cached; `None` recomputes them.
    pub cache_dir: Option<PathBuf>,
}

impl SolveOptions {
    /// Defaults: no log, warm start on, the given progress bars.
    pub fn new(progress: Progress) -> Self {
        SolveOptions {
            progress,
            solver_log: None,
            warm_start: true,
            cache_dir: simulated::default_cache_dir(),
        }
    }
}

/// Reads the scenario at `path` and solves it.
pub fn solve_file(path: &Path, options: &SolveOptions) -> Result<Plan, PlannerError> {
    let scenario = scenario::load(path)?;
    solve(&scenario, options)
}

/// Solves a validated scenario: capacity per configuration (fleet step
/// functions by simulation, or the queueing model), the MILP, then (unless
/// `simulation.verify = "off"`) a replay of the traces against the plan.
/// The replay loop works both ways: a tier under its target is tightened (its
/// demand read from the step functions is divided by a factor below 1), a
/// tier more than `attainment_margin_points` over it that holds more than one
/// replica is loosened, and once a tier has both a factor that met and one
/// that missed, the next factor bisects them; a step that changes no fleet
/// is followed by another before anything is replayed again. A tier that
/// missed while its plan moved traffic to the API that its fleets were not
/// sized for is first re-solved with fleets sized for it, untightened. It stops when
/// every tier sits in [target, target + margin], when no step changes the
/// fleets any more, or after `simulation.max_rounds` rounds, and returns the
/// cheapest plan whose replay met every target, else the last.
///
/// When that plan sends part of a tier to the API and the rounds had to
/// tighten the tier (its smaller fleets pooled its bursts less than sized
/// for), the scenario is solved again with those tiers kept off the API, and
/// the cheaper of the two plans that meets every target is returned, with
/// both costs in [`Plan::without_api`].
pub fn solve(scenario: &Scenario, options: &SolveOptions) -> Result<Plan, PlannerError> {
    let verify = scenario.simulation.verify != VerifySlots::Off;
    // Demand and the replay's traces do not depend on which tiers may use
    // the API: read once for both solves.
    let (demand, requests) = demand::build_keeping(scenario, options.progress, verify)?;
    let replay = verify.then(|| replay::traces(scenario, &demand, requests));
    let plan = solve_rounds(scenario, &demand, replay.as_ref(), options)?;
    let tiers = tightened_on_api(scenario, &plan);
    if tiers.is_empty() {
        return Ok(plan);
    }
    let mut kept_off = scenario.clone();
    for &k in &tiers {
        kept_off.tiers[k].api_allowed = false;
    }
    // Without the API the GPU quotas may not cover the tier: then the plan
    // with the API stands.
    let Ok(other) = solve_rounds(&kept_off, &demand, replay.as_ref(), options) else {
        return Ok(plan);
    };
    let meets = |p: &Plan| p.missed_targets.is_empty();
    let take = meets(&other) && (!meets(&plan) || other.total_cost_usd < plan.total_cost_usd);
    let summary = WithoutApi {
        tiers: tiers
            .iter()
            .map(|&k| scenario.tiers[k].name.clone())
            .collect(),
        total_cost_usd: other.total_cost_usd,
        meets_targets: meets(&other),
        with_api_total_cost_usd: plan.total_cost_usd,
        with_api_meets_targets: meets(&plan),
        other_rounds: if take {
            plan.rounds.clone()
        } else {
            other.rounds.clone()
        },
        chosen: take,
    };
    let mut chosen = if take { other } else { plan };
    chosen.without_api = Some(summary);
    Ok(chosen)
}

/// The tiers that send traffic to the API in `plan` and whose capacity
/// figures its rounds tightened (or whose target it misses).
fn tightened_on_api(scenario: &Scenario, plan: &Plan) -> Vec<usize> {
    let Some(last) = plan.rounds.last() else {
        return Vec::new();
    };
    scenario
        .tiers
        .iter()
        .enumerate()
        .filter(|(_, t)| {
            let on_api = plan.tiers.get(&t.name).is_some_and(|p| p.api_share > 0.0);
            let tightened = last.capacity_factor.get(&t.name).is_some_and(|&f| f < 1.0);
            let missed = plan
                .verification
                .as_ref()
                .is_some_and(|v| !v.tiers[&t.name].meets_target);
            on_api && (tightened || missed)
        })
        .map(|(k, _)| k)
        .collect()
}

/// [`solve`]'s rounds on `scenario` as it stands, with its demand and (when
/// the plan is verified) the traces to replay.
fn solve_rounds(
    scenario: &Scenario,
    demand: &Demand,
    replay: Option<&crate::demand::workload::TraceReplay>,
    options: &SolveOptions,
) -> Result<Plan, PlannerError> {
    let progress = options.progress;
    // With demand growing over the term, fleets are sized up to its busiest month.
    let sizing = term::sizing_demand(scenario, demand);
    let sizing = sizing.as_ref().unwrap_or(demand);
    let mut factors = vec![1.0; scenario.tiers.len()];
    let mut capacity = capacity_table(scenario, sizing, &factors, options);
    check_servable(scenario, demand, &capacity)?;
    // The alternatives serve every request on GPUs (but all-api): they are
    // priced on fleets sized for the whole peak, not on the per-replica rates
    // of fleets sized for the share a round's GPUs carry, which a small share
    // makes low.
    let whole = vec![vec![1.0; demand.slots]; scenario.tiers.len()];
    let api_prices = api_prices(scenario, demand);
    let mut brackets = vec![Bracket::default(); scenario.tiers.len()];
    // Per tier and slot, the share of the peak the GPUs served in the last
    // round (1 until a round sends some of it to the API).
    let mut gpu_share: Vec<Vec<f64>> = vec![vec![1.0; demand.slots]; scenario.tiers.len()];
    let mut rounds = Vec::new();
    let mut best: Option<Plan> = None;
    let mut last: Option<Last> = None;
    let mut silent_steps = 0;
    let mut resized_last = vec![false; scenario.tiers.len()];
    loop {
        if scenario.simulation.capacity == CapacitySource::Simulated {
            simulated::extend_fleets(
                &mut capacity,
                scenario,
                &sizing.tiers,
                &need_rps(sizing, &factors),
                options.cache_dir.as_deref(),
                progress,
            );
        }
        let (input, option_entries) =
            milp_input(scenario, demand, &capacity, (&factors, &gpu_share), options);
        let coverage = coverage_of(&input);
        // The same MILP as the last round gives the same plan: skip it.
        let solved = if last.as_ref().is_some_and(|l| l.coverage == coverage) {
            None
        } else {
            // With growth, the term's MILP beside it (same capacity,
            // factors and shares).
            let over_term = term::term_input(
                scenario,
                demand,
                &capacity,
                (&factors, &gpu_share),
                options,
                &input,
            );
            let alternatives = if gpu_share == whole {
                baselines::compute(&input, &api_prices)
            } else {
                let (full, _) =
                    milp_input(scenario, demand, &capacity, (&factors, &whole), options);
                baselines::compute(&full, &api_prices)
            };
            let mut plan = solve_once(
                scenario,
                demand,
                capacity.clone(),
                (input, option_entries, over_term.as_ref()),
                (&factors, options),
            )?;
            plan.baselines = alternatives;
            Some(plan)
        };
        if let Some(l) = &last {
            if solved.as_ref().is_none_or(|p| same_fleets(&l.plan, p)) {
                // A step too small to change any fleet: its replay would
                // repeat the last one. Step the moved tiers again, the same
                // way, until the fleets change or the brackets stop them.
                silent_steps += 1;
                if silent_steps <= MAX_SILENT_STEPS
                    && step_again(
                        &mut factors,
                        &l.factors,
                        &brackets,
                        scenario.simulation.tighten_factor,
                    )
                {
                    continue;
                }
                let l = last.take().expect("checked");
                return Ok(finish(scenario, best.unwrap_or(l.plan), rounds));
            }
        }
        silent_steps = 0;
        let mut plan = solved.expect("a new MILP was solved");
        let Some(replay) = replay else {
            return Ok(plan);
        };
        let plan_file = PlanFile::of(&plan, scenario.planning.slot_minutes);
        let v = replay::verify(
            scenario,
            demand,
            &plan_file,
            replay,
            scenario.simulation.verify,
            progress,
        );
        rounds.push(Round {
            round: rounds.len() as u32 + 1,
            total_cost_usd: plan.total_cost_usd,
            capacity_factor: named(scenario, &factors),
            attainment: scenario
                .tiers
                .iter()
                .map(|t| (t.name.clone(), v.tiers[&t.name].attainment))
                .collect(),
        });
        let met = scenario.tiers.iter().all(|t| v.tiers[&t.name].meets_target);
        let shares = gpu_shares(scenario, &plan);
        // A tier whose plan sends to the API a share its fleets were not
        // sized for runs smaller fleets than its figures assumed, and a
        // smaller fleet pools its bursts less: its miss is first answered
        // by sizing its fleets for that share (next round), not by
        // tightening its figures, once in a row.
        let resized: Vec<bool> = shares
            .iter()
            .zip(&gpu_share)
            .zip(&resized_last)
            .map(|((now, used), &last)| {
                !last && !shares_close(std::slice::from_ref(now), std::slice::from_ref(used))
            })
            .collect();
        let next = next_factors(scenario, &plan, &v, &factors, (&mut brackets, &resized));
        resized_last = resized;
        plan.questions.slo_met = slo_met_answer(scenario, &v);
        plan.questions.cost_basis = cost_basis_answer(&v);
        plan.verification = Some(v);
        if met
            && best
                .as_ref()
                .is_none_or(|b| plan.total_cost_usd < b.total_cost_usd)
        {
            best = Some(plan.clone());
        }
        // Every tier in its band, or no factor left to move while the GPU
        // shares (which size the fleets) have settled.
        let settled = next == factors && (met || shares_close(&shares, &gpu_share));
        gpu_share = shares;
        if settled || rounds.len() as u32 >= scenario.simulation.max_rounds {
            return Ok(finish(scenario, best.unwrap_or(plan), rounds));
        }
        last = Some(Last {
            plan,
            coverage,
            factors: factors.clone(),
        });
        factors = next;
    }
}

/// The first round's MILP (every capacity factor 1, every slot's traffic on
/// GPUs), as [`solve`] builds it, with the capacity behind it; for timing
/// the MILP on its own (`planner bench`).
pub fn first_round_milp(
    scenario: &Scenario,
    demand: &Demand,
    options: &SolveOptions,
) -> milp::MilpInput {
    let factors = vec![1.0; scenario.tiers.len()];
    let mut capacity = capacity_table(scenario, demand, &factors, options);
    if scenario.simulation.capacity == CapacitySource::Simulated {
        simulated::extend_fleets(
            &mut capacity,
            scenario,
            &demand.tiers,
            &need_rps(demand, &factors),
            options.cache_dir.as_deref(),
            options.progress,
        );
    }
    let gpu_share = vec![vec![1.0; demand.slots]; scenario.tiers.len()];
    milp_input(scenario, demand, &capacity, (&factors, &gpu_share), options).0
}

/// Each tier's factor for the next round, from its bracket and the replay.
fn next_factors(
    scenario: &Scenario,
    plan: &Plan,
    v: &Verification,
    factors: &[f64],
    (brackets, resized): (&mut [Bracket], &[bool]),
) -> Vec<f64> {
    let margin = scenario.simulation.attainment_margin_points / 100.0;
    scenario
        .tiers
        .iter()
        .zip(factors)
        .zip(brackets)
        .zip(resized)
        .map(|(((tier, &factor), bracket), &resized)| {
            let r = &v.tiers[&tier.name];
            if resized && !r.meets_target {
                return factor;
            }
            bracket.next(
                factor,
                v.tiers[&tier.name].attainment,
                (tier.percentile / 100.0, margin),
                max_replicas(plan, &tier.name) > 1 && tier.rules.headroom_replicas == 0,
                scenario.simulation.tighten_factor,
            )
        })
        .collect()
}

/// Per tier and slot, the share of the peak the plan serves on GPUs.
fn gpu_shares(scenario: &Scenario, plan: &Plan) -> Vec<Vec<f64>> {
    scenario
        .tiers
        .iter()
        .map(|t| {
            plan.tiers[&t.name]
                .api_share_by_slot
                .iter()
                .map(|a| 1.0 - a)
                .collect()
        })
        .collect()
}

/// Most factor steps in a row that change no fleet before the loop stops.
const MAX_SILENT_STEPS: u32 = 16;

/// The last replayed round: its plan, what its MILP's coverage rows read,
/// and the factors behind them.
struct Last {
    plan: Plan,
    coverage: Vec<Vec<Vec<f64>>>,
    factors: Vec<f64>,
}

/// Moves every tier whose factor changed since `replayed` one more step
/// (`tighten`, or its inverse) in the same direction, unless that crosses a
/// factor its bracket already knows the outcome of (or leaves [1e-3, 1e3]);
/// whether any tier moved.
fn step_again(factors: &mut [f64], replayed: &[f64], brackets: &[Bracket], tighten: f64) -> bool {
    let mut moved = false;
    for ((f, &r), b) in factors.iter_mut().zip(replayed).zip(brackets) {
        let step = if *f < r {
            tighten
        } else if *f > r {
            1.0 / tighten
        } else {
            continue;
        };
        let candidate = *f * step;
        let crosses = if step < 1.0 {
            b.met.is_some_and(|m| candidate <= m)
        } else {
            b.missed.is_some_and(|m| candidate >= m)
        };
        if !crosses && (1e-3..=1e3).contains(&candidate) {
            *f = candidate;
            moved = true;
        }
    }
    moved
}

/// The chosen plan with the rounds that led to it and the targets it misses.
fn finish(scenario: &Scenario, mut chosen: Plan, rounds: Vec<Round>) -> Plan {
    chosen.rounds = rounds;
    chosen.missed_targets = missed_targets(scenario, &chosen);
    chosen
}

/// Whether two plans hold the same GPUs and replicas and send the same
/// shares to the API in every slot.
fn same_fleets(a: &Plan, b: &Plan) -> bool {
    let fleets = |p: &Plan| {
        p.tiers
            .iter()
            .map(|(name, t)| {
                let configs: Vec<(String, Vec<u32>)> = t
                    .configurations
                    .iter()
                    .map(|c| (c.config.clone(), c.replicas_by_slot.clone()))
                    .collect();
                (name.clone(), configs, t.api_share_by_slot.clone())
            })
            .collect::<Vec<_>>()
    };
    a.reserved == b.reserved && a.on_demand == b.on_demand && fleets(a) == fleets(b)
}

/// What the MILP's coverage rows read: per tier and option, `mu[c,t]`.
fn coverage_of(input: &milp::MilpInput) -> Vec<Vec<Vec<f64>>> {
    input
        .tiers
        .iter()
        .map(|t| t.options.iter().map(|o| o.rps_by_slot.clone()).collect())
        .collect()
}

/// The tiers whose replay missed their target, in words.
fn missed_targets(scenario: &Scenario, plan: &Plan) -> Vec<String> {
    let Some(v) = &plan.verification else {
        return Vec::new();
    };
    scenario
        .tiers
        .iter()
        .filter_map(|t| {
            let r = &v.tiers[&t.name];
            (!r.meets_target).then(|| {
                format!(
                    "tier `{}` met both limits for {:.2}% of its GPU-served requests on replay, below its target of {}% (p{} TTFT ≤ {} ms, TPOT ≤ {} ms)",
                    t.name,
                    r.attainment * 100.0,
                    t.percentile,
                    t.percentile,
                    t.ttft_ms,
                    t.tpot_ms
                )
            })
        })
        .collect()
}

/// Whether two rounds' GPU shares agree within a percentage point in every
/// slot (the fleet sizes read from the step functions then agree too).
fn shares_close(a: &[Vec<f64>], b: &[Vec<f64>]) -> bool {
    a.iter()
        .flatten()
        .zip(b.iter().flatten())
        .all(|(x, y)| (x - y).abs() <= 0.01)
}

/// Most replicas (all configurations together) a tier holds in any slot.
fn max_replicas(plan: &Plan, tier: &str) -> u32 {
    let Some(t) = plan.tiers.get(tier) else {
        return 0;
    };
    let slots = t
        .configurations
        .iter()
        .map(|c| c.replicas_by_slot.len())
        .max()
        .unwrap_or(0);
    (0..slots)
        .map(|s| t.configurations.iter().map(|c| c.replicas_by_slot[s]).sum())
        .max()
        .unwrap_or(0)
}

/// One tier's search for its capacity factor over the replay rounds: the
/// largest factor whose replay met the target and the smallest that missed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Bracket {
    met: Option<f64>,
    missed: Option<f64>,
}

impl Bracket {
    /// The factor for the next round, after a replay at `factor` reached
    /// `attainment`: tighten below `target` (by [`tightening`]), loosen by
    /// 1 / `tighten_factor` above `target + margin` when `loosenable`, keep
    /// it inside the band; between a factor that met and one that missed,
    /// their geometric mean, until they are within 1% of each other (then
    /// the factor that met).
    pub fn next(
        &mut self,
        factor: f64,
        attainment: f64,
        (target, margin): (f64, f64),
        loosenable: bool,
        tighten_factor: f64,
    ) -> f64 {
        if attainment < target {
            self.missed = Some(self.missed.map_or(factor, |m| m.min(factor)));
            // A factor that met in another round's context is no guide
            // when this one, no larger, missed.
            if self.met.is_some_and(|m| m >= factor) {
                self.met = None;
            }
        } else {
            self.met = Some(self.met.map_or(factor, |m| m.max(factor)));
            if self.missed.is_some_and(|m| m <= factor) {
                self.missed = None;
            }
            if attainment <= target + margin || !loosenable {
                return factor;
            }
        }
        match (self.met, self.missed) {
            (Some(met), Some(missed)) if missed / met <= 1.01 => met,
            (Some(met), Some(missed)) => (met * missed).sqrt(),
            _ if attainment < target => factor * tightening(attainment, target, tighten_factor),
            _ => factor / tighten_factor,
        }
    }
}

/// Per tier, the highest rate the step functions must reach: the busiest
/// slot's peak over the tier's factor.
fn need_rps(demand: &Demand, factors: &[f64]) -> Vec<f64> {
    demand
        .tiers
        .iter()
        .zip(factors)
        .map(|(d, f)| d.peak_rps.iter().fold(0.0_f64, |m, &r| m.max(r)) / f)
        .collect()
}

/// The factor a failing tier's capacity figures are multiplied by:
/// `tighten_factor` once, and once more for every further doubling of the
/// miss rate over the allowed one ((1 − attainment) / (1 − target)), so a
/// tier far from its target moves faster.
pub fn tightening(attainment: f64, target: f64, tighten_factor: f64) -> f64 {
    let allowed = (1.0 - target).max(1e-6);
    let excess = ((1.0 - attainment) / allowed).max(1.0);
    let steps = excess.log2().ceil().max(1.0);
    tighten_factor.powf(steps)
}

/// Per tier, every configuration's capacity, from the source the scenario
/// names (`simulation.capacity`).
pub fn capacity_table(
    scenario: &Scenario,
    demand: &Demand,
    factors: &[f64],
    options: &SolveOptions,
) -> Vec<Vec<CapacityEntry>> {
    match scenario.simulation.capacity {
        CapacitySource::Simulated => simulated::evaluate_all(
            scenario,
            &demand.tiers,
            &need_rps(demand, factors),
            options.cache_dir.as_deref(),
            options.progress,
        ),
        CapacitySource::Analytic => capacity::evaluate_all(
            &scenario.gpus,
            &scenario.model,
            &scenario.tiers,
            &demand.tiers,
        ),
    }
}

/// One MILP solve of `input`, assembled into a plan.
fn solve_once(
    scenario: &Scenario,
    demand: &Demand,
    capacity: Vec<Vec<CapacityEntry>>,
    (input, option_entries, over_term): (milp::MilpInput, Vec<Vec<usize>>, Option<&term::Term>),
    (factors, options): (&[f64], &SolveOptions),
) -> Result<Plan, PlannerError> {
    let spinner = options.progress.spinner(&match over_term {
        None => format!(
            "solving the MILP ({} slots, time limit {} s)",
            demand.slots, input.time_limit_s
        ),
        Some(t) => format!(
            "solving the MILP over the {}-month term ({} slots, time limit {} s)",
            t.growth.months,
            t.input.slots(),
            input.time_limit_s
        ),
    });
    let solved = match over_term {
        None => milp::solve(&input).map(|s| (s, None)),
        Some(t) => term::solve(&input, t, demand.slots).map(|s| {
            let term = (s.projection, s.status);
            (s.horizon, Some(term))
        }),
    };
    spinner.finish_and_clear();
    let (solution, projection) = solved.map_err(|e| match e {
        MilpError::Infeasible => PlannerError::Infeasible(match over_term {
            None => explain_infeasible(scenario, demand),
            Some(t) => format!(
                "over the {}-month term growing {} a month, the busiest month carries {:.2} × the planned demand, more than the GPU quotas ({}) and the API rate limit can cover; raise `max_gpus`, add a GPU type, lower `commitment.monthly_growth` or shorten `commitment.term_months`",
                t.growth.months,
                t.growth.monthly_growth,
                t.growth.peak_factor(),
                scenario
                    .gpus
                    .iter()
                    .map(|g| match g.max_gpus {
                        Some(n) => format!("{} ≤ {n}", g.id),
                        None => format!("{} unlimited", g.id),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
        MilpError::Solver(msg) => PlannerError::Solver(msg),
    })?;
    let mut plan = assemble(
        scenario,
        demand,
        capacity,
        &input,
        &option_entries,
        &solution,
        (factors, options),
    );
    if let Some((projection, status)) = projection {
        // Status, bound and gap are the term's: the horizon's plan holds
        // reservations sized for months to come.
        plan.solver.status = status;
        plan.solver.lower_bound_usd = projection.lower_bound_usd;
        plan.solver.proven_gap = projection.proven_gap;
        plan.solver.term_months = Some(projection.months);
        plan.commitment.growth = Some(projection);
    }
    Ok(plan)
}

fn named(scenario: &Scenario, values: &[f64]) -> BTreeMap<String, f64> {
    scenario
        .tiers
        .iter()
        .zip(values)
        .map(|(t, &v)| (t.name.clone(), v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{tightening, Bracket};

    #[test]
    fn tightening_grows_with_the_miss_rate() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // Up to twice the allowed misses: one step.
        assert!(close(tightening(0.985, 0.99, 0.9), 0.9));
        // 3.25% missed against 1% allowed: two doublings, two steps.
        assert!(close(tightening(0.9675, 0.99, 0.9), 0.81));
        // 7.1% missed: three steps.
        assert!(close(tightening(0.929, 0.99, 0.9), 0.729));
        assert!(close(tightening(0.0, 0.99, 0.9), 0.9f64.powi(7)));
    }

    #[test]
    fn the_bracket_tightens_loosens_and_bisects() {
        let band = (0.99, 0.005);
        let mut b = Bracket::default();
        // Far over the band with several replicas: loosen.
        let f = b.next(1.0, 0.9999, band, true, 0.9);
        assert!((f - 1.0 / 0.9).abs() < 1e-12);
        // Over the band with one replica: keep.
        assert_eq!(Bracket::default().next(1.0, 0.9999, band, false, 0.9), 1.0);
        // Inside the band: keep.
        assert_eq!(Bracket::default().next(1.0, 0.995, band, true, 0.9), 1.0);
        // The loosened factor misses: bisect between 1 (met) and 1/0.9.
        let g = b.next(f, 0.97, band, true, 0.9);
        assert!((g - (1.0f64 * f).sqrt()).abs() < 1e-12);
        // Met again at g, still over the band: bisect upward.
        let h = b.next(g, 0.9995, band, true, 0.9);
        assert!(h > g && h < f);
        // A bracket narrower than 1% settles on the factor that met.
        let mut narrow = Bracket::default();
        narrow.next(1.0, 0.9999, band, true, 0.9);
        assert_eq!(narrow.next(1.005, 0.98, band, true, 0.9), 1.0);
    }
}
