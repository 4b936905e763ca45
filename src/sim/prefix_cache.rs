//! A replica's prefix cache: the KV blocks of prompts computed before, by
//! the hash that names each block and every block before it (Mooncake's
//! `hash_ids`, [`crate::traces::block_chains`]).
//!
//! Modelled as vLLM's automatic prefix caching keeps it, at the trace's
//! block granularity (512 tokens for Mooncake; vLLM hashes 16-token blocks,
//! but the trace names only 512-token ones, so a hit is a whole number of
//! them: a prefix shared for part of a block is not counted, which leaves
//! the hit rate on the low side):
//! * a request's hit is the longest run of its leading blocks found in the
//!   cache, and the engine computes every prompt token after them, at
//!   least the last one (vLLM recomputes the last token of a fully cached
//!   prompt to produce its logits);
//! * once admitted, its prompt's blocks are in the cache, most recently
//!   used;
//! * the cache holds as many blocks as the KV memory (the replica's KV
//!   tokens / block tokens), the least recently used evicted first. Blocks
//!   a running request holds are not pinned: a running request admitted
//!   long ago may lose its blocks from the index while newer free ones
//!   stay, which again can only lower the hit rate;
//! * once a request finishes, the blocks its output filled are cached
//!   where its conversation's next turn names them
//!   ([`crate::traces::turns`]: the traces hash prompts only).
//!
//! The blocks of a hit are counted in the KV cache's token accounting
//! ([`super::kv_cache`]) as the request's own, as if not shared with
//! another running request: memory on the safe side.

use std::collections::{BTreeMap, HashMap};

/// The block hashes a replica has cached, least recently used first out.
#[derive(Debug, Clone)]
pub(crate) struct PrefixCache {
    /// Tokens per block.
    block_tokens: u32,
    /// Most blocks held.
    capacity_blocks: usize,
    /// Hash → when it was last used.
    used_at: HashMap<u64, u64>,
    /// When → hash, oldest first.
    by_age: BTreeMap<u64, u64>,
    clock: u64,
}

impl PrefixCache {
    /// An empty cache of `capacity_blocks` blocks of `block_tokens`.
    pub(crate) fn new(block_tokens: u32, capacity_blocks: usize) -> Self {
        PrefixCache {
            block_tokens,
            capacity_blocks,
            used_at: HashMap::new(),
            by_age: BTreeMap::new(),
            clock: 0,
        }
    }

    /// The prompt tokens of a request of `input_tokens` whose blocks hash to
    /// `chain` that the cache holds: its leading cached blocks' tokens, at
    /// most `input_tokens − 1`.
    pub(crate) fn cached_tokens(&self, chain: &[u64], input_tokens: u32) -> u32 {
        let blocks = chain
            .iter()
            .take_while(|h| self.used_at.contains_key(h))
            .count() as u64;
        (blocks * u64::from(self.block_tokens)).min(u64::from(input_tokens.saturating_sub(1)))
            as u32
    }

    /// The blocks of `chain` are used now: cached, most recent last, the
    /// least recently used evicted beyond the capacity.
    pub(crate) fn remember(&mut self, chain: &[u64]) {
        for &hash in chain {
            self.clock += 1;
            if let Some(before) = self.used_at.insert(hash, self.clock) {
                self.by_age.remove(&before);
            }
            self.by_age.insert(self.clock, hash);
        }
        while self.used_at.len() > self.capacity_blocks {
            let Some((_, oldest)) = self.by_age.pop_first() else {
                break;
            };
            self.used_at.remove(&oldest);
        }
    }

    /// Forgets every block (the replica lost its memory).
    pub(crate) fn clear(&mut self) {
        self.used_at.clear();
        self.by_age.clear();
    }

