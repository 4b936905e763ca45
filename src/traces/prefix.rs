//! The prefix share of a trace: how much of its prompts an unbounded
//! prefix cache would find already computed.
//!
//! Requests are taken in file order (arrival order). A request's hit is the
//! longest run of its leading blocks whose hashes all appeared in an
//! earlier request (any position of it: a block's hash names the block and
//! every block before it, so a hash seen anywhere is a prefix seen); every
//! block of the request is then cached. Its hit tokens are those blocks'
//! tokens, the last block counting only the prompt's tokens in it. The
//! blocks a request's output fills are cached too where its conversation's
//! next turn names them ([`super::turns`]: the trace hashes prompts only,
//! so they are known from that turn, and cached before it is looked up).
//! Nothing is evicted, so this is the most any cache could reuse on the
//! trace: the simulator's cache, bounded by memory, finds at most this.

use super::block_chains::for_each_mooncake_chain;
use super::length_stats::LengthStats;
use super::mooncake::MOONCAKE_BLOCK_TOKENS;
use super::turns::TurnLinker;
use crate::base::located::Problem;
use crate::base::stats::percentile_sorted;
use serde::Serialize;
use std::collections::HashSet;
use std::path::Path;

/// What `planner trace stats` says of a trace's prefixes (JSON `prefix`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PrefixSummary {
    /// Tokens per hashed block.
    pub block_tokens: u32,
    /// Requests that carry block hashes.
    pub requests_with_hashes: u64,
    /// Of those, the requests whose first block was seen before (any hit).
    pub requests_with_hit: u64,
    /// Their share of the requests with hashes.
    pub requests_with_hit_share: f64,
    /// Share of the prompts' hashed blocks an unbounded cache holds already.
    pub block_hit_share: f64,
    /// Share of all prompt tokens in those blocks.
    pub token_hit_share: f64,
    /// Per request, the prompt tokens found cached (the shared prefix).
    pub shared_prefix_tokens: LengthStats,
    /// Requests that continue an earlier turn whose output fills blocks
    /// they name ([`super::turns`]).
    pub next_turns: u64,
    /// The blocks those earlier turns generated, cached when they finished.
    pub generated_blocks: u64,
}

/// The unbounded cache, fed one request at a time.
#[derive(Debug, Default)]
pub struct PrefixAccumulator {
    seen: HashSet<u64>,
    turns: TurnLinker,
    requests: u64,
    requests_with_hashes: u64,
    requests_with_hit: u64,
    blocks: u64,
    blocks_hit: u64,
    next_turns: u64,
    generated_blocks: u64,
    prompt_tokens: u64,
    hit_tokens_by_request: Vec<u32>,
}

impl PrefixAccumulator {
    /// Adds a request of `input_tokens` and `output_tokens` whose prompt
    /// blocks hash to `blocks` (empty when the trace gives none); returns
    /// its hit tokens.
    pub fn push(&mut self, input_tokens: u32, output_tokens: u32, blocks: &[u64]) -> u32 {
        let index = self.requests as u32;
        let seen = &self.seen;
        let turn = self.turns.push(
            index,
            (input_tokens, output_tokens),
            blocks,
            MOONCAKE_BLOCK_TOKENS,
            |h| seen.contains(&h),
        );
        if let Some((_, generated)) = turn {
            self.next_turns += 1;
            self.generated_blocks += generated.len() as u64;
            self.seen.extend(generated);
        }
        self.requests += 1;
        self.prompt_tokens += u64::from(input_tokens);
        let hit_blocks = blocks.iter().take_while(|h| self.seen.contains(h)).count();
        let hit_tokens = (hit_blocks as u64 * u64::from(MOONCAKE_BLOCK_TOKENS))
            .min(u64::from(input_tokens)) as u32;
        if !blocks.is_empty() {
            self.requests_with_hashes += 1;
            self.requests_with_hit += u64::from(hit_blocks > 0);
        }
        self.blocks += blocks.len() as u64;
        self.blocks_hit += hit_blocks as u64;
        self.seen.extend(blocks.iter().copied());
        self.hit_tokens_by_request.push(hit_tokens);
        hit_tokens
    }

    /// The summary; `None` when no request carried hashes.
    pub fn summary(&self) -> Option<PrefixSummary> {
        if self.requests_with_hashes == 0 {
            return None;
        }
        let share = |part: u64, whole: u64| {
            if whole == 0 {
                0.0
            } else {
                part as f64 / whole as f64
            }
        };
        let mut sorted: Vec<f64> = self
            .hit_tokens_by_request
            .iter()
            .map(|&t| f64::from(t))
            .collect();
        sorted.sort_unstable_by(f64::total_cmp);
        // Nearest rank, as the length statistics; whole tokens, exact in f64.
        let at = |q: f64| percentile_sorted(&sorted, q) as u64;
        let hit_tokens: u64 = self
            .hit_tokens_by_request
            .iter()
            .map(|&t| u64::from(t))
            .sum();
        Some(PrefixSummary {
            block_tokens: MOONCAKE_BLOCK_TOKENS,
            requests_with_hashes: self.requests_with_hashes,
            requests_with_hit: self.requests_with_hit,
            requests_with_hit_share: share(self.requests_with_hit, self.requests_with_hashes),
            block_hit_share: share(self.blocks_hit, self.blocks),
            token_hit_share: share(hit_tokens, self.prompt_tokens),
            shared_prefix_tokens: LengthStats {
                mean: hit_tokens as f64 / sorted.len() as f64,
                p50: at(0.5),
                p90: at(0.9),
                p99: at(0.99),
                max: at(1.0),
            },
            next_turns: self.next_turns,
            generated_blocks: self.generated_blocks,
        })
    }
}

