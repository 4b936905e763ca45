//! A term longer than one reservation: stages, and the term's cost year by
//! year.
//!
//! With `[commitment] renewal_months = L` below `term_months = M`, a
//! reservation runs `L` months and is renewed, enlarged, shrunk or let
//! lapse at each renewal. Stage `s` covers months `s·L … min((s+1)·L, M) − 1`
//! (from 0). Nothing links two stages (a GPU reserved in one is paid for in
//! that one alone), so the cheapest staged term is the sum of each stage's
//! cheapest plan: each stage is its own term MILP ([`crate::money::growth`])
//! over its months, with its growth factors.
//!
//! Prices: with `price_decline_per_year = d`, on-demand and spot prices of
//! stage `s` are the list × (1 − d)^(s·L / 12), the price at the stage's
//! first month (the API's are not declined). Its reserved price is the
//! offer cheapest over the stage's months, each paid for its whole term
//! ([`crate::scenario::reserved_offer`]), or without offers the stated price
//! as a [`DEFAULT_RESERVATION_MONTHS`] commitment, × the same decline: a
//! stage shorter than the reservation it would buy pays for all of it, so
//! a reservation is bought there only where it still pays.
//!
//! The other way to buy the term, one reservation held for all of it
//! ([`Stage::held`]), is priced beside the stages, and the cheaper is the
//! plan (`solve::term`).

use super::growth::{
    average_usd_per_year, years, StageCost, TermGrowth, TermProjection, MONTHS_PER_YEAR,
};
use crate::scenario::reserved_offer;
use crate::scenario::{GpuOffer, Scenario};
use std::collections::BTreeMap;

/// Months a reserved price without `reserved_offers` commits for when the
/// term is renewed: the usual shortest commitment (a 1-year term); state
/// `reserved_offers` to give another.
pub(crate) const DEFAULT_RESERVATION_MONTHS: u32 = 12;

/// One reservation period of the term.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stage {
    pub growth: TermGrowth,
    /// Factor on every GPU list price in the stage (the yearly decline).
    pub price_factor: f64,
    /// Whether the term is renewed (else this is the term held whole).
    pub renewed: bool,
    /// Whether a reserved price without offers is a
    /// [`DEFAULT_RESERVATION_MONTHS`] commitment (the scenario renews; the
    /// term held whole is then priced alike).
    pub default_commitment: bool,
}

impl Stage {
    /// The stages of `scenario`'s term for a horizon of `slots` slots, each
    /// MILP at most `max_slots` slots; `None` when the term is one
    /// reservation without growth (the horizon alone is then the term's
    /// pattern).
    pub(crate) fn all(scenario: &Scenario, slots: usize, max_slots: usize) -> Option<Vec<Stage>> {
        let term = scenario.commitment_term_months?;
        let growth = scenario.commitment_monthly_growth;
        let Some(every) = scenario.commitment_renewal_months.filter(|&l| l < term) else {
            return TermGrowth::split(term, growth, slots, max_slots).map(|growth| {
                vec![Stage {
                    growth,
                    price_factor: 1.0,
                    renewed: false,
                    default_commitment: false,
                }]
            });
        };
        if slots == 0 {
            return None;
        }
        let decline = scenario.commitment_price_decline_per_year;
        Some(
            (0..term.div_ceil(every))
                .map(|s| {
                    let first = s * every;
                    Stage {
                        growth: TermGrowth::stage(
                            first,
                            every.min(term - first),
                            growth,
                            slots,
                            max_slots,
                        ),
                        price_factor: (1.0 - decline)
                            .powf(f64::from(first) / f64::from(MONTHS_PER_YEAR)),
                        renewed: true,
                        default_commitment: true,
                    }
                })
                .collect(),
        )
    }

    /// With renewals, the other way to buy the term: one reservation held
    /// for all of it (the offers compared over the term, no decline).
    pub(crate) fn held(scenario: &Scenario, slots: usize, max_slots: usize) -> Option<Stage> {
        let term = scenario.commitment_term_months?;
        scenario.commitment_renewal_months.filter(|&l| l < term)?;
        (slots > 0).then(|| Stage {
            growth: TermGrowth::stage(
                0,
                term,
                scenario.commitment_monthly_growth,
                slots,
                max_slots,
            ),
            price_factor: 1.0,
            renewed: false,
            default_commitment: true,
        })
    }

    /// The reserved price per GPU-hour of `offer` in this stage: the offer
    /// cheapest over the stage's months (each paid for its whole term,
    /// `reserved_offer::cheapest`); without offers, the stated price, as a
    /// [`DEFAULT_RESERVATION_MONTHS`] commitment when the scenario renews
    /// (a shorter stage, or a shorter term held whole, pays for all of it);
    /// times the decline.
    pub(crate) fn reserved_usd_per_gpu_hour(&self, offer: &GpuOffer) -> Option<f64> {
        let months = self.growth.months;
        let usd =
            if let Some(chosen) = reserved_offer::cheapest(&offer.reserved_offers, Some(months)) {
                chosen.effective_usd_per_gpu_hour
            } else {
                let list = offer.reserved_usd_per_gpu_hour?;
                if self.default_commitment {
                    list * f64::from(DEFAULT_RESERVATION_MONTHS.max(months)) / f64::from(months)
                } else {
                    list
                }
            };
        Some(usd * self.price_factor)
    }

    /// The largest demand factor of any month of the stages.
    pub(crate) fn peak_factor<'a>(stages: impl IntoIterator<Item = &'a Stage>) -> f64 {
        stages
            .into_iter()
            .map(|s| s.growth.peak_factor())
            .fold(1.0, f64::max)
    }
}

