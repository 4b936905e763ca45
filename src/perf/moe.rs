//! The routed experts of a mixture of experts in one step of one replica:
//! the expert weights the step's tokens touch, the grouped GEMMs' FLOPs of
//! the active experts, and the expert-parallel all-to-all. Formulas in
//! `docs/model.md` §2.2.
//!
//! * With k of E experts per token and uniform routing, T tokens touch
//!   E (1 − (1 − k/E)^T) experts of a layer. Each of the EP ranks holds E/EP
//!   of them, split over GPUs/EP GPUs; the busiest rank touches `imbalance`
//!   × its share (at most all it holds), and the step waits for it.
//! * FLOPs follow the active experts: 2 × routed active weights × T, spread
//!   over the replica's GPUs, the busiest carrying `imbalance` × its share.
//! * Every MoE layer under EP > 1 sends each token's hidden state to the
//!   ranks of its k experts and back (dispatch and combine): per GPU and
//!   direction T/G × k × hidden × 2 bytes × (EP − 1)/EP, at the link's
//!   bandwidth (the scale-out network's when the replica leaves its NVLink
//!   domain), plus a latency per exchange.

use super::gain::{precision_gain, Fp8Gain};
use super::layout::{Layout, ACTIVATION_BYTES};
use crate::profiles::precision::Precision;
use crate::profiles::{GpuProfile, ModelProfile};

/// Experts of one layer, of `experts`, that `tokens` tokens each routed to
/// `per_token` of them touch under uniform routing: E (1 − (1 − k/E)^T), at
/// most E (tokens that share an expert read it once).
pub(crate) fn touched_experts(experts: f64, per_token: f64, tokens: f64) -> f64 {
    if tokens <= 0.0 {
        return 0.0;
    }
    let miss = (1.0 - per_token / experts).max(0.0);
    (experts * (1.0 - miss.powf(tokens))).min(experts)
}

/// What the serving engine sets for the routed experts: the busiest rank's
/// share over the mean, the row floor per touched expert, the grouped
/// GEMMs' compute and bandwidth efficiency scales, and the all-to-all's
/// bandwidth (inside the NVLink domain) and latency per exchange.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MoeFigures {
    pub imbalance: f64,
    pub min_tokens: f64,
    pub efficiency_scales: (f64, f64),
    /// The compute efficiency scale of grouped GEMMs whose weights run
    /// weight-only (dequantised to BF16 inside the kernel), over the other.
    pub weight_only_scale: f64,
    pub link_bytes_per_s: f64,
    pub latency_s: f64,
}

impl MoeFigures {
    /// The roofline's: uniform routing, no row floor, the GPU profile's
    /// efficiencies, its fitted link bandwidth and hop latency.
    pub(crate) fn roofline(gpu: &GpuProfile) -> Self {
        MoeFigures {
            imbalance: 1.0,
            min_tokens: 1.0,
            efficiency_scales: (1.0, 1.0),
            weight_only_scale: 1.0,
            link_bytes_per_s: gpu.interconnect_gb_s * 1e9,
            latency_s: gpu.hop_latency_us * 1e-6,
        }
    }

    /// `engine`'s, its exchanges at `link_bytes_per_s`.
    pub(crate) fn engine(engine: &crate::profiles::EngineProfile, link_bytes_per_s: f64) -> Self {
        MoeFigures {
            imbalance: engine.expert_imbalance.max(1.0),
            min_tokens: engine.expert_gemm_min_tokens.max(1.0),
            efficiency_scales: (
                engine.expert_gemm_efficiency_scale,
                engine.expert_bandwidth_efficiency_scale,
            ),
            weight_only_scale: engine.expert_weight_only_scale,
            link_bytes_per_s,
            latency_s: engine.all_to_all_latency_us * 1e-6,
        }
    }
}

/// The routed experts of one replica.
#[derive(Debug, Clone)]
pub struct MoePhysics {
    experts: f64,
    per_token: f64,
    layers: f64,
    /// Bytes of one expert of one layer on one GPU (split over expert TP).
    expert_bytes_per_gpu: f64,
    /// Weights of one expert of one layer on one GPU.
    expert_weights_per_gpu: f64,
    ep: f64,
    /// Whether the experts exchange tokens between GPUs: EP over
    /// data-parallel attention ranks, each holding its own sequences.
    exchanges: bool,
    gpus: f64,
    hidden: f64,
    /// The busiest rank's share over the mean, at least 1.
    imbalance: f64,
    /// Rows a grouped GEMM runs for each touched expert at least (its tile:
    /// an expert sent 2 tokens costs the FLOPs of this many).
    min_tokens: f64,
    /// η × peak FLOP/s of one GPU for the grouped GEMMs, and the precision
    /// gain with its cap.
    flops_per_s: f64,
    gain: Option<(Fp8Gain, f64)>,
    /// η_m × memory bandwidth of one GPU.
    bytes_per_s: f64,
    /// The all-to-all's bandwidth per GPU and latency per exchange.
    exchange_bytes_per_s: f64,
    exchange_latency_s: f64,
}

