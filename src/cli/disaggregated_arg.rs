//! `predict`'s flags of a disaggregated unit, named after the columns of
//! the measured runs (`prefill_num_workers`, `prefill_tp_size`, ...).

use crate::capacity::runs::{DisaggregatedRun, RunSide};
use crate::perf::Layout;
use clap::Args;

#[derive(Debug, Args)]
pub(crate) struct DisaggregatedArgs {
    /// Prefill workers of a disaggregated unit (with --decode-workers):
    /// each prompt runs to its first token on one of them, then its KV
    /// cache moves to a decode worker, over NVLink when the unit fits one
    /// NVLink domain, else the GPU's scale-out network (docs/model.md §4.3).
    #[arg(long, requires = "decode_workers", value_parser = clap::value_parser!(u32).range(1..=16))]
    pub prefill_workers: Option<u32>,
    /// Decode workers of the unit (with --prefill-workers).
    #[arg(long, requires = "prefill_workers", value_parser = clap::value_parser!(u32).range(1..=16))]
    pub decode_workers: Option<u32>,
    /// Tensor-parallel degree of each prefill worker; default: --tp.
    #[arg(long, requires = "prefill_workers")]
    pub prefill_tp: Option<u32>,
    /// Expert-parallel degree of each prefill worker; default: --ep.
    #[arg(long, requires = "prefill_workers")]
    pub prefill_ep: Option<u32>,
    /// Data-parallel attention ranks of each prefill worker; default:
    /// --attention-dp.
    #[arg(long, requires = "prefill_workers")]
    pub prefill_attention_dp: Option<u32>,
    /// Tensor-parallel degree of each decode worker; default: --tp.
    #[arg(long, requires = "prefill_workers")]
    pub decode_tp: Option<u32>,
    /// Expert-parallel degree of each decode worker; default: --ep.
    #[arg(long, requires = "prefill_workers")]
    pub decode_ep: Option<u32>,
    /// Data-parallel attention ranks of each decode worker; default:
    /// --attention-dp.
    #[arg(long, requires = "prefill_workers")]
    pub decode_attention_dp: Option<u32>,
    /// Sequences a prefill worker runs at once per attention rank;
    /// default: the engine's cap (--max-num-seqs).
    #[arg(long, requires = "prefill_workers", value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub prefill_batch: Option<u32>,
    /// Sequences a decode worker runs at once per attention rank; default:
    /// the engine's cap (--max-num-seqs).
    #[arg(long, requires = "prefill_workers", value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub decode_batch: Option<u32>,
}

impl DisaggregatedArgs {
    /// The unit's two sides, each layout defaulting to `base` (--tp, --ep,
    /// --attention-dp); `None` without --prefill-workers.
    pub(crate) fn sides(&self, base: Layout) -> Option<DisaggregatedRun> {
        let (prefill, decode) = self.prefill_workers.zip(self.decode_workers)?;
        let layout = |tp: Option<u32>, ep: Option<u32>, dp: Option<u32>| Layout {
            tp: tp.unwrap_or(base.tp),
            ep: ep.unwrap_or(base.ep),
            attention_dp: dp.unwrap_or(base.attention_dp),
        };
        Some(DisaggregatedRun {
            prefill: RunSide {
                workers: prefill,
                layout: layout(self.prefill_tp, self.prefill_ep, self.prefill_attention_dp),
                batch: self.prefill_batch,
            },
            decode: RunSide {
                workers: decode,
                layout: layout(self.decode_tp, self.decode_ep, self.decode_attention_dp),
                batch: self.decode_batch,
            },
        })
    }
}
