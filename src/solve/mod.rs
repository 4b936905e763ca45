//! The `solve` pipeline: scenario → demand → capacity → MILP → plan → replay,
//! re-solved round after round ([`rounds`]) while a tier misses its target
//! (or is far over it), and the outcome: the plan with everything computed
//! from it ([`outcome`]).

use crate::base::error::PlannerError;
use crate::base::progress::Progress;
use crate::base::timings::Timings;
use crate::capacity::probe::{replicas_at_speed, Serving};
use crate::capacity::{self, simulated, CapacityEntry};
use crate::demand::summary::DemandSummary;
use crate::demand::{self, Demand};
use crate::money::band::BandEdge;
use crate::money::baselines::Baseline;
use crate::money::commitment;
use crate::money::prices::Prices;
use crate::money::purchase::{Purchase, ReservationLevels, SeedBand, SeedRun};
use crate::money::unit_costs;
use crate::replay;
use crate::scenario::{self, CapacitySource, Scenario, VerifySlots};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod assemble;
mod band;
mod bracket;
mod candidates;
pub mod check;
pub mod design;
mod factor_steps;
mod feasibility;
mod input;
mod levels;
mod operations;
pub mod outcome;
pub mod questions;
pub mod record;
mod round_trial;
pub mod rounds;
mod slot_loosening;
mod term;
pub mod units;

/// Options for a unit test's solve: no progress bar, no disk cache.
#[cfg(test)]
pub(crate) fn test_options() -> SolveOptions {
    SolveOptions {
        cache_dir: None,
        ..SolveOptions::new(crate::base::progress::Progress::hidden())
    }
}

pub use outcome::Outcome;
pub use rounds::{first_round, RoundMilp};

use questions::{Questions, SpeedPlan, Speedup, SpeedupCase};
use rounds::{Finished, Shared};

/// Speed factors question 4 tries on the chosen GPUs: a 25% speed-up and a
/// 20% slow-down of their FLOPS and bandwidth.
pub const SPEED_FACTORS: [f64; 2] = [1.25, 0.8];

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
    /// Where the solve's stages record their wall time.
    pub timings: Timings,
    /// Answer question 4: the chosen fleets' replicas at 1.25x and 0.8x
    /// speed (simulated fleets) and the plan re-solved at each (a MILP
    /// each). A sweep's rows and a seed band's runs read none of it, so they
    /// leave it out.
    pub speed_questions: bool,
}

impl SolveOptions {
    /// Defaults: no log, warm start on, the given progress bars.
    pub fn new(progress: Progress) -> Self {
        SolveOptions {
            progress,
            solver_log: None,
            warm_start: true,
            cache_dir: simulated::default_cache_dir(),
            timings: Timings::default(),
            speed_questions: true,
        }
    }
}

/// Reads the scenario at `path` and solves it.
pub fn solve_file(path: &Path, options: &SolveOptions) -> Result<Outcome, PlannerError> {
    let scenario = scenario::load(path)?;
    solve(&scenario, options)
}

