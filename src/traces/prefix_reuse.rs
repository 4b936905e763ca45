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
//! once per configuration. An aggregate keeps a sampled request's running
//! maxima as its *steps* ([`PrefixReuse::steps`]): each distinct finite
//! maximum with the number of leading blocks it covers, which give the hit
//! at any size as the running maxima do ([`PrefixReuse::from_steps`]).

use super::block_chains::{BlockChains, NO_CHAIN};
use super::length_sample::SampledRequest;
use super::micros::arrival_us;
use super::Request;
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
    /// before any of its own blocks is used, and the blocks it generated
    /// for its next turn used right after its prompt's (the cache holds
    /// them from when it finishes, which in the order of arrivals comes
    /// before its next turn).
    pub(crate) fn of(chains: &BlockChains) -> Self {
        let total: usize = (0..chains.len() as u32)
            .map(|i| chains.get(i).len() + chains.generated(i).len())
            .sum();
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
            for hash in chain.iter().chain(chains.generated(i)) {
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

    /// The reuse of requests known by their steps (each request's
    /// `(distance, leading blocks)` pairs, both rising, as
    /// [`Self::steps`] gives them): the same hits at every size as the
    /// chains the steps were taken from.
    pub(crate) fn from_steps(block_tokens: u32, requests: &[Vec<(u32, u32)>]) -> Self {
        let mut prefix_max = Vec::new();
        let mut starts = Vec::with_capacity(requests.len() + 1);
        starts.push(0);
        for steps in requests {
            let mut covered = 0;
            for &(distance, blocks) in steps {
                let more = blocks.saturating_sub(covered) as usize;
                prefix_max.extend(std::iter::repeat_n(distance, more));
                covered = covered.max(blocks);
            }
            starts.push(prefix_max.len());
        }
        PrefixReuse {
            block_tokens,
            prefix_max,
            starts,
        }
    }

    /// Request `i`'s steps: each distinct finite running maximum `d` of its
    /// blocks' stack distances, rising, with the number of its leading
    /// blocks whose running maximum is at most `d` (a cache of more than
    /// `d` blocks finds them). Blocks never seen before have no step.
    pub(crate) fn steps(&self, i: u32) -> Vec<(u32, u32)> {
        let i = i as usize;
        let run = &self.prefix_max[self.starts[i]..self.starts[i + 1]];
        let mut steps: Vec<(u32, u32)> = Vec::new();
        for (k, &m) in run.iter().enumerate() {
            if m == u32::MAX {
                break;
            }
            match steps.last_mut() {
                Some(last) if last.0 == m => last.1 = k as u32 + 1,
                _ => steps.push((m, k as u32 + 1)),
            }
        }
        steps
    }

    /// Appends `other`'s requests after this one's (each keeps the hits of
    /// its own pass); returns the index of `other`'s first.
    pub(crate) fn append(&mut self, other: &PrefixReuse) -> u32 {
        debug_assert_eq!(self.block_tokens, other.block_tokens);
        let first = self.len() as u32;
        let base = self.prefix_max.len();
        self.prefix_max.extend_from_slice(&other.prefix_max);
        self.starts
            .extend(other.starts[1..].iter().map(|&s| s + base));
        first
    }

    /// Adds everything the hits depend on to `h`.
    pub(crate) fn hash_into(&self, h: &mut crate::base::disk_cache::Fnv) {
        h.u64(u64::from(self.block_tokens));
        h.u64(self.starts.len() as u64);
        for &s in &self.starts {
            h.u64(s as u64);
        }
        for &m in &self.prefix_max {
            h.u64(u64::from(m));
        }
    }

    /// Requests held.
    pub(crate) fn len(&self) -> usize {
        self.starts.len() - 1
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

/// The index in `requests` of each of `sample`'s requests (the first with
/// its arrival and lengths), `NO_CHAIN` when none has them.
pub(crate) fn rows_of(requests: &[Request], sample: &[SampledRequest]) -> Vec<u32> {
    let mut by_request: HashMap<(i64, u32, u32), u32> = HashMap::with_capacity(requests.len());
    for (i, r) in requests.iter().enumerate() {
        by_request
            .entry((arrival_us(r.arrival_s), r.input_tokens, r.output_tokens))
            .or_insert(i as u32);
    }
    sample
        .iter()
        .map(|s| {
            by_request
                .get(&(s.arrival_us, s.input_tokens, s.output_tokens))
                .copied()
                .unwrap_or(NO_CHAIN)
        })
        .collect()
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

/// Chains that reuse blocks in every way a cache meets: a repeated
/// prompt, a shared head, a block seen only further in, an empty prompt, a
/// prompt seen just before.
#[cfg(test)]
pub(crate) fn example_chains(block_tokens: u32) -> BlockChains {
    let mut chains = BlockChains::new(block_tokens);
    let b = block_tokens;
    // Prompt blocks, prompt tokens, output tokens.
    let requests: [(&[u64], u32, u32); 10] = [
        (&[1, 2, 3], 3 * b, 1),
        (&[1, 2, 7, 8], 4 * b, 1),
        (&[9, 3], 2 * b, 1),
        (&[1, 2, 3], 3 * b, 1),
        (&[], 0, 1),
        (&[4, 5, 6, 7, 8, 9], 6 * b, 1),
        (&[1, 2, 7, 8, 10], 5 * b, 1),
        (&[1, 2, 7, 8, 10], 5 * b, 1),
        // A turn whose output fills a block of its own: its next turn's
        // third block, 13, cached when it finishes.
        (&[11, 12], 2 * b, b + b / 2),
        (&[11, 12, 13, 14], 4 * b, 1),
    ];
    for (chain, _, _) in requests {
        chains.push(chain);
    }
    chains.link_turns(requests.iter().map(|&(_, i, o)| (i, o)));
    debug_assert_eq!(chains.generated(8), &[13]);
    chains
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_give_the_hits_the_chains_give_at_every_size() {
        let chains = example_chains(16);
        let reuse = PrefixReuse::of(&chains);
        let steps: Vec<Vec<(u32, u32)>> =
            (0..chains.len() as u32).map(|i| reuse.steps(i)).collect();
        // The sixth request sees 7, 8 and 9 again past 4, 5, 6 it has not.
        assert_eq!(steps[4], vec![]);
        assert_eq!(steps[5], vec![]);
        // The eighth: 1, 2, 7, 8, 10 used just before, by the one before it.
        assert_eq!(steps[7], vec![(4, 5)]);
        // The last: 11 and 12 its previous turn's prompt, 13 its output
        // (used after them).
        assert_eq!(steps[9], vec![(2, 3)]);
        for s in &steps {
            assert!(s.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        }
        let back = PrefixReuse::from_steps(16, &steps);
        assert_eq!(back.len(), reuse.len());
        for capacity in 0..40 {
            for i in 0..chains.len() as u32 {
                assert_eq!(
                    back.hit_tokens(i, capacity),
                    reuse.hit_tokens(i, capacity),
                    "request {i}, {capacity} blocks"
                );
            }
        }
    }
}
