//! A lower bound that branches on the reserved counts (decomposed method),
//! for when the Lagrangian bound stalls above `mip_gap`.
//!
//! `F(r) = R(r) + S(r)`: the reservation, `R(r) = Σ_g r[g] × P[g]`, grows
//! with every count, and the slots' on-demand and API cost, `S(r) = Σ_t
//! f_t(r)`, never grows with one (a GPU more held is one the slot may
//! leave idle). So over a box of counts `lo ≤ r ≤ hi`,
//!
//! `min F ≥ R(lo) + S(hi)`,
//!
//! exact when the box is one point; and the box's own Lagrangian bound
//! ([`box_bound`]), with each slot's copies of the counts at most `hi` and
//! at least `lo` paid for, is tighter on wide boxes. A box's bound is the
//! larger of the two. The search keeps boxes in order of
//! their bound and splits the lowest along the count whose width costs the
//! most (`(hi[g] − lo[g]) × P[g]`), pricing one new corner per split
//! (`OuterSearch::price_or_why`); the lowest bound of the boxes left is a
//! proven bound on the optimum. It stops when that bound is within the gap
//! of the cheapest plan priced (a point popped below it is priced exactly
//! and becomes that plan), or after `budget` prices.
//!
//! The first box: no reserved GPUs of a type without a reserved price, and
//! at most the type's quota and the most GPUs of the type a slot's plan
//! can use without a replica to spare ([`most_useful`]): beyond that a
//! GPU more held only costs.

use super::lagrangian::{self, Multipliers};
use super::outer_search::OuterSearch;
use super::slot_pricing::{self, Pricing};
use super::slot_search;
use super::slot_search_tree::SlotOutcome;
use super::Problem;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A box of reserved counts, `lo ≤ r ≤ hi`, and its bound.
#[derive(Debug, Clone)]
struct Counts {
    lo: Vec<u32>,
    hi: Vec<u32>,
    bound_usd: f64,
    /// The multipliers of its best Lagrangian bound (its halves start
    /// from them).
    lambda: Multipliers,
    /// The order it was made in (ties broken by it, so the search does
    /// not depend on the heap's layout).
    order: usize,
    /// Whether `hi` was priced to proven optimality (a point's bound is
    /// then its exact cost).
    exact: bool,
}

impl PartialEq for Counts {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Counts {}

impl PartialOrd for Counts {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Counts {
    /// The lowest bound first out of a max-heap (then the earliest made).
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .bound_usd
            .total_cmp(&self.bound_usd)
            .then(other.order.cmp(&self.order))
    }
}

/// What the branching proved.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Proved {
    /// No plan costs less (USD).
    pub lower_bound_usd: f64,
    /// Candidates priced by the branching (each a whole pass over the
    /// slots).
    pub priced: usize,
}

/// Branches until the lowest box bound is within `mip_gap` of the cheapest
/// plan `search` holds, after at most `budget` prices, or while
/// `keep_going` says so; the cheapest plan may improve on the way.
pub(super) fn branch(
    search: &mut OuterSearch,
    lambda: &Multipliers,
    mip_gap: f64,
    budget: usize,
    keep_going: impl Fn() -> bool,
) -> Proved {
    let input = search.input();
    let lo: Vec<u32> = vec![0; input.gpus.len()];
    let hi = most_useful(input)
        .iter()
        .enumerate()
        .map(|(g, &n)| {
            if input.gpus[g].reserved_usd_per_gpu_hour.is_some() {
                n
            } else {
                0
            }
        })
        .collect::<Vec<u32>>();
    let hi = floor_in_units(input, &hi);
    let mut priced = 0;
    let mut made = 0;
    let mut heap = BinaryHeap::new();
    let target = |search: &OuterSearch| search.best_usd() * (1.0 - mip_gap);
    let t = target(search);
    if let Some(b) = bounded(search, lo, hi, lambda, t, &mut made, &mut priced) {
        heap.push(b);
    }
    loop {
        let best = search.best_usd();
        let Some(top) = heap.peek() else {
            // Every box empty or priced: the cheapest plan is the optimum.
            return Proved {
                lower_bound_usd: best,
                priced,
            };
        };
        let proven = top.bound_usd.min(best);
        if best - proven <= mip_gap * best.abs() + 1e-6 || priced >= budget || !keep_going() {
            return Proved {
                lower_bound_usd: proven,
                priced,
            };
        }
        let top = heap.pop().expect("peeked");
        if top.lo == top.hi {
            if top.exact {
                // A point priced exactly (in `bounded`): the search holds
                // it if it is the cheapest; nothing is left below it.
                continue;
            }
            // A point whose slots were not all solved to proven
            // optimality: its bound, the lowest left, is what is proven.
            return Proved {
                lower_bound_usd: proven,
                priced,
            };
        }
        let g = widest(input, &top);
        let unit = input.gpus[g].purchase.unit_gpus.max(1);
        let steps = (top.hi[g] - top.lo[g]) / unit;
        let mid = top.lo[g] + steps / 2 * unit;
        let mut low_hi = top.hi.clone();
        low_hi[g] = mid;
        let mut high_lo = top.lo.clone();
        high_lo[g] = mid + unit;
        let t = target(search);
        for (lo, hi) in [(top.lo.clone(), low_hi), (high_lo, top.hi.clone())] {
            if let Some(b) = bounded(search, lo, hi, &top.lambda, t, &mut made, &mut priced) {
                heap.push(b);
            }
        }
    }
}

