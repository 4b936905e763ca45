//! The aggregate of per-request trace files, each read in one streaming pass.

use super::{Aggregate, AggregateBuilder};
use crate::base::error::PlannerError;
use crate::base::located::Problem;
use crate::base::progress::Progress;
use crate::traces::{read_trace, ReaderOptions};
use std::path::PathBuf;

/// What was read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AggregateSummary {
    pub requests: u64,
    pub skipped_rows: u64,
}

/// Aggregates `traces` — (tier, file) pairs; several files may feed a tier.
pub fn aggregate_traces(
    traces: &[(String, PathBuf)],
    options: ReaderOptions,
    progress: Progress,
) -> Result<(Aggregate, AggregateSummary), PlannerError> {
    let mut builder = AggregateBuilder::new();
    let mut summary = AggregateSummary::default();
    for (tier, path) in traces {
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        let bar = progress.bytes(&format!("reading {}", path.display()), size);
        let (_, read) = read_trace(
            path,
            options,
            |r| builder.push(tier, &r),
            |b| bar.set_position(b),
        )
        .map_err(PlannerError::Trace)?;
        bar.finish_and_clear();
        if let Some((line, why)) = &read.first_skipped {
            note!(
                "warning: {}: skipped {} bad rows; the first, line {line}: {why}",
                path.display(),
                read.skipped_rows
            );
        }
        summary.requests += read.requests;
        summary.skipped_rows += read.skipped_rows;
        if let Some((name, days)) = builder.too_long() {
            return Err(PlannerError::Trace(Problem::new(
                path.clone(),
                "",
                format!("tier `{name}` spans {days:.0} days, more than 400; check the timestamps"),
            )));
        }
    }
    Ok((builder.finish(), summary))
}
