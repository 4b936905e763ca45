//! What a prefix cache of any size finds, from one pass over a trace: the
//! LRU stack distance of every prompt block (Mattson et al., 1970).
//!
//! A [`super::prefix_cache::PrefixCache`] of `C` blocks fed requests in
//! order holds, when request `r` is looked up, the `C` distinct blocks used
//! most recently before it. So block `b` of `r` is cached iff fewer than
//! `C` distinct blocks were used after `b`'s last use and before `r`: its
//! *stack distance* `d` (infinite on first use). A request's hit is the
//! leading run of its blocks that are cached, so with `m_k` the largest
//! distance among its first `k + 1` blocks (non-decreasing in `k`) its hit
//! in a cache of `C` blocks is the number of `k` with `m_k < C`: one binary
//! search for any `C`, after one pass that counts the distances with a
//! Fenwick tree over the times of the blocks' last uses.
//!
//! The capacity search asks for each configuration's KV memory in turn
//! ([`crate::capacity`]); a cache simulated per size would walk the trace
//! once per configuration.

use crate::traces::block_chains::BlockChains;
use std::collections::HashMap;

/// Every request's running maximum of its blocks' stack distances.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PrefixReuse {
    /// Tokens per block.
    block_tokens: u32,
    /// Request `i`'s are `prefix_max[starts[i]..starts[i + 1]]`
    /// (`u32::MAX`: a block not seen before).
    prefix_max: Vec<u32>,
    starts: Vec<usize>,
}

impl PrefixReuse {
    /// The distances of `chains` fed in order, each request looked up
    /// before any of its own blocks is used.
    pub(crate) fn of(chains: &BlockChains) -> Self {
        let total: usize = (0..chains.len() as u32).map(|i| chains.get(i).len()).sum();
        let mut used = Fenwick::new(total);
        let mut last: HashMap<u64, usize> = HashMap::new();
        let mut prefix_max = Vec::with_capacity(total);
        let mut starts = Vec::with_capacity(chains.len() + 1);
        starts.push(0);
        let mut clock = 0;
        for i in 0..chains.len() as u32 {
            let chain = chains.get(i);
            let mut running = 0u32;
            for hash in chain {
                let d = match last.get(hash) {
                    // Distinct blocks whose last use came after this one's.
                    Some(&t) => u32::try_from(used.total - used.up_to(t)).unwrap_or(u32::MAX),
                    None => u32::MAX,
                };
                running = running.max(d);
                prefix_max.push(running);
            }
            for hash in chain {
                if let Some(t) = last.insert(*hash, clock) {
                    used.add(t, -1);
                }
                used.add(clock, 1);
                clock += 1;
            }
            starts.push(prefix_max.len());
        }
        PrefixReuse {
            block_tokens: chains.block_tokens,
            prefix_max,
            starts,
        }
    }

    /// Tokens per block.
    pub(crate) fn block_tokens(&self) -> u32 {
        self.block_tokens
    }

    /// The prompt tokens request `i` finds in a cache of `capacity_blocks`
    /// blocks: its leading cached blocks' tokens, not capped by its prompt.
    pub(crate) fn hit_tokens(&self, i: u32, capacity_blocks: usize) -> u32 {
        let i = i as usize;
        let Some(run) = self
            .starts
            .get(i + 1)
            .map(|&end| &self.prefix_max[self.starts[i]..end])
        else {
            return 0;
        };
        let blocks = run.partition_point(|&m| (m as usize) < capacity_blocks);
        (blocks as u64 * u64::from(self.block_tokens)).min(u64::from(u32::MAX)) as u32
    }
}

/// Counts of last uses by time, with prefix sums.
struct Fenwick {
    tree: Vec<i64>,
    /// Last uses held.
    total: i64,
}

impl Fenwick {
    fn new(n: usize) -> Self {
        Fenwick {
            tree: vec![0; n + 1],
            total: 0,
        }
    }

    fn add(&mut self, at: usize, by: i64) {
        self.total += by;
        let mut i = at + 1;
        while i < self.tree.len() {
            self.tree[i] += by;
            i += i & i.wrapping_neg();
        }
    }

    /// Last uses at times 0..=at.
    fn up_to(&self, at: usize) -> i64 {
        let mut i = at + 1;
        let mut sum = 0;
        while i > 0 {
            sum += self.tree[i];
            i -= i & i.wrapping_neg();
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::prefix_cache::PrefixCache;

    /// The hits of a cache of `capacity` blocks, simulated request by request.
    fn simulated(chains: &BlockChains, capacity: usize) -> Vec<u32> {
        let mut cache = PrefixCache::new(chains.block_tokens, capacity);
        (0..chains.len() as u32)
            .map(|i| {
                let hit = cache.cached_tokens(chains.get(i), u32::MAX);
                cache.remember(chains.get(i));
                hit
            })
            .collect()
    }

    #[test]
    fn one_pass_finds_what_a_cache_of_every_size_finds() {
        let mut chains = BlockChains::new(512);
        for chain in [
            &[1, 2, 3][..],
            &[1, 2, 7, 8],
            &[9, 3],
            &[1, 2, 3],
            &[],
            &[4, 5, 6, 7, 8, 9],
            &[1, 2, 7, 8, 10],
        ] {
            chains.push(chain);
        }
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
