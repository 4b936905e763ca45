//! One slot as a MILP in HiGHS, for a slot whose search reaches its node
//! limit without any plan ([`super::slot_search::solve_exact`]): proven
//! optimal, or no answer.

use super::slot_pricing::{GpuCurve, Pricing};
use super::slot_search_tree::{SlotOutcome, SlotPlan};
use super::Problem;

/// Seconds the one-slot MILP may take.
const BY_MILP_TIME_LIMIT_S: f64 = 10.0;

/// Slot `t` of `input` as a one-slot MILP under `pricing`, its cost read
/// from `curves`.
pub(super) fn by_milp(
    input: &Problem,
    t: usize,
    pricing: Pricing<'_>,
    curves: &[GpuCurve],
) -> Result<SlotPlan, SlotOutcome> {
    use super::model::{build, solve_built, Mode};
    use super::{MilpError, SolveStatus};
    let mut one = input.slots_in(t..t + 1);
    let exact = super::Settings::exact(BY_MILP_TIME_LIMIT_S);
    let fixed = match pricing {
        // Not modelled here: no bound from this slot.
        Pricing::PricedUpTo(..) => return Err(SlotOutcome::NodeLimit),
        Pricing::Reserved(reserved) => Some(reserved),
        Pricing::Priced(usd) => {
            for (gpu, &price) in one.gpus.iter_mut().zip(usd) {
                if gpu.reserved_usd_per_gpu_hour.is_some() {
                    gpu.reserved_usd_per_gpu_hour = Some(price / one.slot_hours);
                }
            }
            None
        }
    };
    let mode = Mode {
        integer: true,
        fixed_reserved: fixed,
        warm_start: None,
    };
    let solved = build(&one, &exact, mode).and_then(|b| solve_built(&one, &exact, b));
    let s = match solved {
        Ok(s) if s.status == SolveStatus::Optimal => s,
        Err(MilpError::Infeasible) => return Err(SlotOutcome::Infeasible),
        Ok(_) | Err(MilpError::Solver(_)) => return Err(SlotOutcome::NodeLimit),
    };
    let gpus_used: Vec<u32> = (0..one.gpus.len())
        .map(|g| s.gpus_used(&one, g, 0))
        .collect();
    let api: Vec<f64> = s.api.iter().map(|a| a[0]).collect();
    let gpu_usd: Option<f64> = curves.iter().zip(&gpus_used).map(|(c, &u)| c.usd(u)).sum();
    let api_usd: f64 = one
        .tiers
        .iter()
        .zip(&api)
        .map(|(k, share)| {
            k.api.map_or(0.0, |terms| {
                share * k.mean_rps[0] * one.slot_hours * 3600.0 * terms.usd_per_request
            })
        })
        .sum();
    let cost_usd = gpu_usd.ok_or(SlotOutcome::Infeasible)? + api_usd;
    Ok(SlotPlan {
        lower_usd: cost_usd,
        replicas: s
            .replicas
            .iter()
            .map(|k| k.iter().map(|c| c[0]).collect())
            .collect(),
        api,
        gpus_used,
        cost_usd,
    })
}
