//! A replica's KV cache as its scheduler accounts for it, in tokens (vLLM
//! style: a pool of token slots, no block rounding):
//!
//! * an admitted request claims its whole prefill target (prompt, plus the
//!   tokens it had generated when it was preempted) at once, and the check
//!   leaves room for its first output token;
//! * every decode step writes one token per decoding sequence;
//! * a request that finishes, or is preempted, frees what it held;
//! * under GUARANTEED_NO_EVICT (TensorRT-LLM, the spec's
//!   `reserve_output_kv`) a request is also reserved its whole length,
//!   prompt and output, and admitted only while the reservations fit.
//!
//! The replica ([`super::replica`]) decides whom to admit, grow, preempt or
//! release; this type holds the counts and does the arithmetic.

use super::prefix_cache::PrefixCache;
use crate::traces::block_chains::{BlockChains, NO_CHAIN, REUSED_CHAIN};
use crate::traces::prefix_reuse::PrefixReuse;
use std::sync::Arc;

/// What a fleet's replicas know of their requests' prompt prefixes, when
/// they cache them.
#[derive(Debug, Clone)]
pub(crate) enum PrefixSource {
    /// Every request's prompt blocks: each replica keeps a prefix cache;
    /// and, for the requests whose chain index has [`REUSED_CHAIN`] set
    /// (an aggregate's sampled requests), the tokens one cache of the
    /// replica's memory finds when the tier's requests run through it in
    /// order.
    Chains {
        chains: Arc<BlockChains>,
        reused: Option<Arc<PrefixReuse>>,
    },
    /// Every request's cached tokens, by its chain index
    /// ([`KvCache::with_known_hits`]).
    Known(Arc<[u32]>),
}

impl PrefixSource {
    /// The prefixes of a replay's requests: the traces' chains and the
    /// aggregates' reuse (`None` when it has neither).
    pub(crate) fn of_replay(
        chains: Option<&Arc<BlockChains>>,
        reused: Option<&Arc<PrefixReuse>>,
    ) -> Option<Self> {
        let chains = match (chains, reused) {
            (None, None) => return None,
            (Some(c), _) => Arc::clone(c),
            (None, Some(r)) => Arc::new(BlockChains::new(r.block_tokens())),
        };
        Some(PrefixSource::Chains {
            chains,
            reused: reused.cloned(),
        })
    }
}

/// Where a replica's requests find prompt tokens already computed.
#[derive(Debug, Clone)]
enum Prefixes {
    /// Nowhere: every prompt token is computed.
    Off,
    /// In a prefix cache over the requests' prompt blocks (`chains`, a
    /// request naming its chain by index).
    Cached {
        cache: PrefixCache,
        chains: Arc<BlockChains>,
        /// Requests known by their reuse instead of their blocks, and the
        /// replica's memory in that reuse's blocks.
        reused: Option<(Arc<PrefixReuse>, usize)>,
    },
    /// Known beforehand, by the request's chain index: the tokens one cache
    /// of the replica's memory found when the tier's requests ran in order
    /// (the capacity search's sampled requests, `traces::prefix_reuse`).
    Known(Arc<[u32]>),
}

/// The token counts of one replica's KV cache.
#[derive(Debug, Clone)]
pub(crate) struct KvCache {
    /// Tokens the cache holds (the spec's `kv_capacity_tokens`).
    capacity_tokens: u64,
    /// Reserve each request's prompt and whole output at admission.
    reserve_output: bool,
    /// Tokens held by the requests on the replica: the prefill targets of
    /// those admitted, plus the tokens decoded since.
    used_tokens: u64,
    /// Tokens reserved for whole requests (prompt + output); 0 unless
    /// `reserve_output`.
    reserved_tokens: u64,
    /// The blocks of prompts computed before, when the engine caches
    /// prefixes and the requests name their blocks.
    prefix: Prefixes,
}

impl KvCache {
    /// An empty cache of `capacity_tokens`; `reserve_output` reserves each
    /// admitted request's whole length (GUARANTEED_NO_EVICT).
    pub(crate) fn new(capacity_tokens: u64, reserve_output: bool) -> Self {
        KvCache {
            capacity_tokens,
            reserve_output,
            used_tokens: 0,
            reserved_tokens: 0,
            prefix: Prefixes::Off,
        }
    }

