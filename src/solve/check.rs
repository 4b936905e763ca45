//! The plan held to days it was not made on (`[check] days`): the last days
//! of the horizon are set aside, the plan is made on the days before them,
//! and its reservation is then run on the days set aside. There the rentals
//! and the API share are planned again for those days' demand (the reserved
//! counts fixed, the same capacity figures, each tier's factor and, in every
//! slot, the most any of its planned windows was tightened by: the plan's
//! sizing rules, held to days whose hard hours nobody knew in advance), and
//! every slot is replayed.
//! The result says whether the purchase still meets every target there and
//! what those days cost against the days it was made on.

use super::assemble::{assemble, Solved};
use super::feasibility::explain_infeasible;
use super::input::{milp_input, Sizing};
use super::rounds::Finished;
use super::{levels, need_rps, SolveOptions};
use crate::base::error::{PlannerError, Problem};
use crate::base::numbers::noun;
use crate::capacity::simulated;
use crate::demand::workload::TraceReplay;
use crate::demand::Demand;
use crate::milp;
use crate::plan::file::PlanFile;
use crate::plan::Plan;
use crate::replay;
use crate::replay::slots::SlotReplays;
use crate::replay::verification::{Verification, Window};
use crate::scenario::{CapacitySource, Scenario};
use serde::Serialize;
use std::collections::BTreeMap;

/// The days set aside: their demand and traces, numbered from 0, and where
/// they start in the horizon.
pub(super) struct SetAside {
    pub days: u32,
    pub first_slot: usize,
    pub demand: Demand,
    pub replay: Option<TraceReplay>,
}

/// What the days set aside found.
#[derive(Debug, Clone, Serialize)]
pub struct HeldOut {
    /// Days set aside, at the end of the horizon.
    pub days: u32,
    /// The horizon's slots they cover: the first, and the one after the last.
    pub start_slot: usize,
    pub end_slot: usize,
    /// Days the plan was made on.
    pub planned_days: f64,
    /// The reservation held to them (the plan's).
    pub reserved: BTreeMap<String, u32>,
    /// What the days set aside cost with that reservation (reserved hours,
    /// the rentals and API share planned for them), USD; absent when the
    /// reservation cannot serve them.
    pub total_cost_usd: Option<f64>,
    /// That cost per day, and the plan's own cost per day, USD.
    pub usd_per_day: Option<f64>,
    pub planned_usd_per_day: f64,
    /// Most GPUs of each type rented on demand in one of their slots.
    pub on_demand_peak_gpus: BTreeMap<String, u32>,
    /// Share of their requests sent to the API.
    pub api_share: f64,
    /// Whether every tier met its target in every window there (`None`
    /// when not replayed: `simulation.verify = "off"`).
    pub meets_targets: Option<bool>,
    /// Why the reservation cannot serve them, when it cannot (the quotas
    /// leave too few GPUs to rent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_served: Option<String>,
    /// Per tier, the replay of the days set aside.
    pub tiers: BTreeMap<String, HeldOutTier>,
}

/// One tier on the days set aside.
#[derive(Debug, Clone, Serialize)]
pub struct HeldOutTier {
    pub attainment: f64,
    pub target: f64,
    pub meets_target: bool,
    /// GPU-served requests replayed.
    pub requests: u64,
    /// Windows of the tier's target there, those that meet it, and the
    /// worst (slots in the horizon's numbering).
    pub windows: usize,
    pub windows_meeting: usize,
    pub worst_window: Option<Window>,
}

/// Splits the horizon when the scenario sets days aside: the demand and
/// traces to plan on, and the days set aside. An error names `check.days`
/// when they leave no whole day to plan on.
pub(super) fn split(
    scenario: &Scenario,
    demand: Demand,
    replay: Option<TraceReplay>,
) -> Result<(Demand, Option<TraceReplay>, Option<SetAside>), PlannerError> {
    let Some(days) = scenario.check_days else {
        return Ok((demand, replay, None));
    };
    let per_day = (1440 / demand.slot_minutes.max(1)) as usize;
    let aside = days as usize * per_day;
    if demand.slots < aside + per_day {
        return Err(PlannerError::Scenario(vec![Problem::new(
            scenario.path.clone(),
            "check.days",
            format!(
                "the demand covers {} slots of {} minutes ({:.1} h): setting {days} {} aside leaves less than a day to plan on; set fewer days aside, or give the traces a `[shape]` over more days",
                demand.slots,
                demand.slot_minutes,
                demand.horizon_hours(),
                noun(u64::from(days), "day", "days")
            ),
        )]));
    }
    let first_slot = demand.slots - aside;
    let planned = demand.slots_in(
        0..first_slot,
        format!(
            "{}; the last {days} {} (slots {first_slot}-{}) set aside to check the plan on",
            demand.method,
            noun(u64::from(days), "day", "days"),
            demand.slots - 1
        ),
    );
    let held = demand.slots_in(first_slot..demand.slots, demand.method.clone());
    let held_replay = replay.as_ref().map(|r| r.starting_at(first_slot));
    Ok((
        planned,
        replay,
        Some(SetAside {
            days,
            first_slot,
            demand: held,
            replay: held_replay,
        }),
    ))
}