impl MoePhysics {
    /// The experts of `model` over `layout` on `gpu` at `precision`, with
    /// the engine's `figures` (the GPU's efficiencies scaled, each product
    /// at most 1; the exchanges at the scale-out bandwidth when the replica
    /// leaves its NVLink domain); `None` for a dense model.
    pub(crate) fn new(
        gpu: &GpuProfile,
        model: &ModelProfile,
        layout: Layout,
        precision: Precision,
        figures: MoeFigures,
    ) -> Option<Self> {
        let moe = model.moe.as_ref()?;
        let (expert_bytes, _) = model.bytes_per_weight_at(precision);
        let expert_tp = f64::from(layout.expert_tp().max(1));
        let exchange_bytes_per_s = if layout.gpus() > gpu.nvlink_domain() {
            gpu.scaleout_bytes_per_s()
        } else {
            figures.link_bytes_per_s
        };
        let (compute_scale, bandwidth_scale) = figures.efficiency_scales;
        let gain = precision_gain(gpu, precision);
        let weight_only = precision != Precision::Bf16 && gain.is_none();
        let compute_scale = if weight_only {
            compute_scale * figures.weight_only_scale
        } else {
            compute_scale
        };
        Some(MoePhysics {
            experts: f64::from(moe.experts),
            per_token: f64::from(moe.experts_per_token),
            layers: f64::from(model.moe_layers()),
            expert_bytes_per_gpu: model.expert_params() * expert_bytes / expert_tp,
            expert_weights_per_gpu: model.expert_params() / expert_tp,
            ep: f64::from(layout.ep.max(1)),
            exchanges: layout.ep > 1 && layout.attention_dp > 1,
            gpus: f64::from(layout.gpus()),
            hidden: f64::from(model.hidden),
            imbalance: figures.imbalance,
            min_tokens: figures.min_tokens,
            flops_per_s: (gpu.compute_efficiency * compute_scale).min(1.0) * gpu.bf16_tflops * 1e12,
            gain,
            bytes_per_s: (gpu.bandwidth_efficiency * bandwidth_scale).min(1.0)
                * gpu.bandwidth_bytes_per_s(),
            exchange_bytes_per_s,
            exchange_latency_s: figures.latency_s,
        })
    }

    /// Experts of one layer that `tokens` tokens touch (uniform routing):
    /// [`touched_experts`].
    pub(crate) fn touched_experts(&self, tokens: f64) -> f64 {
        touched_experts(self.experts, self.per_token, tokens)
    }

    /// Experts of one layer the busiest EP rank reads: `imbalance` × its
    /// share of the touched experts under expert parallelism (at least one
    /// expert when any is touched, at most the E/EP it holds); every
    /// touched expert without it (each GPU holds a slice of every expert).
    pub(crate) fn busiest_rank_experts(&self, tokens: f64) -> f64 {
        self.busiest_of(self.touched_experts(tokens))
    }

    /// [`Self::busiest_rank_experts`] of `touched` experts touched.
    fn busiest_of(&self, touched: f64) -> f64 {
        if self.ep <= 1.0 {
            return touched;
        }
        (self.imbalance * touched / self.ep)
            .max(touched.min(1.0))
            .min(self.experts / self.ep)
    }

    /// Seconds of the grouped expert GEMMs of a step of `tokens` tokens on
    /// the busiest GPU: max(FLOPs / (η P g), expert bytes read / (η_m BW)).
    /// The busiest GPU runs its touched experts (`busiest_rank_experts`,
    /// split over expert TP) for M = T k / touched rows each, at least
    /// `min_tokens`: FLOPs = 2 × layers × experts × max(M, min) × expert
    /// weights / expert TP, which is 2 × routed active weights × T / GPUs
    /// under uniform routing when M ≥ min.
    pub(crate) fn gemm_s(&self, tokens: f64) -> f64 {
        if tokens <= 0.0 {
            return 0.0;
        }
        let touched = self.touched_experts(tokens);
        let per_expert_tokens = tokens * self.per_token / touched.max(1e-300);
        let experts = self.busiest_of(touched);
        let rows = per_expert_tokens.max(self.min_tokens);
        let flops = 2.0 * self.layers * experts * rows * self.expert_weights_per_gpu;
        let memory = self.layers * experts * self.expert_bytes_per_gpu / self.bytes_per_s;
        super::gain::bound_s(
            flops,
            self.flops_per_s,
            memory,
            self.gain,
            per_expert_tokens,
        )
    }

