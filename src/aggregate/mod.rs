//! Aggregate demand: what the planner needs of a request log, computed where
//! the log lives (a warehouse, a data lake, or `planner trace aggregate`) and
//! small enough to copy anywhere. Format version 2 (version 1 is still read),
//! one folder of three tables (CSV or Parquet each), described in
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
//! * `pairs`: per tier, joint (input, output) counts on the coarse grid.

pub mod bins;
mod builder;
mod figures;
mod from_traces;
mod parquet;
mod read;
pub mod sample;
mod table;
pub mod write;

pub use builder::AggregateBuilder;
pub use from_traces::{aggregate_traces, AggregateSummary};
pub use parquet::write as write_parquet;
pub use read::read_aggregate;
pub use write::{columns, write_csv, Column, Columns};

use bins::{COARSE_BINS, FINE_BINS};

/// The format version this planner writes.
pub const FORMAT_VERSION: i64 = 2;

/// The format versions this planner reads: 1 lacks the arrival offsets, so
/// its spans are known to whole minutes only.
pub const READ_VERSIONS: [i64; 2] = [1, 2];

/// Microseconds in a minute: arrival offsets lie in `0..MINUTE_US`.
pub const MINUTE_US: u32 = 60_000_000;

/// The three tables, by file stem.
pub const TABLES: [&str; 3] = ["minutes", "lengths", "pairs"];

/// The columns of the minutes table (format version 2), in file order.
pub(crate) const MINUTE_COLUMNS: [&str; 10] = [
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
];

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
}

/// Requests and their tokens in one length bin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BinTotal {
    pub requests: u64,
    pub tokens: u64,
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
    /// Requests per coarse cell, index `input_bin · COARSE_BINS + output_bin`.
    pub pairs: Vec<u64>,
}

impl TierAggregate {
    /// An empty tier (no minutes, empty histograms).
    pub fn empty(tier: &str) -> Self {
        TierAggregate {
            tier: tier.to_string(),
            minutes: Vec::new(),
            input: vec![BinTotal::default(); FINE_BINS as usize],
            output: vec![BinTotal::default(); FINE_BINS as usize],
            pairs: vec![0; (COARSE_BINS * COARSE_BINS) as usize],
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
