//! What one replica runs: its step model, batch and token caps, KV cache and
//! scheduler ([`ReplicaSpec`]).

use crate::perf::{StepModel, StepTime};
use crate::profiles::Scheduler;

/// What one replica runs.
#[derive(Debug, Clone)]
pub(crate) struct ReplicaSpec {
    pub perf: StepModel,
    /// Most sequences in the batch (vLLM `max_num_seqs`).
    pub max_batch: u32,
    /// Most tokens per step (vLLM `max_num_batched_tokens`).
    pub max_batched_tokens: u32,
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
    pub split: Option<Box<super::split::SplitSpec>>,
}

impl ReplicaSpec {
    /// A replica of `perf` whose KV cache is the memory left after weights.
    pub(crate) fn new(
        perf: StepModel,
        max_batch: u32,
        max_batched_tokens: u32,
        scheduler: Scheduler,
    ) -> Self {
        let kv_capacity_tokens = perf.kv_capacity_tokens().max(0.0).floor() as u64;
        let reserve_output_kv = perf.reserve_output_kv();
        ReplicaSpec {
            perf,
            max_batch,
            max_batched_tokens,
            kv_capacity_tokens,
            scheduler,
            reserve_output_kv,
            decode_runs: true,
            recv_interval_steps: 1,
            split: None,
        }
    }
}

impl ReplicaSpec {
    /// The replica with `speculation` on its decode steps (its KV cache
    /// less the draft head's weights).
    pub(crate) fn speculating(self, speculation: crate::perf::Speculation) -> Self {
        ReplicaSpec {
            decode_runs: self.decode_runs,
            recv_interval_steps: self.recv_interval_steps,
            split: self.split,
            ..ReplicaSpec::new(
                self.perf.speculating(speculation),
                self.max_batch,
                self.max_batched_tokens,
                self.scheduler,
            )
        }
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
}