    /// Seconds of the all-to-all exchanges of a step of `tokens` tokens:
    /// per MoE layer a dispatch and a combine, each a latency plus
    /// T/G × k × hidden × 2 B × (EP − 1)/EP over the link. Zero at EP 1,
    /// and zero without data-parallel attention: every GPU then holds
    /// every token after the attention's all-reduce, runs it through the
    /// experts it holds, and the layer's all-reduce sums the parts (the
    /// engines' MoE combine under tensor-parallel attention).
    pub(crate) fn all_to_all_s(&self, tokens: f64) -> f64 {
        if !self.exchanges || tokens <= 0.0 {
            return 0.0;
        }
        let bytes =
            tokens / self.gpus * self.per_token * self.hidden * ACTIVATION_BYTES * (self.ep - 1.0)
                / self.ep;
        2.0 * self.layers * (self.exchange_latency_s + bytes / self.exchange_bytes_per_s)
    }

    /// Whether tokens are exchanged between GPUs (expert parallelism
    /// over data-parallel attention ranks), in place of the MoE layers'
    /// all-reduces.
    pub(crate) fn exchanges_tokens(&self) -> bool {
        self.exchanges
    }

    /// MoE layers.
    pub(crate) fn layers(&self) -> f64 {
        self.layers
    }

    /// Experts each EP rank holds per layer.
    pub(crate) fn held_per_rank(&self) -> f64 {
        self.experts / self.ep
    }

    /// Bytes of one expert of one layer on one GPU.
    pub(crate) fn expert_bytes_per_gpu(&self) -> f64 {
        self.expert_bytes_per_gpu
    }
}

#[cfg(test)]
mod tests {
    use crate::perf::{EngineModel, Layout, PerfModel, StepTime, StepWork};
    use crate::profiles::precision::Precision;
    use crate::profiles::{load_engine, load_gpu, load_model, GpuProfile, ModelProfile};
    use std::path::{Path, PathBuf};