/// Solves a validated scenario: capacity per configuration (fleet step
/// functions by simulation, or the queueing model), the MILP, then (unless
/// `simulation.verify = "off"`) a replay of the traces against the plan,
/// round after round by the rules of [`rounds`]; with a tier kept off the
/// API as a second candidate when the rounds tightened it while part of it
/// went to the API. With `[check] days`, the last days are set aside before
/// anything is planned and the chosen reservation is run on them
/// ([`check`]). The outcome is the returned plan with its money, its
/// replay, its rounds and the answers to the four questions.
pub fn solve(scenario: &Scenario, options: &SolveOptions) -> Result<Outcome, PlannerError> {
    let verify = scenario.simulation.verify != VerifySlots::Off;
    // Demand and the replay's traces do not depend on which tiers may use
    // the API: read once for every candidate.
    let timings = &options.timings;
    let (demand, requests) = timings.time(
        || "demand and traces read".into(),
        || demand::build_keeping(scenario, options.progress, verify),
    )?;
    let traces = verify.then(|| replay::traces(scenario, &demand, requests));
    let (demand, traces, aside) = check::split(scenario, demand, traces)?;
    let on_disk = |t: &crate::demand::workload::TraceReplay| {
        replay::slots::SlotReplays::on_disk(options.cache_dir.as_deref(), t)
    };
    let slot_replays = traces.as_ref().map_or_else(Default::default, on_disk);
    let shared = Shared {
        demand: &demand,
        replay: traces.as_ref(),
        slot_replays: &slot_replays,
        options,
    };
    // The rounds size the plan on the design seed's replays; with the
    // replay's own seed apart, the plan is then checked on that seed's
    // (`design`).
    let run_rounds = |scenario: &Scenario| match &traces {
        Some(t) if design::apart(scenario) => {
            let design_traces = t.with_seed(scenario.simulation.capacity_seed);
            let design_replays = on_disk(&design_traces);
            let designed = candidates::run(
                &design::design_scenario(scenario),
                Shared {
                    replay: Some(&design_traces),
                    slot_replays: &design_replays,
                    ..shared
                },
            )?;
            let (chosen, without_api, check) = design::check(scenario, designed, shared)?;
            Ok::<_, PlannerError>((chosen, without_api, Some(check)))
        }
        _ => {
            let (chosen, without_api) = candidates::run(scenario, shared)?;
            Ok((chosen, without_api, None))
        }
    };
    let mut solved = run_rounds(scenario)?;
    // Units deployed: the plan without them too, the cheaper that meets
    // returned (`units`).
    let mut without_units = None;
    if let Some(plain) =
        units::aggregated_only(scenario).filter(|_| units::deploys_units(&solved.0))
    {
        let other = timings.time(
            || "the scenario again with no disaggregated unit offered".into(),
            || run_rounds(&plain),
        );
        let compared = units::choose(
            scenario,
            &solved.0,
            other.as_ref().map(|o| &o.0).map_err(ToString::to_string),
        );
        if let (true, Ok(other)) = (compared.aggregated_chosen, other) {
            solved = other;
        }
        without_units = Some(compared);
    }
    let (chosen, without_api, design_check) = solved;
    let held_out = aside.as_ref().map(|a| {
        timings.time(
            || {
                format!(
                    "the last {} days set aside: re-planned and replayed",
                    a.days
                )
            },
            || check::run(&chosen, a, options),
        )
    });
    let levels = timings.time(
        || "reservation levels around the chosen counts".into(),
        || levels::of(&chosen.trial.milp, &chosen.trial.plan),
    );
    let band_edge = if options.speed_questions {
        timings.time(
            || "the confidence band's edge: the chosen fleets with slower steps".into(),
            || band::edge(&chosen, &demand, options),
        )
    } else {
        None
    };
    let (speedup, speed_plans) = if options.speed_questions {
        let speedup = timings.time(
            || "question 4: replicas at 1.25x and 0.8x speed".into(),
            || speedup(&chosen, &demand, options),
        );
        let plans = timings.time(
            || "question 4: the plan re-priced at each speed".into(),
            || speed_plans(&chosen, &speedup),
        );
        (speedup, plans)
    } else {
        (Vec::new(), Vec::new())
    };
    let baselines = round_trial::alternatives(scenario, &demand, options, &chosen.trial);
    let found = Found {
        without_api,
        without_units,
        baselines,
        design_check,
        held_out,
        levels,
        band_edge,
        speedup,
        speed_plans,
    };
    // The seed band is this seed's run beside the other seeds': the outcome
    // hands its own run over once its purchase is priced.
    let band = |own: SeedRun, milp: &std::sync::Arc<RoundMilp>| {
        (scenario.simulation.seed_band > 0)
            .then(|| seed_band(scenario, own, milp.clone(), options))
            .transpose()
    };
    timings.time(
        || "outcome: money, launch commands, questions".into(),
        || outcome(scenario, chosen, &demand, found, band),
    )
}

/// A seed's purchase and cost as one run of the seed band.
fn seed_run(purchase: &Purchase, plan: &crate::plan::Plan, meets_targets: bool) -> SeedRun {
    SeedRun {
        seed: purchase.seed,
        capacity_seed: purchase.capacity_seed,
        reserved: plan.reserved.clone(),
        usd: plan.total_cost_usd,
        term_usd: purchase.term_usd,
        meets_targets,
    }
}

