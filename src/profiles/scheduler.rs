//! How a replica fills each engine step: the scheduling policy of the engine
//! it stands for. Semantics in `docs/simulator.md`.

use serde::{Deserialize, Serialize};

/// The step-scheduling policy of a replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheduler {
    /// vLLM V1, TensorRT-LLM: every decoding sequence gets its token in
    /// every step; the rest of the token budget goes to chunked prefills,
    /// oldest first.
    #[default]
    DecodeFirstChunked,
    /// SGLang: while prompts wait or are part-prefilled, a step prefills them
    /// (the whole token budget, oldest first, the last one chunked) and the
    /// decoding sequences wait; otherwise the step only decodes.
    PrefillFirstChunked,
    /// vLLM V0, TGI: no chunking; when a waiting request can be admitted, the
    /// step prefills whole prompts (as many as fit the token budget, a longer
    /// prompt alone) and decodes nothing; otherwise the step only decodes.
    PrefillFirst,
}

impl Scheduler {
    /// Every policy, in the order the scenario format lists them.
    pub const ALL: [Scheduler; 3] = [
        Scheduler::DecodeFirstChunked,
        Scheduler::PrefillFirstChunked,
        Scheduler::PrefillFirst,
    ];

    /// The name a scenario file uses.
    pub fn name(self) -> &'static str {
        match self {
            Scheduler::DecodeFirstChunked => "decode-first-chunked",
            Scheduler::PrefillFirstChunked => "prefill-first-chunked",
            Scheduler::PrefillFirst => "prefill-first",
        }
    }

    /// The policy a scenario file names, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for s in Scheduler::ALL {
            assert_eq!(Scheduler::from_name(s.name()), Some(s));
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.name())
            );
        }
        assert_eq!(Scheduler::from_name("fcfs"), None);
    }
}
