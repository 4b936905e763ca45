//! A conversation's next turn, found from the prompts' block hashes: the
//! blocks of tokens a request generated, which its next turn's prompt
//! names and an engine that caches prefixes still holds.
//!
//! vLLM caches every full block of a sequence, generated tokens included,
//! so once a turn finishes, the blocks its prompt and output fill are
//! there for the next turn, whose prompt is the conversation so far. A
//! trace hashes prompts only: a turn's output first appears, hashed, in
//! the prompt of the turn after it. A request `x` continues an earlier `a`
//! when
//! * `x`'s blocks include `a`'s last whole prompt block (a hash names its
//!   block and every block before it, so `x` begins with all of `a`'s
//!   whole blocks), and `a` has at least [`MIN_TURN_BLOCKS`] of them;
//! * of the requests whose last whole block `x` includes, `a` has the
//!   most whole blocks (the latest of those with as many, whatever its
//!   length);
//! * `x`'s prompt is at least `a`'s prompt and output.
//!
//! Then `a` generated `x`'s blocks from `a`'s first part-filled one up to
//! the last block `a`'s prompt and output fill, those no earlier prompt
//! named: those hashes are cached when `a` finishes. The first request to
//! continue `a` names them (a later one names the same blocks). A block an
//! earlier prompt named is that prompt's (cached from when it ran): the
//! traces' lengths are not always exact, and a request between the two
//! turns may already hold part of the conversation.
//!
//! On the Mooncake conversation trace, with two whole blocks (1,024
//! tokens) required, 3,548 requests continue an earlier one: the new
//! message is a median 37 tokens (10th-90th percentile 8-4,848) and comes
//! a median 132 s after the turn it continues (45-498 s). With one block
//! the rule also pairs requests that share only the first (a common
//! system prompt): the median "new message" is then 3,702 tokens, 3 s
//! later, which is not a conversation. 2,142 turns' outputs fill a block
//! their next turn names (2,458 blocks); an unbounded cache then finds
//! 38.2% of the prompt tokens instead of 37.4% (`benches/next_turns.py`
//! counts the same without the planner).

use std::collections::{HashMap, HashSet};

/// Whole prompt blocks a turn needs before a later prompt that begins with
/// them counts as its continuation (module documentation).
pub(crate) const MIN_TURN_BLOCKS: u32 = 2;

/// A request's lengths, as the linker needs them.
#[derive(Debug, Clone, Copy)]
struct Turn {
    index: u32,
    input_tokens: u32,
    output_tokens: u32,
}

/// Finds, request by request in the order they reach the cache, the
/// earlier request each one continues.
#[derive(Debug, Default)]
pub(crate) struct TurnLinker {
    /// The hash of a request's last whole prompt block → the latest request
    /// whose last whole block it is.
    by_last_block: HashMap<u64, Turn>,
    /// Requests whose generated blocks are named already.
    named: HashSet<u32>,
}

