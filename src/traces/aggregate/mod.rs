//! Aggregate demand: what the planner needs of a request log, computed where
//! the log lives (a warehouse, a data lake, or `planner trace aggregate`) and
//! small enough to copy anywhere. Format version 3 (versions 1 and 2 are
//! still read), one folder of four tables (CSV or Parquet each), described in
//! `docs/aggregate-format.md`:
//!
//! * `minutes`: per tier and clock minute, the request count, input- and
//!   output-token sums, the busiest second's count, the sum over the
//!   minute's 60 seconds of the squared per-second counts (which gives the
//!   within-minute dispersion the burstiness model uses), and the first and
//!   last arrivals' offsets within the minute in microseconds (which give
//!   the tier's span exactly; version 1 lacks them);
//! * `lengths`: per tier, input and output length histograms on the fixed
//!   log-spaced bins of [`bins`], with the tokens in each bin;
//! * `pairs`: per tier, joint (input, output) counts and token sums on the
//!   grid of fine bins (versions 1 and 2: counts on the coarse grid);
//! * `sample`: per tier, the lengths of the 16,384 requests of smallest sample
//!   key ([`crate::traces::length_sample`]), the same requests a trace's
//!   capacity search runs on (versions 1 and 2 have none);
//! * `prefixes` (optional, version 3, when the log names its prompts'
//!   blocks): per sampled request, what a prefix cache of any size finds of
//!   its prompt when the tier's requests run through it in order
//!   ([`SamplePrefixes`]).

pub mod bins;
mod builder;
mod cells;
mod checks;
mod figures;
mod from_traces;
mod parquet;
mod prefixes;
mod read;
mod rows;
pub mod sample;
mod table;
pub mod write;

pub use builder::AggregateBuilder;
pub use from_traces::{aggregate_traces, AggregateSummary};
pub use parquet::write as write_parquet;
pub use read::read_aggregate;
pub use write::{columns, write_csv, Column, Columns};

use bins::{COARSE_BINS, FINE_BINS};
use std::collections::BTreeMap;

/// The format version this planner writes.
pub const FORMAT_VERSION: i64 = 3;

/// The format versions this planner reads: 1 lacks the arrival offsets, so
/// its spans are known to whole minutes only; 1 and 2 hold their pairs on the
/// coarse grid and no length sample.
pub const READ_VERSIONS: [i64; 3] = [1, 2, 3];

/// Microseconds in a minute: arrival offsets lie in `0..MINUTE_US`.
pub const MINUTE_US: u32 = 60_000_000;

/// The tables of the current version, by file stem.
pub const TABLES: [&str; 4] = ["minutes", "lengths", "pairs", "sample"];

/// The table a log that names its prompts' blocks adds (version 3 on).
pub const PREFIXES_TABLE: &str = "prefixes";

/// The tables of format `version`: versions 1 and 2 have no `sample`.
pub fn tables_of(version: i64) -> &'static [&'static str] {
    if version >= 3 {
        &TABLES
    } else {
        &TABLES[..3]
    }
}

/// The columns of the minutes table (format version 3), in file order;
/// version 2 has the first 10, version 1 the first 8. Version 3 adds each
/// clock second's arrivals, `second_00` to `second_59`.
pub(crate) const MINUTE_COLUMNS: [&str; 70] = [
    "version",
    "tier",
    "minute_s",
    "requests",
    "input_tokens",
    "output_tokens",
    "busiest_second",
    "second_sq_sum",
    "first_arrival_us",
    "last_arrival_us",
    "second_00",
    "second_01",
    "second_02",
    "second_03",
    "second_04",
    "second_05",
    "second_06",
    "second_07",
    "second_08",
    "second_09",
    "second_10",
    "second_11",
    "second_12",
    "second_13",
    "second_14",
    "second_15",
    "second_16",
    "second_17",
    "second_18",
    "second_19",
    "second_20",
    "second_21",
    "second_22",
    "second_23",
    "second_24",
    "second_25",
    "second_26",
    "second_27",
    "second_28",
    "second_29",
    "second_30",
    "second_31",
    "second_32",
    "second_33",
    "second_34",
    "second_35",
    "second_36",
    "second_37",
    "second_38",
    "second_39",
    "second_40",
    "second_41",
    "second_42",
    "second_43",
    "second_44",
    "second_45",
    "second_46",
    "second_47",
    "second_48",
    "second_49",
    "second_50",
    "second_51",
    "second_52",
    "second_53",
    "second_54",
    "second_55",
    "second_56",
    "second_57",
    "second_58",
    "second_59",
];

/// The columns of the pairs table (format version 3), in file order.
pub(crate) const PAIR_COLUMNS: [&str; 7] = [
    "version",
    "tier",
    "input_bin",
    "output_bin",
    "requests",
    "input_tokens",
    "output_tokens",
];

/// The columns of the sample table (format version 3), in file order.
pub(crate) const SAMPLE_COLUMNS: [&str; 6] = [
    "version",
    "tier",
    "sample_rank",
    "sample_key",
    "input_tokens",
    "output_tokens",
];

