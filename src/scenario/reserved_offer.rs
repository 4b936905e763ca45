//! Several reserved offers for one GPU type (a 1-year and a 3-year term,
//! each with its price) and the one worth buying.
//!
//! Reserved GPUs of one type serve identically whichever offer bought them,
//! so the offers differ only in price and term. A reservation is paid for
//! its whole term; over a planning term of `C` months, an offer of `T`
//! months at `p` USD/GPU-h costs `p × max(T, C) / C` per GPU-hour of the
//! planning term. The MILP's cost is linear in the reserved counts and no
//! constraint tells the offers apart, so any plan buying several offers of
//! a type costs no less than the same plan buying them all under the
//! offer with the lowest effective price: choosing that offer before the
//! MILP is exact.

use serde::Serialize;

/// One reserved offer as the scenario states it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReservedOffer {
    pub term_months: u32,
    /// Price paid every hour of `term_months`, used or not.
    pub usd_per_gpu_hour: f64,
}

/// The offer a GPU type's reservations are bought under.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChosenOffer {
    pub term_months: u32,
    /// The offer's price per GPU-hour of its own term.
    pub usd_per_gpu_hour: f64,
    /// `usd_per_gpu_hour × max(term_months, planning term) / planning term`:
    /// what the MILP and the horizon's cost charge per reserved GPU-hour.
    pub effective_usd_per_gpu_hour: f64,
    /// How many offers the scenario lists for the type.
    pub offers_listed: usize,
    /// The term the offers were compared over: `[commitment] term_months`,
    /// else the longest listed term.
    pub planning_term_months: u32,
    /// Whether `planning_term_months` is the scenario's `[commitment]` term.
    pub term_stated: bool,
}

/// Price per GPU-hour of a `planning_term_months` term of `offer`, paid for
/// its whole term.
pub fn effective_usd_per_gpu_hour(offer: &ReservedOffer, planning_term_months: u32) -> f64 {
    let planning = planning_term_months.max(1);
    offer.usd_per_gpu_hour * f64::from(offer.term_months.max(planning)) / f64::from(planning)
}

/// The offer with the lowest effective price over `planning_term_months`
/// (the shorter term on a tie: less money committed for the same cost).
/// With no planning term stated, the longest listed term is taken, so every
/// offer is charged its list price. `None` for an empty list.
pub fn cheapest(
    offers: &[ReservedOffer],
    planning_term_months: Option<u32>,
) -> Option<ChosenOffer> {
    let longest = offers.iter().map(|o| o.term_months).max()?;
    let planning = planning_term_months.unwrap_or(longest);
    offers
        .iter()
        .map(|o| (o, effective_usd_per_gpu_hour(o, planning)))
        .min_by(|(a, ea), (b, eb)| ea.total_cmp(eb).then(a.term_months.cmp(&b.term_months)))
        .map(|(o, effective)| ChosenOffer {
            term_months: o.term_months,
            usd_per_gpu_hour: o.usd_per_gpu_hour,
            effective_usd_per_gpu_hour: effective,
            offers_listed: offers.len(),
            planning_term_months: planning,
            term_stated: planning_term_months.is_some(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE_YEAR: ReservedOffer = ReservedOffer {
        term_months: 12,
        usd_per_gpu_hour: 2.1,
    };
    const THREE_YEARS: ReservedOffer = ReservedOffer {
        term_months: 36,
        usd_per_gpu_hour: 1.6,
    };

    #[test]
    fn a_longer_offer_is_charged_its_whole_term() {
        // 1.6 × 36 / 12 = 4.8 per GPU-hour of a one-year plan.
        assert!((effective_usd_per_gpu_hour(&THREE_YEARS, 12) - 4.8).abs() < 1e-12);
        assert!((effective_usd_per_gpu_hour(&THREE_YEARS, 36) - 1.6).abs() < 1e-12);
        assert!((effective_usd_per_gpu_hour(&ONE_YEAR, 36) - 2.1).abs() < 1e-12);
    }

    #[test]
    fn the_planning_term_decides_the_offer() {
        let offers = [ONE_YEAR, THREE_YEARS];
        assert_eq!(cheapest(&offers, Some(12)).unwrap().term_months, 12);
        assert_eq!(cheapest(&offers, Some(36)).unwrap().term_months, 36);
        // 1.6 × 36 / 30 = 1.92 < 2.1.
        assert_eq!(cheapest(&offers, Some(30)).unwrap().term_months, 36);
        // 1.6 × 36 / 24 = 2.4 > 2.1.
        assert_eq!(cheapest(&offers, Some(24)).unwrap().term_months, 12);
        let unstated = cheapest(&offers, None).unwrap();
        assert_eq!(unstated.term_months, 36);
        assert_eq!(unstated.effective_usd_per_gpu_hour, 1.6);
        assert_eq!(unstated.offers_listed, 2);
        assert_eq!(unstated.planning_term_months, 36);
        assert!(!unstated.term_stated);
        assert_eq!(cheapest(&[], Some(12)), None);
    }

    #[test]
    fn a_tie_takes_the_shorter_term() {
        let same = ReservedOffer {
            term_months: 24,
            usd_per_gpu_hour: 2.1,
        };
        assert_eq!(
            cheapest(&[same, ONE_YEAR], Some(24)).unwrap().term_months,
            12
        );
    }
}
