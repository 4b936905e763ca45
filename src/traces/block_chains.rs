//! Each request's prompt blocks, by hash (Mooncake's `hash_ids`), in the
//! trace's order: what a prefix cache matches ([`crate::sim`]'s
//! `prefix_cache`); and the blocks a request generated that its
//! conversation's next turn names ([`super::turns`]).

use super::mooncake::{parse_row, parse_row_with_blocks, MOONCAKE_BLOCK_TOKENS};
use super::turns::TurnLinker;
use super::Request;
use crate::base::located::Problem;
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::Path;

/// No chain: a request whose prompt's blocks are not known.
pub(crate) const NO_CHAIN: u32 = u32::MAX;

/// The bit of a request's chain index that says the index names a row of
/// a [`super::prefix_reuse::PrefixReuse`] (an aggregate's sampled request,
/// whose hits are known for any cache size) rather than a chain of blocks.
pub(crate) const REUSED_CHAIN: u32 = 1 << 31;

/// The block hashes of every request, one flat list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BlockChains {
    /// Tokens per block.
    pub block_tokens: u32,
    hashes: Vec<u64>,
    /// Chain `i` is `hashes[starts[i]..starts[i + 1]]`.
    starts: Vec<usize>,
    /// Request → the blocks its output fills that a later request's prompt
    /// names (its conversation's next turn), cached when it finishes.
    generated: BTreeMap<u32, Vec<u64>>,
}

impl BlockChains {
    /// No chain yet, of `block_tokens`-token blocks.
    pub fn new(block_tokens: u32) -> Self {
        BlockChains {
            block_tokens,
            hashes: Vec::new(),
            starts: vec![0],
            generated: BTreeMap::new(),
        }
    }

    /// Adds the next request's chain; returns its index.
    pub fn push(&mut self, chain: &[u64]) -> u32 {
        self.hashes.extend_from_slice(chain);
        self.starts.push(self.hashes.len());
        (self.starts.len() - 2) as u32
    }

    /// Adds every chain of `other` (of the same block size) after these;
    /// returns the index the first of them takes.
    pub fn append(&mut self, other: &BlockChains) -> u32 {
        let first = self.len() as u32;
        let base = self.hashes.len();
        self.hashes.extend_from_slice(&other.hashes);
        self.starts
            .extend(other.starts[1..].iter().map(|&s| base + s));
        self.generated.extend(
            other
                .generated
                .iter()
                .map(|(&i, blocks)| (first + i, blocks.clone())),
        );
        first
    }

    /// Finds each request's next turn ([`super::turns`]): `lengths` are the
    /// requests' prompt and output tokens, one per chain in order; a request
    /// that a later one continues keeps the blocks its output fills.
    pub fn link_turns(&mut self, lengths: impl IntoIterator<Item = (u32, u32)>) {
        let mut linker = TurnLinker::default();
        let mut seen: HashSet<u64> = HashSet::new();
        for (i, lengths) in lengths.into_iter().enumerate().take(self.len()) {
            let i = i as u32;
            let chain = &self.hashes[self.starts[i as usize]..self.starts[i as usize + 1]];
            let turn = linker.push(i, lengths, chain, self.block_tokens, |h| seen.contains(&h));
            seen.extend(chain.iter().copied());
            if let Some((earlier, blocks)) = turn {
                self.generated.insert(earlier, blocks);
            }
        }
    }

    /// The blocks request `i` generated that its next turn names (empty
    /// when none does): cached once it finishes.
    pub fn generated(&self, i: u32) -> &[u64] {
        self.generated.get(&i).map_or(&[], Vec::as_slice)
    }

    /// Adds every block, prompt and generated, to `h`.
    pub(crate) fn hash_into(&self, h: &mut crate::base::disk_cache::Fnv) {
        h.u64(u64::from(self.block_tokens));
        for i in 0..self.len() as u32 {
            for blocks in [self.get(i), self.generated(i)] {
                h.u64(blocks.len() as u64);
                for &b in blocks {
                    h.u64(b);
                }
            }
        }
    }

    /// Chain `i`.
    pub fn get(&self, i: u32) -> &[u64] {
        let i = i as usize;
        &self.hashes[self.starts[i]..self.starts[i + 1]]
    }

    /// Requests held.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Whether no request carries a block.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// The chains of the Mooncake trace at `path`, one per request row, in
    /// file order (the order its requests are read in), with the blocks
    /// each turn generated for the next; a row whose hashes
    /// contradict it fails with its line (`fix` says how to go on).
    pub fn read_mooncake(path: &Path, fix: &str) -> Result<Self, Problem> {
        let mut chains = BlockChains::new(MOONCAKE_BLOCK_TOKENS);
        let mut lengths = Vec::new();
        for_each_mooncake_chain(path, None, fix, |request, blocks| {
            chains.push(blocks);
            lengths.push((request.input_tokens, request.output_tokens));
        })?;
        chains.link_turns(lengths);
        Ok(chains)
    }
}

/// The chain of [`shared_prefix`] a request after the source's first has.
pub(crate) const SHARED_PREFIX_LATER: u32 = 1;

