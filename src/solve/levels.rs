//! How flat the cost is around the chosen reservation: the plan's MILP
//! solved again with each reserved GPU type's count fixed a few replicas
//! higher and lower (everything else re-planned: rentals, API, fleets),
//! over the term when demand grows (the term's MILP) and else over the
//! horizon (a term without growth repeats the horizon, so the shares are
//! the same). Levels within [`NEAR_TIE`] of the chosen cost are a near tie:
//! the figures the plan is built on (a simulation of one seed) do not decide
//! between them, and the fewest GPUs among them commit least.

use super::rounds::RoundMilp;
use crate::milp::{self, Problem, Settings};
use crate::money::purchase::{CommonReservation, Level, ReservationLevels, SeedRun};
use crate::plan::Plan;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Cost difference, as a share of the chosen plan's, within which another
/// reservation level is a near tie.
pub(crate) const NEAR_TIE: f64 = 0.01;

/// How far the levels reach on each side of the chosen count: this many of
/// the largest replica on that GPU type.
const WIDEST_REPLICAS_EACH_SIDE: i64 = 4;

/// Branch-and-bound nodes each re-solve may take in HiGHS (the whole model,
/// or the decomposed method's fallback to it): a what-if's cost is then the
/// best plan found in them (an upper bound), so a near tie may go unseen but
/// is never claimed without a plan that proves it. A node limit, not a time
/// limit, so that the same inputs give the same figures on any machine.
const WHAT_IF_NODES: u32 = 100;

/// The settings for the what-if re-solves: the scenario's, at most
/// [`WHAT_IF_NODES`] nodes each, and a decomposable model solved by the
/// decomposed method alone (no fallback to the whole model in HiGHS for
/// the time left, whose result would depend on the machine's speed).
pub(super) fn quick(settings: &Settings) -> Settings {
    Settings {
        node_limit: Some(WHAT_IF_NODES),
        method: match settings.method {
            milp::Method::Auto => milp::Method::Decomposed,
            m => m,
        },
        ..settings.clone()
    }
}

/// A what-if's MILP solved with the [`quick`] settings: the GPUs it
/// reserves, by type, and the horizon's cost; `None` when it has no plan.
/// With `fewest`, of the reservations within the gap the fewest, as the
/// plan takes them (`planning.reserve_fewest_within_gap`).
pub(super) fn what_if(
    problem: &crate::milp::Problem,
    settings: &Settings,
    fewest: bool,
) -> Option<(std::collections::BTreeMap<String, u32>, f64)> {
    let quick = quick(settings);
    let s = crate::milp::solve(problem, &quick).ok()?;
    let s = milp::fewest_reserved_if(fewest, problem, quick.mip_gap, s);
    let reserved = problem
        .gpus
        .iter()
        .zip(&s.reserved)
        .filter(|(_, &n)| n > 0)
        .map(|(g, &n)| (g.id.clone(), n))
        .collect();
    Some((reserved, crate::milp::total(problem, &s)))
}

/// What the levels are priced over when the MILP runs over the term.
fn term_basis(milp: &RoundMilp) -> &'static str {
    match &milp.term {
        Some(t) if t.stages.len() > 1 => "over the term's first reservation",
        _ => "over the term, with growth",
    }
}

/// Why levels are not priced for a model only HiGHS solves whole.
const WHOLE_MODEL: &str = "the model links its slots (deadlines, minimum rentals, purchase units or configuration limits), so each level would be a whole MILP taking seconds";

