//! The aggregate of per-request trace files, each read in one streaming pass
//! (and a Mooncake trace's prompt blocks in a second, for the sampled
//! requests' prefix reuse).

use super::{Aggregate, AggregateBuilder, SamplePrefixes};
use crate::base::error::PlannerError;
use crate::base::located::Problem;
use crate::base::progress::Progress;
use crate::traces::block_chains::{kept_chains, BlockChains, NO_CHAIN};
use crate::traces::mooncake::MOONCAKE_BLOCK_TOKENS;
use crate::traces::prefix_reuse::{rows_of, PrefixReuse};
use crate::traces::{read_trace, ReaderOptions, Request, TraceFormat};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What was read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AggregateSummary {
    pub requests: u64,
    pub skipped_rows: u64,
}

/// A tier's requests in the order the traces hold them, and their prompt
/// blocks (none for a request of a trace that does not name them).
struct TierBlocks {
    requests: Vec<Request>,
    chains: BlockChains,
}

/// Whether the trace at `path` is read as Mooncake's JSON lines, whose rows
/// may name their prompts' blocks.
fn is_mooncake(path: &Path, options: ReaderOptions) -> bool {
    if let Some(f) = options.format {
        return f == TraceFormat::Mooncake;
    }
    TraceFormat::of_file(path) == Some(TraceFormat::Mooncake)
}

/// Aggregates `traces` — (tier, file) pairs; several files may feed a tier.
/// When a Mooncake trace names its prompts' blocks (`hash_ids`), each tier
/// holding such requests gets its sampled requests' prefix reuse (its
/// requests, trace after trace, run through one LRU cache), unless none of
/// them finds a block at any cache size.
pub fn aggregate_traces(
    traces: &[(String, PathBuf)],
    options: ReaderOptions,
    progress: Progress,
) -> Result<(Aggregate, AggregateSummary), PlannerError> {
    let mut builder = AggregateBuilder::new();
    let mut summary = AggregateSummary::default();
    let blocks_named = traces.iter().any(|(_, p)| is_mooncake(p, options));
    let mut blocks: BTreeMap<String, TierBlocks> = BTreeMap::new();
    for (tier, path) in traces {
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        let bar = progress.bytes(&format!("reading {}", path.display()), size);
        let mut requests = Vec::new();
        let (format, read) = read_trace(
            path,
            options,
            |r| {
                builder.push(tier, &r);
                if blocks_named {
                    requests.push(r);
                }
            },
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
        if blocks_named {
            let own = if format == TraceFormat::Mooncake {
                kept_chains(path, &requests, "fix or remove the row's `hash_ids`")
                    .map_err(PlannerError::Trace)?
            } else {
                let mut none = BlockChains::new(MOONCAKE_BLOCK_TOKENS);
                for _ in &requests {
                    none.push(&[]);
                }
                none
            };
            let entry = blocks.entry(tier.clone()).or_insert_with(|| TierBlocks {
                requests: Vec::new(),
                chains: BlockChains::new(own.block_tokens),
            });
            entry.requests.append(&mut requests);
            entry.chains.append(&own);
        }
    }
    let samples: BTreeMap<String, _> = blocks
        .keys()
        .map(|tier| (tier.clone(), builder.sample_requests(tier)))
        .collect();
    let mut agg = builder.finish();
    for t in &mut agg.tiers {
        let (Some(b), Some(sample)) = (blocks.get(&t.tier), samples.get(&t.tier)) else {
            continue;
        };
        if b.chains.is_empty() {
            continue;
        }
        let reuse = PrefixReuse::of(&b.chains);
        let steps: Vec<Vec<(u32, u32)>> = rows_of(&b.requests, sample)
            .into_iter()
            .map(|row| match row {
                NO_CHAIN => Vec::new(),
                row => reuse.steps(row),
            })
            .collect();
        // No sampled request finds a block at any size: nothing to carry.
        if steps.iter().all(Vec::is_empty) {
            continue;
        }
        t.prefixes = Some(SamplePrefixes {
            block_tokens: b.chains.block_tokens,
            steps,
        });
    }
    Ok((agg, summary))
}
