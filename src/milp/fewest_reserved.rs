//! Of the plans the solver's contract accepts, the one that commits least.
//!
//! A solve promises a plan within `mip_gap` of its proven lower bound. Near
//! a break-even between reserving and renting, several reservations meet
//! that promise at costs the simulated figures cannot tell apart (on
//! `scenarios/peak.toml` the seeds' own plans reserve 30, 28 and 28 MI300X,
//! and each seed's 28 and 30 cost within 0.9% of each other). Every
//! reserved GPU is paid whether used or not, so among them the plan takes
//! the fewest: each reserved type in turn is lowered, a step at a time, while
//! the plan with the same fleets, the GPUs above the reservation rented on
//! demand, still costs at most `lower_bound × (1 + mip_gap)`. The fleets do
//! not change, so neither does any replay of the plan.

use super::{total, Problem, Solution, SolveStatus};

/// [`fewest_reserved`] where the scenario asks for it (`on`:
/// `planning.reserve_fewest_within_gap`), else `s` as solved: the one
/// place every plan, alternative and what-if takes the rule from.
pub(crate) fn fewest_reserved_if(on: bool, input: &Problem, mip_gap: f64, s: Solution) -> Solution {
    if on {
        fewest_reserved(input, mip_gap, s)
    } else {
        s
    }
}

/// `s` with each reserved GPU type lowered to the fewest GPUs that keep
/// its cost within `mip_gap` of `s.lower_bound_usd`, its fleets unchanged.
/// A type is left as it is when it cannot be rented on demand, when its
/// rentals link slots (a minimum rental), or when a lower count would
/// break its quota; `s` comes back unchanged when its cost is already past
/// the ceiling (a gap not proven) or its bound is unknown.
pub(crate) fn fewest_reserved(input: &Problem, mip_gap: f64, s: Solution) -> Solution {
    let bound = s.lower_bound_usd;
    if !(bound.is_finite() && bound > 0.0 && mip_gap > 0.0) {
        return s;
    }
    let ceiling = bound * (1.0 + mip_gap);
    let mut best = s;
    for (g, gpu) in input.gpus.iter().enumerate() {
        if best.reserved[g] == 0
            || gpu.reserved_usd_per_gpu_hour.is_none()
            || gpu.on_demand_usd_per_gpu_hour.is_none()
            || gpu.purchase.min_rental_slots > 1
        {
            continue;
        }
        let step = step_gpus(input, &best, g);
        while best.reserved[g] >= step {
            let Some(lower) = with_reserved(input, &best, g, best.reserved[g] - step) else {
                break;
            };
            if total(input, &lower) > ceiling {
                break;
            }
            best = lower;
        }
    }
    best
}

/// GPUs between two reservations of type `g`: its purchase unit, or, for
/// single GPUs, the smallest replica on it that `s` runs (a fleet changes
/// by one replica at a time).
fn step_gpus(input: &Problem, s: &Solution, g: usize) -> u32 {
    let unit = input.gpus[g].purchase.unit_gpus.max(1);
    if unit > 1 {
        return unit;
    }
    input
        .tiers
        .iter()
        .zip(&s.replicas)
        .flat_map(|(tier, replicas)| tier.options.iter().zip(replicas))
        .filter(|(o, per_slot)| o.gpu == g && per_slot.iter().any(|&n| n > 0))
        .map(|(o, _)| o.gpus_per_replica)
        .min()
        .unwrap_or(1)
        .max(1)
}