    /// The cache with a prefix cache over the prompt blocks `chains`, as
    /// many blocks as its tokens hold ([`PrefixCache`]).
    pub(crate) fn with_prefix_cache(
        mut self,
        chains: Arc<BlockChains>,
        reused: Option<Arc<PrefixReuse>>,
    ) -> Self {
        let blocks = |block_tokens: u32| {
            let b = self.capacity_tokens / u64::from(block_tokens.max(1));
            usize::try_from(b).unwrap_or(usize::MAX)
        };
        self.prefix = Prefixes::Cached {
            cache: PrefixCache::new(chains.block_tokens, blocks(chains.block_tokens)),
            chains,
            reused: reused.map(|r| {
                let b = blocks(r.block_tokens());
                (r, b)
            }),
        };
        self
    }

    /// The cache whose request of chain index `i` finds `hits[i]` prompt
    /// tokens computed (at most all but one of its prompt).
    pub(crate) fn with_known_hits(mut self, hits: Arc<[u32]>) -> Self {
        self.prefix = Prefixes::Known(hits);
        self
    }

    /// The cache with the prefixes `source` gives.
    pub(crate) fn with_prefixes(self, source: &PrefixSource) -> Self {
        match source {
            PrefixSource::Chains { chains, reused } => {
                self.with_prefix_cache(Arc::clone(chains), reused.clone())
            }
            PrefixSource::Known(hits) => self.with_known_hits(Arc::clone(hits)),
        }
    }

    /// Prompt tokens of a request of `input_tokens` whose blocks are chain
    /// `chain` (`NO_CHAIN`: not known) found computed: 0 without prefix
    /// caching, at most `input_tokens − 1` (the last prompt token is
    /// computed to produce the first output token).
    pub(crate) fn cached_prompt_tokens(&self, chain: u32, input_tokens: u32) -> u32 {
        if chain == NO_CHAIN {
            return 0;
        }
        match &self.prefix {
            Prefixes::Cached {
                reused: Some((reuse, blocks)),
                ..
            } if chain & REUSED_CHAIN != 0 => reuse
                .hit_tokens(chain & !REUSED_CHAIN, *blocks)
                .min(input_tokens.saturating_sub(1)),
            Prefixes::Cached { cache, chains, .. } if chain & REUSED_CHAIN == 0 => {
                cache.cached_tokens(chains.get(chain), input_tokens)
            }
            // Off, or a reused request without the reuse it names.
            Prefixes::Off | Prefixes::Cached { .. } => 0,
            Prefixes::Known(hits) => hits
                .get(chain as usize)
                .map_or(0, |&h| h.min(input_tokens.saturating_sub(1))),
        }
    }

    /// An admitted request's prompt blocks (chain `chain`) are cached.
    pub(crate) fn remember(&mut self, chain: u32) {
        if let (Prefixes::Cached { cache, chains, .. }, false) =
            (&mut self.prefix, chain & REUSED_CHAIN != 0)
        {
            cache.remember(chains.get(chain));
        }
    }

    /// A finished request's generated blocks (chain `chain`'s, those its
    /// conversation's next turn names) are cached.
    pub(crate) fn remember_generated(&mut self, chain: u32) {
        if let (Prefixes::Cached { cache, chains, .. }, false) =
            (&mut self.prefix, chain & REUSED_CHAIN != 0)
        {
            cache.remember(chains.generated(chain));
        }
    }

    /// The tokens a request of `input_tokens` and `output_tokens` is
    /// reserved at admission: its whole length when the cache reserves
    /// outputs, else none.
    pub(crate) fn reservation_tokens(&self, input_tokens: u32, output_tokens: u32) -> u64 {
        if self.reserve_output {
            u64::from(input_tokens) + u64::from(output_tokens)
        } else {
            0
        }
    }

    /// Whether, once `ahead_tokens` more are written (decode tokens that
    /// come first), the cache still holds a prompt of `prompt_tokens` plus
    /// its first output token.
    // `+ 1` is the first token; `<=` is the exact complement of the
    // replica's `> capacity` refusal.
    #[allow(clippy::int_plus_one)]
    pub(crate) fn holds_prompt(&self, prompt_tokens: u64, ahead_tokens: u64) -> bool {
        self.used_tokens + ahead_tokens + prompt_tokens + 1 <= self.capacity_tokens
    }

