//! Demand growth over the commitment term, and the term's cost projected
//! month by month.
//!
//! With `[commitment] term_months = M` and `monthly_growth = g`, month `m`
//! of the term (`m = 0 … M − 1`; month 0 is the planned horizon's pattern)
//! carries the planned pattern's demand × (1 + g)^m. A reserved GPU is held
//! for the whole term, so the reserved counts are chosen for the term, not
//! for month 0: the MILP's slots are the horizon's slots repeated once per
//! *period*, `P` periods of `M / P` months each (`P` the largest divisor of
//! `M` whose `P` × slots fits the method's slot limit; `P = M`, one period
//! per month, whenever it fits). A period's peaks are scaled by the largest
//! monthly factor among its months (every month is covered at its busiest)
//! and its mean rates by the mean of its factors (volume and API cost).
//!
//! The periods are equally long, so that MILP (the reservation over `P`
//! horizons plus every period's own slots) is the term's cost divided by
//! `730 h × (M / P) / horizon hours`: the same optimum, and with `P = M` no
//! approximation. The horizon's plan is then month 0 solved again with the
//! term's reserved counts fixed.

use crate::demand::Demand;
use crate::milp::{self, Problem, Solution};
use serde::Serialize;
use std::collections::BTreeMap;
use std::ops::Range;

/// Most slots the term's MILP may have when the decomposed method solves it
/// (each slot exactly, on its own).
pub(crate) const MAX_TERM_SLOTS_DECOMPOSED: usize = 8_760;

/// Most slots the term's MILP may have when the whole model goes to HiGHS
/// (the plan's own limit).
pub(crate) const MAX_TERM_SLOTS_WHOLE: usize = crate::scenario::MAX_SLOTS as usize;

use crate::base::units::HOURS_PER_MONTH;

/// The months of the term the MILP sees as one repetition of the horizon.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Period {
    /// First month of the period, counted from 1.
    pub first_month: u32,
    pub months: u32,
    /// Factor on the planned pattern's peaks: the largest of its months'.
    pub peak_factor: f64,
    /// Factor on the planned pattern's mean rates: the mean of its months'.
    pub mean_factor: f64,
}

/// The term, its growth and its periods.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TermGrowth {
    pub months: u32,
    pub monthly_growth: f64,
    pub periods: Vec<Period>,
}

impl TermGrowth {
    /// A term of `months` growing by `growth` a month, split into periods of
    /// a horizon of `slots` slots, at most `max_slots` slots in all; `None`
    /// without growth (the horizon alone is then the term's pattern).
    pub(crate) fn split(months: u32, growth: f64, slots: usize, max_slots: usize) -> Option<Self> {
        if growth == 0.0 || months < 2 || slots == 0 {
            return None;
        }
        Some(Self::stage(0, months, growth, slots, max_slots))
    }

    /// The `months` months of a term from month `first` (counted from 0):
    /// month `m` of the term carries the pattern × (1 + `growth`)^m; its
    /// periods as [`Self::split`] forms them.
    pub(crate) fn stage(
        first: u32,
        months: u32,
        growth: f64,
        slots: usize,
        max_slots: usize,
    ) -> Self {
        let count = (1..=months)
            .rev()
            .find(|&p| months.is_multiple_of(p) && p as usize * slots.max(1) <= max_slots)
            .unwrap_or(1);
        let per = months / count;
        let periods = (0..count)
            .map(|p| {
                let factors: Vec<f64> = (first + p * per..first + (p + 1) * per)
                    .map(|m| (1.0 + growth).powi(m as i32))
                    .collect();
                Period {
                    first_month: first + p * per + 1,
                    months: per,
                    peak_factor: factors.iter().copied().fold(0.0, f64::max),
                    mean_factor: factors.iter().sum::<f64>() / f64::from(per),
                }
            })
            .collect();
        TermGrowth {
            months,
            monthly_growth: growth,
            periods,
        }
    }

    /// The largest peak factor of the term (fleets are sized up to it).
    pub(crate) fn peak_factor(&self) -> f64 {
        self.periods
            .iter()
            .map(|p| p.peak_factor)
            .fold(1.0, f64::max)
    }

    /// The slots of period `p` in the term's MILP.
    pub(crate) fn slots_of(p: usize, slots: usize) -> Range<usize> {
        p * slots..(p + 1) * slots
    }

    /// The horizon's demand repeated once per period, scaled.
    pub(crate) fn expand(&self, demand: &Demand) -> Demand {
        let mut term = demand.clone();
        for (tier, base) in term.tiers.iter_mut().zip(&demand.tiers) {
            tier.peak_rps = self.scaled(&base.peak_rps, |p| p.peak_factor);
            tier.mean_rps = self.scaled(&base.mean_rps, |p| p.mean_factor);
        }
        term.slots = demand.slots * self.periods.len();
        term
    }