/// The prefix model of a source whose every prompt begins with the same
/// system prompt of `tokens` tokens: its whole 512-token blocks, hashed
/// apart from any other source's by `source` (its index among the
/// scenario's demand sources), twice: chain 0 for the first request, which
/// finds nothing, chain 1 for every later one (the same blocks, so a cache
/// that holds them gives each later request their tokens).
pub(crate) fn shared_prefix(source: usize, tokens: u32) -> BlockChains {
    debug_assert_eq!(SHARED_PREFIX_LATER, 1);
    let blocks: Vec<u64> = (0..u64::from(tokens / MOONCAKE_BLOCK_TOKENS))
        .map(|b| (source as u64 + 1) << 40 | b)
        .collect();
    let mut chains = BlockChains::new(MOONCAKE_BLOCK_TOKENS);
    chains.push(&blocks);
    chains.push(&blocks);
    chains
}

/// The chains of `kept`, the requests a read of the Mooncake trace at
/// `path` kept (in file order, a subsequence of its request rows: rows
/// left out, such as those over the model's context, are passed over), one
/// per kept request in their order, with the blocks each kept turn
/// generated for the next kept one.
pub(crate) fn kept_chains(
    path: &Path,
    kept: &[Request],
    fix: &str,
) -> Result<BlockChains, Problem> {
    let mut chains = BlockChains::new(MOONCAKE_BLOCK_TOKENS);
    let mut next = kept.iter().peekable();
    for_each_mooncake_chain(path, None, fix, |row, blocks| {
        if next.peek().is_some_and(|k| *k == row) {
            next.next();
            chains.push(blocks);
        }
    })?;
    if chains.len() != kept.len() {
        return Err(Problem::new(
            path,
            "",
            format!(
                "the trace changed while it was read: {} of its {} requests found again",
                chains.len(),
                kept.len()
            ),
        ));
    }
    chains.link_turns(kept.iter().map(|r| (r.input_tokens, r.output_tokens)));
    Ok(chains)
}

/// Calls `f` with the request and the block hashes of every request
/// row of the Mooncake trace at `path`, in file order. Rows that are not
/// requests are passed over (the trace's own read refuses or counts them).
/// A row whose hashes are not a list of integers or outnumber its prompt's
/// blocks fails with its line and column, its message ending in `fix`; with
/// `skipped` it is read without hashes instead and counted there.
pub(crate) fn for_each_mooncake_chain(
    path: &Path,
    mut skipped: Option<&mut u64>,
    fix: &str,
    mut f: impl FnMut(&Request, &[u64]),
) -> Result<(), Problem> {
    let file = std::fs::File::open(path)
        .map_err(|e| Problem::new(path, "", format!("cannot open the trace: {e}")))?;
    for (line, row) in BufReader::with_capacity(1 << 20, file)
        .split(b'\n')
        .enumerate()
    {
        let row = row.map_err(|e| Problem::new(path, "", format!("cannot read the trace: {e}")))?;
        let row = row.strip_suffix(b"\r").unwrap_or(&row);
        let Ok(request) = parse_row(row) else {
            continue;
        };
        match parse_row_with_blocks(row) {
            Ok((_, blocks)) => f(&request, &blocks),
            Err(e) => match skipped.as_deref_mut() {
                Some(count) => {
                    *count += 1;
                    f(&request, &[]);
                }
                None => {
                    return Err(Problem::at_line(
                        path,
                        Some(line as u64 + 1),
                        e.column,
                        format!("{} ({fix})", e.message),
                    ))
                }
            },
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_come_back_as_pushed() {
        let mut c = BlockChains::new(512);
        assert_eq!(c.push(&[1, 2]), 0);
        assert_eq!(c.push(&[]), 1);
        assert_eq!(c.push(&[3]), 2);
        assert_eq!(
            (c.get(0), c.get(1), c.get(2)),
            (&[1, 2][..], &[][..], &[3][..])
        );
        assert_eq!(c.len(), 3);
        let read = BlockChains::read_mooncake(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/traces/tiny.jsonl"),
            "",
        )
        .unwrap();
        assert_eq!(read.len(), 3);
        assert_eq!(read.get(0), &[0, 1]);
        assert_eq!(read.get(2), &[] as &[u64]);
    }

    #[test]
    fn the_kept_requests_chains_are_found_in_file_order() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/traces/tiny.jsonl");
        let text = std::fs::read_to_string(&path).unwrap();
        let rows: Vec<Request> = text
            .lines()
            .map(|l| parse_row(l.as_bytes()).unwrap())
            .collect();
        // The middle row left out (as if over the context).
        let kept = [rows[0], rows[2]];
        let chains = kept_chains(&path, &kept, "").unwrap();
        assert_eq!(chains.len(), 2);
        assert_eq!(chains.get(0), &[0, 1]);
        assert_eq!(chains.get(1), &[] as &[u64]);
        // A request the file does not hold is not made up.
        let mut stranger = rows[1];
        stranger.output_tokens += 1;
        let e = kept_chains(&path, &[rows[0], stranger], "").unwrap_err();
        assert!(e.message.contains("1 of its 2 requests"), "{}", e.message);
        // Appended chains keep their own, numbered after the first list's.
        let mut all = BlockChains::new(512);
        all.push(&[7]);
        assert_eq!(all.append(&chains), 1);
        assert_eq!((all.get(1), all.get(2)), (&[0, 1][..], &[][..]));
    }
}
