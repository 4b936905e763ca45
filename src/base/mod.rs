//! The base room: what every stage uses and no stage owns. Errors and exit
//! codes, located messages, accepted ranges of numbers, the finite check on
//! results, text files as users save them, TOML files with located errors,
//! small statistics, the on-disk cache of results, deterministic parallel work, progress bars, numbers as
//! people read them and calendar units. Nothing here knows a domain type.

pub(crate) mod bounds;
pub(crate) mod disk_cache;
pub(crate) mod error;
pub(crate) mod finite;
pub(crate) mod located;
pub(crate) mod nearest;
pub(crate) mod numbers;
pub(crate) mod parallel;
pub(crate) mod progress;
pub(crate) mod stats;
#[cfg(test)]
pub(crate) mod testing;
pub(crate) mod text;
pub(crate) mod timings;
pub(crate) mod toml_collect;
pub(crate) mod toml_file;
pub(crate) mod toml_syntax;
pub(crate) mod units;
