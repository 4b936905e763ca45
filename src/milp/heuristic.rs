//! A fast whole-number plan to start the MILP from: round the LP
//! relaxation's replicas down, cover what is left greedily (a replica of the
//! option whose extra GPUs cost least per request/s covered, or the API), then
//! re-set the reserved counts to what the plan uses and round again.

use super::model::{build, solve_built, Mode};
use super::{cost_usd, Method, Problem, Settings, Solution, SolveStatus};

/// The LP relaxation's values, indexed like [`Solution`].
#[derive(Debug, Clone)]
pub(super) struct Relaxation {
    pub reserved: Vec<f64>,
    /// `[k][c][t]`
    pub replicas: Vec<Vec<Vec<f64>>>,
    /// `[k][t]`
    pub api: Vec<Vec<f64>>,
}

/// Rounds of re-levelling per starting point.
const ROUNDS: usize = 6;

/// The cheapest plan found from two starting points: the LP's rounded
/// reserved counts with its replicas rounded down, and no reservation with
/// nothing pre-assigned. `None` when neither gives a feasible plan (quotas).
pub(super) fn best_rounding(
    input: &Problem,
    settings: &Settings,
    lp: &Relaxation,
) -> Option<Solution> {
    let zero = Relaxation {
        reserved: vec![0.0; lp.reserved.len()],
        replicas: lp
            .replicas
            .iter()
            .map(|t| t.iter().map(|o| vec![0.0; o.len()]).collect())
            .collect(),
        api: lp.api.iter().map(|t| vec![0.0; t.len()]).collect(),
    };
    let mut best: Option<(f64, Solution)> = None;
    for start in [lp, &zero] {
        let reserved = start
            .reserved
            .iter()
            .map(|r| r.round().max(0.0) as u32)
            .collect();
        relevel(input, reserved, ROUNDS, &mut best, |r| {
            round(input, start, r)
        });
    }
    // Polish: with the best plan's reserved counts, solve each slot exactly,
    // re-level and solve again.
    let reserved = best.as_ref()?.1.reserved.clone();
    relevel(input, reserved, POLISH_ROUNDS, &mut best, |r| {
        per_slot_solution(input, settings, r)
    });
    best.map(|(_, plan)| plan)
}

/// Alternates `plan_for(reserved)` and [`reserved_levels`] up to `rounds`
/// times or until the levels settle, keeping the cheapest plan in `best`.
fn relevel(
    input: &Problem,
    mut reserved: Vec<u32>,
    rounds: usize,
    best: &mut Option<(f64, Solution)>,
    plan_for: impl Fn(&[u32]) -> Option<Solution>,
) {
    for _ in 0..rounds {
        let Some(plan) = plan_for(&reserved) else {
            return;
        };
        let (r, o, a) = cost_usd(input, &plan);
        let next = reserved_levels(input, &plan);
        if best.as_ref().is_none_or(|(cost, _)| r + o + a < *cost) {
            *best = Some((r + o + a, plan));
        }
        if next == reserved {
            return;
        }
        reserved = next;
    }
}

/// Rounds of exact per-slot solving after the rounding.
const POLISH_ROUNDS: usize = 2;

/// One rounding with `reserved` fixed; `None` when a slot cannot be covered.
pub(super) fn round(input: &Problem, lp: &Relaxation, reserved: &[u32]) -> Option<Solution> {
    let slots = input.slots();
    let mut plan = Solution {
        reserved: reserved.to_vec(),
        on_demand: vec![vec![0; input.gpus.len()]; slots],
        replicas: input
            .tiers
            .iter()
            .map(|t| vec![vec![0; slots]; t.options.len()])
            .collect(),
        api: input.tiers.iter().map(|_| vec![0.0; slots]).collect(),
        spot: input
            .tiers
            .iter()
            .map(|t| vec![vec![0; slots]; t.options.len()])
            .collect(),
        status: SolveStatus::TimeLimit,
        lower_bound_usd: f64::NEG_INFINITY,
        method: Method::Monolithic,
    };
    for t in 0..slots {
        let mut used = vec![0u32; input.gpus.len()];
        let mut api_tokens_per_min = 0.0;
        for (k, tier) in input.tiers.iter().enumerate() {
            let peak = tier.peak_rps.get(t).copied().unwrap_or(0.0);
            if peak <= 0.0 {
                continue;
            }
            let mut covered = 0.0;
            for (c, option) in tier.options.iter().enumerate() {
                let n = (lp.replicas[k][c][t] + 1e-6).floor().max(0.0) as u32;
                plan.replicas[k][c][t] = n;
                used[option.gpu] += n * option.gpus_per_replica;
                covered += f64::from(n) * option.rps(t);
            }
            while covered < peak - 1e-9 {
                let residual = peak - covered;
                let mut choice: Option<(f64, Option<usize>)> = None;
                for (c, option) in tier.options.iter().enumerate() {
                    let gpu = &input.gpus[option.gpu];
                    let after = used[option.gpu] + option.gpus_per_replica;
                    if gpu.max_gpus.is_some_and(|m| after > m) {
                        continue;
                    }
                    // Free reserved GPUs are valued at their hourly price, so
                    // that they go to the options that use them best.
                    let free = reserved[option.gpu].saturating_sub(used[option.gpu]);
                    let from_reserved = option.gpus_per_replica.min(free);
                    let extra = option.gpus_per_replica - from_reserved;
                    let reserved_cost = f64::from(from_reserved)
                        * gpu.reserved_usd_per_gpu_hour.unwrap_or(0.0)
                        * input.slot_hours;
                    let cost = match (extra, gpu.on_demand_usd_per_gpu_hour) {
                        (0, _) => reserved_cost,
                        (_, Some(price)) => {
                            reserved_cost + f64::from(extra) * price * input.slot_hours
                        }
                        (_, None) => continue,
                    };
                    let per_rps = cost / option.rps(t).min(residual);
                    if choice.is_none_or(|(best, _)| per_rps < best) {
                        choice = Some((per_rps, Some(c)));
                    }
                }
                if let Some(terms) = tier.api {
                    let share = residual / peak;
                    let tokens = share * peak * terms.tokens_per_request * 60.0;
                    let within_limit = input
                        .api_max_tokens_per_minute
                        .is_none_or(|l| api_tokens_per_min + tokens <= l + 1e-9);
                    if within_limit {
                        let mean = tier.mean_rps.get(t).copied().unwrap_or(0.0);
                        let cost = share * mean * input.slot_hours * 3600.0 * terms.usd_per_request;
                        if choice.is_none_or(|(best, _)| cost / residual < best) {
                            choice = Some((cost / residual, None));
                        }
                    }
                }
                if let (_, Some(c)) = choice? {
                    let option = &tier.options[c];
                    plan.replicas[k][c][t] += 1;
                    used[option.gpu] += option.gpus_per_replica;
                    covered += option.rps(t);
                } else {
                    let share = residual / peak;
                    plan.api[k][t] = share;
                    api_tokens_per_min +=
                        share * peak * tier.api.map_or(0.0, |a| a.tokens_per_request) * 60.0;
                    covered = peak;
                }
            }
        }
        for (g, gpu) in input.gpus.iter().enumerate() {
            if used[g] > reserved[g] && gpu.on_demand_usd_per_gpu_hour.is_none() {
                return None;
            }
            plan.on_demand[t][g] = used[g].saturating_sub(reserved[g]);
        }
    }
    Some(plan)
}

