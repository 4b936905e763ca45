//! Request traces: streaming readers for the Azure CSV, BurstGPT CSV and Mooncake JSONL
//! formats, trace statistics, and a seeded synthetic-trace writer.

pub mod aggregate;
pub mod block_chains;
pub mod length_sample;
mod length_stats;
pub mod lines;
pub mod micros;
pub(crate) mod mooncake;
pub mod prefix;
pub(crate) mod prefix_reuse;
pub mod quantised;
mod read;
mod reader;
mod row_error;
pub mod sessions;
pub mod shape;
mod split;
pub mod stats;
pub mod synth;
pub mod timestamp;
pub(crate) mod turns;

pub use read::{read_all, read_trace};
pub(crate) use reader::not_a_file;
pub use reader::{Dropped, ReadSummary, ReaderOptions, RowError};

use serde::Serialize;

/// Most tokens one request may hold on either side (10 million, beyond any
/// served model's context): a row naming more is refused with its line.
pub const MAX_TOKENS_PER_REQUEST: u32 = 10_000_000;

/// One request of a trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Request {
    /// Arrival time in seconds: since 1970-01-01 UTC for Azure traces, since the
    /// trace start for Mooncake traces.
    pub arrival_s: f64,
    /// Prompt (input) tokens.
    pub input_tokens: u32,
    /// Generated (output) tokens.
    pub output_tokens: u32,
}

/// The header of a BurstGPT CSV file.
pub const BURSTGPT_HEADER: &str =
    "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type";

/// The file formats the readers understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceFormat {
    /// CSV `TIMESTAMP,ContextTokens,GeneratedTokens` (Azure 2023 and 2024).
    Azure,
    /// JSON lines `{"timestamp": ms, "input_length": n, "output_length": n, ...}`.
    Mooncake,
    /// CSV `Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type`
    /// (BurstGPT; seconds since the trace start).
    Burstgpt,
}

impl TraceFormat {
    /// Parses a format name as written in scenarios and on the command line.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "azure" => Some(TraceFormat::Azure),
            "mooncake" => Some(TraceFormat::Mooncake),
            "burstgpt" => Some(TraceFormat::Burstgpt),
            _ => None,
        }
    }

    /// The format's name as scenarios and the command line write it.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Azure => "azure",
            TraceFormat::Mooncake => "mooncake",
            TraceFormat::Burstgpt => "burstgpt",
        }
    }

    /// The format the first 4 KiB of the file at `path` show (a byte-order
    /// mark skipped); `None` when it cannot be read or told.
    pub fn of_file(path: &std::path::Path) -> Option<Self> {
        use std::io::Read;
        let mut head = [0u8; 4096];
        let n = std::fs::File::open(path)
            .and_then(|mut f| f.read(&mut head))
            .ok()?;
        let head = &head[..n];
        Self::detect(head.strip_prefix(crate::base::text::BOM).unwrap_or(head))
    }

    /// Detects the format from the first bytes of a file.
    pub fn detect(head: &[u8]) -> Option<Self> {
        let first = head.iter().copied().find(|b| !b.is_ascii_whitespace())?;
        if first == b'{' {
            return Some(TraceFormat::Mooncake);
        }
        let line_end = head.iter().position(|&b| b == b'\n').unwrap_or(head.len());
        let line = String::from_utf8_lossy(&head[..line_end]);
        if line
            .trim_start_matches('\u{feff}')
            .starts_with(BURSTGPT_HEADER)
        {
            return Some(TraceFormat::Burstgpt);
        }
        let fields: Vec<_> = line.trim().split(',').collect();
        (fields.len() == 3
            && (fields[0].eq_ignore_ascii_case("TIMESTAMP")
                || timestamp::parse_timestamp(fields[0].as_bytes()).is_some()))
        .then_some(TraceFormat::Azure)
    }
}
