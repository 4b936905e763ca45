//! How a replica spreads over its GPUs: tensor parallelism inside each
//! attention rank, data-parallel attention ranks, and expert parallelism
//! over all of the replica's GPUs. GPUs per replica = TP × attention-DP;
//! EP divides that count, and each expert is split over GPUs / EP of them
//! (expert TP). A dense model has EP 1.

use crate::profiles::{EngineFamily, GpuProfile, ModelProfile};
use serde::Serialize;
use std::fmt::Write;

/// Bytes per activation element the layout's collectives carry (BF16): the
/// all-reduces of tensor parallelism and the experts' all-to-all.
pub(crate) const ACTIVATION_BYTES: f64 = 2.0;

/// A replica's parallel layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Layout {
    /// Tensor-parallel degree of each attention rank.
    pub tp: u32,
    /// Expert-parallel degree: the experts are spread whole over this many
    /// groups of the replica's GPUs.
    pub ep: u32,
    /// Data-parallel attention ranks: each holds its own sequences and KV
    /// cache, while the experts are shared by expert parallelism.
    pub attention_dp: u32,
}

impl Layout {
    /// Tensor parallelism alone.
    pub fn tp(tp: u32) -> Self {
        Layout {
            tp,
            ep: 1,
            attention_dp: 1,
        }
    }

    /// GPUs per replica: TP × attention-DP.
    pub fn gpus(&self) -> u32 {
        self.tp * self.attention_dp
    }

    /// GPUs each expert is split over: GPUs / EP.
    pub fn expert_tp(&self) -> u32 {
        self.gpus() / self.ep.max(1)
    }

    /// Whether the layout is tensor parallelism alone.
    pub fn is_tp_only(&self) -> bool {
        self.ep == 1 && self.attention_dp == 1
    }

    /// `tp4`, `tp4 ep4`, `tp1 dp8 ep8`: how labels and reports name it.
    pub fn label(&self) -> String {
        let mut s = format!("tp{}", self.tp);
        if self.attention_dp > 1 {
            let _ = write!(s, " dp{}", self.attention_dp);
        }
        if self.ep > 1 {
            let _ = write!(s, " ep{}", self.ep);
        }
        s
    }
}

/// Why `engine`'s launch options cannot express `layout`, or `None`: vLLM's
/// `--enable-expert-parallel` spreads the experts over every GPU of the
/// replica (EP = TP × DP or none), and TensorRT-LLM's attention data
/// parallelism runs attention at TP 1 on every rank.
pub fn engine_layout_problem(engine: EngineFamily, layout: Layout) -> Option<String> {
    match engine {
        EngineFamily::Vllm if layout.ep > 1 && layout.ep != layout.gpus() => Some(format!(
            "vLLM's expert parallelism spreads the experts over all {} GPUs of the replica (EP {} or none), not EP {}",
            layout.gpus(),
            layout.gpus(),
            layout.ep
        )),
        EngineFamily::Trtllm if layout.attention_dp > 1 && layout.tp > 1 => Some(format!(
            "TensorRT-LLM's attention data parallelism runs attention at TP 1 on each rank, not TP {}",
            layout.tp
        )),
        _ => None,
    }
}

/// Why a layout cannot run, and what kind of change mends it.
#[derive(Debug, Clone, PartialEq)]
pub struct LayoutProblem {
    pub why: String,
    pub fix: LayoutFix,
}

/// The change that mends a [`LayoutProblem`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutFix {
    /// Another tensor-parallel or attention-DP degree (or another GPU).
    OtherDegrees,
    /// An expert-parallel degree that divides the model's experts.
    ExpertsDivisible,
    /// An expert-parallel degree above 1 beside data-parallel attention.
    ExpertParallel,
    /// A smaller replica, or one allowed to cross nodes.
    NvlinkDomain,
}

impl std::fmt::Display for LayoutProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.why)
    }
}