/// The columns of the prefixes table (format version 3), in file order.
pub(crate) const PREFIX_COLUMNS: [&str; 6] = [
    "version",
    "tier",
    "sample_rank",
    "block_tokens",
    "reuse_distance",
    "cached_blocks",
];

/// What a prefix cache of any size finds of each of a tier's sampled
/// requests, when the tier's requests (in the log's order) run through one
/// LRU cache of whole blocks: a request's *steps*, each a distinct finite
/// running maximum `reuse_distance` of its leading blocks' LRU stack
/// distances with the number `cached_blocks` of leading blocks it covers,
/// both rising. A cache of `C` blocks finds the `cached_blocks` of the
/// last step whose distance is below `C` (none before the first step).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplePrefixes {
    /// Tokens per block of the hashes the steps were counted on.
    pub block_tokens: u32,
    /// Beside each row of the tier's sample, in rank order: its
    /// `(reuse_distance, cached_blocks)` steps (none for a request whose
    /// first block no earlier request used).
    pub steps: Vec<Vec<(u32, u32)>>,
}

/// One clock minute of one tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MinuteRow {
    /// Start of the minute, seconds on the trace's clock (UTC epoch seconds
    /// for wall-clock traces), a multiple of 60.
    pub minute_s: i64,
    pub requests: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Arrivals in the minute's busiest clock second.
    pub busiest_second: u64,
    /// Σ over the minute's 60 clock seconds of (arrivals in that second)².
    pub second_sq_sum: u64,
    /// Microseconds from the minute's start to its first and its last
    /// arrival (`None` for an empty minute, and for every minute of a
    /// version-1 aggregate).
    pub arrivals_us: Option<(u32, u32)>,
    /// Arrivals in each of the minute's 60 clock seconds (`None` before
    /// version 3): a burst that lasts several seconds is replayed as it was.
    pub seconds: Option<[u32; 60]>,
}

/// Requests and their tokens in one length bin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BinTotal {
    pub requests: u64,
    pub tokens: u64,
}

/// Requests and their tokens in one (input bin, output bin) cell of the
/// fine grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PairCell {
    pub requests: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// The joint distribution of (input, output) lengths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JointLengths {
    /// Format versions 1 and 2: requests per coarse cell, index
    /// `input_bin · COARSE_BINS + output_bin`.
    Coarse(Vec<u64>),
    /// Format version 3: the cells of the fine grid holding requests, by
    /// (input bin, output bin).
    Fine(BTreeMap<(u32, u32), PairCell>),
}

/// One request of a tier's length sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleRow {
    /// Its sample key ([`crate::traces::length_sample::sample_key`]).
    pub key: u32,
    pub input_tokens: u32,
    pub output_tokens: u32,
}

/// Everything the aggregate holds about one tier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TierAggregate {
    pub tier: String,
    /// Every minute from the first to the last holding a request, in order.
    pub minutes: Vec<MinuteRow>,
    /// Input lengths per fine bin ([`FINE_BINS`] entries).
    pub input: Vec<BinTotal>,
    /// Output lengths per fine bin.
    pub output: Vec<BinTotal>,
    /// Joint lengths: fine cells (version 3) or coarse counts (1 and 2).
    pub pairs: JointLengths,
    /// The length sample in rank order (`None` before version 3).
    pub sample: Option<Vec<SampleRow>>,
    /// The sampled requests' prefix reuse, when the log names its prompts'
    /// blocks.
    pub prefixes: Option<SamplePrefixes>,
}

impl TierAggregate {
    /// An empty tier of the current format (no minutes, empty histograms,
    /// fine pairs, an empty sample).
    pub fn empty(tier: &str) -> Self {
        Self::empty_of_version(tier, FORMAT_VERSION)
    }

    /// An empty tier as format `version` holds it: coarse pairs and no
    /// sample before version 3.
    pub fn empty_of_version(tier: &str, version: i64) -> Self {
        let (pairs, sample) = if version >= 3 {
            (JointLengths::Fine(BTreeMap::new()), Some(Vec::new()))
        } else {
            (
                JointLengths::Coarse(vec![0; (COARSE_BINS * COARSE_BINS) as usize]),
                None,
            )
        };
        TierAggregate {
            tier: tier.to_string(),
            minutes: Vec::new(),
            input: vec![BinTotal::default(); FINE_BINS as usize],
            output: vec![BinTotal::default(); FINE_BINS as usize],
            pairs,
            sample,
            prefixes: None,
        }
    }

    /// Requests over all minutes.
    pub fn requests(&self) -> u64 {
        self.minutes.iter().map(|m| m.requests).sum()
    }
}

/// An aggregate: its tiers, sorted by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aggregate {
    pub tiers: Vec<TierAggregate>,
}

impl Aggregate {
    /// The tier called `name`.
    pub fn tier(&self, name: &str) -> Option<&TierAggregate> {
        self.tiers.iter().find(|t| t.tier == name)
    }
}
