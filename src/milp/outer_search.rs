//! The decomposed method's outer search over the reserved counts: each
//! candidate `reserved` is priced exactly, `F(reserved) = Σ_g reserved[g] ×
//! P[g] + Σ_t f_t(reserved)`, where `f_t` is slot `t`'s cheapest on-demand
//! and API cost with those GPUs held ([`slot_search`]); candidates come from
//! the re-levelling rule and from moves of one GPU type at a time.

use super::heuristic::levels_for_usage;
use super::slot_search::{self, Pricing, SlotOutcome, SlotPlan};
use super::Problem;
use std::collections::BTreeMap;

/// One priced candidate.
#[derive(Debug, Clone)]
pub(super) struct Priced {
    pub cost_usd: f64,
    pub slots: Vec<SlotPlan>,
}

/// The candidates priced so far and the cheapest of them.
pub(super) struct OuterSearch<'a> {
    input: &'a Problem,
    /// `Err`: some slot cannot be covered with those counts, or was not
    /// solved to proven optimality.
    priced: BTreeMap<Vec<u32>, Result<f64, SlotOutcome>>,
    best: Option<(Vec<u32>, Priced)>,
}

impl<'a> OuterSearch<'a> {
    pub(super) fn input(&self) -> &'a Problem {
        self.input
    }

    /// How many candidates have been priced.
    pub(super) fn priced_count(&self) -> usize {
        self.priced.len()
    }

    pub(super) fn new(input: &'a Problem) -> Self {
        OuterSearch {
            input,
            priced: BTreeMap::new(),
            best: None,
        }
    }

    /// The cheapest candidate so far.
    pub(super) fn best(&self) -> Option<&(Vec<u32>, Priced)> {
        self.best.as_ref()
    }

    pub(super) fn best_usd(&self) -> f64 {
        self.best.as_ref().map_or(f64::INFINITY, |b| b.1.cost_usd)
    }

    /// `F(reserved)`, each slot solved on the available cores (once per
    /// candidate); `None` when a slot cannot be covered, or was not solved
    /// to proven optimality.
    pub(super) fn price(&mut self, reserved: &[u32]) -> Option<f64> {
        self.price_or_why(reserved).ok()
    }

    /// `F(reserved)`, or why there is none: a slot that cannot be covered
    /// with those counts ([`SlotOutcome::Infeasible`]), or one not solved to
    /// proven optimality ([`SlotOutcome::NodeLimit`]).
    pub(super) fn price_or_why(&mut self, reserved: &[u32]) -> Result<f64, SlotOutcome> {
        let reserved = &self.in_units(reserved);
        if let Some(&known) = self.priced.get(reserved) {
            return known;
        }
        let input = self.input;
        let slots: Vec<usize> = (0..input.slots()).collect();
        let solved = crate::base::parallel::map_in_order(&slots, |&t| {
            slot_search::solve_exact(input, t, Pricing::Reserved(reserved))
        });
        let mut plans = Vec::with_capacity(solved.len());
        let mut why = None;
        for s in solved {
            match s {
                Some(Ok(plan)) => plans.push(plan),
                Some(Err(SlotOutcome::Infeasible)) => why = Some(SlotOutcome::Infeasible),
                Some(Err(SlotOutcome::NodeLimit)) | None => {
                    why = why.or(Some(SlotOutcome::NodeLimit));
                }
            }
        }
        let usd = if let Some(why) = why {
            Err(why)
        } else {
            let slots_usd: f64 = plans.iter().map(|p| p.cost_usd).sum();
            let c = Priced {
                cost_usd: self.reservation_usd(reserved) + slots_usd,
                slots: plans,
            };
            let usd = c.cost_usd;
            if usd < self.best_usd() - 1e-9 {
                self.best = Some((reserved.clone(), c));
            }
            Ok(usd)
        };
        self.priced.insert(reserved.clone(), usd);
        usd
    }

    /// What holding `reserved` costs over the horizon, `Σ_g reserved[g] ×
    /// P[g]`.
    pub(super) fn reservation_usd(&self, reserved: &[u32]) -> f64 {
        self.input
            .gpus
            .iter()
            .zip(reserved)
            .map(|(g, &n)| {
                f64::from(n)
                    * g.reserved_usd_per_gpu_hour.unwrap_or(0.0)
                    * self.input.horizon_hours()
            })
            .sum()
    }

    /// `reserved` in whole purchase units of each type: rounded up, or down
    /// where up would pass the type's quota.
    pub(super) fn in_units(&self, reserved: &[u32]) -> Vec<u32> {
        reserved
            .iter()
            .zip(&self.input.gpus)
            .map(|(&n, g)| {
                let unit = g.purchase.unit_gpus.max(1);
                let up = n.div_ceil(unit) * unit;
                match g.max_gpus {
                    Some(max) if up > max => max / unit * unit,
                    _ => up,
                }
            })
            .collect()
    }

    /// Prices `reserved`, then the levels its slot plans suggest
    /// ([`levels_for_usage`]), up to `rounds` times, until they settle or
    /// until `keep_going` says stop.
    pub(super) fn relevel(
        &mut self,
        reserved: &[u32],
        rounds: usize,
        keep_going: impl Fn(&Self) -> bool,
    ) {
        let mut reserved = self.in_units(reserved);
        for _ in 0..rounds {
            if !keep_going(self) {
                return;
            }
            if self.price(&reserved).is_none() {
                return;
            }
            let Some(plans) = self.slots_of(&reserved) else {
                return;
            };
            let next = self.in_units(&levels_for_usage(self.input, |t, g| {
                plans[t].gpus_used[g].max(reserved[g])
            }));
            if next == reserved {
                return;
            }
            reserved = next;
        }
    }

    /// The slot plans of a priced candidate, when it is the best one.
    fn slots_of(&self, reserved: &[u32]) -> Option<Vec<SlotPlan>> {
        match &self.best {
            Some((r, p)) if r == reserved => Some(p.slots.clone()),
            _ => {
                // Not the best: its plans were not kept; price its slots
                // again only for their usage.
                let input = self.input;
                let slots: Vec<usize> = (0..input.slots()).collect();
                crate::base::parallel::map_in_order(&slots, |&t| {
                    slot_search::solve_exact(input, t, Pricing::Reserved(reserved)).ok()
                })
                .into_iter()
                .map(Option::flatten)
                .collect()
            }
        }
    }

    /// Moves one GPU type's reserved count at a time from the best candidate,
    /// by ±1 and ±`wide`, keeping any that is cheaper, until none is or
    /// `keep_going` says stop.
    pub(super) fn local_search(&mut self, wide: u32, keep_going: impl Fn(&Self) -> bool) {
        loop {
            let Some((start, _)) = self.best.clone() else {
                return;
            };
            let before = self.best_usd();
            for g in 0..self.input.gpus.len() {
                let gpu = &self.input.gpus[g];
                if gpu.reserved_usd_per_gpu_hour.is_none() {
                    continue;
                }
                let unit = i64::from(gpu.purchase.unit_gpus.max(1));
                for delta in [1i64, -1, i64::from(wide), -i64::from(wide)] {
                    if !keep_going(self) {
                        return;
                    }
                    let n = i64::from(start[g]) + delta * unit;
                    let max = gpu.max_gpus.map_or(i64::MAX, i64::from);
                    if n < 0 || n > max {
                        continue;
                    }
                    let mut candidate = start.clone();
                    candidate[g] = n as u32;
                    self.price(&candidate);
                }
            }
            if self.best_usd() >= before - 1e-9 {
                return;
            }
        }
    }
}