/// Why `layout` cannot run `model` on `gpu` (heads not split evenly by TP,
/// experts not by EP, EP not dividing the replica's GPUs, data-parallel
/// attention without EP, a replica larger than the NVLink domain when
/// crossing nodes is not allowed), or `None`.
pub fn layout_problem(
    gpu: &GpuProfile,
    model: &ModelProfile,
    layout: Layout,
    allow_cross_node: bool,
) -> Option<LayoutProblem> {
    let problem = |fix: LayoutFix, why: String| Some(LayoutProblem { why, fix });
    if layout.tp == 0 || layout.ep == 0 || layout.attention_dp == 0 {
        return problem(
            LayoutFix::OtherDegrees,
            "TP, EP and attention-DP are at least 1".into(),
        );
    }
    if !model.heads.is_multiple_of(layout.tp) {
        return problem(
            LayoutFix::OtherDegrees,
            format!(
                "TP {} does not divide {}'s {} attention heads",
                layout.tp, model.name, model.heads
            ),
        );
    }
    if !(model.kv_replicated_over_tp()
        || model.kv_heads.is_multiple_of(layout.tp)
        || layout.tp.is_multiple_of(model.kv_heads))
    {
        return problem(
            LayoutFix::OtherDegrees,
            format!(
                "TP {} neither divides nor is a multiple of {}'s {} KV heads",
                layout.tp, model.name, model.kv_heads
            ),
        );
    }
    let gpus = layout.gpus();
    if layout.ep > 1 || layout.attention_dp > 1 {
        let Some(moe) = &model.moe else {
            return problem(
                LayoutFix::OtherDegrees,
                format!(
                "{} is a dense model: expert parallelism and data-parallel attention are for mixtures of experts",
                model.name
            ));
        };
        if !gpus.is_multiple_of(layout.ep) {
            return problem(
                LayoutFix::OtherDegrees,
                format!(
                    "EP {} does not divide the replica's {gpus} GPUs (TP {} x attention-DP {})",
                    layout.ep, layout.tp, layout.attention_dp
                ),
            );
        }
        if !moe.experts.is_multiple_of(layout.ep) {
            return problem(
                LayoutFix::ExpertsDivisible,
                format!(
                    "EP {} does not divide {}'s {} experts",
                    layout.ep, model.name, moe.experts
                ),
            );
        }
        if layout.attention_dp > 1 && layout.ep == 1 {
            return problem(
                LayoutFix::ExpertParallel,
                format!(
                "attention-DP {} with EP 1 splits every expert over the replica's {gpus} GPUs and gathers every rank's tokens at each MoE layer, which the model does not price: spread the experts with EP (e.g. EP {gpus})",
                layout.attention_dp
            ));
        }
    }
    let domain = gpu.nvlink_domain();
    if gpus > domain && !allow_cross_node {
        return problem(
            LayoutFix::NvlinkDomain,
            format!(
                "a replica of {gpus} GPUs is larger than {}'s NVLink domain of {domain}",
                gpu.name
            ),
        );
    }
    if layout.tp > gpu.gpus_per_node.max(domain) {
        return problem(
            LayoutFix::NvlinkDomain,
            format!(
                "TP {} is more than the {} GPUs of one {} NVLink domain",
                layout.tp,
                gpu.gpus_per_node.max(domain),
                gpu.name
            ),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles::{load_gpu, load_model};
    use std::path::Path;

    fn profiles() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles")
    }

    #[test]
    fn layouts_that_cannot_run_say_why() {
        let deepseek = load_model(&profiles(), "deepseek-v3").unwrap();
        let h200 = load_gpu(&profiles(), "h200").unwrap();
        let l = |tp, ep, attention_dp| Layout {
            tp,
            ep,
            attention_dp,
        };
        assert_eq!(layout_problem(&h200, &deepseek, l(8, 8, 1), false), None);
        assert_eq!(layout_problem(&h200, &deepseek, l(1, 8, 8), false), None);
        // 256 experts over EP 6, and EP 3 of 6 GPUs: 256 is not a multiple of 3.
        let p = layout_problem(&h200, &deepseek, l(2, 3, 3), false)
            .unwrap()
            .why;
        assert!(p.contains("experts"), "{p}");
        // Attention-DP without EP would gather every rank's tokens unpriced.
        let p = layout_problem(&h200, &deepseek, l(1, 1, 8), false)
            .unwrap()
            .why;
        assert!(p.contains("EP 8"), "{p}");
        // EP 16 does not divide 8 GPUs.
        let p = layout_problem(&h200, &deepseek, l(8, 16, 1), false)
            .unwrap()
            .why;
        assert!(p.contains("does not divide the replica's 8 GPUs"), "{p}");
        // 16 GPUs leave an H200 node unless crossing nodes is allowed.
        let p = layout_problem(&h200, &deepseek, l(8, 16, 2), false)
            .unwrap()
            .why;
        assert!(p.contains("NVLink domain"), "{p}");
        assert_eq!(layout_problem(&h200, &deepseek, l(8, 16, 2), true), None);
        // A GB200 rack is one NVLink domain of 72.
        let gb200 = load_gpu(&profiles(), "gb200").unwrap();
        assert_eq!(layout_problem(&gb200, &deepseek, l(8, 32, 4), false), None);
        // A dense model has no experts to spread.
        let llama = load_model(&profiles(), "llama-3.1-8b").unwrap();
        let p = layout_problem(&h200, &llama, l(2, 2, 1), false)
            .unwrap()
            .why;
        assert!(p.contains("dense"), "{p}");
        assert_eq!(l(2, 4, 4).gpus(), 8);
        assert_eq!(l(2, 4, 4).expert_tp(), 2);
        assert_eq!(l(1, 8, 8).label(), "tp1 dp8 ep8");
    }
}
