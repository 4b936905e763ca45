//! What one replica runs: its step model, batch and token caps, KV cache and
//! scheduler ([`ReplicaSpec`]); for a disaggregated unit, its decode
//! replicas' with the prefill side beside it ([`SplitSpec`]).

use super::kv_transfer::KvTransfer;
use crate::perf::{StepModel, StepTime};
use crate::profiles::engine::AttentionDpBudget;
use crate::profiles::Scheduler;

/// What one replica runs.
#[derive(Debug, Clone)]
pub(crate) struct ReplicaSpec {
    pub perf: StepModel,
    /// Most sequences in the batch (vLLM `max_num_seqs`).
    pub max_batch: u32,
    /// Most tokens per step (vLLM `max_num_batched_tokens`), over every
    /// data-parallel attention rank ([`Self::new`]).
    pub max_batched_tokens: u32,
    /// Most prompt tokens one sequence takes in a step: one attention rank's
    /// token budget ([`Self::new`]); `max_batched_tokens` without
    /// data-parallel attention.
    pub rank_tokens: u32,
    /// KV-cache tokens the replica holds after its weights.
    pub kv_capacity_tokens: u64,
    /// How each step is filled.
    pub scheduler: Scheduler,
    /// Admit a request only when the KV cache holds its prompt and its whole
    /// output (TensorRT-LLM's GUARANTEED_NO_EVICT); else its prompt and one
    /// token, preempting on overflow.
    pub reserve_output_kv: bool,
    /// Advance decode-only steps as runs (the default); `false` makes every
    /// step its own event, the reference the runs are tested against.
    pub decode_runs: bool,
    /// Decode steps between the scheduler's receipts of new requests while
    /// it decodes (SGLang `--scheduler-recv-interval`, default 1: every
    /// step). A request that reaches a decoding replica waits for the next
    /// receipt; after a step with prefill work, or on an idle replica, the
    /// next iteration receives at once.
    pub recv_interval_steps: u32,
    /// `Some`: the spec is a disaggregated unit's decode replicas, behind
    /// the prefill replicas it names.
    pub split: Option<Box<SplitSpec>>,
}

impl ReplicaSpec {
    /// A replica of `perf` whose KV cache is the memory left after weights.
    pub(crate) fn new(
        perf: StepModel,
        max_batch: u32,
        max_batched_tokens: u32,
        scheduler: Scheduler,
    ) -> Self {
        let kv_capacity_tokens = kv_capacity_of(&perf);
        let reserve_output_kv = perf.reserve_output_kv();
        let (max_batched_tokens, rank_tokens) = rank_budgets(
            max_batched_tokens,
            perf.roofline().attention_ranks(),
            perf.attention_dp_budget(),
        );
        ReplicaSpec {
            perf,
            max_batch,
            max_batched_tokens,
            rank_tokens,
            kv_capacity_tokens,
            scheduler,
            reserve_output_kv,
            decode_runs: true,
            recv_interval_steps: 1,
            split: None,
        }
    }
}

/// The step's token budget over every attention rank and one rank's, from
/// the engine's `budget` (`max_batched_tokens`) at `ranks` data-parallel
/// attention ranks, each of which schedules its own sequences: `PerRank`
/// (vLLM's data-parallel engine cores, TensorRT-LLM's attention-DP ranks)
/// gives each rank the whole budget; `Shared` (SGLang, which divides
/// `--chunked-prefill-size` by the DP size under `--enable-dp-attention`)
/// divides it among them.
fn rank_budgets(budget: u32, ranks: u32, sharing: AttentionDpBudget) -> (u32, u32) {
    match (ranks, sharing) {
        (0 | 1, _) => (budget, budget),
        (_, AttentionDpBudget::PerRank) => (budget.saturating_mul(ranks), budget),
        (_, AttentionDpBudget::Shared) => (budget, (budget / ranks).max(1)),
    }
}