    /// Whether a request can be admitted: the cache holds its prompt of
    /// `prompt_tokens` plus one token after `ahead_tokens` held back for the
    /// decoding sequences, and the reservations, `reservation_tokens` more,
    /// still fit.
    pub(crate) fn admits(
        &self,
        prompt_tokens: u64,
        ahead_tokens: u64,
        reservation_tokens: u64,
    ) -> bool {
        self.holds_prompt(prompt_tokens, ahead_tokens)
            && self.reserved_tokens + reservation_tokens <= self.capacity_tokens
    }

    /// Admits a request: its prompt of `prompt_tokens` is claimed whole (it
    /// is written over the prefill steps that follow) and its
    /// `reservation_tokens` reserved.
    pub(crate) fn admit(&mut self, prompt_tokens: u64, reservation_tokens: u64) {
        self.used_tokens += prompt_tokens;
        self.reserved_tokens += reservation_tokens;
    }

    /// Decode steps write `decoded_tokens` (one per decoding sequence per
    /// step).
    pub(crate) fn grow(&mut self, decoded_tokens: u64) {
        self.used_tokens += decoded_tokens;
    }

    /// A request leaves (finished or preempted): the `held_tokens` it had
    /// claimed or written and its `reservation_tokens` are freed.
    pub(crate) fn release(&mut self, held_tokens: u64, reservation_tokens: u64) {
        self.used_tokens -= held_tokens;
        self.reserved_tokens -= reservation_tokens;
    }

    /// Decode steps a batch of `batch` sequences can run before the cache is
    /// full (each step writes `batch` tokens); the cache must not be over
    /// full.
    pub(crate) fn decode_steps_until_full(&self, batch: u64) -> u64 {
        (self.capacity_tokens - self.used_tokens) / batch
    }

    /// Whether writing `next_tokens` more (the next step's decode tokens)
    /// would overflow the cache: then a sequence must be preempted first.
    pub(crate) fn overflows_with(&self, next_tokens: u64) -> bool {
        self.used_tokens + next_tokens > self.capacity_tokens
    }

    /// Empties the cache (every request dropped at once).
    pub(crate) fn clear(&mut self) {
        self.used_tokens = 0;
        self.reserved_tokens = 0;
        if let Prefixes::Cached { cache, .. } = &mut self.prefix {
            cache.clear();
        }
    }

    /// Tokens held by the requests on the replica.
    #[cfg(test)]
    pub(crate) fn used_tokens(&self) -> u64 {
        self.used_tokens
    }

    /// Tokens reserved for whole requests.
    #[cfg(test)]
    pub(crate) fn reserved_tokens(&self) -> u64 {
        self.reserved_tokens
    }
}

#[cfg(test)]
mod tests {
    use super::KvCache;

    #[test]
    fn admit_grow_then_release_returns_to_empty() {
        let mut kv = KvCache::new(1_000, true);
        let reserve = kv.reservation_tokens(100, 50);
        assert_eq!(reserve, 150);
        kv.admit(100, reserve);
        kv.grow(7);
        assert_eq!((kv.used_tokens(), kv.reserved_tokens()), (107, 150));
        kv.release(107, reserve);
        assert_eq!((kv.used_tokens(), kv.reserved_tokens()), (0, 0));
    }

    #[test]
    fn a_prompt_fits_with_one_token_to_spare_and_no_more() {
        let mut kv = KvCache::new(1_000, false);
        kv.admit(400, 0);
        // 400 held + 599 + its first token = 1_000.
        assert!(kv.holds_prompt(599, 0));
        assert!(kv.admits(599, 0, 0));
        assert!(!kv.holds_prompt(600, 0));
        assert!(!kv.admits(600, 0, 0));
        // Tokens written first (decodes held back) count against it.
        assert!(kv.holds_prompt(589, 10));
        assert!(!kv.admits(590, 10, 0));
    }

    #[test]
    fn reservations_refuse_what_the_prompts_alone_would_admit() {
        let mut kv = KvCache::new(1_000, true);
        let first = kv.reservation_tokens(100, 800);
        assert!(kv.admits(100, 0, first));
        kv.admit(100, first);
        // The prompt fits, but its whole length is not left to reserve.
        let second = kv.reservation_tokens(100, 1);
        assert!(kv.holds_prompt(100, 0));
        assert!(!kv.admits(100, 0, second));
        assert!(kv.admits(50, 0, kv.reservation_tokens(50, 50)));
        // Freeing the first makes room again.
        kv.release(100, first);
        assert!(kv.admits(100, 0, second));
    }