/// The term's projection from its stages' (each a term of its own, with
/// the GPUs it reserves); `staged` keeps each stage's line.
pub(crate) fn combine(
    stages: Vec<(&Stage, TermProjection, BTreeMap<String, u32>)>,
    staged: bool,
) -> TermProjection {
    let mut parts = stages.into_iter();
    let (first_stage, mut term, first_reserved) = parts.next().expect("a term has a stage");
    let line = |stage: &Stage, p: &TermProjection, reserved: BTreeMap<String, u32>| StageCost {
        first_month: stage.growth.periods[0].first_month,
        months: stage.growth.months,
        price_factor: stage.price_factor,
        reserved,
        usd: p.total_usd,
    };
    let mut lines = vec![line(first_stage, &term, first_reserved)];
    for (stage, p, reserved) in parts {
        lines.push(line(stage, &p, reserved));
        term.months += p.months;
        term.periods.extend(p.periods);
        term.reserved_usd += p.reserved_usd;
        term.on_demand_usd += p.on_demand_usd;
        term.api_usd += p.api_usd;
        term.spot_usd += p.spot_usd;
        term.total_usd += p.total_usd;
        // Nothing links two stages: the term's bound is the sum of theirs.
        term.lower_bound_usd += p.lower_bound_usd;
    }
    term.proven_gap = if term.total_usd > 0.0 {
        ((term.total_usd - term.lower_bound_usd) / term.total_usd).max(0.0)
    } else {
        0.0
    };
    term.years = years(&term.periods);
    term.average_usd_per_year = average_usd_per_year(&term.years);
    if staged {
        term.stages = lines;
    }
    term
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stages(term: u32, every: Option<u32>, growth: f64, decline: f64) -> Option<Vec<Stage>> {
        let mut scenario = crate::scenario::tiny_fixture();
        scenario.commitment_term_months = Some(term);
        scenario.commitment_monthly_growth = growth;
        scenario.commitment_renewal_months = every;
        scenario.commitment_price_decline_per_year = decline;
        Stage::all(&scenario, 24, 2_000)
    }

    #[test]
    fn a_term_is_cut_at_each_renewal_and_its_prices_fall_by_the_year() {
        let s = stages(30, Some(12), 0.02, 0.1).expect("stages");
        assert_eq!(s.len(), 3);
        assert_eq!(
            s.iter().map(|s| s.growth.months).collect::<Vec<_>>(),
            [12, 12, 6]
        );
        // Month 13 (from 0: 12) carries 1.02^12, and its prices 0.9 of the list.
        assert_eq!(s[1].growth.periods[0].first_month, 13);
        assert!((s[1].growth.periods[0].peak_factor - 1.02f64.powi(12)).abs() < 1e-12);
        assert!((s[1].price_factor - 0.9).abs() < 1e-12);
        assert!((s[2].price_factor - 0.81).abs() < 1e-12);
        assert!((Stage::peak_factor(&s) - 1.02f64.powi(29)).abs() < 1e-12);
        // Without offers a renewed reservation is a 12-month commitment:
        // a full stage pays the stage's price, the 6-month last stage a
        // whole year for its 6 months (twice the price per month used).
        let mut offer = crate::scenario::tiny_fixture().gpus[0].clone();
        offer.reserved_offers.clear();
        offer.reserved_usd_per_gpu_hour = Some(2.0);
        let usd = |s: &Stage, o: &GpuOffer| s.reserved_usd_per_gpu_hour(o).unwrap();
        assert!((usd(&s[1], &offer) - 2.0 * 0.9).abs() < 1e-12);
        assert!((usd(&s[2], &offer) - 2.0 * 0.81 * 2.0).abs() < 1e-12);
        // Offers are compared over each stage's months: a 3-month offer
        // as listed, a 36-month one paid for all 36.
        offer.reserved_offers = vec![
            crate::scenario::reserved_offer::ReservedOffer {
                term_months: 3,
                usd_per_gpu_hour: 3.0,
            },
            crate::scenario::reserved_offer::ReservedOffer {
                term_months: 36,
                usd_per_gpu_hour: 1.0,
            },
        ];
        assert!((usd(&s[2], &offer) - 3.0 * 0.81).abs() < 1e-12);
        assert!((usd(&s[0], &offer) - 3.0).abs() < 1e-12);
        // Held for the whole term: the 36-month offer at its list price.
        let mut scenario = crate::scenario::tiny_fixture();
        scenario.commitment_term_months = Some(36);
        scenario.commitment_renewal_months = Some(12);
        let held = Stage::held(&scenario, 24, 2_000).expect("renewed, so held is the other way");
        assert_eq!(held.growth.months, 36);
        assert!((usd(&held, &offer) - 1.0).abs() < 1e-12);
        // A stated price held for a 2-month term still pays a 12-month
        // commitment when the scenario renews.
        offer.reserved_offers.clear();
        scenario.commitment_term_months = Some(2);
        scenario.commitment_renewal_months = Some(1);
        let short = Stage::held(&scenario, 24, 2_000).unwrap();
        assert!((usd(&short, &offer) - 2.0 * 6.0).abs() < 1e-12);
    }

    #[test]
    fn without_renewals_the_term_is_one_stage_and_only_growth_makes_one() {
        assert!(stages(36, None, 0.0, 0.0).is_none());
        let one = stages(36, None, 0.03, 0.0).expect("growth");
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].price_factor, 1.0);
        assert!(!one[0].renewed);
        // Renewals without growth still stage the term (a short last stage).
        assert_eq!(stages(30, Some(12), 0.0, 0.0).expect("stages").len(), 3);
    }
}