/// The box `lo..=hi` with its bound, or `None` when no count in it covers
/// every slot (`hi` does not: fewer GPUs cannot either). The bound is the
/// larger of `R(lo) + S(hi)` (a slot not solved to proven optimality at
/// `hi` leaving `S(hi) ≥ 0`) and the box's Lagrangian bound after
/// [`BOX_STEPS`] subgradient steps from `lambda` towards `target_usd`
/// ([`box_bound`]). Each pass over the slots counts as one price.
fn bounded(
    search: &mut OuterSearch,
    lo: Vec<u32>,
    hi: Vec<u32>,
    lambda: &Multipliers,
    target_usd: f64,
    made: &mut usize,
    priced: &mut usize,
) -> Option<Counts> {
    let before = search.priced_count();
    let at_hi = search.price_or_why(&hi);
    *priced += search.priced_count() - before;
    let (slots_usd, exact) = match at_hi {
        Ok(usd) => (usd - search.reservation_usd(&hi), true),
        Err(SlotOutcome::Infeasible) => return None,
        Err(SlotOutcome::NodeLimit) => (0.0, false),
    };
    let simple = search.reservation_usd(&lo) + slots_usd;
    let input = search.input();
    let mut best = (simple, lambda.clone());
    let mut current = lambda.clone();
    let mut theta = 1.0;
    for _ in 0..BOX_STEPS {
        *priced += 1;
        let Some(dual) = box_bound(input, &current, &lo, &hi) else {
            break;
        };
        if dual.bound_usd > best.0 {
            best = (dual.bound_usd, current.clone());
        } else {
            theta /= 2.0;
        }
        if dual.bound_usd >= target_usd {
            break;
        }
        match box_step(input, &current, &dual, &lo, target_usd, theta) {
            Some(next) => current = next,
            None => break,
        }
    }
    *made += 1;
    Some(Counts {
        bound_usd: best.0,
        lambda: best.1,
        lo,
        hi,
        order: *made,
        exact,
    })
}

/// Subgradient steps per box.
const BOX_STEPS: usize = 2;

/// A box's Lagrangian bound and, per slot and type, the reserved GPUs its
/// minimum holds.
struct BoxDual {
    bound_usd: f64,
    held: Vec<Vec<u32>>,
}