impl TurnLinker {
    /// Takes request `index` (prompt `input_tokens`, output `output_tokens`,
    /// prompt blocks `chain` of `block_tokens` tokens, `seen` whether an
    /// earlier prompt named a block); when it continues an earlier request
    /// whose generated blocks no request named yet, returns that request's
    /// index and its generated blocks (some of `chain`'s).
    pub(crate) fn push(
        &mut self,
        index: u32,
        (input_tokens, output_tokens): (u32, u32),
        chain: &[u64],
        block_tokens: u32,
        seen: impl Fn(u64) -> bool,
    ) -> Option<(u32, Vec<u64>)> {
        let block_tokens = block_tokens.max(1);
        let first = MIN_TURN_BLOCKS as usize - 1;
        let continued = (first..chain.len()).rev().find_map(|j| {
            self.by_last_block
                .get(&chain[j])
                .filter(|a| (a.input_tokens / block_tokens) as usize == j + 1)
                .copied()
        });
        let whole = (input_tokens / block_tokens) as usize;
        if whole >= MIN_TURN_BLOCKS as usize && whole <= chain.len() {
            let turn = Turn {
                index,
                input_tokens,
                output_tokens,
            };
            self.by_last_block.insert(chain[whole - 1], turn);
        }
        let a = continued?;
        let conversation = u64::from(a.input_tokens) + u64::from(a.output_tokens);
        if u64::from(input_tokens) < conversation || self.named.contains(&a.index) {
            return None;
        }
        let start = (a.input_tokens / block_tokens) as usize;
        let end = usize::try_from(conversation / u64::from(block_tokens))
            .unwrap_or(usize::MAX)
            .min(chain.len());
        let generated: Vec<u64> = chain[start.min(end)..end]
            .iter()
            .copied()
            .filter(|&h| !seen(h))
            .collect();
        if generated.is_empty() {
            return None;
        }
        self.named.insert(a.index);
        Some((a.index, generated))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No block seen before.
    fn none(_: u64) -> bool {
        false
    }

    #[test]
    fn a_next_turn_names_the_blocks_its_previous_turn_generated() {
        let mut l = TurnLinker::default();
        // Turn 1: 1,100 prompt tokens (two whole blocks and a part) and 500
        // generated: prompt and output fill three blocks.
        assert_eq!(l.push(0, (1_100, 500), &[1, 2, 3], 512, none), None);
        // Another conversation sharing only the first block: not a turn.
        assert_eq!(l.push(1, (2_000, 10), &[1, 7, 8, 9], 512, none), None);
        // Turn 2: the conversation so far (1,600) and a new message. Its
        // third block (index 2) holds turn 1's tail and output.
        assert_eq!(
            l.push(2, (1_650, 40), &[1, 2, 4, 5], 512, none),
            Some((0, vec![4]))
        );
        // A second continuation of turn 1 names nothing new.
        assert_eq!(l.push(3, (1_700, 40), &[1, 2, 4, 6], 512, none), None);
    }

    #[test]
    fn a_prompt_shorter_than_the_conversation_so_far_is_not_its_next_turn() {
        let mut l = TurnLinker::default();
        assert_eq!(l.push(0, (1_100, 500), &[1, 2, 3], 512, none), None);
        // Begins with turn 1's whole blocks but lacks its output: a retry
        // of turn 1 with another message, not its next turn.
        assert_eq!(l.push(1, (1_200, 40), &[1, 2, 4], 512, none), None);
        // The retry is now the latest request ending in block 2, so the
        // real next turn is taken for the retry's, whose output fills no
        // block: turn 1's output goes uncounted, which can only lower the
        // hit rate (5 of 2,464 blocks on the conversation trace).
        assert_eq!(l.push(2, (1_700, 40), &[1, 2, 5, 6], 512, none), None);
        // Without the retry, the same request is turn 1's next.
        let mut l = TurnLinker::default();
        assert_eq!(l.push(0, (1_100, 500), &[1, 2, 3], 512, none), None);
        assert_eq!(
            l.push(2, (1_700, 40), &[1, 2, 5, 6], 512, none),
            Some((0, vec![5]))
        );
    }

    #[test]
    fn the_longest_earlier_turn_is_continued_and_short_outputs_name_nothing() {
        let mut l = TurnLinker::default();
        // Its output does not finish the part-filled block: nothing whole.
        assert_eq!(l.push(0, (1_100, 10), &[1, 2, 3], 512, none), None);
        assert_eq!(l.push(1, (1_600, 900), &[1, 2, 5, 6], 512, none), None);
        // Includes both turns' last whole blocks: continues the longer,
        // whose prompt and output fill blocks 3 and 4 (2,500 tokens).
        assert_eq!(
            l.push(2, (2_600, 10), &[1, 2, 5, 10, 11, 12], 512, none),
            Some((1, vec![10]))
        );
        // One whole block only: never a turn of its own.
        let mut l = TurnLinker::default();
        assert_eq!(l.push(0, (600, 2_000), &[1, 2], 512, none), None);
        assert_eq!(l.push(1, (3_000, 10), &[1, 2, 3, 4, 5, 6], 512, none), None);
    }

    #[test]
    fn a_block_an_earlier_prompt_named_is_that_prompts() {
        let mut l = TurnLinker::default();
        assert_eq!(l.push(0, (1_100, 1_000), &[1, 2, 3], 512, none), None);
        // Turn 1's prompt and output fill blocks up to index 3; block 4 of
        // the next turn came in an earlier prompt (a request between the
        // two already held it), so only 5 is turn 1's.
        let seen = |h: u64| [1, 2, 3, 4].contains(&h);
        assert_eq!(
            l.push(1, (2_200, 10), &[1, 2, 4, 5, 6], 512, seen),
            Some((0, vec![5]))
        );
    }
}
