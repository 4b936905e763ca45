//! Money derived from a plan: the prices it was made at ([`prices`]), the
//! simple alternatives priced on the same demand ([`baselines`]), cost per
//! token ([`unit_costs`]), the plan slot by slot at list prices
//! ([`schedule`]), what the reservations commit to per year and over the
//! term ([`commitment`]), and the term's cost when demand grows ([`growth`]).

pub mod baselines;
pub mod commitment;
pub mod growth;
pub mod prices;
pub mod schedule;
pub mod unit_costs;