impl ReplicaSpec {
    /// The replica with `speculation` on its decode steps (its KV cache
    /// less the draft head's weights).
    pub(crate) fn speculating(self, speculation: crate::perf::Speculation) -> Self {
        let perf = self.perf.speculating(speculation);
        ReplicaSpec {
            kv_capacity_tokens: kv_capacity_of(&perf),
            reserve_output_kv: perf.reserve_output_kv(),
            perf,
            ..self
        }
    }
}

/// The KV-cache tokens of a replica of `perf`: the memory left after its
/// weights.
fn kv_capacity_of(perf: &StepModel) -> u64 {
    perf.kv_capacity_tokens().max(0.0).floor() as u64
}

/// The prefill side of a disaggregated unit and its link to the decode
/// side. The [`ReplicaSpec`] that holds it is the decode replicas'.
#[derive(Debug, Clone)]
pub(crate) struct SplitSpec {
    /// What each prefill replica runs: its prompts to their first token,
    /// no decoding.
    pub prefill: ReplicaSpec,
    /// Prefill replicas per unit (x of xPyD).
    pub prefill_replicas: u32,
    /// Decode replicas per unit (y of xPyD).
    pub decode_replicas: u32,
    /// The KV cache's move from a prefill to a decode replica.
    pub transfer: KvTransfer,
}

impl ReplicaSpec {
    /// The spec as a disaggregated unit: these (decode) replicas behind
    /// `split`'s prefill replicas.
    pub(crate) fn split(mut self, split: SplitSpec) -> Self {
        self.split = Some(Box::new(split));
        self
    }

    /// Replicas per unit: 1 aggregated, x + y disaggregated.
    pub(crate) fn replicas_per_unit(&self) -> u32 {
        self.split
            .as_ref()
            .map_or(1, |s| s.prefill_replicas + s.decode_replicas)
    }

    /// Sequences one unit runs at once: its batch cap, or its decode
    /// replicas' and prefill replicas' caps together.
    pub(crate) fn batch_slots(&self) -> u32 {
        match &self.split {
            None => self.max_batch,
            Some(s) => {
                s.decode_replicas * self.max_batch + s.prefill_replicas * s.prefill.max_batch
            }
        }
    }

    /// Whether a request of `input_tokens` + `output_tokens` fits the unit:
    /// its prompt and first token in a prefill replica's KV cache and the
    /// whole request in a decode replica's.
    pub(crate) fn holds(&self, input_tokens: u32, output_tokens: u32) -> bool {
        let need = u64::from(input_tokens.max(1)) + u64::from(output_tokens.max(1));
        need <= self.kv_capacity_tokens
            && self
                .split
                .as_ref()
                .is_none_or(|s| u64::from(input_tokens.max(1)) < s.prefill.kv_capacity_tokens)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::ReplicaSpec;
    use crate::perf::step::tests::{h100, llama8b};
    use crate::perf::{PerfModel, StepModel};
    use crate::profiles::Scheduler;

    /// One H100 replica of Llama-3-8B in BF16 under the roofline model:
    /// batches of 64, 2,048-token steps, decode first.
    pub(crate) fn h100_llama8b() -> ReplicaSpec {
        ReplicaSpec::new(
            StepModel::Roofline(PerfModel::new(
                &h100(),
                &llama8b(),
                1,
                crate::profiles::precision::Precision::Bf16,
            )),
            64,
            2048,
            Scheduler::DecodeFirstChunked,
        )
    }

    #[test]
    fn ranks_take_the_whole_budget_each_or_share_it_as_the_engine_does() {
        // No data-parallel attention: one budget.
        use super::{rank_budgets, AttentionDpBudget::*};
        assert_eq!(rank_budgets(8_192, 1, PerRank), (8_192, 8_192));
        assert_eq!(rank_budgets(8_192, 1, Shared), (8_192, 8_192));
        // vLLM, TensorRT-LLM: every rank its own budget.
        assert_eq!(rank_budgets(8_192, 8, PerRank), (65_536, 8_192));
        // SGLang: the chunked-prefill size divided among the ranks.
        assert_eq!(rank_budgets(8_192, 8, Shared), (8_192, 1_024));
    }
}
