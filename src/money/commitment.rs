//! What a plan's reservations commit the buyer to, in money.
//!
//! A reserved GPU is paid for every hour of its term whether used or not, so
//! the plan's reserved counts are a yearly commitment of reserved GPUs ×
//! reserved price × 8,760 hours, per GPU type. The horizon the plan was
//! solved on (a day, a week) says nothing about that figure; the report
//! prints it beside the horizon's cost.

use crate::base::units::{HOURS_PER_MONTH, HOURS_PER_YEAR};
use crate::money::growth::TermProjection;
use crate::money::prices::{GpuPrice, Prices};
use crate::plan::Plan;
use serde::Serialize;
use std::collections::BTreeMap;

/// The reservation commitment of one GPU type.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CommitmentLine {
    /// GPUs reserved.
    pub gpus: u32,
    /// The price paid per GPU-hour: the list price of the offer bought
    /// when the scenario lists several.
    pub reserved_usd_per_gpu_hour: f64,
    /// The reservation's terms as the scenario states them.
    pub term: String,
    /// The term of the offer bought, when the scenario lists offers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offer_term_months: Option<u32>,
    /// gpus × price × 8,760 h.
    pub usd_per_year: f64,
}

/// The plan's reservation commitment.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Commitment {
    /// GPU type → its commitment (types with reserved GPUs only).
    pub gpu_types: BTreeMap<String, CommitmentLine>,
    /// Sum over GPU types, USD per year.
    pub usd_per_year: f64,
    /// Set when GPUs were reserved on a horizon shorter than a day: the
    /// counts then rest on part of one day's pattern.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short_horizon_warning: Option<String>,
    /// The commitment over the scenario's `[commitment] term_months`, when
    /// stated and something is reserved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub term: Option<TermCommitment>,
    /// The term's cost month by month with `[commitment] monthly_growth`,
    /// the reservations chosen for the whole term ([`crate::money::growth`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub growth: Option<TermProjection>,
    /// `[commitment] term_months`, stated or not reserved against.
    #[serde(skip)]
    pub term_months: Option<u32>,
}

/// What the reservations commit to over the whole term, and what that buys.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TermCommitment {
    pub months: u32,
    /// Whether `months` are the first reservation's, the term being renewed
    /// (`[commitment] renewal_months`), rather than the whole term's.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub first_reservation: bool,
    /// Money the reservations commit to: per GPU type, usd_per_year ×
    /// max(offer term, months) / 12; an offer longer than the term is paid
    /// for its whole term. Types without an offer term: usd_per_year ×
    /// months / 12.
    pub usd: f64,
    /// Reserved GPUs × the hours they are paid for (730 per month): the
    /// term's, or an offer's when it is longer.
    pub reserved_gpu_hours: f64,
    /// Share (0-1) of the reserved GPU-hours the planned pattern's replicas
    /// occupy, were it repeated over the term unchanged.
    pub occupied_share: f64,
}

/// The commitment over `months`: its money, the GPU-hours it buys, and the
/// share of them the plan's replicas occupy (`plan.reserved` against each
/// slot's replicas on reserved GPU types).
pub(crate) fn over_term(plan: &Plan, c: &Commitment, months: u32) -> Option<TermCommitment> {
    if c.gpu_types.is_empty() {
        return None;
    }
    let reserved_gpus: u32 = c.gpu_types.values().map(|l| l.gpus).sum();
    let slots = plan.on_demand.len();
    let mut occupied = 0.0;
    for (gpu, line) in &c.gpu_types {
        for t in 0..slots {
            let used: u32 = plan
                .tiers
                .values()
                .flat_map(|tier| &tier.configurations)
                .filter(|u| &u.config.gpu_type == gpu)
                .map(|u| u.replicas_by_slot.get(t).copied().unwrap_or(0) * u.gpus_per_replica)
                .sum();
            occupied += f64::from(used.min(line.gpus));
        }
    }
    let held = f64::from(reserved_gpus) * slots as f64;
    Some(TermCommitment {
        months,
        first_reservation: false,
        usd: c
            .gpu_types
            .values()
            .map(|l| {
                l.usd_per_year * f64::from(l.offer_term_months.unwrap_or(0).max(months)) / 12.0
            })
            .sum(),
        reserved_gpu_hours: c
            .gpu_types
            .values()
            .map(|l| {
                f64::from(l.gpus)
                    * f64::from(l.offer_term_months.unwrap_or(0).max(months))
                    * HOURS_PER_MONTH
            })
            .sum(),
        occupied_share: if held > 0.0 { occupied / held } else { 0.0 },
    })
}

