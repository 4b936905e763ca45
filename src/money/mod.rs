//! Money derived from a plan: the prices it was made at ([`prices`]), the
//! simple alternatives priced on the same demand ([`baselines`]), cost per
//! token ([`unit_costs`]), the plan slot by slot at list prices
//! ([`schedule`]), what the reservations commit to per year and over the
//! term ([`commitment`]), and the term's cost when demand grows ([`growth`]).

pub(crate) mod band;
pub(crate) mod baselines;
pub(crate) mod commitment;
pub(crate) mod growth;
pub(crate) mod pool;
pub(crate) mod prices;
pub(crate) mod purchase;
pub(crate) mod schedule;
pub(crate) mod stages;
pub(crate) mod unit_costs;