    #[test]
    fn without_reserving_outputs_nothing_is_reserved() {
        let mut kv = KvCache::new(1_000, false);
        assert_eq!(kv.reservation_tokens(100, 5_000), 0);
        kv.admit(100, kv.reservation_tokens(100, 5_000));
        assert_eq!(kv.reserved_tokens(), 0);
        assert!(kv.admits(800, 0, 0));
    }

    #[test]
    fn a_decode_run_stops_where_the_cache_fills() {
        let mut kv = KvCache::new(1_000, false);
        kv.admit(300, 0);
        assert_eq!(kv.decode_steps_until_full(7), 100);
        kv.grow(7 * 100);
        assert!(!kv.overflows_with(0));
        assert!(kv.overflows_with(1));
        assert_eq!(kv.decode_steps_until_full(7), 0);
        kv.release(500, 0);
        assert!(!kv.overflows_with(7));
    }

    #[test]
    fn clearing_empties_the_cache_and_keeps_its_size() {
        let mut kv = KvCache::new(1_000, true);
        kv.admit(900, kv.reservation_tokens(900, 100));
        assert!(!kv.admits(1, 0, kv.reservation_tokens(1, 1)));
        kv.clear();
        assert_eq!((kv.used_tokens(), kv.reserved_tokens()), (0, 0));
        assert!(kv.admits(999, 0, kv.reservation_tokens(900, 100)));
        assert!(!kv.admits(1_000, 0, 0));
    }

    /// An aggregate's sampled request finds what its steps give at the
    /// replica's memory in blocks; a chain of blocks beside it still goes
    /// through the replica's own cache, which the reused request leaves as
    /// it is.
    #[test]
    fn a_reused_request_finds_its_hit_at_the_replicas_size() {
        use super::{PrefixSource, REUSED_CHAIN};
        use crate::traces::block_chains::{BlockChains, NO_CHAIN};
        use crate::traces::prefix_reuse::PrefixReuse;
        use std::sync::Arc;
        // Row 0: 2 blocks within a cache of more than 3 blocks, 5 within
        // one of more than 40.
        let reuse = PrefixReuse::from_steps(16, &[vec![(3, 2), (40, 5)], vec![]]);
        let source = PrefixSource::of_replay(None, Some(&Arc::new(reuse))).unwrap();
        let at = |tokens: u64| KvCache::new(tokens, false).with_prefixes(&source);
        // 4 blocks of 16 tokens: more than 3, not more than 40.
        assert_eq!(at(64).cached_prompt_tokens(REUSED_CHAIN, 1_000), 32);
        assert_eq!(at(48).cached_prompt_tokens(REUSED_CHAIN, 1_000), 0);
        assert_eq!(at(41 * 16).cached_prompt_tokens(REUSED_CHAIN, 1_000), 80);
        // At most all but the prompt's last token; row 1 finds nothing.
        assert_eq!(at(41 * 16).cached_prompt_tokens(REUSED_CHAIN, 50), 49);
        assert_eq!(at(41 * 16).cached_prompt_tokens(REUSED_CHAIN | 1, 1_000), 0);
        assert_eq!(at(41 * 16).cached_prompt_tokens(NO_CHAIN, 1_000), 0);
        // With chains beside it: a chain's blocks are remembered, a reused
        // request's are not.
        let mut chains = BlockChains::new(16);
        chains.push(&[7, 8]);
        let reuse = PrefixReuse::from_steps(16, &[vec![(0, 1)]]);
        let source =
            PrefixSource::of_replay(Some(&Arc::new(chains)), Some(&Arc::new(reuse))).unwrap();
        let mut kv = KvCache::new(1_600, false).with_prefixes(&source);
        assert_eq!(kv.cached_prompt_tokens(0, 100), 0);
        kv.remember(0);
        kv.remember(REUSED_CHAIN);
        assert_eq!(kv.cached_prompt_tokens(0, 100), 32);
        assert_eq!(kv.cached_prompt_tokens(REUSED_CHAIN, 100), 16);
    }
}