/// What `plan`'s reservations commit to at `prices`: per year, over the
/// scenario's term when it states one (over its first reservation when the
/// plan renews within the term), and with the term's growth projected
/// when the MILP was solved over it.
pub(crate) fn of_plan(
    plan: &Plan,
    prices: &Prices,
    term_months: Option<u32>,
    growth: Option<TermProjection>,
) -> Commitment {
    let mut c = of(&plan.reserved, &prices.gpus, plan.horizon_hours);
    c.term_months = term_months;
    let first = growth
        .as_ref()
        .and_then(|g| g.stages.first())
        .map(|s| s.months);
    c.term = first.or(term_months).and_then(|months| {
        over_term(plan, &c, months).map(|t| TermCommitment {
            first_reservation: first.is_some(),
            ..t
        })
    });
    c.growth = growth;
    c
}

/// Shortest horizon, in hours, whose reservations the report does not warn
/// about.
pub(crate) const MIN_RESERVATION_HORIZON_HOURS: f64 = 24.0;

/// The yearly commitment of `reserved` GPUs (type → count) at the reserved
/// prices in `prices`, chosen on a horizon of `horizon_hours`.
pub(crate) fn of(
    reserved: &BTreeMap<String, u32>,
    prices: &BTreeMap<String, GpuPrice>,
    horizon_hours: f64,
) -> Commitment {
    let mut gpu_types = BTreeMap::new();
    for (gpu, &gpus) in reserved {
        let Some(price) = prices.get(gpu) else {
            continue;
        };
        let Some(effective) = price.reserved_usd_per_gpu_hour else {
            continue;
        };
        let usd_per_gpu_hour = price
            .reserved_offer
            .map_or(effective, |o| o.usd_per_gpu_hour);
        if gpus == 0 {
            continue;
        }
        gpu_types.insert(
            gpu.clone(),
            CommitmentLine {
                gpus,
                reserved_usd_per_gpu_hour: usd_per_gpu_hour,
                term: price.reserved_term.clone(),
                offer_term_months: price.reserved_offer.map(|o| o.term_months),
                usd_per_year: f64::from(gpus) * usd_per_gpu_hour * HOURS_PER_YEAR,
            },
        );
    }
    let short_horizon_warning = (!gpu_types.is_empty()
        && horizon_hours < MIN_RESERVATION_HORIZON_HOURS)
        .then(|| {
            format!(
                "reservations chosen on a horizon of {horizon_hours:.2} h, shorter than a day: a commitment paid every hour of the year rests on part of one day's traffic; plan over at least a day (a [shape] rate curve with `days` ≥ 1)"
            )
        });
    Commitment {
        usd_per_year: gpu_types.values().fold(0.0, |sum, l| sum + l.usd_per_year),
        gpu_types,
        short_horizon_warning,
        term: None,
        growth: None,
        term_months: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn price(reserved: Option<f64>) -> GpuPrice {
        GpuPrice {
            reserved_usd_per_gpu_hour: reserved,
            reserved_term: "1 year".into(),
            reserved_offer: None,
            on_demand_usd_per_gpu_hour: Some(2.0),
            max_gpus: None,
            source: "test".into(),
            spot: None,
        }
    }

    #[test]
    fn reserved_gpus_times_price_times_a_year() {
        let reserved = BTreeMap::from([
            ("mi300x".to_string(), 48),
            ("h100".to_string(), 0),
            ("l40s".to_string(), 4),
        ]);
        let prices = BTreeMap::from([
            ("mi300x".to_string(), price(Some(1.20))),
            ("h100".to_string(), price(Some(2.0))),
            ("l40s".to_string(), price(None)),
        ]);
        let c = of(&reserved, &prices, 168.0);
        assert_eq!(c.short_horizon_warning, None);
        assert_eq!(c.gpu_types.len(), 1);
        assert!((c.gpu_types["mi300x"].usd_per_year - 504_576.0).abs() < 1e-6);
        assert!((c.usd_per_year - 504_576.0).abs() < 1e-6);
        assert!(of(&reserved, &prices, 1.0).short_horizon_warning.is_some());
        let none = BTreeMap::from([("mi300x".to_string(), 0)]);
        assert_eq!(of(&none, &prices, 1.0).short_horizon_warning, None);
    }
}