    /// Blocks held.
    #[cfg(test)]
    pub(crate) fn blocks(&self) -> usize {
        self.used_at.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traces::block_chains::BlockChains;
    use crate::traces::prefix_reuse::PrefixReuse;

    #[test]
    fn a_hit_is_the_leading_run_of_cached_blocks_and_leaves_the_last_token() {
        let mut c = PrefixCache::new(512, 100);
        assert_eq!(c.cached_tokens(&[1, 2, 3], 1_500), 0);
        c.remember(&[1, 2, 3]);
        assert_eq!(c.cached_tokens(&[1, 2, 9], 2_000), 1_024);
        assert_eq!(c.cached_tokens(&[9, 2, 3], 2_000), 0);
        // The whole prompt cached: all but its last token.
        assert_eq!(c.cached_tokens(&[1, 2, 3], 1_500), 1_499);
        assert_eq!(c.cached_tokens(&[1, 2], 1_024), 1_023);
    }

    #[test]
    fn the_least_recently_used_blocks_go_first() {
        let mut c = PrefixCache::new(16, 4);
        c.remember(&[1, 2]);
        c.remember(&[3, 4]);
        // Using 1 and 2 again makes 3 and 4 the oldest.
        c.remember(&[1, 2]);
        c.remember(&[5, 6]);
        assert_eq!(c.blocks(), 4);
        assert_eq!(c.cached_tokens(&[1, 2], 100), 32);
        assert_eq!(c.cached_tokens(&[3], 100), 0);
        assert_eq!(c.cached_tokens(&[5, 6], 100), 32);
        c.clear();
        assert_eq!(c.cached_tokens(&[1], 100), 0);
    }

    #[test]
    fn an_unbounded_cache_finds_what_the_trace_share_counts() {
        // The share of `traces::prefix` with a cache larger than the trace:
        // the same hit tokens request by request, a turn's generated blocks
        // included (request 3 continues request 0).
        let requests: [(u32, u32, &[u64]); 5] = [
            (1_100, 500, &[1, 2, 3]),
            (2_000, 10, &[1, 7, 8, 9]),
            (1_000, 10, &[9, 3]),
            (1_700, 40, &[1, 2, 5, 6]),
            (1_800, 10, &[1, 2, 5, 6]),
        ];
        let mut chains = BlockChains::new(512);
        for (_, _, chain) in requests {
            chains.push(chain);
        }
        chains.link_turns(requests.iter().map(|&(i, o, _)| (i, o)));
        assert_eq!(chains.generated(0), &[5]);
        let mut cache = PrefixCache::new(512, usize::MAX);
        let mut share = crate::traces::prefix::PrefixAccumulator::default();
        for (i, &(input, output, chain)) in requests.iter().enumerate() {
            let hit = cache.cached_tokens(chain, input);
            cache.remember(chain);
            cache.remember(chains.generated(i as u32));
            let counted = share.push(input, output, chain);
            assert_eq!(hit, counted.min(input - 1));
        }
        assert_eq!(cache.cached_tokens(&[1, 2, 5, 20], 1_700), 1_536);
    }

    /// The shipped conversation trace through an unbounded cache, each
    /// turn's generated blocks cached after its prompt's: request by
    /// request, what the trace's share counts (which caches them only when
    /// the next turn comes).
    #[test]
    fn on_the_conversation_trace_the_unbounded_cache_finds_the_share() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data/mooncake/conversation_trace.jsonl");
        let chains = BlockChains::read_mooncake(&path, "").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut cache = PrefixCache::new(512, usize::MAX);
        let mut share = crate::traces::prefix::PrefixAccumulator::default();
        let mut generated = 0;
        for (i, line) in text.lines().enumerate() {
            let (r, blocks) =
                crate::traces::mooncake::parse_row_with_blocks(line.as_bytes()).unwrap();
            let i = i as u32;
            assert_eq!(chains.get(i), blocks.as_slice());
            let hit = cache.cached_tokens(&blocks, r.input_tokens);
            cache.remember(&blocks);
            cache.remember(chains.generated(i));
            generated += chains.generated(i).len();
            let counted = share.push(r.input_tokens, r.output_tokens, &blocks);
            assert_eq!(hit, counted.min(r.input_tokens - 1), "request {i}");
        }
        // The module documentation of `traces::turns`.
        assert_eq!(generated, 2_458);
    }

    /// The hits of a cache of `capacity` blocks, simulated request by request.
    fn simulated(chains: &BlockChains, capacity: usize) -> Vec<u32> {
        let mut cache = PrefixCache::new(chains.block_tokens, capacity);
        (0..chains.len() as u32)
            .map(|i| {
                let hit = cache.cached_tokens(chains.get(i), u32::MAX);
                cache.remember(chains.get(i));
                cache.remember(chains.generated(i));
                hit
            })
            .collect()
    }

    #[test]
    fn one_pass_finds_what_a_cache_of_every_size_finds() {
        let chains = crate::traces::prefix_reuse::example_chains(512);
        let reuse = PrefixReuse::of(&chains);
        for capacity in [0, 1, 2, 3, 4, 5, 6, 8, 11, 100] {
            let one_pass: Vec<u32> = (0..chains.len() as u32)
                .map(|i| reuse.hit_tokens(i, capacity))
                .collect();
            assert_eq!(one_pass, simulated(&chains, capacity), "{capacity} blocks");
        }
    }

    /// The shipped conversation trace, at sizes from a few requests' worth
    /// to more than it holds: the same hits, request by request.
    #[test]
    fn on_the_conversation_trace_every_size_agrees_with_the_cache() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data/mooncake/conversation_trace.jsonl");
        let chains = BlockChains::read_mooncake(&path, "").unwrap();
        let reuse = PrefixReuse::of(&chains);
        let mut before = u64::MAX;
        for capacity in [16, 300, 2_000, 20_000, 1_000_000] {
            let one_pass: Vec<u32> = (0..chains.len() as u32)
                .map(|i| reuse.hit_tokens(i, capacity))
                .collect();
            assert_eq!(one_pass, simulated(&chains, capacity), "{capacity} blocks");
            // A smaller cache never finds more.
            let sum: u64 = one_pass.iter().map(|&h| u64::from(h)).sum();
            assert!(before == u64::MAX || sum >= before);
            before = sum;
        }
    }
}