/// The levels around each reserved GPU type of `plan`, solved on `milp`;
/// `Err` with the reason when each level would be a whole-model solve.
pub(super) fn of(milp: &RoundMilp, plan: &Plan) -> Result<Vec<ReservationLevels>, &'static str> {
    let (problem, basis) = match milp.term() {
        Some(term) => (term, term_basis(milp)),
        None => (&milp.problem, "over the horizon"),
    };
    if !problem.decomposable() {
        return Err(WHOLE_MODEL);
    }
    let settings = quick(&milp.settings);
    let Ok(chosen) = milp::solve_with_reserved(problem, &settings, &reserved(problem, plan)) else {
        return Ok(Vec::new());
    };
    let chosen_usd = milp::total(problem, &chosen);
    let mut out = Vec::new();
    for (g, gpu) in problem.gpus.iter().enumerate() {
        let n = chosen.reserved[g];
        if n == 0 || gpu.reserved_usd_per_gpu_hour.is_none() {
            continue;
        }
        let replicas: Vec<u32> = plan
            .tiers
            .values()
            .flat_map(|t| &t.configurations)
            .filter(|c| c.config.gpu_type == gpu.id)
            .map(|c| c.gpus_per_replica)
            .collect();
        let (step, each_side) = grid(&replicas, gpu.purchase.unit_gpus);
        let mut levels = Vec::new();
        for d in -each_side..=each_side {
            let gpus = i64::from(n) + d * i64::from(step);
            if gpus < 0 || gpu.max_gpus.is_some_and(|m| gpus > i64::from(m)) {
                continue;
            }
            let gpus = gpus as u32;
            let usd = if d == 0 {
                chosen_usd
            } else {
                let mut counts = chosen.reserved.clone();
                counts[g] = gpus;
                match milp::solve_with_reserved(problem, &settings, &counts) {
                    Ok(s) => milp::total(problem, &s),
                    Err(_) => continue,
                }
            };
            levels.push(Level {
                gpus,
                milp_usd: usd,
                vs_chosen: usd / chosen_usd - 1.0,
            });
        }
        let within: Vec<u32> = levels
            .iter()
            .filter(|l| l.vs_chosen <= NEAR_TIE)
            .map(|l| l.gpus)
            .collect();
        out.push(ReservationLevels {
            gpu_type: gpu.id.clone(),
            basis: basis.to_string(),
            chosen_gpus: n,
            step_gpus: step,
            near_tie: within.len() > 1,
            fewest_within: within.iter().copied().min().unwrap_or(n),
            most_within: within.iter().copied().max().unwrap_or(n),
            levels,
        });
    }
    Ok(out)
}

/// The levels' grid on a GPU type whose plan runs replicas of `replicas`
/// GPUs each, bought in units of `unit_gpus`: the step (GPUs between
/// levels) and how many steps on each side. The step is the smallest
/// replica (or the unit, if larger), since a fleet changes by one replica at
/// a time: in steps of the largest, a level one small replica away from the
/// chosen count goes unpriced, and the report would call a near tie a clear
/// choice. The levels reach [`WIDEST_REPLICAS_EACH_SIDE`] of the largest
/// replica each way.
fn grid(replicas: &[u32], unit_gpus: u32) -> (u32, i64) {
    let unit = unit_gpus.max(1);
    let step = replicas.iter().copied().min().unwrap_or(1).max(unit);
    let widest = replicas.iter().copied().max().unwrap_or(1).max(unit);
    (
        step,
        WIDEST_REPLICAS_EACH_SIDE * i64::from(widest.div_ceil(step)),
    )
}

/// The plan's reserved counts in the order of `problem`'s GPU types.
fn reserved(problem: &Problem, plan: &Plan) -> Vec<u32> {
    problem
        .gpus
        .iter()
        .map(|g| plan.reserved.get(&g.id).copied().unwrap_or(0))
        .collect()
}

/// Of the reservations the seeds chose (`runs`, each with its MILP in
/// `milps`), the one with the lowest mean cost over every seed's MILP
/// re-planned with it (on a tie, the fewest GPUs), with each seed's cost.
pub(super) fn common(milps: &[Arc<RoundMilp>], runs: &[SeedRun]) -> Option<CommonReservation> {
    let first = milps.first()?;
    let basis = if first.term().is_some() {
        term_basis(first)
    } else {
        "over the horizon"
    };
    let problem = |m: &RoundMilp| m.term().unwrap_or(&m.problem).clone();
    let problems: Vec<Problem> = milps.iter().map(|m| problem(m)).collect();
    let mut candidates: Vec<&BTreeMap<String, u32>> = runs.iter().map(|r| &r.reserved).collect();
    candidates.sort();
    candidates.dedup();
    let own: Vec<f64> = milps
        .iter()
        .zip(&problems)
        .zip(runs)
        .map(|((m, p), r)| {
            let counts: Vec<u32> = p
                .gpus
                .iter()
                .map(|g| r.reserved.get(&g.id).copied().unwrap_or(0))
                .collect();
            milp::solve_with_reserved(p, &quick(&m.settings), &counts)
                .map_or(f64::NAN, |s| milp::total(p, &s))
        })
        .collect();
    let mut best: Option<(f64, u32, CommonReservation)> = None;
    for reserved in candidates {
        let mut usd = Vec::with_capacity(milps.len());
        for (m, p) in milps.iter().zip(&problems) {
            let counts: Vec<u32> = p
                .gpus
                .iter()
                .map(|g| reserved.get(&g.id).copied().unwrap_or(0))
                .collect();
            match milp::solve_with_reserved(p, &quick(&m.settings), &counts) {
                Ok(s) => usd.push(milp::total(p, &s)),
                Err(_) => break,
            }
        }
        if usd.len() < milps.len() {
            continue;
        }
        let mean = usd.iter().sum::<f64>() / usd.len() as f64;
        let vs_own: Vec<f64> = usd.iter().zip(&own).map(|(u, o)| u / o - 1.0).collect();
        let worst_vs_own = vs_own.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let gpus: u32 = reserved.values().sum();
        let better = best
            .as_ref()
            .is_none_or(|(m, n, _)| mean < *m - 1e-9 || ((mean - m).abs() <= 1e-9 && gpus < *n));
        if better {
            best = Some((
                mean,
                gpus,
                CommonReservation {
                    reserved: reserved.clone(),
                    basis: basis.to_string(),
                    vs_own,
                    worst_vs_own,
                },
            ));
        }
    }
    best.map(|(_, _, c)| c)
}

