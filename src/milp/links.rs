//! Constraints that link slots beyond the reserved counts, and their
//! variables. Each one needs the whole model over every slot at once.
//!
//! * Minimum rental, for a GPU type whose on-demand units stay rented
//!   `min_rental[g] > 1` slots once started: `starts[g,t] ≥ on_demand[g,t] −
//!   on_demand[g,t−1]` (`rental_start[g,t]`, with nothing rented before the
//!   first slot) and `on_demand[g,t] ≥ Σ_{τ = t−min_rental[g]+1..t}
//!   starts[g,τ]` (`rental_hold[g,t]`): every unit started in the last
//!   `min_rental[g]` slots is still rented. With `block[t]` (the periods of
//!   a growing term) each block starts with nothing rented.
//! * Deadline, for a tier whose volume may wait `deadline[k]` slots:
//!   `moved[k,t,u]` ≥ 0 (requests/s of slot `t`'s arrivals served in slot
//!   `u`, `t ≤ u ≤ t + deadline[k]`, within the horizon, or within `t`'s
//!   block with `block[t]`);
//!   `deadline_volume[k,t]`: Σ_u moved[k,t,u] + mean[k,t] api[k,t] =
//!   mean[k,t]; `deadline_coverage[k,u]`: Σ_c mu[c,u] replicas[k,c,u] ≥
//!   Σ_t moved[k,t,u].
//! * Configuration limit, for a tier allowed `max_configs[k]`
//!   configurations: `uses[k,c]` ∈ {0, 1}; `config_use[k,c,t]`:
//!   replicas[k,c,t] ≤ M[k,c,t] uses[k,c]; `config_limit[k]`: Σ_c uses[k,c]
//!   ≤ max_configs[k].

use super::vars::{replica_bound, Vars};
use super::Problem;
use good_lp::solvers::highs::HighsProblem;
use good_lp::{constraint, variable, Expression, ProblemVariables, SolverModel, Variable};

/// Variables of the cross-slot constraints.
pub(super) struct LinkVars {
    /// `starts[g,t]`, `[g][t]`: units of type `g` started in slot `t`
    /// (GPU types with a minimum rental only).
    starts: Vec<Vec<Option<Variable>>>,
    /// `moved[k,t,u]`, `[k][t]` → `(u, variable)` (deadline tiers only).
    moved: Vec<Vec<Vec<(usize, Variable)>>>,
    /// `uses[k,c]`, `[k][c]` (tiers with a configuration limit only).
    uses: Vec<Vec<Option<Variable>>>,
}

impl LinkVars {
    pub(super) fn add(
        input: &Problem,
        core: &Vars,
        vars: &mut ProblemVariables,
        integer: bool,
    ) -> Self {
        let slots = input.slots();
        let starts = input
            .gpus
            .iter()
            .enumerate()
            .map(|(g, gpu)| {
                (0..slots)
                    .map(|t| {
                        let linked = gpu.purchase.min_rental_slots > 1;
                        core.on_demand[t][g]
                            .filter(|_| linked)
                            .map(|_| vars.add(variable().min(0)))
                    })
                    .collect()
            })
            .collect();
        let moved = input
            .tiers
            .iter()
            .map(|tier| match tier.rules.deadline_slots {
                None => Vec::new(),
                Some(d) => (0..slots)
                    .map(|t| {
                        if tier.mean_rps.get(t).copied().unwrap_or(0.0) <= 0.0 {
                            return Vec::new();
                        }
                        (t..=(t + d).min(input.block_of(t).end - 1))
                            .map(|u| (u, vars.add(variable().min(0))))
                            .collect()
                    })
                    .collect(),
            })
            .collect();
        let uses = input
            .tiers
            .iter()
            .map(|tier| {
                tier.options
                    .iter()
                    .map(|_| {
                        tier.rules.max_configurations.map(|_| {
                            let def = variable().min(0).max(1);
                            vars.add(if integer { def.integer() } else { def })
                        })
                    })
                    .collect()
            })
            .collect();
        LinkVars {
            starts,
            moved,
            uses,
        }
    }
}

/// Adds the minimum-rental, deadline and configuration-limit rows.
pub(super) fn add_link_constraints(
    problem: &mut HighsProblem,
    input: &Problem,
    core: &Vars,
    links: &LinkVars,
) {
    add_min_rental(problem, input, core, links);
    add_deadlines(problem, input, core, links);
    add_config_limits(problem, input, core, links);
}

