//! The Lagrangian lower bound of the decomposed method.
//!
//! Give every slot its own copy `reserved[g,t]` of the reserved counts and
//! price the copies instead of tying them together: with multipliers
//! `λ[g,t] ≥ 0` whose sum over the slots is at most the reservation's price
//! for the horizon, `P[g] = reserved_usd_per_gpu_hour[g] × horizon`,
//!
//! `L(λ) = Σ_t min { Σ_g λ[g,t] reserved[g,t] + on-demand and API cost of slot t }`
//!
//! is a lower bound on the optimum: any plan pays `Σ_g P[g] reserved[g] ≥
//! Σ_t Σ_g λ[g,t] reserved[g]` for its reservation, and each slot's part of
//! it is one candidate of that slot's minimum. Each slot's minimum is a
//! whole-number problem solved exactly ([`slot_search`]), so the bound knows
//! that replicas come whole, which the LP relaxation does not. The
//! multipliers start at the LP's GPU prices and move by projected
//! subgradient steps.

use super::relaxation::LpRelaxation;
use super::slot_pricing;
use super::slot_search::{self, Pricing, SlotOutcome, SlotPlan};
use super::{MilpError, Problem};

/// `λ[g][t]`, USD per reserved GPU of type `g` in slot `t`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Multipliers(pub Vec<Vec<f64>>);

/// `L(λ)` and the slot plans that attain it.
pub(super) struct Dual {
    pub bound_usd: f64,
    pub slots: Vec<SlotPlan>,
    /// `[t][g]`: the reserved GPUs each slot's minimum holds.
    pub reserved_by_slot: Vec<Vec<u32>>,
}

/// USD a reserved GPU of type `g` costs for the horizon, `P[g]`, and the
/// most one slot's multiplier needs to reach (its on-demand price for the
/// slot: above it the slot rents instead).
pub(super) fn limits(input: &Problem, g: usize) -> Option<(f64, f64)> {
    let gpu = &input.gpus[g];
    let total = gpu.reserved_usd_per_gpu_hour? * input.horizon_hours();
    let per_slot = gpu
        .on_demand_usd_per_gpu_hour
        .map_or(total, |p| p * input.slot_hours);
    Some((total, per_slot))
}

/// The LP's GPU prices, within the limits.
pub(super) fn initial(input: &Problem, lp: &LpRelaxation) -> Multipliers {
    let slots = input.slots();
    Multipliers(
        (0..input.gpus.len())
            .map(|g| {
                let mut values: Vec<f64> = (0..slots)
                    .map(|t| {
                        lp.gpu_usd
                            .get(t)
                            .and_then(|r| r.get(g))
                            .copied()
                            .unwrap_or(0.0)
                    })
                    .collect();
                match limits(input, g) {
                    Some((total, per_slot)) => project(&mut values, per_slot, total),
                    None => values.iter_mut().for_each(|v| *v = 0.0),
                }
                values
            })
            .collect(),
    )
}

/// `L(λ)`: every slot solved exactly under the multipliers, on the
/// available cores. `Ok(None)` when a slot could not be solved to proven
/// optimality (no bound then).
pub(super) fn evaluate(input: &Problem, lambda: &Multipliers) -> Result<Option<Dual>, MilpError> {
    let slots: Vec<usize> = (0..input.slots()).collect();
    let solved = crate::base::parallel::map_in_order(&slots, |&t| {
        let usd: Vec<f64> = lambda.0.iter().map(|per_slot| per_slot[t]).collect();
        let plan = slot_search::solve_exact(input, t, Pricing::Priced(&usd));
        (usd, plan)
    });
    let mut dual = Dual {
        bound_usd: 0.0,
        slots: Vec::with_capacity(slots.len()),
        reserved_by_slot: Vec::with_capacity(slots.len()),
    };
    for one in solved {
        let Some((usd, plan)) = one else {
            return Ok(None);
        };
        let plan = match plan {
            Ok(plan) => plan,
            Err(SlotOutcome::Infeasible) => return Err(MilpError::Infeasible),
            Err(SlotOutcome::NodeLimit) => return Ok(None),
        };
        // The slot reserves what it uses where reserving is the cheaper way
        // to hold a GPU (or the only one).
        let reserved = input
            .gpus
            .iter()
            .enumerate()
            .map(|(g, gpu)| {
                let rent = slot_pricing::rent_usd(input, gpu);
                let reserves = slot_pricing::reserving_is_cheaper(input, gpu, usd[g]);
                let unit = gpu.purchase.unit_gpus.max(1);
                if reserves {
                    plan.gpus_used[g]
                } else if let (true, Some(q)) =
                    (gpu.reserved_usd_per_gpu_hour.is_some() && unit > 1, rent)
                {
                    // Whole units rented; the GPUs that do not fill one
                    // reserved where that is cheaper than one unit more
                    // (`GpuCurve::usd` under a priced reservation).
                    let rest = plan.gpus_used[g] % unit;
                    if usd[g] * f64::from(rest) < q * f64::from(unit) {
                        rest
                    } else {
                        0
                    }
                } else {
                    0
                }
            })
            .collect();
        // The search's optimum is exact up to its coverage tolerance; the
        // margin covers floating-point sums.
        dual.bound_usd += plan.lower_usd - 1e-9 * plan.lower_usd.abs();
        dual.slots.push(plan);
        dual.reserved_by_slot.push(reserved);
    }
    Ok(Some(dual))
}