/// The whole solve again with each further seed of `simulation.seed_band`,
/// beside the solve's own run (`own`, of the MILP `own_milp`).
fn seed_band(
    scenario: &Scenario,
    own: SeedRun,
    own_milp: std::sync::Arc<RoundMilp>,
    options: &SolveOptions,
) -> Result<SeedBand, PlannerError> {
    let mut runs = vec![own];
    let mut milps = vec![own_milp];
    // Each seed's run is its purchase and cost: question 4 is not asked.
    let options = &SolveOptions {
        speed_questions: false,
        ..options.clone()
    };
    for i in 1..=u64::from(scenario.simulation.seed_band) {
        // Every random stream drawn anew: the replay's and the capacity
        // searches' (the plan's figures are a draw too).
        let mut other = scenario.clone();
        other.simulation.seed = scenario.simulation.seed.wrapping_add(i);
        other.simulation.capacity_seed = scenario.simulation.capacity_seed.wrapping_add(i);
        other.simulation.seed_band = 0;
        let o = options.timings.time(
            || format!("seed band: seed {}", other.simulation.seed),
            || solve(&other, options),
        )?;
        runs.push(seed_run(&o.purchase, &o.plan, o.missed_targets.is_empty()));
        milps.push(o.milp.clone());
    }
    let mut band = SeedBand::of(runs);
    band.common = options.timings.time(
        || "seed band: one reservation for every seed".into(),
        || levels::common(&milps, &band.runs),
    );
    Ok(band)
}

/// What the solve found of the chosen candidate beside its rounds, all
/// known before its outcome is built.
struct Found {
    /// The comparison with the candidate kept off the API, when there was one.
    without_api: Option<record::WithoutApi>,
    /// The comparison with the plan offered no disaggregated unit, when the
    /// plan deployed one.
    without_units: Option<units::WithoutUnits>,
    /// The alternatives to the plan, priced once.
    baselines: BTreeMap<String, Baseline>,
    design_check: Option<outcome::DesignCheck>,
    held_out: Option<check::HeldOut>,
    /// The reservation levels around the chosen counts, or why they were not
    /// priced.
    levels: Result<Vec<ReservationLevels>, &'static str>,
    band_edge: Option<BandEdge>,
    /// Question 4: the replicas at each speed and the plans re-priced there.
    speedup: Vec<Speedup>,
    speed_plans: Vec<SpeedPlan>,
}

/// The outcome of the chosen candidate: its plan with the money, replay
/// and questions derived from it, what the solve `found` beside it, and
/// the seed band `band` makes of its own run (none when not asked for).
fn outcome(
    stated: &Scenario,
    chosen: Finished,
    demand: &Demand,
    found: Found,
    band: impl FnOnce(SeedRun, &std::sync::Arc<RoundMilp>) -> Result<Option<SeedBand>, PlannerError>,
) -> Result<Outcome, PlannerError> {
    let Finished {
        scenario,
        trial,
        rounds,
    } = chosen;
    let Found {
        without_api,
        without_units,
        baselines,
        design_check,
        held_out,
        levels,
        band_edge,
        speedup,
        speed_plans,
    } = found;
    let (reservation_levels, levels_not_priced) = match levels {
        Ok(levels) => (levels, None),
        Err(why) => (Vec::new(), Some(why.to_string())),
    };
    let prices = Prices::of(&scenario);
    let demand_summary: std::collections::BTreeMap<String, DemandSummary> = demand
        .tiers
        .iter()
        .map(|t| (t.tier.clone(), DemandSummary::of(t)))
        .collect();
    let milp = trial.milp.clone();
    let plan = trial.plan;
    let missed_targets = outcome::missed_targets(&scenario, trial.verification.as_ref());
    let how_to_run = how_to_run(&scenario, demand, &plan);
    let commitment =
        commitment::of_plan(&plan, &prices, scenario.commitment_term_months, trial.term);
    let unit_costs = unit_costs::of(&plan, &demand_summary, &prices);
    let pool = crate::money::pool::of(&plan, &demand_summary, &unit_costs, &baselines, &prices);
    let purchase = Purchase {
        reservation_levels,
        levels_not_priced,
        band_edge,
        pool,
        ..Purchase::of(
            &plan,
            &commitment,
            (scenario.simulation.seed, scenario.simulation.capacity_seed),
            &scenario
                .gpus
                .iter()
                .map(|g| (g.id.clone(), g.profile.calibration))
                .collect(),
        )
    };
    let own = seed_run(&purchase, &plan, missed_targets.is_empty());
    let purchase = Purchase {
        seed_band: band(own, &milp)?,
        ..purchase
    };
    Ok(Outcome {
        milp,
        purchase,
        how_to_run,
        unit_costs,
        commitment,
        missed_targets,
        tier_order: scenario.tiers.iter().map(|t| t.name.clone()).collect(),
        // The tiers' terms as the scenario states them: a tier the rounds
        // kept off the API is allowed it there (`without_api` says so).
        slo: stated
            .tiers
            .iter()
            .map(|t| (t.name.clone(), t.clone()))
            .collect(),
        baselines,
        demand_method: demand.method.clone(),
        demand: demand_summary,
        capacity: scenario
            .tiers
            .iter()
            .map(|t| t.name.clone())
            .zip(trial.capacity)
            .collect(),
        prices,
        questions: Questions {
            capacity_basis: trial.capacity_basis,
            speedup,
            speed_plans,
        },
        verification: trial.verification,
        design_check,
        held_out,
        rounds,
        without_api,
        without_units,
        plan,
    })
}

