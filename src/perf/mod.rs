//! The performance model: what one engine step of a replica costs. The
//! roofline step model ([`step`]) at a weight precision, the physical
//! ceiling on a replica's throughput ([`roofline`]), and the fit of its
//! efficiency factors to measured kernel timings ([`kernels`]).

pub mod kernels;
pub mod roofline;
pub mod step;

pub use step::*;