/// `rental_start[g,t]` and `rental_hold[g,t]`.
fn add_min_rental(problem: &mut HighsProblem, input: &Problem, core: &Vars, links: &LinkVars) {
    for (g, gpu) in input.gpus.iter().enumerate() {
        let hold = gpu.purchase.min_rental_slots as usize;
        for (t, start) in links.starts[g].iter().enumerate() {
            let (Some(start), Some(now)) = (*start, core.on_demand[t][g]) else {
                continue;
            };
            // A block's first slot starts afresh: nothing is rented before it.
            let first = input.block_of(t).start;
            let mut rise = Expression::from(now);
            if let Some(before) = t
                .checked_sub(1)
                .filter(|&p| p >= first)
                .and_then(|p| core.on_demand[p][g])
            {
                rise.add_mul(-1.0, before);
            }
            problem.add_constraint(constraint!(start >= rise));
            let mut recent = Expression::with_capacity(hold);
            for s in links.starts[g][(t + 1).saturating_sub(hold).max(first)..=t]
                .iter()
                .flatten()
            {
                recent.add_mul(1.0, *s);
            }
            problem.add_constraint(constraint!(now >= recent));
        }
    }
}

/// `deadline_volume[k,t]` and `deadline_coverage[k,u]`.
fn add_deadlines(problem: &mut HighsProblem, input: &Problem, core: &Vars, links: &LinkVars) {
    let slots = input.slots();
    for (k, tier) in input.tiers.iter().enumerate() {
        if tier.rules.deadline_slots.is_none() {
            continue;
        }
        let mut into: Vec<Expression> = (0..slots).map(|_| Expression::default()).collect();
        for (t, moves) in links.moved[k].iter().enumerate() {
            if moves.is_empty() {
                continue;
            }
            let mean = tier.mean_rps[t];
            let mut volume = Expression::with_capacity(moves.len() + 1);
            for &(u, m) in moves {
                volume.add_mul(1.0, m);
                into[u].add_mul(1.0, m);
            }
            if let Some(a) = core.api[k][t] {
                volume.add_mul(mean, a);
            }
            problem.add_constraint(constraint!(volume == mean));
        }
        for (u, arriving) in into.into_iter().enumerate() {
            let covered = core.replica_capacity(input, k, u);
            problem.add_constraint(constraint!(covered >= arriving));
        }
    }
}