    fn profiles() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles")
    }

    fn model(id: &str) -> ModelProfile {
        load_model(&profiles(), id).unwrap_or_else(|p| panic!("{id}: {p}"))
    }

    fn gpu(id: &str) -> GpuProfile {
        load_gpu(&profiles(), id).unwrap_or_else(|p| panic!("{id}: {p}"))
    }

    /// DeepSeek-V3 in FP8 on 8 H200 with EP 8 (the roofline model).
    fn deepseek_tp8_ep8() -> PerfModel {
        PerfModel::with_layout(
            &gpu("h200"),
            &model("deepseek-v3"),
            Layout {
                tp: 8,
                ep: 8,
                attention_dp: 1,
            },
            Precision::Fp8,
        )
    }

    #[test]
    fn one_token_touches_its_k_experts_and_a_large_batch_all_of_them() {
        let m = deepseek_tp8_ep8();
        let e = m.moe().unwrap();
        assert!((e.touched_experts(1.0) - 8.0).abs() < 1e-9);
        // 64 tokens: 256 (1 - (1 - 8/256)^64) = 222.4 experts.
        let expected = 256.0 * (1.0 - (1.0f64 - 8.0 / 256.0).powi(64));
        assert!((e.touched_experts(64.0) - expected).abs() < 1e-9);
        assert!((e.touched_experts(1e6) - 256.0).abs() < 1e-6);
        assert_eq!(e.held_per_rank(), 32.0);
        assert!(e.busiest_rank_experts(1e6) <= e.held_per_rank());
    }

    #[test]
    fn a_deepseek_decode_step_at_batch_one_reads_its_experts_at_the_bandwidth() {
        // EP 8 on 8 H200: one token touches 8 experts, one per rank on
        // average; each is 3 x 7,168 x 2,048 = 44.04 M weights of one byte,
        // over 58 MoE layers: 2.554 GB per GPU at 0.875 x 4.8 TB/s = 0.608 ms.
        let m = deepseek_tp8_ep8();
        let bytes = 58.0 * 3.0 * 7168.0 * 2048.0;
        let expected = bytes / (0.875 * 4.8e12);
        assert!((m.expert_gemm_s(1.0) - expected).abs() < 1e-9 * expected.max(1.0));
        // Tensor-parallel attention: every GPU holds the token, the layer's
        // all-reduce combines the experts' parts, nothing is exchanged.
        assert_eq!(m.all_to_all_s(1.0), 0.0);
        // Over 8 data-parallel attention ranks the token is on one GPU:
        // dispatch and combine carry 1/8 of a token x 8 experts x 7,168 x
        // 2 B x 7/8 each way, per layer, plus the hop latency.
        let dp = PerfModel::with_layout(
            &gpu("h200"),
            &model("deepseek-v3"),
            Layout {
                tp: 1,
                ep: 8,
                attention_dp: 8,
            },
            Precision::Fp8,
        );
        let a2a = 2.0 * 58.0 * (28.5e-6 + 1.0 / 8.0 * 8.0 * 7168.0 * 2.0 * 7.0 / 8.0 / 349e9);
        assert!((dp.all_to_all_s(1.0) - a2a).abs() < 1e-12);
        // Two all-reduces a layer under TP attention; under DP attention the
        // 58 MoE layers combine by the exchange instead: 2 x 61 - 58.
        assert_eq!(m.allreduces_per_step(), 122.0);
        assert_eq!(dp.allreduces_per_step(), 64.0);
        // Latent attention: 61 x 576 x 2 B a token, held whole by every TP rank.
        assert_eq!(model("deepseek-v3").kv_bytes_per_token(), 70_272.0);
    }

    /// An engine's gpt-oss-120b (MXFP4 experts) on one GPU.
    fn gpt_oss_on(gpu_id: &str, engine: &crate::profiles::EngineProfile) -> EngineModel {
        EngineModel::with_layout(
            "e",
            engine,
            &gpu(gpu_id),
            &model("gpt-oss-120b"),
            Layout {
                tp: 1,
                ep: 1,
                attention_dp: 1,
            },
            Precision::Fp4,
        )
    }

    /// A prefill of 4,096 tokens: compute-bound expert GEMMs.
    fn prefill() -> StepWork {
        StepWork {
            tokens: 4096.0,
            attention_pairs: 4096.0 * 2048.0,
            kv_read_tokens: 4096.0,
            logit_tokens: 1.0,
            sequences: 1.0,
        }
    }

    #[test]
    fn weight_only_experts_compute_at_their_own_scale_native_ones_do_not() {
        let mut e = crate::profiles::engine_fixture();
        e.expert_gemm_efficiency_scale = 0.8;
        let mut slow = e.clone();
        slow.expert_weight_only_scale = 0.5;
        // On the H200 (no FP4 units) the MXFP4 experts run weight-only: a
        // compute-bound prefill's expert GEMMs take twice as long at half
        // the scale.
        let h = gpt_oss_on("h200", &e).step_parts(&prefill()).expert_gemm_s;
        let h_slow = gpt_oss_on("h200", &slow)
            .step_parts(&prefill())
            .expert_gemm_s;
        assert!((h_slow / h - 2.0).abs() < 1e-9, "{h} {h_slow}");
        // On the B200 they run on its FP4 units: the scale does not apply.
        let b = gpt_oss_on("b200", &e).step_parts(&prefill()).expert_gemm_s;
        let b_slow = gpt_oss_on("b200", &slow)
            .step_parts(&prefill())
            .expert_gemm_s;
        assert_eq!(b, b_slow);
    }

    #[test]
    fn the_eager_expert_cost_is_paid_by_steps_without_a_captured_graph() {
        let mut e = crate::profiles::engine_fixture();
        let base = gpt_oss_on("h200", &e);
        e.moe_eager_expert_us = 5.0;
        let eager = gpt_oss_on("h200", &e);
        // 36 MoE layers x 128 experts x 5 us = 23.04 ms of set-up on a
        // prefill step, run beside the GPU's work: the step's GPU part is
        // the longer of the two, not their sum.
        let with = eager.step_parts(&prefill());
        let without = base.step_parts(&prefill());
        assert!((with.moe_setup_s - 36.0 * 128.0 * 5e-6).abs() < 1e-12);
        assert_eq!(with.fixed_gpu_s, without.fixed_gpu_s);
        assert_eq!(with.gpu_s(), without.gpu_s().max(with.moe_setup_s));
        e.moe_eager_expert_us = 0.1;
        let short = gpt_oss_on("h200", &e).step_parts(&prefill());
        assert_eq!(short.gpu_s(), without.gpu_s(), "a short set-up is hidden");
        // A decode step of 8 sequences replays its graph: nothing added.
        let decode = StepWork {
            tokens: 8.0,
            attention_pairs: 8.0 * 1000.0,
            kv_read_tokens: 8.0 * 1000.0,
            logit_tokens: 8.0,
            sequences: 8.0,
        };
        assert_eq!(eager.step_parts(&decode).moe_setup_s, 0.0);
        assert_eq!(
            eager.step_parts(&decode).total_s(),
            base.step_parts(&decode).total_s()
        );
        assert_eq!(
            eager.decode_run(8, 8000.0).step_s(3),
            base.decode_run(8, 8000.0).step_s(3)
        );
    }

    #[test]
    fn gpt_oss_holds_its_window_layers_out_of_the_kv_cache() {
        let m = model("gpt-oss-120b");
        assert_eq!(m.sliding_layers(), 18);
        // 18 full layers x 2 x 8 x 64 x 2 B = 36,864 bytes a token.
        assert_eq!(m.kv_bytes_per_token(), 36_864.0);
        // MXFP4 experts (0.5625 B) and BF16 attention: fits one H200.
        let p = PerfModel::new(&gpu("h200"), &m, 1, Precision::Fp4);
        assert!(
            p.weight_bytes_per_gpu() < 80e9,
            "{}",
            p.weight_bytes_per_gpu()
        );
        assert!(p.kv_capacity_tokens() > 0.0);
    }

    #[test]
    fn every_moe_profile_states_a_consistent_shape() {
        for id in [
            "deepseek-v3",
            "deepseek-r1",
            "qwen3-235b-a22b",
            "qwen3-30b-a3b",
            "gpt-oss-120b",
            "mixtral-8x7b",
        ] {
            let m = model(id);
            let moe = m.moe.as_ref().unwrap();
            assert!(m.routed_params_total() < m.params_billion * 1e9, "{id}");
            assert!(m.dense_gemm_params() > 0.0, "{id}");
            assert!(moe.experts_per_token <= moe.experts, "{id}");
        }
    }

    #[test]
    fn an_expert_shape_that_disagrees_with_the_counts_is_refused() {
        let mut m = model("qwen3-235b-a22b");
        m.moe.as_mut().unwrap().expert_ffn = 3072;
        let problems = m.check(Path::new("m.toml"));
        assert!(
            problems
                .iter()
                .any(|p| p.to_string().contains("moe.expert_ffn")),
            "{problems:?}"
        );
    }

    /// The layouts of the property below: each shipped MoE model on H200.
    fn layouts() -> Vec<(&'static str, Layout, Precision)> {
        let l = |tp, ep, attention_dp| Layout {
            tp,
            ep,
            attention_dp,
        };
        vec![
            ("deepseek-v3", l(8, 1, 1), Precision::Fp8),
            ("deepseek-v3", l(8, 8, 1), Precision::Fp8),
            ("deepseek-v3", l(1, 8, 8), Precision::Fp8),
            ("qwen3-235b-a22b", l(4, 4, 1), Precision::Fp8),
            ("gpt-oss-120b", l(1, 1, 1), Precision::Fp4),
            ("gpt-oss-120b", l(2, 2, 1), Precision::Fp4),
            ("qwen3-30b-a3b", l(1, 1, 1), Precision::Bf16),
            ("mixtral-8x7b", l(2, 2, 1), Precision::Bf16),
        ]
    }

    proptest::proptest! {
        #![proptest_config(crate::base::testing::proptest_config(64))]

        /// At a fixed layout, more decode sequences never make a step
        /// shorter, and the experts touched never exceed those held (the
        /// roofline model and the vLLM engine within its captured graphs).
        #[test]
        fn more_sequences_never_make_a_step_shorter(
            which in 0usize..8,
            batch in 1u32..256,
            more in 1u32..256,
            context in 1u32..8192,
        ) {
            let (id, layout, precision) = layouts()[which];
            let (g, m) = (gpu("h200"), model(id));
            let vllm = load_engine(&profiles().join("engines/vllm.toml")).unwrap();
            let roofline = PerfModel::with_layout(&g, &m, layout, precision);
            let engine = EngineModel::with_layout("vllm", &vllm, &g, &m, layout, precision);
            let (b, c) = (f64::from(batch), f64::from(context));
            let bigger = f64::from((batch + more).min(512));
            proptest::prop_assert!(
                roofline.decode_step_s(bigger, c) >= roofline.decode_step_s(b, c)
            );
            proptest::prop_assert!(engine.decode_step_s(bigger, c) >= engine.decode_step_s(b, c));
            let e = roofline.moe().unwrap();
            proptest::prop_assert!(e.busiest_rank_experts(b) <= e.held_per_rank() + 1e-9);
            proptest::prop_assert!(e.touched_experts(b) <= f64::from(m.moe.unwrap().experts) + 1e-9);
        }
    }
}
