//! A prefix model for traces that do not name their prompts' blocks:
//! sessions of a few turns, each turn's prompt beginning with the previous
//! turn's (the conversation so far). Which requests are turns of one
//! session a hash-less trace does not say; they are assigned by time: in
//! arrival order, a request continues the session that has waited longest
//! since its last turn, once that wait is at least the gap between turns,
//! and opens a new session otherwise; a session closes after its last turn.
//!
//! The Mooncake conversation trace, whose hashes do say it, backs the shape:
//! of its 12,031 requests, 4,658 continue an earlier one (they share two or
//! more leading blocks with it), the median continuation arrives 123 s after
//! the turn it continues (quartiles 66 s and 264 s: the default gap, 120 s),
//! and its prompt is the previous prompt and output plus a median of 23
//! tokens. A turn's chain is its previous turn's chain (the blocks of that
//! prompt, which a cache holds once the turn ran) followed by blocks of its
//! own, one per 512 tokens of its prompt beyond them.

use super::block_chains::BlockChains;
use super::mooncake::MOONCAKE_BLOCK_TOKENS;
use super::Request;
use std::collections::VecDeque;

/// The gap between a session's turns when the scenario states none: the
/// median of the Mooncake conversation trace's (module documentation).
pub const DEFAULT_SESSION_GAP_S: f64 = 120.0;

/// A session waiting for its next turn.
struct Open {
    /// When its next turn may come: its last turn's arrival plus the gap.
    ready_s: f64,
    /// Turns so far.
    turns: u32,
    /// Its last turn's chain.
    chain: Vec<u64>,
}

/// The chains of `requests` (in file order, which is the order they reach
/// a cache) as sessions of at most `turns` turns `gap_s` apart, hashed
/// apart from any other source's by `source` (its index among the
/// scenario's demand sources).
pub(crate) fn session_chains(
    source: usize,
    requests: &[Request],
    turns: u32,
    gap_s: f64,
) -> BlockChains {
    let tag = (source as u64 + 1) << 40 | 1 << 39;
    let mut next_hash = 0u64;
    let mut fresh = || {
        next_hash += 1;
        tag | next_hash
    };
    let mut open: VecDeque<Open> = VecDeque::new();
    let mut chains = BlockChains::new(MOONCAKE_BLOCK_TOKENS);
    for r in requests {
        let blocks = r.input_tokens.div_ceil(MOONCAKE_BLOCK_TOKENS) as usize;
        // Sessions wait in the order their last turns came, so the front
        // has waited longest.
        let continued = match open.front() {
            Some(o) if o.ready_s <= r.arrival_s => open.pop_front(),
            _ => None,
        };
        let (mut chain, done) = match continued {
            Some(o) => (o.chain, o.turns),
            None => (Vec::new(), 0),
        };
        chain.truncate(blocks);
        while chain.len() < blocks {
            chain.push(fresh());
        }
        chains.push(&chain);
        if done + 1 < turns {
            open.push_back(Open {
                ready_s: r.arrival_s + gap_s,
                turns: done + 1,
                chain,
            });
        }
    }
    chains
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(arrival_s: f64, input_tokens: u32) -> Request {
        Request {
            arrival_s,
            input_tokens,
            output_tokens: 10,
        }
    }

    #[test]
    fn a_turn_begins_with_the_previous_turns_blocks_after_the_gap() {
        let requests = [
            at(0.0, 1_000),   // session A, turn 1: 2 blocks
            at(10.0, 600),    // too soon: session B, turn 1
            at(130.0, 2_000), // A's turn 2: A's 2 blocks, then 2 of its own
            at(131.0, 300),   // B's turn 2, shorter: B's first block only
            at(300.0, 3_000), // A's turn 3: A's 4, then 2 of its own
            at(301.0, 700),   // B's turn 3: B's first block, then 1 of its own
            at(500.0, 700),   // A closed after 3 turns: a new session
        ];
        let chains = session_chains(0, &requests, 3, 120.0);
        let c: Vec<&[u64]> = (0..requests.len() as u32).map(|i| chains.get(i)).collect();
        assert_eq!(c[0].len(), 2);
        assert_eq!(c[1].len(), 2);
        assert!(c[1].iter().all(|h| !c[0].contains(h)));
        assert_eq!(&c[2][..2], c[0]);
        assert_eq!(c[2].len(), 4);
        assert_eq!(c[3], &c[1][..1]);
        assert_eq!(&c[4][..4], c[2]);
        assert_eq!(c[4].len(), 6);
        assert_eq!(&c[5][..1], c[3]);
        assert_eq!(c[5].len(), 2);
        assert!(c[6].iter().all(|h| !c[4].contains(h) && !c[5].contains(h)));
        // Another source's hashes are its own.
        let other = session_chains(1, &requests, 3, 120.0);
        assert!(other.get(0).iter().all(|h| !c[0].contains(h)));
    }

    #[test]
    fn one_turn_sessions_share_nothing() {
        let requests: Vec<Request> = (0..50).map(|i| at(f64::from(i) * 200.0, 2_000)).collect();
        let chains = session_chains(0, &requests, 1, 120.0);
        let mut share = crate::traces::prefix::PrefixAccumulator::default();
        for i in 0..requests.len() as u32 {
            assert_eq!(share.push(2_000, 100, chains.get(i)), 0);
        }
    }
}
