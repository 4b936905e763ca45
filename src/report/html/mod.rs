//! Self-contained HTML reports: one file, inline SVG charts, no network and
//! no external scripts. [`plan_page`] renders a plan, [`sweep_page`] a
//! sweep; [`svg`] draws the charts and [`page`] holds the shared shell.

pub mod page;
pub mod plan_page;
mod pool;
mod purchase;
pub mod svg;
pub mod sweep_page;
