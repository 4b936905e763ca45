//! Calendar constants the money figures are stated in.

/// Hours in a year of 365 days (8,760): what a reservation commits to per year.
pub(crate) const HOURS_PER_YEAR: f64 = 8760.0;

/// Hours in an average month (730): a year over 12.
pub(crate) const HOURS_PER_MONTH: f64 = HOURS_PER_YEAR / 12.0;