/// `s` with `reserved` GPUs of type `g` and the GPUs its replicas use above
/// them rented in each slot (whole units), or `None` when a slot would
/// then exceed the type's quota.
fn with_reserved(input: &Problem, s: &Solution, g: usize, reserved: u32) -> Option<Solution> {
    let gpu = &input.gpus[g];
    let unit = gpu.purchase.unit_gpus.max(1);
    let mut out = s.clone();
    out.reserved[g] = reserved;
    for (t, slot) in out.on_demand.iter_mut().enumerate() {
        let needed = s.gpus_used(input, g, t).saturating_sub(reserved);
        let rented = needed.div_ceil(unit) * unit;
        slot[g] = slot[g].max(rented);
        if gpu.max_gpus.is_some_and(|m| reserved + slot[g] > m) {
            return None;
        }
    }
    if out.status == SolveStatus::Optimal && total(input, &out) > total(input, s) {
        out.status = SolveStatus::GapLimit;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::milp::{ConfigOption, GpuType, Purchase, TierInput, TierRules};

    /// One GPU type, 1 USD an hour reserved and 2 on demand, one tier of
    /// replicas of `tp` GPUs at 1 request/s each, four one-hour slots.
    fn problem(tp: u32, rates: &[f64]) -> Problem {
        Problem {
            slot_hours: 1.0,
            gpus: vec![GpuType {
                id: "a".into(),
                reserved_usd_per_gpu_hour: Some(1.0),
                on_demand_usd_per_gpu_hour: Some(2.0),
                max_gpus: None,
                purchase: Purchase::default(),
                spot: None,
            }],
            tiers: vec![TierInput {
                name: "t".into(),
                peak_rps: rates.to_vec(),
                mean_rps: rates.to_vec(),
                api: None,
                options: vec![ConfigOption::uniform(0, tp, 1.0, rates.len())],
                rules: TierRules::default(),
            }],
            api_max_tokens_per_minute: None,
            block_slots: None,
        }
    }

    fn solution(p: &Problem, reserved: u32, replicas: &[u32], bound: f64) -> Solution {
        let tp = p.tiers[0].options[0].gpus_per_replica;
        Solution {
            reserved: vec![reserved],
            on_demand: replicas
                .iter()
                .map(|&n| vec![(n * tp).saturating_sub(reserved)])
                .collect(),
            replicas: vec![vec![replicas.to_vec()]],
            api: vec![vec![0.0; replicas.len()]],
            spot: vec![vec![vec![0; replicas.len()]]],
            status: SolveStatus::Optimal,
            lower_bound_usd: bound,
            method: crate::milp::Method::Decomposed,
        }
    }

    #[test]
    fn the_fewest_reserved_gpus_within_the_gap_are_kept_and_the_fleets_are_not_touched() {
        // Two-GPU replicas: 4, 4, 3, 2 of them. Reserving 8 costs 32 USD;
        // 6 costs 24 + 2 × 2 × 2 = 32 too; 4 costs 16 + (4 + 4 + 2) × 2 = 36.
        let p = problem(2, &[4.0, 4.0, 3.0, 2.0]);
        let s = solution(&p, 8, &[4, 4, 3, 2], 32.0);
        assert_eq!(total(&p, &s), 32.0);
        // A gap of 1% affords 32.32 USD: 6 GPUs (a tie), not 4.
        let fewest = fewest_reserved(&p, 0.01, s.clone());
        assert_eq!(fewest.reserved, [6]);
        assert_eq!(fewest.replicas, s.replicas);
        assert_eq!(total(&p, &fewest), 32.0);
        assert_eq!(fewest.on_demand, [[2], [2], [0], [0]]);
        // A gap of 15% affords 36.8 USD: 4 GPUs, at a cost then within it.
        let fewest = fewest_reserved(&p, 0.15, s.clone());
        assert_eq!(fewest.reserved, [4]);
        assert_eq!(total(&p, &fewest), 36.0);
        assert_eq!(fewest.status, SolveStatus::GapLimit);
        // No gap asked: the plan as solved.
        assert_eq!(fewest_reserved(&p, 0.0, s.clone()), s);
    }

    #[test]
    fn a_plan_past_its_ceiling_or_a_type_that_cannot_be_rented_keeps_its_reservation() {
        let p = problem(2, &[4.0, 4.0, 3.0, 2.0]);
        // The plan costs 32 against a bound of 30: 1% affords 30.30.
        let s = solution(&p, 8, &[4, 4, 3, 2], 30.0);
        assert_eq!(fewest_reserved(&p, 0.01, s.clone()), s);
        let mut reserved_only = p.clone();
        reserved_only.gpus[0].on_demand_usd_per_gpu_hour = None;
        let s = solution(&reserved_only, 8, &[4, 4, 3, 2], 32.0);
        assert_eq!(fewest_reserved(&reserved_only, 0.5, s.clone()), s);
        let mut quota = p.clone();
        quota.gpus[0].max_gpus = Some(8);
        let s = solution(&quota, 8, &[4, 4, 3, 2], 32.0);
        let fewest = fewest_reserved(&quota, 0.15, s);
        // 4 reserved would rent 4 in the busiest slots: within the quota.
        assert_eq!(fewest.reserved, [4]);
    }
}