/// `config_use[k,c,t]` and `config_limit[k]`.
fn add_config_limits(problem: &mut HighsProblem, input: &Problem, core: &Vars, links: &LinkVars) {
    for (k, tier) in input.tiers.iter().enumerate() {
        let Some(limit) = tier.rules.max_configurations else {
            continue;
        };
        let mut used = Expression::with_capacity(tier.options.len());
        for (c, uses) in links.uses[k].iter().enumerate() {
            let Some(uses) = *uses else { continue };
            used.add_mul(1.0, uses);
            for (t, r) in core.replicas[k][c].iter().enumerate() {
                if let Some(r) = *r {
                    let most = replica_bound(tier, c, t);
                    problem.add_constraint(constraint!(r <= most * uses));
                }
            }
            for (t, s) in core.spot[k][c].iter().enumerate() {
                if let (Some(s), Some(terms)) = (*s, input.gpus[tier.options[c].gpu].spot) {
                    let most = (replica_bound(tier, c, t) / terms.yield_share).ceil();
                    problem.add_constraint(constraint!(s <= most * uses));
                }
            }
        }
        problem.add_constraint(constraint!(used <= f64::from(limit)));
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{covered, one_type, settings, tiny};
    use super::super::{solve, total};

    #[test]
    fn a_minimum_rental_holds_units_through_the_quiet_slots() {
        let mut input = one_type(vec![4.0, 0.5, 0.5, 0.5, 4.0], None);
        let hourly = solve(&input, &settings()).unwrap();
        let per_slot: Vec<u32> = hourly.on_demand.iter().map(|s| s[0]).collect();
        assert_eq!(per_slot, vec![4, 1, 1, 1, 4]);
        input.gpus[0].purchase.min_rental_slots = 2;
        let held = solve(&input, &settings()).unwrap();
        let per_slot: Vec<u32> = held.on_demand.iter().map(|s| s[0]).collect();
        // The four started in slot 0 stay a second slot; the three started in
        // the last slot would outlast the horizon, which is not charged.
        assert_eq!(per_slot, vec![4, 4, 1, 1, 4]);
        assert!((total(&input, &held) - 14.0).abs() < 1e-9);
    }

    #[test]
    fn a_deadline_moves_volume_onto_reserved_gpus() {
        // 4 requests/s in the first hour only: rented for that hour it costs
        // 4; with three hours' grace one reserved GPU at 0.9 serves it over
        // four hours for 3.6.
        let mut input = one_type(vec![4.0, 0.0, 0.0, 0.0], Some(0.9));
        let urgent = solve(&input, &settings()).unwrap();
        assert!((total(&input, &urgent) - 4.0).abs() < 1e-9);
        input.tiers[0].rules.deadline_slots = Some(3);
        let batch = solve(&input, &settings()).unwrap();
        assert_eq!(batch.reserved, vec![1]);
        assert_eq!(batch.replicas[0][0], vec![1, 1, 1, 1]);
        assert!((total(&input, &batch) - 3.6).abs() < 1e-9);
        // Two hours' grace are not enough to spread it thinly: 2 reserved
        // would cost 7.2, renting 4 costs 4.
        input.tiers[0].rules.deadline_slots = Some(1);
        let short = solve(&input, &settings()).unwrap();
        assert!((total(&input, &short) - 4.0).abs() < 1e-9);
    }

    #[test]
    fn blocks_are_crossed_by_no_deadline_and_no_rental() {
        // Two blocks of two slots: demand in each block's last slot only.
        let mut input = one_type(vec![0.0, 4.0, 0.0, 4.0], None);
        input.gpus[0].purchase.min_rental_slots = 2;
        // One block: the four rented for slot 1 are held into slot 2 (or
        // rented from slot 0), 12 GPU-hours in all.
        let one = solve(&input, &settings()).unwrap();
        assert!((total(&input, &one) - 12.0).abs() < 1e-9, "{one:?}");
        // Two blocks, each a horizon of its own: nothing is rented before a
        // block starts, and a hold past its end is not charged, as for the
        // horizon itself.
        input.block_slots = Some(2);
        let two = solve(&input, &settings()).unwrap();
        let per_slot: Vec<u32> = two.on_demand.iter().map(|s| s[0]).collect();
        assert_eq!(per_slot, vec![0, 4, 0, 4]);
        assert!((total(&input, &two) - 8.0).abs() < 1e-9);
        // A deadline cannot carry a block's volume into the next block.
        let mut batch = one_type(vec![0.0, 4.0, 0.0, 0.0], Some(0.5));
        batch.tiers[0].rules.deadline_slots = Some(2);
        let free = solve(&batch, &settings()).unwrap();
        batch.block_slots = Some(2);
        let blocked = solve(&batch, &settings()).unwrap();
        assert!(
            total(&batch, &blocked) > total(&batch, &free) + 1e-6,
            "{free:?} {blocked:?}"
        );
        let served_after: u32 = blocked.replicas[0][0][2..].iter().sum();
        assert_eq!(served_after, 0, "{blocked:?}");
    }

    #[test]
    fn a_configuration_limit_keeps_the_cheapest_single_configuration() {
        let peaks = vec![3.0, 11.0, 6.5];
        let mut input = tiny(peaks);
        let free = solve(&input, &settings()).unwrap();
        let used = |s: &super::super::Solution| {
            s.replicas[0]
                .iter()
                .filter(|per_slot| per_slot.iter().any(|&n| n > 0))
                .count()
        };
        assert_eq!(used(&free), 2, "{:?}", free.replicas);
        input.tiers[0].rules.max_configurations = Some(1);
        let limited = solve(&input, &settings()).unwrap();
        assert_eq!(used(&limited), 1, "{:?}", limited.replicas);
        assert!(covered(&input, &limited));
        let alone = |c: usize| {
            let mut one = input.clone();
            one.tiers[0].rules.max_configurations = None;
            one.tiers[0].options = vec![input.tiers[0].options[c].clone()];
            solve(&one, &settings()).map_or(f64::INFINITY, |s| total(&one, &s))
        };
        let best_alone = alone(0).min(alone(1));
        assert!((total(&input, &limited) - best_alone).abs() < 1e-6);
        assert!(total(&input, &limited) > total(&input, &free));
    }
}
