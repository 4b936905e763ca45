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