/// With `reserved` fixed, solves every slot on its own (the slots are
/// independent then, so they are spread over the available cores; each solve
/// is single-threaded and deterministic, so the result does not depend on the
/// split). `None` when a slot is infeasible with those counts (quotas) or a
/// solve fails.
pub(super) fn per_slot_solution(
    input: &Problem,
    settings: &Settings,
    reserved: &[u32],
) -> Option<Solution> {
    let slots = input.slots();
    let slot_numbers: Vec<usize> = (0..slots).collect();
    let solved: Vec<Option<Solution>> = crate::base::parallel::map_in_order(&slot_numbers, |&t| {
        solve_slot(input, settings, reserved, t)
    })
    .into_iter()
    .map(Option::flatten)
    .collect();
    let mut whole = Solution {
        reserved: reserved.to_vec(),
        on_demand: Vec::with_capacity(slots),
        replicas: input
            .tiers
            .iter()
            .map(|t| vec![Vec::with_capacity(slots); t.options.len()])
            .collect(),
        api: input
            .tiers
            .iter()
            .map(|_| Vec::with_capacity(slots))
            .collect(),
        spot: input
            .tiers
            .iter()
            .map(|t| vec![vec![0; slots]; t.options.len()])
            .collect(),
        status: SolveStatus::Optimal,
        lower_bound_usd: f64::NEG_INFINITY,
        method: Method::Monolithic,
    };
    for slot in solved {
        let slot = slot?;
        whole.on_demand.push(slot.on_demand[0].clone());
        for (k, tier) in slot.replicas.iter().enumerate() {
            for (c, per_slot) in tier.iter().enumerate() {
                whole.replicas[k][c].push(per_slot[0]);
            }
            whole.api[k].push(slot.api[k][0]);
        }
        if slot.status != SolveStatus::Optimal {
            whole.status = slot.status;
        }
    }
    Some(whole)
}

/// Slot `t` alone, exactly, with `reserved` fixed.
pub(super) fn solve_slot(
    input: &Problem,
    settings: &Settings,
    reserved: &[u32],
    t: usize,
) -> Option<Solution> {
    let one = input.slots_in(t..t + 1);
    let exact = settings.one_slot();
    let mode = Mode {
        integer: true,
        fixed_reserved: Some(reserved),
        warm_start: None,
    };
    solve_built(&one, &exact, build(&one, &exact, mode).ok()?).ok()
}

/// For each GPU type, the reserved count that suits `plan`'s usage: the
/// largest R such that the slots using at least R GPUs, rented on demand,
/// would cost more than reserving the R-th GPU for the whole horizon.
pub(super) fn reserved_levels(input: &Problem, plan: &Solution) -> Vec<u32> {
    levels_for_usage(input, |t, g| plan.reserved[g] + plan.on_demand[t][g])
}

/// [`reserved_levels`] for the GPUs `held(t, g)` in each slot.
pub(super) fn levels_for_usage(input: &Problem, held: impl Fn(usize, usize) -> u32) -> Vec<u32> {
    let slots = input.slots();
    let horizon = input.horizon_hours();
    input
        .gpus
        .iter()
        .enumerate()
        .map(|(g, gpu)| {
            let Some(reserved_price) = gpu.reserved_usd_per_gpu_hour else {
                return 0;
            };
            let mut usage: Vec<u32> = (0..slots).map(|t| held(t, g)).collect();
            usage.sort_unstable_by(|a, b| b.cmp(a));
            let Some(on_demand_price) = gpu.on_demand_usd_per_gpu_hour else {
                return usage.first().copied().unwrap_or(0);
            };
            // usage[i] is the (i+1)-th largest: reserving level R saves the
            // on-demand price in every slot whose usage is at least R.
            let mut level = 0;
            for r in 1..=usage.first().copied().unwrap_or(0) {
                let slots_using = usage.iter().take_while(|&&u| u >= r).count() as f64;
                if slots_using * on_demand_price * input.slot_hours >= reserved_price * horizon {
                    level = r;
                } else {
                    break;
                }
            }
            level
        })
        .collect()
}