    fn scaled(&self, per_slot: &[f64], factor: impl Fn(&Period) -> f64) -> Vec<f64> {
        self.periods
            .iter()
            .flat_map(|p| {
                let f = factor(p);
                per_slot.iter().map(move |&x| x * f)
            })
            .collect()
    }

    /// A per-tier, per-slot figure of the horizon repeated once per period.
    pub(crate) fn repeat(&self, per_tier: &[Vec<f64>]) -> Vec<Vec<f64>> {
        per_tier
            .iter()
            .map(|slots| {
                self.periods
                    .iter()
                    .flat_map(|_| slots.iter().copied())
                    .collect()
            })
            .collect()
    }

    /// Months of the term per horizon of `horizon_hours`: the factor from
    /// a period's cost in the MILP to its cost over its months.
    fn horizons_per_period(&self, horizon_hours: f64) -> f64 {
        f64::from(self.months / self.periods.len() as u32) * HOURS_PER_MONTH / horizon_hours
    }

    /// The term's cost by period from the term MILP's solution `term` of
    /// `input` (`slots` slots per period), with `first` (the horizon's own
    /// input and plan) in place of the first period when that period is
    /// month 1 alone; `lower_bound_usd` is the term MILP's bound.
    pub(crate) fn project(
        &self,
        (input, term): (&Problem, &Solution),
        slots: usize,
        first: Option<(&Problem, &Solution)>,
        lower_bound_usd: f64,
    ) -> TermProjection {
        let periods: Vec<ProjectedPeriod> = self
            .periods
            .iter()
            .enumerate()
            .map(|(p, period)| match first {
                Some((one, plan)) if p == 0 && period.months == 1 => {
                    ProjectedPeriod::of(period, one, plan)
                }
                _ => {
                    let range = Self::slots_of(p, slots);
                    ProjectedPeriod::of(
                        period,
                        &input.slots_in(range.clone()),
                        &term.slots_in(range),
                    )
                }
            })
            .collect();
        let over_term = |f: fn(&ProjectedPeriod) -> f64| -> f64 {
            periods
                .iter()
                .map(|p| f(p) * f64::from(p.period.months))
                .sum()
        };
        let total_usd = over_term(|p| p.usd_per_month);
        let scale = self.horizons_per_period(input.horizon_hours() / self.periods.len() as f64);
        let lower_bound_usd = (lower_bound_usd * scale).min(total_usd).max(0.0);
        let years = years(&periods);
        TermProjection {
            average_usd_per_year: average_usd_per_year(&years),
            years,
            renewal: None,
            months: self.months,
            monthly_growth: self.monthly_growth,
            reserved_usd: over_term(|p| p.reserved_usd_per_month),
            on_demand_usd: over_term(|p| p.on_demand_usd_per_month),
            api_usd: over_term(|p| p.api_usd_per_month),
            spot_usd: over_term(|p| p.spot_usd_per_month),
            total_usd,
            lower_bound_usd,
            proven_gap: if total_usd > 0.0 {
                ((total_usd - lower_bound_usd) / total_usd).max(0.0)
            } else {
                0.0
            },
            periods,
            stages: Vec::new(),
            horizon_only: None,
            factors: BTreeMap::new(),
        }
    }
}

impl ProjectedPeriod {
    /// `period` priced per month from its own input and plan (one horizon).
    fn of(period: &Period, one: &Problem, plan: &Solution) -> Self {
        let (reserved, on_demand, api) = milp::cost_usd(one, plan);
        let spot = milp::spot_usd(one, plan);
        let per_month = HOURS_PER_MONTH / one.horizon_hours();
        ProjectedPeriod {
            period: period.clone(),
            reserved_usd_per_month: reserved * per_month,
            on_demand_usd_per_month: on_demand * per_month,
            api_usd_per_month: api * per_month,
            spot_usd_per_month: spot * per_month,
            usd_per_month: (reserved + on_demand + api + spot) * per_month,
        }
    }
}

/// One period of the term, priced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProjectedPeriod {
    #[serde(flatten)]
    pub period: Period,
    pub reserved_usd_per_month: f64,
    pub on_demand_usd_per_month: f64,
    pub api_usd_per_month: f64,
    pub spot_usd_per_month: f64,
    pub usd_per_month: f64,
}