/// The prefix share of the Mooncake trace at `path`, read in file order.
/// A row whose hashes contradict it fails with its line, or with
/// `skip_bad_rows` is read without hashes; returns how many were.
pub fn of_mooncake_file(
    path: &Path,
    skip_bad_rows: bool,
) -> Result<(Option<PrefixSummary>, u64), Problem> {
    let mut acc = PrefixAccumulator::default();
    let mut skipped = 0;
    for_each_mooncake_chain(
        path,
        skip_bad_rows.then_some(&mut skipped),
        "fix or remove the row's `hash_ids`, or pass --skip-bad-rows to read such rows without them",
        |request, blocks| {
            acc.push(request.input_tokens, request.output_tokens, blocks);
        },
    )?;
    Ok((acc.summary(), skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hit_is_the_run_of_leading_blocks_seen_before() {
        let mut acc = PrefixAccumulator::default();
        // First request: nothing cached.
        assert_eq!(acc.push(1_500, 10, &[1, 2, 3]), 0);
        // Shares blocks 1 and 2, then diverges: two blocks, 1,024 tokens.
        assert_eq!(acc.push(2_000, 10, &[1, 2, 7, 8]), 1_024);
        // Block 3 was seen, but its first block was not: no hit.
        assert_eq!(acc.push(1_000, 10, &[9, 3]), 0);
        // The whole prompt cached, its last block part-filled: its tokens.
        assert_eq!(acc.push(1_500, 10, &[1, 2, 3]), 1_500);
        // A request without hashes finds nothing.
        assert_eq!(acc.push(800, 10, &[]), 0);
        let s = acc.summary().unwrap();
        assert_eq!(s.requests_with_hashes, 4);
        assert!((s.requests_with_hit_share - 0.5).abs() < 1e-12);
        assert!((s.block_hit_share - 5.0 / 12.0).abs() < 1e-12);
        assert!((s.token_hit_share - 2_524.0 / 6_800.0).abs() < 1e-12);
        assert_eq!(s.shared_prefix_tokens.max, 1_500);
        assert_eq!(s.shared_prefix_tokens.p50, 0);
        assert!((s.shared_prefix_tokens.mean - 2_524.0 / 5.0).abs() < 1e-9);
        // No hashes at all: nothing to say.
        let mut none = PrefixAccumulator::default();
        none.push(100, 10, &[]);
        assert!(none.summary().is_none());
    }

    #[test]
    fn a_next_turn_finds_the_blocks_its_previous_turn_generated() {
        let mut acc = PrefixAccumulator::default();
        // 1,100 prompt tokens and 500 generated fill three blocks; the
        // next turn's third block (5) holds the first turn's tail and
        // output, cached when that turn finished.
        assert_eq!(acc.push(1_100, 500, &[1, 2, 3]), 0);
        assert_eq!(acc.push(1_700, 40, &[1, 2, 5, 6]), 1_536);
        // A retry of the first turn (its prompt lacks the output) finds the
        // prompt's two whole blocks only.
        assert_eq!(acc.push(1_300, 40, &[1, 2, 9]), 1_024);
        let s = acc.summary().unwrap();
        assert_eq!((s.next_turns, s.generated_blocks), (1, 1));
    }

    /// An independent count over the shipped conversation trace: a
    /// request's hit blocks by scanning every earlier request's blocks,
    /// and the blocks earlier turns generated (each request's next turn
    /// found by scanning every earlier request for the rule of
    /// [`super::super::turns`]).
    #[test]
    fn the_conversation_traces_share_matches_a_count_by_earlier_requests() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("data/mooncake/conversation_trace.jsonl");
        let (s, skipped) = of_mooncake_file(&path, false).unwrap();
        let s = s.expect("the trace has hashes");
        assert_eq!(skipped, 0);
        let text = std::fs::read_to_string(&path).unwrap();
        let rows: Vec<(u32, u32, Vec<u64>)> = text
            .lines()
            .take(2_000)
            .map(|l| {
                let (r, b) = crate::traces::mooncake::parse_row_with_blocks(l.as_bytes()).unwrap();
                (r.input_tokens, r.output_tokens, b)
            })
            .collect();
        let whole = |a: usize| (rows[a].0 / MOONCAKE_BLOCK_TOKENS) as usize;
        let (mut hit, mut all) = (0usize, 0usize);
        let mut generated: Vec<u64> = Vec::new();
        let mut named = HashSet::new();
        for (i, (input, _, blocks)) in rows.iter().enumerate() {
            let continued = (0..i)
                .filter(|&a| {
                    (2..=rows[a].2.len()).contains(&whole(a))
                        && blocks.contains(&rows[a].2[whole(a) - 1])
                })
                .max_by_key(|&a| (whole(a), a));
            if let Some(a) = continued {
                let conversation = rows[a].0 + rows[a].1;
                let end = ((conversation / MOONCAKE_BLOCK_TOKENS) as usize).min(blocks.len());
                if *input >= conversation && end > whole(a) && named.insert(a) {
                    generated.extend(&blocks[whole(a)..end]);
                }
            }
            let earlier =
                |h: &u64| rows[..i].iter().any(|(_, _, b)| b.contains(h)) || generated.contains(h);
            hit += blocks.iter().take_while(|h| earlier(h)).count();
            all += blocks.len();
        }
        assert!(!generated.is_empty());
        let mut acc = PrefixAccumulator::default();
        for (n, o, b) in &rows {
            acc.push(*n, *o, b);
        }
        let first = acc.summary().unwrap();
        assert!((first.block_hit_share - hit as f64 / all as f64).abs() < 1e-12);
        // The whole trace: 12,031 requests, about 38% of prompt tokens.
        assert_eq!(s.requests_with_hashes, 12_031);
        assert!((0.375..0.39).contains(&s.token_hit_share), "{s:?}");
    }
}