/// The Lagrangian bound over the box `lo..=hi` (multipliers `λ[g][t] ≥ 0`
/// with `Σ_t λ[g][t] ≤ P[g]`): for every `r` in it,
/// `F(r) ≥ Σ_g (P[g] − Σ_t λ[g][t]) lo[g] + Σ_t min { Σ_g λ[g][t] r[g,t] +
/// f_t }` with each slot's own copy `r[g,t] ≤ hi[g]` (a GPU beyond `hi[g]`
/// is rented: `Pricing::PricedUpTo`). `None` when a slot was not solved to
/// proven optimality.
fn box_bound(input: &Problem, lambda: &Multipliers, lo: &[u32], hi: &[u32]) -> Option<BoxDual> {
    let slots: Vec<usize> = (0..input.slots()).collect();
    let solved = crate::base::parallel::map_in_order(&slots, |&t| {
        let usd: Vec<f64> = lambda.0.iter().map(|per_slot| per_slot[t]).collect();
        let plan = slot_search::solve_exact(input, t, Pricing::PricedUpTo(&usd, hi));
        (usd, plan)
    });
    let mut bound_usd: f64 = input
        .gpus
        .iter()
        .enumerate()
        .map(|(g, _)| match lagrangian::limits(input, g) {
            Some((total, _)) => {
                (total - lambda.0[g].iter().sum::<f64>()).max(0.0) * f64::from(lo[g])
            }
            None => 0.0,
        })
        .sum();
    let mut held = Vec::with_capacity(slots.len());
    for one in solved {
        let (usd, plan) = one?;
        let plan = plan.ok()?;
        bound_usd += plan.lower_usd - 1e-9 * plan.lower_usd.abs();
        held.push(
            input
                .gpus
                .iter()
                .enumerate()
                .map(|(g, gpu)| {
                    if slot_pricing::reserving_is_cheaper(input, gpu, usd[g]) {
                        plan.gpus_used[g].min(hi[g])
                    } else {
                        0
                    }
                })
                .collect(),
        );
    }
    Some(BoxDual { bound_usd, held })
}

/// One projected subgradient step of the box's bound (`∂/∂λ[g][t] = held
/// − lo[g]`) towards `target_usd`; `None` when the subgradient is zero.
fn box_step(
    input: &Problem,
    lambda: &Multipliers,
    dual: &BoxDual,
    lo: &[u32],
    target_usd: f64,
    theta: f64,
) -> Option<Multipliers> {
    let direction: Vec<Vec<f64>> = (0..input.gpus.len())
        .map(|g| {
            dual.held
                .iter()
                .map(|row| {
                    if lagrangian::limits(input, g).is_some() {
                        f64::from(row[g]) - f64::from(lo[g])
                    } else {
                        0.0
                    }
                })
                .collect()
        })
        .collect();
    lagrangian::projected_step(input, lambda, &direction, dual.bound_usd, target_usd, theta)
}

/// The count whose width costs the most over the horizon.
fn widest(input: &Problem, b: &Counts) -> usize {
    let width_usd = |g: usize| {
        f64::from(b.hi[g] - b.lo[g]) * input.gpus[g].reserved_usd_per_gpu_hour.unwrap_or(0.0)
    };
    (0..input.gpus.len())
        .filter(|&g| b.hi[g] > b.lo[g])
        .max_by(|&a, &c| width_usd(a).total_cmp(&width_usd(c)).then(c.cmp(&a)))
        .expect("a box of more than one point")
}

/// Each count rounded down to whole purchase units.
fn floor_in_units(input: &Problem, counts: &[u32]) -> Vec<u32> {
    counts
        .iter()
        .zip(&input.gpus)
        .map(|(&n, g)| {
            let unit = g.purchase.unit_gpus.max(1);
            n / unit * unit
        })
        .collect()
}

