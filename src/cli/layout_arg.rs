//! The flags of a replica's parallel layout beyond its TP, shared by
//! `perf` and `predict`.

use crate::perf::Layout;
use clap::Args;

#[derive(Debug, Args)]
pub(crate) struct LayoutArgs {
    /// Expert-parallel degree (a mixture of experts): the experts are
    /// spread whole over EP groups of the replica's GPUs; with
    /// --attention-dp above 1 each MoE layer exchanges tokens all-to-all,
    /// otherwise its all-reduce combines the parts. Must divide the
    /// experts and the GPUs.
    #[arg(long, default_value_t = 1)]
    pub ep: u32,
    /// Data-parallel attention ranks (a mixture of experts): GPUs per
    /// replica = TP x attention-DP; each rank holds its own sequences and
    /// KV cache.
    #[arg(long, default_value_t = 1)]
    pub attention_dp: u32,
    /// Let a replica span more GPUs than one NVLink domain (its expert
    /// exchanges then run at the scale-out network's bandwidth).
    #[arg(long)]
    pub cross_node: bool,
}

impl LayoutArgs {
    /// The layout with `tp` GPUs per attention rank.
    pub(crate) fn with_tp(&self, tp: u32) -> Layout {
        Layout {
            tp,
            ep: self.ep,
            attention_dp: self.attention_dp,
        }
    }
}