/// The chosen plan's reservation run on the days set aside: their rentals
/// and API share planned (reserved counts fixed, the plan's capacity
/// figures, factors and tightest window factor), then every slot replayed.
pub(super) fn run(chosen: &Finished, aside: &SetAside, options: &SolveOptions) -> HeldOut {
    let scenario = &chosen.scenario;
    let trial = &chosen.trial;
    let demand = &aside.demand;
    let window_factors: Vec<Vec<f64>> = trial
        .window_factor_min
        .iter()
        .map(|&w| vec![w; demand.slots])
        .collect();
    let mut capacity = trial.capacity.clone();
    if scenario.simulation.capacity == CapacitySource::Simulated {
        simulated::extend_fleets(
            &mut capacity,
            scenario,
            &demand.tiers,
            &need_rps(demand, &trial.factors, &window_factors),
            options.cache_dir.as_deref(),
            options.progress,
            &options.timings,
        );
    }
    let settings = levels::quick(&trial.milp.settings);
    let reserved: Vec<u32> = scenario
        .gpus
        .iter()
        .map(|g| trial.plan.reserved.get(&g.id).copied().unwrap_or(0))
        .collect();
    let planned_days = trial.plan.horizon_hours / 24.0;
    let mut out = HeldOut {
        days: aside.days,
        start_slot: aside.first_slot,
        end_slot: aside.first_slot + demand.slots,
        planned_days,
        reserved: trial.plan.reserved.clone(),
        total_cost_usd: None,
        usd_per_day: None,
        planned_usd_per_day: trial.plan.total_cost_usd / planned_days,
        on_demand_peak_gpus: BTreeMap::new(),
        api_share: 0.0,
        meets_targets: None,
        not_served: None,
        tiers: BTreeMap::new(),
    };
    // Planned as the rounds do: fleets sized for the whole tier, then once
    // more for the share the GPUs carry when part of it goes to the API.
    let whole = vec![vec![1.0; demand.slots]; scenario.tiers.len()];
    let mut gpu_share = whole;
    let mut plan: Option<Plan> = None;
    for _ in 0..2 {
        let sizing = Sizing {
            factors: &trial.factors,
            window_factors: &window_factors,
            gpu_share: &gpu_share,
        };
        let problem = milp_input(scenario, demand, &capacity, sizing);
        let Ok(solution) = milp::solve_with_reserved(&problem, &settings, &reserved) else {
            out.not_served = Some(explain_infeasible(scenario, demand));
            out.meets_targets = Some(false);
            return out;
        };
        let assembled = assemble(
            scenario,
            demand,
            &Solved {
                problem: &problem,
                settings: &settings,
                solution: &solution,
                capacity: &capacity,
                factors: &trial.factors,
                term: None,
            },
        );
        let shares: Vec<Vec<f64>> = scenario
            .tiers
            .iter()
            .map(|t| assembled.plan.gpu_share(&t.name))
            .collect();
        let settled = shares == gpu_share;
        gpu_share = shares;
        plan = Some(assembled.plan);
        if settled {
            break;
        }
    }
    let plan = plan.expect("the loop plans at least once");
    out.total_cost_usd = Some(plan.total_cost_usd);
    out.usd_per_day = Some(plan.total_cost_usd / (plan.horizon_hours / 24.0));
    out.api_share = plan.api_share;
    for slot in &plan.on_demand {
        for (g, &n) in slot {
            let e = out.on_demand_peak_gpus.entry(g.clone()).or_insert(0);
            *e = (*e).max(n);
        }
    }
    out.on_demand_peak_gpus.retain(|_, n| *n > 0);
    let Some(traces) = &aside.replay else {
        return out;
    };
    let plan_file = PlanFile::of(&plan, scenario.planning.slot_minutes);
    let (v, _) = replay::verify_every_slot(
        scenario,
        demand,
        &plan_file,
        traces,
        &SlotReplays::on_disk(options.cache_dir.as_deref(), traces),
        options.progress,
    );
    out.tiers = tiers(&v, aside.first_slot);
    out.meets_targets = Some(out.tiers.values().all(|t| t.meets_target));
    out
}

/// Each tier's figures from the replay of the days set aside, windows in
/// the horizon's numbering.
fn tiers(v: &Verification, first_slot: usize) -> BTreeMap<String, HeldOutTier> {
    v.tiers
        .iter()
        .map(|(name, t)| {
            let shift = |w: &Window| Window {
                start_slot: w.start_slot + first_slot,
                end_slot: w.end_slot + first_slot,
                ..*w
            };
            (
                name.clone(),
                HeldOutTier {
                    attainment: t.attainment,
                    target: t.target,
                    meets_target: t.meets_target,
                    requests: t.served_requests,
                    windows: t.windows.len(),
                    windows_meeting: t.windows_meeting,
                    worst_window: t.worst_window.as_ref().map(shift),
                },
            )
        })
        .collect()
}
