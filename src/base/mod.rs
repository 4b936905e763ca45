//! The base room: what every stage uses and no stage owns. Errors and exit
//! codes, located messages, accepted ranges of numbers, the finite check on
//! results, text files as users save them, TOML files with located errors,
//! small statistics, deterministic parallel work, progress bars, numbers as
//! people read them and calendar units. Nothing here knows a domain type.

pub mod bounds;
pub mod error;
pub mod finite;
pub mod located;
pub mod numbers;
pub mod parallel;
pub mod progress;
pub mod stats;
#[cfg(test)]
pub mod testing;
pub mod text;
pub mod toml_file;
pub mod toml_syntax;
pub mod units;