#[cfg(test)]
mod tests {
    use crate::scenario::CapacitySource;
    use crate::solve::{solve, test_options};

    fn tiny(seed_band: u32) -> crate::solve::Outcome {
        let mut scenario = crate::scenario::tiny_fixture();
        // Reserving pays off at a third of the on-demand price.
        scenario.gpus[0].reserved_usd_per_gpu_hour = Some(0.3);
        scenario.gpus[1].on_demand_usd_per_gpu_hour = Some(5.0);
        scenario.simulation.capacity = CapacitySource::Analytic;
        scenario.simulation.seed_band = seed_band;
        solve(&scenario, &test_options()).unwrap()
    }

    #[test]
    fn levels_step_by_the_smallest_replica_and_reach_four_of_the_largest() {
        // Two- and four-GPU replicas: every two GPUs, eight steps a side.
        assert_eq!(super::grid(&[2, 4, 2], 1), (2, 8));
        // One size: four steps of it.
        assert_eq!(super::grid(&[8], 1), (8, 4));
        // Whole 8-GPU nodes: no level between two nodes.
        assert_eq!(super::grid(&[2, 4], 8), (8, 4));
        // Nothing of the type run (a reservation the plan leaves idle).
        assert_eq!(super::grid(&[], 1), (1, 4));
    }

    #[test]
    fn no_level_around_the_chosen_reservation_is_cheaper_than_the_gap_allows() {
        let o = tiny(0);
        assert!(
            o.plan.reserved.values().any(|&n| n > 0),
            "{:?}",
            o.plan.reserved
        );
        let levels = &o.purchase.reservation_levels;
        assert!(!levels.is_empty());
        for l in levels {
            let chosen = l.levels.iter().find(|v| v.gpus == l.chosen_gpus).unwrap();
            assert_eq!(chosen.vs_chosen, 0.0);
            assert!(l.levels.len() > 1, "{l:?}");
            // tiny.toml asks for the proven optimum (mip_gap 0).
            assert!(l.levels.iter().all(|v| v.vs_chosen >= -1e-9), "{l:?}");
            assert!(l.fewest_within <= l.chosen_gpus && l.chosen_gpus <= l.most_within);
            assert_eq!(l.near_tie, l.fewest_within < l.most_within);
        }
    }

    #[test]
    fn a_seed_band_solves_every_further_seed_and_picks_one_reservation_for_all() {
        let o = tiny(2);
        let band = o.purchase.seed_band.as_ref().unwrap();
        let seeds: Vec<u64> = band.runs.iter().map(|r| r.seed).collect();
        assert_eq!(seeds, [1, 2, 3]);
        // Both streams drawn anew: the capacity figures are a draw too.
        let capacity: Vec<u64> = band.runs.iter().map(|r| r.capacity_seed).collect();
        assert_eq!(capacity, [1, 2, 3]);
        assert!(band.usd_min <= band.usd_max);
        assert!((band.spread - (band.usd_max / band.usd_min - 1.0)).abs() < 1e-12);
        let common = band.common.as_ref().unwrap();
        assert!(band.runs.iter().any(|r| r.reserved == common.reserved));
        assert_eq!(common.vs_own.len(), 3);
        // Each seed's own reservation is its MILP's optimum (mip_gap 0).
        assert!(common.vs_own.iter().all(|&v| v >= -1e-9), "{common:?}");
        assert_eq!(band.runs[0].usd, o.plan.total_cost_usd);
    }
}