/// The term's cost with growth, as the MILP chose the reservations for it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TermProjection {
    pub months: u32,
    pub monthly_growth: f64,
    pub periods: Vec<ProjectedPeriod>,
    /// With `[commitment] renewal_months`, each reservation period: what it
    /// reserves and costs ([`crate::money::stages`]); empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageCost>,
    /// The term's cost year by year (12 months each; the last may be shorter).
    pub years: Vec<YearCost>,
    /// With `renewal_months`, the two ways to buy the term priced: renewing
    /// at each renewal, or one reservation held for the whole term; the
    /// cheaper is the plan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renewal: Option<Renewal>,
    /// The term's cost per year on average (its total over its months × 12).
    pub average_usd_per_year: f64,
    /// Reservations over the term (730 h a month, at the plan's prices).
    pub reserved_usd: f64,
    pub on_demand_usd: f64,
    pub api_usd: f64,
    pub spot_usd: f64,
    pub total_usd: f64,
    /// A proven lower bound on the term's cheapest cost.
    pub lower_bound_usd: f64,
    /// (total − lower bound) / total.
    pub proven_gap: f64,
    /// The horizon solved alone (no growth), and the same term priced with
    /// the reserved counts it chooses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub horizon_only: Option<HorizonOnly>,
    /// Tier → the factor its fleets were sized with: by the rounds over the
    /// horizon, and over the term's months.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub factors: BTreeMap<String, TermFactor>,
}

/// A tier's capacity factor (its demand read from the step functions is
/// divided by it) over the horizon and over the term's months.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TermFactor {
    /// Where the replay rounds settled.
    pub rounds: f64,
    /// The lowest that gives the horizon's plan (`solve::input::least_equivalent_shares`):
    /// the part of the rounds' factor the replay cannot tell from it is not
    /// carried into the grown months.
    pub months: f64,
}

/// What reserving for the horizon alone would do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HorizonOnly {
    /// GPU type → GPUs the horizon alone would reserve.
    pub reserved: std::collections::BTreeMap<String, u32>,
    /// Whether they are the term's reserved counts.
    pub same_reservations: bool,
    /// The horizon's cheapest plan on its own, USD over the horizon.
    pub horizon_usd: f64,
    /// The term's cost with those counts (on-demand and API covering the
    /// growth), USD.
    pub term_usd: f64,
}

/// Renewing reservations against holding one for the whole term.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Renewal {
    /// The term's cost renewing at each renewal, USD.
    pub renewed_usd: f64,
    /// The term's cost with one reservation held for all of it, USD.
    pub held_usd: f64,
    /// Whether renewing is the plan (else holding is).
    pub renewed: bool,
}

/// One stage of the term, as planned.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageCost {
    /// First month of the stage, counted from 1.
    pub first_month: u32,
    pub months: u32,
    /// Factor on the GPU list prices in the stage.
    pub price_factor: f64,
    /// GPU type → GPUs reserved for the stage.
    pub reserved: BTreeMap<String, u32>,
    /// The stage's cost, USD.
    pub usd: f64,
}

/// The term's cost over one year of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct YearCost {
    /// The year, counted from 1.
    pub year: u32,
    /// Months of the term in it (12, or fewer in a short last year).
    pub months: u32,
    pub reserved_usd: f64,
    pub on_demand_usd: f64,
    pub api_usd: f64,
    pub spot_usd: f64,
    pub usd: f64,
}

/// Months in a year, for the year-by-year cost.
pub(crate) const MONTHS_PER_YEAR: u32 = 12;

/// The cost of `periods` year by year: each month is charged its
/// period's monthly cost.
pub(crate) fn years(periods: &[ProjectedPeriod]) -> Vec<YearCost> {
    let mut out: Vec<YearCost> = Vec::new();
    for p in periods {
        for month in p.period.first_month..p.period.first_month + p.period.months {
            let year = (month - 1) / MONTHS_PER_YEAR + 1;
            if out.last().is_none_or(|y| y.year != year) {
                out.push(YearCost {
                    year,
                    months: 0,
                    reserved_usd: 0.0,
                    on_demand_usd: 0.0,
                    api_usd: 0.0,
                    spot_usd: 0.0,
                    usd: 0.0,
                });
            }
            let y = out.last_mut().expect("pushed above");
            y.months += 1;
            y.reserved_usd += p.reserved_usd_per_month;
            y.on_demand_usd += p.on_demand_usd_per_month;
            y.api_usd += p.api_usd_per_month;
            y.spot_usd += p.spot_usd_per_month;
            y.usd += p.usd_per_month;
        }
    }
    out
}