/// The launch and benchmark commands of every configuration the plan runs,
/// tier by tier in the scenario's order.
fn how_to_run(
    scenario: &Scenario,
    demand: &Demand,
    plan: &crate::plan::Plan,
) -> Vec<crate::plan::launch::RunCommands> {
    let mut out = Vec::new();
    for tier in &scenario.tiers {
        let model = scenario.tier_model(tier);
        let (Some(t), Some(d)) = (
            plan.tiers.get(&tier.name),
            demand.tiers.iter().find(|d| d.tier == tier.name),
        ) else {
            continue;
        };
        for c in &t.configurations {
            if let Some(offer) = model.gpus.iter().find(|g| g.id == c.config.gpu_type) {
                out.push(crate::plan::launch::commands(
                    &c.config,
                    offer,
                    model,
                    tier,
                    d,
                    c.rps_per_replica,
                ));
            }
        }
    }
    out
}

/// The fleet the chosen plan runs for `case`: its configuration on its tier
/// at the tier's busiest slot, what the what-if probes re-simulate.
fn serving<'a>(chosen: &'a Finished, demand: &'a Demand, case: &SpeedupCase) -> Serving<'a> {
    Serving {
        tier: &chosen.scenario.tiers[case.tier],
        demand: &demand.tiers[case.tier],
        entry: &chosen.trial.capacity[case.tier][case.entry],
        replicas: case.replicas,
        served_rps: case.served_rps,
    }
}

/// Question 4 for the chosen plan: per speed factor of [`SPEED_FACTORS`]
/// and configuration at its tier's busiest slot, the replicas the same
/// traffic needs with that factor × the FLOPS and bandwidth.
fn speedup(chosen: &Finished, demand: &Demand, options: &SolveOptions) -> Vec<Speedup> {
    let scenario = &chosen.scenario;
    let cases: Vec<_> = SPEED_FACTORS
        .iter()
        .flat_map(|&factor| chosen.trial.speedup.iter().map(move |case| (factor, case)))
        .collect();
    // Each case's fleets are simulated on their own core; the answers come
    // back in the cases' order.
    crate::base::parallel::map_in_order(&cases, |&(factor, case)| {
        let serving = serving(chosen, demand, case);
        let entry = serving.entry;
        Speedup {
            tier: scenario.tiers[case.tier].name.clone(),
            config: entry.config.label(),
            replicas: case.replicas,
            gpus_per_replica: case.gpus_per_replica,
            faster_by: factor - 1.0,
            replicas_after: replicas_at_speed(
                scenario,
                &serving,
                factor,
                options.cache_dir.as_deref(),
            ),
        }
    })
    .into_iter()
    .map(|s| s.expect("a speed-up case panicked"))
    .collect()
}