/// One projected subgradient step of size `theta × (target − L) / ‖d‖²`
/// toward a plan costing `target_usd`; `None` when the subgradient is zero
/// (the multipliers are optimal).
pub(super) fn step(
    input: &Problem,
    lambda: &Multipliers,
    dual: &Dual,
    target_usd: f64,
    theta: f64,
) -> Option<Multipliers> {
    let slots = dual.reserved_by_slot.len();
    let mut direction: Vec<Vec<f64>> = Vec::with_capacity(input.gpus.len());
    for (g, values) in lambda.0.iter().enumerate() {
        let Some((total, _)) = limits(input, g) else {
            direction.push(vec![0.0; slots]);
            continue;
        };
        let r: Vec<f64> = dual
            .reserved_by_slot
            .iter()
            .map(|row| f64::from(row[g]))
            .collect();
        // With the multipliers' sum at its limit, the reservation itself
        // takes the slots' mean.
        let at_limit = values.iter().sum::<f64>() >= total * (1.0 - 1e-9);
        let mean = if at_limit {
            r.iter().sum::<f64>() / slots.max(1) as f64
        } else {
            0.0
        };
        direction.push(r.iter().map(|x| x - mean).collect());
    }
    projected_step(input, lambda, &direction, dual.bound_usd, target_usd, theta)
}

/// `lambda` moved along `direction[g][t]` by the Polyak step `theta ×
/// (target − bound) / ‖direction‖²`, then projected onto each type's limits
/// (`0 ≤ λ ≤ on-demand price`, `Σ_t λ ≤ P[g]`); `None` when the direction
/// is zero.
pub(super) fn projected_step(
    input: &Problem,
    lambda: &Multipliers,
    direction: &[Vec<f64>],
    bound_usd: f64,
    target_usd: f64,
    theta: f64,
) -> Option<Multipliers> {
    let norm2: f64 = direction.iter().flatten().map(|d| d * d).sum();
    if norm2 <= 1e-12 {
        return None;
    }
    let size = theta * (target_usd - bound_usd).max(0.0) / norm2;
    let mut next = lambda.clone();
    for (g, values) in next.0.iter_mut().enumerate() {
        let Some((total, per_slot)) = limits(input, g) else {
            continue;
        };
        for (v, d) in values.iter_mut().zip(&direction[g]) {
            *v += size * d;
        }
        project(values, per_slot, total);
    }
    Some(next)
}

/// Projects `values` onto `{0 ≤ v ≤ upper, Σ v ≤ total}`: clipped to the
/// box, then, if the sum is over, shifted down by the τ that brings it to
/// `total` (found by bisection) and scaled by at most a rounding error.
fn project(values: &mut [f64], upper: f64, total: f64) {
    let clipped =
        |v: &[f64], tau: f64| -> f64 { v.iter().map(|x| (x - tau).clamp(0.0, upper)).sum() };
    if clipped(values, 0.0) > total {
        let (mut lo, mut hi) = (0.0, values.iter().fold(0.0_f64, |m, &x| m.max(x)));
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if clipped(values, mid) > total {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        for v in values.iter_mut() {
            *v -= hi;
        }
    }
    for v in values.iter_mut() {
        *v = v.clamp(0.0, upper);
    }
    let sum: f64 = values.iter().sum();
    if sum > total && sum > 0.0 {
        for v in values.iter_mut() {
            *v *= total / sum;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::project;

    #[test]
    fn projection_keeps_the_box_and_the_sum() {
        let mut v = vec![5.0, -1.0, 2.0, 9.0];
        project(&mut v, 4.0, 6.0);
        assert!(v.iter().all(|&x| (0.0..=4.0).contains(&x)), "{v:?}");
        assert!(v.iter().sum::<f64>() <= 6.0 + 1e-12, "{v:?}");
        // Shifted down by τ = 3, then clipped: [2, 0, 0, 4].
        let expected = [2.0, 0.0, 0.0, 4.0];
        assert!(
            v.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-9),
            "{v:?}"
        );
        let mut w = vec![1.0, 2.0];
        project(&mut w, 4.0, 10.0);
        assert_eq!(w, vec![1.0, 2.0]);
    }
}
