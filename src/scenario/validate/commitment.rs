//! The `[commitment]` section: the growth of demand over the reservations' term.

use super::Validator;
use crate::scenario::raw::RawCommitment;

/// Largest factor (and smallest, inverted) between the term's last month's
/// demand and the planned pattern's that a scenario may state.
pub(super) const MAX_TERM_GROWTH_FACTOR: f64 = 100.0;

impl Validator {
    /// `commitment.monthly_growth`, bounded, and the demand it reaches by
    /// the term's last month at most [`MAX_TERM_GROWTH_FACTOR`] times (and
    /// at least its inverse) the planned pattern's.
    pub(super) fn monthly_growth(&mut self, commitment: Option<&RawCommitment>) -> f64 {
        let Some(c) = commitment else {
            return 0.0;
        };
        let (Some(growth), Some(months)) = (c.monthly_growth, c.term_months) else {
            return 0.0;
        };
        if !self.bounded("commitment.monthly_growth", growth) {
            return 0.0;
        }
        if growth != 0.0 && months < 2 {
            self.at_key(
                "commitment.monthly_growth",
                format!("a growth of {growth} a month needs a term of at least 2 months to grow over; `term_months` is {months}: lengthen the term or remove `monthly_growth`"),
            );
            return 0.0;
        }
        let last = (1.0 + growth).powi(months.saturating_sub(1) as i32);
        if !(1.0 / MAX_TERM_GROWTH_FACTOR..=MAX_TERM_GROWTH_FACTOR).contains(&last) {
            let direction = if growth > 0.0 { "lower" } else { "milder" };
            self.at_key(
                "commitment.monthly_growth",
                format!(
                    "{growth} a month over {months} months makes the last month's demand {last:.3e} × the planned pattern's, outside [1/{MAX_TERM_GROWTH_FACTOR}, {MAX_TERM_GROWTH_FACTOR}]; use a {direction} growth or a shorter term"
                ),
            );
            return 0.0;
        }
        growth
    }
}

impl Validator {
    /// `commitment.renewal_months` (kept only when below the term: the
    /// term is then planned in stages of that many months) and
    /// `commitment.price_decline_per_year` (taken at each renewal, so only
    /// with stages).
    pub(super) fn renewals(&mut self, commitment: Option<&RawCommitment>) -> (Option<u32>, f64) {
        let Some(c) = commitment else {
            return (None, 0.0);
        };
        let renewal = c.renewal_months.filter(|&m| {
            self.bounded("commitment.renewal_months", f64::from(m))
                && c.term_months.is_some_and(|term| m < term)
        });
        let Some(decline) = c.price_decline_per_year else {
            return (renewal, 0.0);
        };
        if !self.bounded("commitment.price_decline_per_year", decline) {
            return (renewal, 0.0);
        }
        if decline > 0.0 && renewal.is_none() {
            self.at_key(
                "commitment.price_decline_per_year",
                format!(
                    "a price decline of {decline} a year is taken when reservations are renewed, and this term has no renewal: state `renewal_months` below `term_months` (e.g. `renewal_months = 12` in a 36-month term), or remove `price_decline_per_year`"
                ),
            );
            return (renewal, 0.0);
        }
        (renewal, decline)
    }
}