/// Question 4's plans: per speed factor, the chosen plan's MILP solved again
/// with every option on a GPU type the probes asked about carrying its
/// requests/s × (replicas the plan runs / replicas the probes say that speed
/// needs), summed over the type's probed configurations. Priced by the MILP
/// on scaled figures, not replayed.
fn speed_plans(chosen: &Finished, speedup: &[Speedup]) -> Vec<SpeedPlan> {
    let milp = &chosen.trial.milp;
    let method = crate::milp::method::chosen(&milp.problem, milp.settings.method).name();
    if method == crate::milp::Method::Monolithic && milp.settings.threads == 1 {
        // HiGHS on the whole model runs on one thread: the speeds side by
        // side, each on a core (the results in the same order).
        return crate::base::parallel::map_in_order(&SPEED_FACTORS, |&factor| {
            speed_plan(chosen, speedup, factor)
        })
        .into_iter()
        .filter_map(|p| p.expect("the plan re-solved at a speed panicked"))
        .collect();
    }
    // One after the other: each MILP's slot searches use every core.
    SPEED_FACTORS
        .iter()
        .filter_map(|&factor| speed_plan(chosen, speedup, factor))
        .collect()
}

/// The plan re-solved with the chosen GPUs `factor` times as fast (or as
/// slow), if any of its configurations changes replica count.
fn speed_plan(chosen: &Finished, speedup: &[Speedup], factor: f64) -> Option<SpeedPlan> {
    let milp = &chosen.trial.milp;
    let plan = &chosen.trial.plan;
    let faster_by = factor - 1.0;
    let mut problem = milp.problem.clone();
    let gpu_of = |s: &Speedup| {
        plan.tiers
            .get(&s.tier)
            .and_then(|t| t.configurations.iter().find(|c| c.label == s.config))
            .map(|c| c.config.gpu_type.clone())
    };
    let mut ratio: std::collections::BTreeMap<String, (u32, u32)> =
        std::collections::BTreeMap::new();
    // The configurations that cannot serve their tier at this speed, by
    // tier and label: their options leave the MILP.
    let mut cannot = std::collections::BTreeSet::new();
    let mut scaled = std::collections::BTreeSet::new();
    for s in speedup
        .iter()
        .filter(|s| (s.faster_by - faster_by).abs() < 1e-12)
    {
        if let Some(g) = gpu_of(s) {
            scaled.insert(g.clone());
            match s.replicas_after {
                Some(after) => {
                    let e = ratio.entry(g).or_default();
                    e.0 += s.replicas;
                    e.1 += after.max(1);
                }
                None => {
                    cannot.insert((s.tier.clone(), s.config.clone()));
                }
            }
        }
    }
    if scaled.is_empty() {
        return None;
    }
    let gpu_ids: Vec<String> = problem.gpus.iter().map(|g| g.id.clone()).collect();
    let capacity = &chosen.trial.capacity;
    for (k, tier) in problem.tiers.iter_mut().enumerate() {
        let name = &chosen.scenario.tiers[k].name;
        tier.options.retain(|o| {
            let label = capacity[k][o.entry].config.label();
            !cannot.contains(&(name.clone(), label))
        });
        for option in &mut tier.options {
            if let Some(&(now, after)) = ratio.get(&gpu_ids[option.gpu]) {
                let r = f64::from(now) / f64::from(after);
                for rps in &mut option.rps_by_slot {
                    *rps *= r;
                }
            }
        }
    }
    let fewest = chosen.scenario.planning.reserve_fewest_within_gap;
    let (reserved, usd) = levels::what_if(&problem, &milp.settings, fewest)?;
    Some(SpeedPlan {
        faster_by,
        gpu_types: scaled.into_iter().collect(),
        reserved,
        total_cost_usd: usd,
        vs_plan: usd / plan.total_cost_usd - 1.0,
    })
}

/// Per tier, the highest rate the step functions must reach: the largest
/// slot peak over the tier's factor in that slot (its factor times the
/// slot's window factor, when `window_factors` has one).
fn need_rps(demand: &Demand, factors: &[f64], window_factors: &[Vec<f64>]) -> Vec<f64> {
    demand
        .tiers
        .iter()
        .zip(factors)
        .enumerate()
        .map(|(k, (d, f))| {
            d.peak_rps.iter().enumerate().fold(0.0_f64, |m, (t, &r)| {
                let w = window_factors
                    .get(k)
                    .and_then(|v| v.get(t))
                    .copied()
                    .unwrap_or(1.0);
                m.max(r / (f * w))
            })
        })
        .collect()
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
            &need_rps(demand, factors, &[]),
            options.cache_dir.as_deref(),
            options.progress,
            &options.timings,
        ),
        CapacitySource::Analytic => capacity::evaluate_all(scenario, &demand.tiers),
    }
}