/// The average cost of a year of the term, USD (the total over the term's
/// months × 12).
pub(crate) fn average_usd_per_year(years: &[YearCost]) -> f64 {
    let months: u32 = years.iter().map(|y| y.months).sum();
    if months == 0 {
        return 0.0;
    }
    years.iter().map(|y| y.usd).sum::<f64>() / f64::from(months) * f64::from(MONTHS_PER_YEAR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_period_per_month_when_it_fits() {
        let g = TermGrowth::split(12, 0.1, 24, 2_000).expect("growth");
        assert_eq!(g.periods.len(), 12);
        assert_eq!(g.periods[0].peak_factor, 1.0);
        assert!((g.periods[11].peak_factor - 1.1f64.powi(11)).abs() < 1e-12);
        assert_eq!(g.periods[11].first_month, 12);
    }

    #[test]
    fn months_group_into_equal_periods_at_their_peak() {
        // 36 months × 168 slots do not fit 2,000 slots: 9 periods of 4 months.
        let g = TermGrowth::split(36, 0.02, 168, 2_000).expect("growth");
        assert_eq!(g.periods.len(), 9);
        assert!(g.periods.iter().all(|p| p.months == 4));
        let p = &g.periods[1];
        assert!((p.peak_factor - 1.02f64.powi(7)).abs() < 1e-12);
        let mean = (4..8).map(|m| 1.02f64.powi(m)).sum::<f64>() / 4.0;
        assert!((p.mean_factor - mean).abs() < 1e-12);
        // Decline: the period's first month is its busiest.
        let d = TermGrowth::split(36, -0.02, 168, 2_000).expect("growth");
        assert!((d.periods[1].peak_factor - 0.98f64.powi(4)).abs() < 1e-12);
    }

    #[test]
    fn no_growth_or_no_term_is_the_horizon_alone() {
        assert!(TermGrowth::split(12, 0.0, 24, 2_000).is_none());
        assert!(TermGrowth::split(1, 0.1, 24, 2_000).is_none());
        // Too many slots even for one period a month: one period, the term.
        let g = TermGrowth::split(7, 0.1, 500, 600).expect("growth");
        assert_eq!(g.periods.len(), 1);
        assert!((g.peak_factor() - 1.1f64.powi(6)).abs() < 1e-12);
    }

    fn one_tier(peak_rps: &[f64]) -> Demand {
        let lengths = crate::traces::stats::LengthStats {
            mean: 100.0,
            p50: 100,
            p90: 100,
            p99: 100,
            max: 100,
        };
        Demand {
            slot_minutes: 60,
            slots: peak_rps.len(),
            method: String::new(),
            tiers: vec![crate::demand::TierDemand {
                tier: "t".into(),
                peak_rps: peak_rps.to_vec(),
                mean_rps: peak_rps.iter().map(|r| r / 2.0).collect(),
                input_tokens: lengths.clone(),
                output_tokens: lengths,
                interarrival_cv: None,
                within_minute_cv: 1.0,
                peak_to_mean_minute: 1.0,
                lengths: Vec::new(),
                prefix_reuse: None,
                sample_chains: Vec::new(),
                sources: Vec::new(),
            }],
        }
    }

    #[test]
    fn expanded_demand_repeats_the_pattern_scaled() {
        let g = TermGrowth::split(3, 0.5, 2, 100).expect("growth");
        let demand = one_tier(&[2.0, 4.0]);
        let term = g.expand(&demand);
        assert_eq!(term.slots, 6);
        assert_eq!(term.tiers[0].peak_rps, vec![2.0, 4.0, 3.0, 6.0, 4.5, 9.0]);
        assert_eq!(term.tiers[0].mean_rps, vec![1.0, 2.0, 1.5, 3.0, 2.25, 4.5]);
        assert_eq!(
            g.repeat(&[vec![1.0, 0.5]]),
            vec![vec![1.0, 0.5, 1.0, 0.5, 1.0, 0.5]]
        );
    }

    #[test]
    fn years_charge_every_month_its_periods_cost() {
        let period = |first_month, months, usd_per_month| ProjectedPeriod {
            period: Period {
                first_month,
                months,
                peak_factor: 1.0,
                mean_factor: 1.0,
            },
            reserved_usd_per_month: usd_per_month,
            on_demand_usd_per_month: 0.0,
            api_usd_per_month: 0.0,
            spot_usd_per_month: 0.0,
            usd_per_month,
        };
        // Periods of 5 months straddle the years: 1-5, 6-10, 11-15, 16-20.
        let y = years(&[
            period(1, 5, 1.0),
            period(6, 5, 2.0),
            period(11, 5, 3.0),
            period(16, 5, 4.0),
        ]);
        assert_eq!(y.len(), 2);
        assert_eq!((y[0].year, y[0].months), (1, 12));
        assert_eq!(y[0].usd, 5.0 + 10.0 + 2.0 * 3.0);
        assert_eq!((y[1].year, y[1].months), (2, 8));
        assert_eq!(y[1].usd, 3.0 * 3.0 + 20.0);
        assert_eq!(y[0].reserved_usd, y[0].usd);
        // 50 USD over 20 months: 30 USD a year on average.
        assert!((average_usd_per_year(&y) - 30.0).abs() < 1e-12);
    }
}