/// Per GPU type, the most GPUs worth holding: its quota, and no more than
/// any slot's plan can use without a replica it could drop (rounded up to
/// whole units, then down to the quota's). A tier's replicas on type `g`
/// that cover its slot with none to spare hold fewer than
/// `(peak[k,t] + max_c mu[c,t]) × max_c (p[c] / mu[c,t])` GPUs, over the
/// options `c` of type `g` that serve the slot (their requests/s stay below
/// the peak plus one replica's); held GPUs beyond the largest sum over the
/// tiers are never used, and cost.
pub(super) fn most_useful(input: &Problem) -> Vec<u32> {
    (0..input.gpus.len())
        .map(|g| {
            let gpu = &input.gpus[g];
            let unit = gpu.purchase.unit_gpus.max(1);
            let most_used = (0..input.slots())
                .map(|t| {
                    input
                        .tiers
                        .iter()
                        .map(|tier| {
                            let on_g =
                                || tier.options.iter().filter(|o| o.gpu == g && o.rps(t) > 0.0);
                            let most_rps = on_g().map(|o| o.rps(t)).fold(0.0, f64::max);
                            let most_gpus_per_rps = on_g()
                                .map(|o| f64::from(o.gpus_per_replica) / o.rps(t))
                                .fold(0.0, f64::max);
                            let peak = tier.peak_rps.get(t).copied().unwrap_or(0.0);
                            ((peak + most_rps) * most_gpus_per_rps).ceil()
                        })
                        .sum::<f64>()
                })
                .fold(0.0, f64::max);
            let up = (most_used.min(f64::from(u32::MAX)) as u32).div_ceil(unit) * unit;
            match gpu.max_gpus {
                Some(max) => up.min(max / unit * unit),
                None => up,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::milp::{ConfigOption, GpuType, Purchase, TierInput, TierRules};

    /// Two GPU types, each reserved or rented; one tier whose rate swings
    /// over six slots: the optimum reserves some of each, and brute force
    /// over every count finds it.
    fn problem() -> Problem {
        let gpu = |id: &str, reserved: f64, rent: f64, max: u32| GpuType {
            id: id.into(),
            reserved_usd_per_gpu_hour: Some(reserved),
            on_demand_usd_per_gpu_hour: Some(rent),
            max_gpus: Some(max),
            purchase: Purchase::default(),
            spot: None,
        };
        let peak = vec![3.0, 7.5, 12.0, 9.0, 4.5, 10.5];
        Problem {
            slot_hours: 1.0,
            gpus: vec![gpu("a", 0.6, 1.0, 12), gpu("b", 0.45, 0.8, 12)],
            tiers: vec![TierInput {
                name: "t".into(),
                mean_rps: peak.clone(),
                peak_rps: peak,
                options: vec![
                    ConfigOption::uniform(0, 1, 1.5, 6),
                    ConfigOption::uniform(1, 2, 2.2, 6),
                ],
                api: None,
                rules: TierRules::default(),
            }],
            api_max_tokens_per_minute: None,
            block_slots: None,
        }
    }

    fn zero(input: &Problem) -> Multipliers {
        Multipliers(vec![vec![0.0; input.slots()]; input.gpus.len()])
    }

    fn brute_force(input: &Problem) -> f64 {
        let mut search = OuterSearch::new(input);
        let mut best = f64::INFINITY;
        for a in 0..=12 {
            for b in 0..=12 {
                if let Ok(usd) = search.price_or_why(&[a, b]) {
                    best = best.min(usd);
                }
            }
        }
        best
    }

    #[test]
    fn branching_proves_the_optimum_that_brute_force_finds() {
        let input = problem();
        let optimum = brute_force(&input);
        // From a poor start: nothing reserved.
        let mut search = OuterSearch::new(&input);
        search.price(&[0, 0]);
        let lambda = zero(&input);
        let proved = branch(&mut search, &lambda, 0.0, 10_000, || true);
        assert!(
            proved.lower_bound_usd <= optimum + 1e-6,
            "{proved:?} {optimum}"
        );
        assert!(
            (search.best_usd() - optimum).abs() < 1e-6,
            "{} {optimum}",
            search.best_usd()
        );
        assert!(
            (proved.lower_bound_usd - optimum).abs() < 1e-6,
            "{proved:?} {optimum}"
        );
        assert!(
            proved.priced < 13 * 13,
            "{proved:?}: no better than brute force"
        );
    }

    #[test]
    fn a_bound_stopped_by_its_budget_stays_below_the_optimum() {
        let input = problem();
        let optimum = brute_force(&input);
        for budget in [1, 2, 4, 8] {
            let mut search = OuterSearch::new(&input);
            search.price(&[0, 0]);
            let proved = branch(&mut search, &zero(&input), 0.0, budget, || true);
            assert!(
                proved.lower_bound_usd <= optimum + 1e-6,
                "{budget}: {proved:?}"
            );
        }
    }

    #[test]
    fn no_more_is_held_than_a_slot_can_use() {
        let input = problem();
        // Busiest slot 12 req/s: on `a` (1.5 a replica, 1 GPU) fewer than
        // (12 + 1.5) / 1.5 = 9 GPUs; on `b` (2.2 a replica, 2 GPUs) fewer
        // than (12 + 2.2) × 2 / 2.2 = 12.9, held to the quota of 12.
        assert_eq!(most_useful(&input), vec![9, 12]);
    }
}
