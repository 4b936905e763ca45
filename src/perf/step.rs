//! The roofline latency model: prefill time and decode step time of one
//! replica (a tensor-parallel group of GPUs) from the model shape, the GPU's
//! peaks and its efficiency factors. Formulas in `docs/model.md`.
//!
//! A step is the sum of parts that each run at their own bound: the weight
//! GEMMs (layers, then the LM head for the tokens that produce logits), the
//! attention, the all-reduces, the fixed GPU time of the layers and the
//! engine's CPU overhead.

use super::gain::{precision_gain, Fp8Gain};
use super::layout::{Layout, ACTIVATION_BYTES};
use super::moe::{MoeFigures, MoePhysics};
use super::{DecodeRun, StepParts, StepTime, StepWork};
use crate::profiles::precision::Precision;
use crate::profiles::{GpuProfile, ModelProfile};

/// Latency model of one replica: `tp` GPUs of one type serving one model at
/// one precision.
#[derive(Debug, Clone)]
pub struct PerfModel {
    /// Tensor-parallel degree (GPUs per replica).
    pub tp: u32,
    /// Precision of the weights and their GEMMs.
    pub precision: Precision,
    layers: f64,
    hidden: f64,
    heads: f64,
    head_dim: f64,
    /// GEMM parameters per token in the layers (active minus embedding and
    /// LM head), and all of them (a mixture of experts reads at most these).
    gemm_params: f64,
    gemm_params_total: f64,
    /// LM head parameters: vocabulary × hidden.
    lm_head_params: f64,
    bytes_per_weight: f64,
    kv_bytes_per_token: f64,
    /// η_c × BF16 peak FLOP/s of one GPU.
    gemm_flops_per_s: f64,
    /// The FP8 gain when the GEMMs run on FP8 units, with its cap.
    fp8_gain: Option<(Fp8Gain, f64)>,
    /// η_att × BF16 peak FLOP/s of one GPU (attention stays in BF16).
    attention_flops_per_s: f64,
    /// η_m × memory bandwidth of one GPU.
    bytes_per_s: f64,
    link_bytes_per_s: f64,
    hop_latency_s: f64,
    step_overhead_s: f64,
    /// Fixed GPU time of one forward pass: layers × time per layer.
    layers_fixed_s: f64,
    usable_memory_bytes: f64,
    /// The replica's layout.
    layout: Layout,
    /// Whether this is a dense model with grouped-query attention over the
    /// whole context under tensor parallelism alone (the formulas of
    /// `docs/model.md` §2 as they stand; the rest adds to them).
    plain: bool,
    /// The routed experts, for a mixture of experts.
    moe: Option<MoePhysics>,
    /// A mixture's weights outside the routed experts: per token, bytes per
    /// weight and the precision gain of their GEMMs.
    dense_params: f64,
    dense_bytes_per_weight: f64,
    dense_gain: Option<(Fp8Gain, f64)>,
    weight_bytes_per_gpu: f64,
    /// All-reduces per step: two per layer, one per MoE layer under EP.
    allreduces_per_step: f64,
    /// Attention FLOPs per pair over the layers, decode and prefill
    /// (latent attention's differ).
    decode_flops_per_pair: f64,
    prefill_flops_per_pair: f64,
    /// GPUs a token's KV is split over in an attention rank: TP, or 1 when
    /// every rank holds it whole (latent attention).
    kv_shards: f64,
    /// Sliding-window layers: their share of the layers, the window, and
    /// their KV bytes per token (read for the window's tokens only).
    sliding_share: f64,
    sliding_window: f64,
    sliding_kv_bytes_per_token: f64,
}

impl PerfModel {
    /// The model of `model` on `tp` GPUs of type `gpu`, its weights and GEMMs
    /// at `precision`. Attention and the KV cache stay in BF16 (the KV bytes
    /// come from the model profile).
    ///
    /// FP8 needs FP8 units: do not ask for it on a GPU without `fp8_tflops`
    /// ([`GpuProfile::supports`]; scenario validation refuses that pairing).
    /// A debug build asserts it; a release build runs such GEMMs with
    /// one-byte weights on the BF16 units (no FP8 gain).
    pub fn new(gpu: &GpuProfile, model: &ModelProfile, tp: u32, precision: Precision) -> Self {
        Self::with_layout(gpu, model, Layout::tp(tp), precision)
    }

    /// The model of `model` over `layout` on GPUs of type `gpu` at
    /// `precision` (a mixture of experts, latent attention and sliding
    /// windows included: `docs/model.md` §2.2).
    pub fn with_layout(
        gpu: &GpuProfile,
        model: &ModelProfile,
        layout: Layout,
        precision: Precision,
    ) -> Self {
        Self::with_figures(gpu, model, layout, precision, MoeFigures::roofline(gpu))
    }

    /// [`Self::with_layout`] with an engine's figures for the routed experts.
    pub(crate) fn with_figures(
        gpu: &GpuProfile,
        model: &ModelProfile,
        layout: Layout,
        precision: Precision,
        figures: MoeFigures,
    ) -> Self {
        debug_assert!(
            gpu.supports(precision),
            "{} has no {precision} units",
            gpu.name
        );
        let tp = layout.tp;
        let bf16_flops = gpu.bf16_tflops * 1e12;
        let plain = model.moe.is_none()
            && model.attention.kind == crate::profiles::AttentionKind::GroupedQuery
            && model.sliding_layers() == 0
            && layout.is_tp_only();
        let (_, dense_precision) = model.part_precisions(precision);
        let (expert_bytes, dense_bytes) = model.bytes_per_weight_at(precision);
        let total_params = model.params_billion * 1e9;
        let routed = model.routed_params_total();
        let weight_bytes_per_gpu = if model.moe.is_some() {
            (total_params - routed) * dense_bytes / f64::from(tp)
                + routed * expert_bytes / f64::from(layout.gpus())
        } else {
            total_params * precision.bytes_per_weight() / f64::from(tp)
        };
        let moe = MoePhysics::new(gpu, model, layout, precision, figures);
        let allreduces_per_step = match &moe {
            Some(m) if m.exchanges_tokens() => 2.0 * f64::from(model.layers) - m.layers(),
            _ => 2.0 * f64::from(model.layers),
        };
        let (decode_flops_per_pair, prefill_flops_per_pair) = model.attention_flops_per_pair();
        PerfModel {
            tp,
            precision,
            layers: f64::from(model.layers),
            hidden: f64::from(model.hidden),
            heads: f64::from(model.heads),
            head_dim: f64::from(model.head_dim),
            gemm_params: model.gemm_params(),
            gemm_params_total: model.gemm_params_total(),
            lm_head_params: model.lm_head_params(),
            bytes_per_weight: precision.bytes_per_weight(),
            kv_bytes_per_token: model.kv_bytes_per_token(),
            gemm_flops_per_s: gpu.compute_efficiency * bf16_flops,
            fp8_gain: precision_gain(gpu, precision),
            attention_flops_per_s: gpu.attention_efficiency() * bf16_flops,
            bytes_per_s: gpu.bandwidth_efficiency * gpu.bandwidth_bytes_per_s(),
            link_bytes_per_s: gpu.interconnect_gb_s * 1e9,
            hop_latency_s: gpu.hop_latency_us * 1e-6,
            step_overhead_s: gpu.step_overhead_ms * 1e-3,
            layers_fixed_s: f64::from(model.layers) * gpu.layer_overhead_us * 1e-6,
            usable_memory_bytes: gpu.usable_memory_bytes(),
            layout,
            plain,
            moe,
            dense_params: model.dense_gemm_params(),
            dense_bytes_per_weight: dense_bytes,
            dense_gain: precision_gain(gpu, dense_precision),
            weight_bytes_per_gpu,
            allreduces_per_step,
            decode_flops_per_pair,
            prefill_flops_per_pair,
            kv_shards: if model.kv_replicated_over_tp() {
                1.0
            } else {
                f64::from(tp)
            },
            sliding_share: f64::from(model.sliding_layers()) / f64::from(model.layers),
            sliding_window: model.sliding_window(),
            sliding_kv_bytes_per_token: model.sliding_kv_bytes_per_token(),
        }
    }

    /// The replica's layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// GPUs per replica: TP × attention-DP.
    pub fn gpus(&self) -> u32 {
        self.layout.gpus()
    }

    /// The routed experts, for a mixture of experts.
    pub fn moe(&self) -> Option<&MoePhysics> {
        self.moe.as_ref()
    }

    /// All-reduces per step.
    pub(crate) fn allreduces_per_step(&self) -> f64 {
        self.allreduces_per_step
    }

    /// Data-parallel attention ranks.
    pub(crate) fn attention_ranks(&self) -> u32 {
        self.layout.attention_dp
    }

    fn tp(&self) -> f64 {
        f64::from(self.tp)
    }

    /// Time of a step that does not depend on its work: engine overhead plus
    /// the fixed GPU time of every layer.
    fn fixed_s(&self) -> f64 {
        self.step_overhead_s + self.layers_fixed_s
    }

    /// Weight bytes held by each GPU of the replica: a dense model's
    /// weights split over TP; a mixture's dense parts split over TP and its
    /// routed experts over all of the replica's GPUs.
    pub fn weight_bytes_per_gpu(&self) -> f64 {
        self.weight_bytes_per_gpu
    }

    /// Memory per GPU for weights and KV cache, in bytes.
    pub fn usable_memory_bytes_per_gpu(&self) -> f64 {
        self.usable_memory_bytes
    }

    /// KV-cache bytes per token of context.
    pub fn kv_bytes_per_token(&self) -> f64 {
        self.kv_bytes_per_token
    }

    /// The busiest attention rank's share of a step's work when it holds
    /// `sequences` sequences: ceil(S / DP) / S (a prompt stays on one rank,
    /// decoding sequences spread evenly); 1 without data-parallel attention.
    pub fn rank_share(&self, sequences: f64) -> f64 {
        if self.layout.attention_dp == 1 {
            return 1.0;
        }
        let s = sequences.max(1.0);
        (s / f64::from(self.attention_ranks())).ceil() / s
    }

    /// Time of the two all-reduces per layer over `tokens` tokens of
    /// activations of `sequences` sequences (the busiest attention rank's
    /// share of them): ring cost 2 (TP−1)/TP × message / link bandwidth
    /// plus one hop latency each. Zero at TP 1.
    pub fn allreduce_s(&self, tokens: f64, sequences: f64) -> f64 {
        if self.tp == 1 {
            return 0.0;
        }
        let message = tokens * self.rank_share(sequences) * self.hidden * ACTIVATION_BYTES;
        let one = 2.0 * (self.tp() - 1.0) / self.tp() * message / self.link_bytes_per_s
            + self.hop_latency_s;
        self.allreduces_per_step * one
    }

    /// The routed experts' grouped GEMMs of a step of `tokens` tokens on
    /// the busiest GPU (0 for a dense model).
    pub fn expert_gemm_s(&self, tokens: f64) -> f64 {
        self.moe.as_ref().map_or(0.0, |m| m.gemm_s(tokens))
    }

    /// The expert-parallel all-to-all of a step of `tokens` tokens (0 at
    /// EP 1, and under tensor-parallel attention, whose all-reduces combine
    /// the experts' parts).
    pub fn all_to_all_s(&self, tokens: f64) -> f64 {
        self.moe.as_ref().map_or(0.0, |m| m.all_to_all_s(tokens))
    }

    /// One GEMM group at its own bound: `flops` over `tokens` tokens against
    /// `weight_bytes` of weights, split over the replica.
    fn gemm_bound_s(&self, flops: f64, weight_bytes: f64, tokens: f64) -> f64 {
        self.bound_with_gain_s(flops, weight_bytes, tokens, self.fp8_gain)
    }

    /// [`Self::gemm_bound_s`] at the precision gain `gain`.
    fn bound_with_gain_s(
        &self,
        flops: f64,
        weight_bytes: f64,
        tokens: f64,
        gain: Option<(Fp8Gain, f64)>,
    ) -> f64 {
        let memory = weight_bytes / (self.tp() * self.bytes_per_s);
        super::gain::bound_s(
            flops,
            self.tp() * self.gemm_flops_per_s,
            memory,
            gain,
            tokens,
        )
    }

    /// The weight GEMMs of a step, in seconds: the layers' GEMMs over
    /// `tokens` tokens, max(2 N_g T / (TP η_c P g(T)), w N_read(T) / (TP η_m BW)),
    /// plus the LM head over the `logit_tokens` tokens that produce logits,
    /// max(2 V h T_logit / (TP η_c P g(T_logit)), w V h / (TP η_m BW)).
    pub fn gemm_s(&self, tokens: f64, logit_tokens: f64) -> f64 {
        if tokens <= 0.0 {
            return 0.0;
        }
        if self.moe.is_some() {
            return self.dense_parts_gemm_s(tokens, logit_tokens);
        }
        let read = (self.gemm_params * tokens.max(1.0)).min(self.gemm_params_total);
        let layers = self.gemm_bound_s(
            2.0 * self.gemm_params * tokens,
            read * self.bytes_per_weight,
            tokens,
        );
        let head = if logit_tokens > 0.0 {
            self.gemm_bound_s(
                2.0 * self.lm_head_params * logit_tokens,
                self.lm_head_params * self.bytes_per_weight,
                logit_tokens,
            )
        } else {
            0.0
        };
        layers + head
    }

    /// A mixture's GEMMs outside the routed experts: the busiest attention
    /// rank runs its share of the tokens (those of its sequences, one
    /// sequence per logit) through the dense parts (split over TP, at their
    /// own format) and its logits through the LM head.
    fn dense_parts_gemm_s(&self, tokens: f64, logit_tokens: f64) -> f64 {
        let share = self.rank_share(logit_tokens);
        let (t, l) = (tokens * share, logit_tokens * share);
        let dense = self.bound_with_gain_s(
            2.0 * self.dense_params * t,
            self.dense_params * self.dense_bytes_per_weight,
            t,
            self.dense_gain,
        );
        let head = if l > 0.0 {
            self.bound_with_gain_s(
                2.0 * self.lm_head_params * l,
                self.lm_head_params * self.dense_bytes_per_weight,
                l,
                self.dense_gain,
            )
        } else {
            0.0
        };
        dense + head
    }

    /// Attention of a step's work, in seconds, at its own bound:
    /// [`Self::attention_s`] for plain grouped-query attention; otherwise
    /// the pairs of decoding tokens (at most the KV read) at the decode
    /// FLOPs and the rest at the prefill FLOPs, sliding-window layers
    /// bounded to the window per token and per sequence, all split over the
    /// attention ranks and their TP.
    pub fn attention_work_s(&self, work: &StepWork) -> f64 {
        if self.plain {
            return self.attention_s(work.attention_pairs, work.kv_read_tokens);
        }
        let share = self.rank_share(work.sequences);
        let split = self.tp() * self.attention_flops_per_s / share;
        let full = 1.0 - self.sliding_share;
        let decode_pairs = work.attention_pairs.min(work.kv_read_tokens);
        let prefill_pairs = work.attention_pairs - decode_pairs;
        let windowed_pairs = work.attention_pairs.min(work.tokens * self.sliding_window);
        let compute = (full
            * (self.decode_flops_per_pair * decode_pairs
                + self.prefill_flops_per_pair * prefill_pairs)
            + self.sliding_share * self.prefill_flops_per_pair * windowed_pairs)
            / split;
        let (_, per_kv_token_s) = self.attention_per_unit_at(share);
        let windowed_kv = work
            .kv_read_tokens
            .min(work.sequences * self.sliding_window);
        let memory =
            per_kv_token_s * work.kv_read_tokens + self.sliding_kv_per_token_s(share) * windowed_kv;
        compute.max(memory)
    }

    /// Seconds per token of sliding-window KV read, the busiest rank
    /// reading `share` of them.
    fn sliding_kv_per_token_s(&self, share: f64) -> f64 {
        self.sliding_kv_bytes_per_token * share / (self.kv_shards * self.bytes_per_s)
    }

    /// The attention lines of a decode run of `batch` sequences:
    /// (at zero, per context token) for compute and for memory. The
    /// sliding-window layers add a constant: each sequence's window (its
    /// context is taken to exceed the window).
    pub(crate) fn decode_attention_lines(&self, batch: f64) -> ((f64, f64), (f64, f64)) {
        if self.plain {
            let (per_pair_s, per_kv_token_s) = self.attention_per_unit();
            return ((0.0, per_pair_s), (0.0, per_kv_token_s));
        }
        let share = self.rank_share(batch);
        let (per_pair_s, per_kv_token_s) = self.attention_per_unit_at(share);
        let split = self.tp() * self.attention_flops_per_s / share;
        let windowed = batch * self.sliding_window;
        (
            (
                self.sliding_share * self.decode_flops_per_pair * windowed / split,
                per_pair_s,
            ),
            (
                self.sliding_kv_per_token_s(share) * windowed,
                per_kv_token_s,
            ),
        )
    }

    /// [`Self::attention_per_unit`] of a mixture or a latent or windowed
    /// attention, the busiest attention rank doing `share` of the work.
    fn attention_per_unit_at(&self, share: f64) -> (f64, f64) {
        (
            (1.0 - self.sliding_share) * self.decode_flops_per_pair * share
                / (self.tp() * self.attention_flops_per_s),
            self.kv_bytes_per_token * share / (self.kv_shards * self.bytes_per_s),
        )
    }

    /// Attention of a step, in seconds, at its own bound:
    /// max(4 L H d A / (TP η_att P_bf16), R kv / (TP η_m BW)) for `pairs`
    /// (query, key) pairs and `kv_read_tokens` tokens of KV cache read.
    pub fn attention_s(&self, pairs: f64, kv_read_tokens: f64) -> f64 {
        let (compute, memory) = self.attention_per_unit();
        (compute * pairs).max(memory * kv_read_tokens)
    }

    /// Seconds per (query, key) pair at the attention's compute bound, and
    /// per token of KV cache read at its memory bound.
    pub(crate) fn attention_per_unit(&self) -> (f64, f64) {
        if !self.plain {
            return self.attention_per_unit_at(1.0 / f64::from(self.attention_ranks()));
        }
        (
            4.0 * self.layers * self.heads * self.head_dim
                / (self.tp() * self.attention_flops_per_s),
            self.kv_bytes_per_token / (self.tp() * self.bytes_per_s),
        )
    }
}

impl StepTime for PerfModel {
    /// The parts of one engine step (see [`Self::step_s`]); all zero for a
    /// step without tokens.
    fn step_parts(&self, work: &StepWork) -> StepParts {
        if work.tokens <= 0.0 {
            return StepParts::default();
        }
        StepParts {
            gemm_s: self.gemm_s(work.tokens, work.logit_tokens),
            expert_gemm_s: self.expert_gemm_s(work.tokens),
            attention_s: self.attention_work_s(work),
            allreduce_s: self.allreduce_s(work.tokens, work.sequences),
            all_to_all_s: self.all_to_all_s(work.tokens),
            fixed_gpu_s: self.layers_fixed_s,
            moe_setup_s: 0.0,
            cpu_overhead_s: self.step_overhead_s,
            cpu_overlaps_gpu: false,
        }
    }

    /// One engine step of continuous batching, in seconds: the weight GEMMs
    /// ([`Self::gemm_s`]) + attention ([`Self::attention_s`]) + all-reduces +
    /// fixed GPU time (L τ_layer) + engine overhead (τ_step), each part at its
    /// own bound. [`Self::prefill_s`] and [`Self::decode_step_s`] are its two
    /// pure cases.
    fn step_s(&self, work: &StepWork) -> f64 {
        self.step_parts(work).total_s()
    }

    /// A run of decode-only steps of `batch` sequences whose contexts sum to
    /// `context_tokens` at the first step (each step adds `batch` tokens).
    fn decode_run(&self, batch: u32, context_tokens: f64) -> DecodeRun {
        let b = f64::from(batch);
        let (compute, memory) = self.decode_attention_lines(b);
        DecodeRun::new(
            compute,
            memory,
            self.gemm_s(b, b)
                + self.expert_gemm_s(b)
                + self.allreduce_s(b, b)
                + self.all_to_all_s(b)
                + self.fixed_s(),
            0.0,
            context_tokens,
            b,
        )
    }

    /// Tokens of KV cache the whole replica holds after the weights; negative
    /// when the weights alone do not fit.
    fn kv_capacity_tokens(&self) -> f64 {
        if !self.plain {
            return (self.usable_memory_bytes - self.weight_bytes_per_gpu())
                * self.kv_shards
                * f64::from(self.attention_ranks())
                / self.kv_bytes_per_token;
        }
        (self.usable_memory_bytes - self.weight_bytes_per_gpu()) * self.tp()
            / self.kv_bytes_per_token
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn h100() -> GpuProfile {
        GpuProfile {
            name: "H100".into(),
            vendor: None,
            memory_gb: 80.0,
            memory_bandwidth_tb_s: 3.35,
            bf16_tflops: 989.0,
            fp8_tflops: Some(1979.0),
            fp4_tflops: None,
            interconnect: "NVLink4".into(),
            interconnect_gb_s: 450.0,
            link_peak_gb_s: None,
            fully_connected: false,
            hop_latency_us: 8.0,
            gpus_per_node: 8,
            nvlink_domain_gpus: None,
            scaleout_gb_s: None,
            compute_efficiency: 0.7,
            bandwidth_efficiency: 0.8,
            attention_efficiency: None,
            step_overhead_ms: 0.0,
            layer_overhead_us: 0.0,
            usable_memory_fraction: 0.9,
            source: "test".into(),
            calibration: crate::profiles::Calibration::Datasheet,
        }
    }

    pub(crate) fn llama8b() -> ModelProfile {
        ModelProfile {
            name: "Llama 3.1 8B".into(),
            params_billion: 8.03,
            active_params_billion: 8.03,
            layers: 32,
            hidden: 4096,
            vocab_size: 128_256,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            bytes_per_weight: 2.0,
            kv_bytes_per_element: 2.0,
            max_context_tokens: 131_072,
            extended_context: None,
            moe: None,
            attention: crate::profiles::Attention::default(),
            weights: None,
            hf_id: None,
            checkpoints: Vec::new(),
            speculative: None,
            source: "test".into(),
        }
    }

    /// Llama 3.1 8B's LM head (and embedding): 128,256 × 4,096.
    const HEAD: f64 = 128_256.0 * 4096.0;

    #[test]
    fn a_memory_bound_gemm_skips_its_gain_with_the_same_value() {
        let m = PerfModel::new(&h100(), &llama8b(), 2, Precision::Fp8);
        let (gain, max) = m.fp8_gain.expect("the H100 has FP8 units");
        for tokens in (0..14)
            .map(|k| f64::from(1u32 << k))
            .chain([3.0, 77.0, 1_000.0])
        {
            let flops = 2.0 * m.gemm_params * tokens;
            let bytes = m.gemm_params_total * m.bytes_per_weight;
            let full = (flops / (m.tp() * m.gemm_flops_per_s * gain.at(tokens, max)))
                .max(bytes / (m.tp() * m.bytes_per_s));
            assert_eq!(
                m.gemm_bound_s(flops, bytes, tokens),
                full,
                "{tokens} tokens"
            );
        }
    }

    #[test]
    fn decode_at_batch_one_is_the_weight_read_time() {
        let m = PerfModel::new(&h100(), &llama8b(), 1, Precision::Bf16);
        // Every weight but the embedding (a lookup) is read once: 8.03e9 −
        // 0.525e9 params x 2 B = 15.01 GB at 0.8 x 3.35 TB/s = 5.60 ms, plus
        // the KV read of 1,000 tokens x 128 KiB = 0.131 GB (0.049 ms).
        let bytes_per_s = 0.8 * 3.35e12;
        let expected = ((8.03e9 - HEAD) * 2.0 + 1000.0 * 131_072.0) / bytes_per_s;
        assert!((m.decode_step_s(1.0, 1000.0) - expected).abs() < 1e-9);
    }

    #[test]
    fn prefill_of_a_long_prompt_is_compute_bound() {
        let m = PerfModel::new(&h100(), &llama8b(), 1, Precision::Bf16);
        let s = 2048.0;
        let flops_per_s = 0.7 * 989e12;
        let layers = 2.0 * (8.03e9 - 2.0 * HEAD) * s / flops_per_s;
        // One logit: the LM head is a weight read.
        let head = HEAD * 2.0 / (0.8 * 3.35e12);
        let attention = 4.0 * 32.0 * 32.0 * 128.0 * s * s / 2.0 / flops_per_s;
        let expected = layers + head + attention;
        assert!(
            (m.prefill_s(s) - expected).abs() < 1e-9,
            "{} vs {expected}",
            m.prefill_s(s)
        );
    }

    #[test]
    fn tensor_parallel_adds_all_reduce_cost() {
        let m = PerfModel::new(&h100(), &llama8b(), 2, Precision::Bf16);
        // One token: 2 layers-worth of all-reduces per layer: 2 x 32 x (0.5 x 2 x 8192 B / 450 GB/s + 8 us).
        let one = 2.0 * 0.5 * 4096.0 * 2.0 / 450e9 + 8e-6;
        assert!((m.allreduce_s(1.0, 1.0) - 64.0 * one).abs() < 1e-12);
        assert_eq!(
            PerfModel::new(&h100(), &llama8b(), 1, Precision::Bf16).allreduce_s(1.0, 1.0),
            0.0
        );
    }

    #[test]
    fn kv_capacity_after_weights() {
        let m = PerfModel::new(&h100(), &llama8b(), 1, Precision::Bf16);
        let expected = (72e9 - 16.06e9) / 131_072.0;
        assert!((m.kv_capacity_tokens() - expected).abs() < 1e-6);
        // FP8 weights take one byte; the KV cache stays BF16.
        let fp8 = PerfModel::new(&h100(), &llama8b(), 1, Precision::Fp8);
        assert!((fp8.kv_capacity_tokens() - (72e9 - 8.03e9) / 131_072.0).abs() < 1e-6);
    }

    #[test]
    fn step_work_reduces_to_prefill_and_decode() {
        let m = PerfModel::new(&h100(), &llama8b(), 2, Precision::Bf16);
        let prefill = StepWork {
            tokens: 3000.0,
            attention_pairs: 3000.0 * 3000.0 / 2.0,
            kv_read_tokens: 0.0,
            logit_tokens: 1.0,
            sequences: 1.0,
        };
        assert!((m.step_s(&prefill) - m.prefill_s(3000.0)).abs() < 1e-12);
        let decode = StepWork {
            tokens: 16.0,
            attention_pairs: 16.0 * 900.0,
            kv_read_tokens: 16.0 * 900.0,
            logit_tokens: 16.0,
            sequences: 16.0,
        };
        assert!((m.step_s(&decode) - m.decode_step_s(16.0, 900.0)).abs() < 1e-12);
    }

    #[test]
    fn a_step_is_the_sum_of_parts_each_at_its_own_bound() {
        let m = PerfModel::new(&h100(), &llama8b(), 1, Precision::Bf16);
        // Large-batch decode: the GEMMs are compute-bound while attention is
        // bound by the KV read; one max over the whole step hides one of them.
        let (b, c) = (512.0, 2000.0);
        let work = StepWork {
            tokens: b,
            attention_pairs: b * c,
            kv_read_tokens: b * c,
            logit_tokens: b,
            sequences: b,
        };
        let parts = m.step_parts(&work);
        let kv_read_s = b * c * 131_072.0 / (0.8 * 3.35e12);
        assert!((parts.attention_s - kv_read_s).abs() < 1e-12);
        let flops_per_s = 0.7 * 989e12;
        let layers_s = 2.0 * (8.03e9 - 2.0 * HEAD) * b / flops_per_s;
        let head_s = (2.0 * HEAD * b / flops_per_s).max(2.0 * HEAD / (0.8 * 3.35e12));
        assert!((parts.gemm_s - layers_s - head_s).abs() < 1e-12);
        assert!((m.step_s(&work) - parts.total_s()).abs() < 1e-15);
        assert!(m.step_s(&work) > parts.gemm_s.max(parts.attention_s));
    }

    #[test]
    fn the_lm_head_is_charged_only_for_tokens_with_logits() {
        let m = PerfModel::new(&h100(), &llama8b(), 1, Precision::Bf16);
        let chunk = |logit_tokens| StepWork {
            tokens: 512.0,
            attention_pairs: 512.0 * 512.0 / 2.0,
            kv_read_tokens: 0.0,
            logit_tokens,
            sequences: 1.0,
        };
        // A chunk that does not finish its prompt skips the LM head; the one
        // that does reads its weights once (memory-bound at one token).
        let head_s = HEAD * 2.0 / (0.8 * 3.35e12);
        let gap = m.step_s(&chunk(1.0)) - m.step_s(&chunk(0.0));
        assert!((gap - head_s).abs() < 1e-12, "{gap} vs {head_s}");
    }

    #[test]
    fn fp8_gain_grows_with_tokens_and_is_capped() {
        let g = crate::perf::gain::FP8_GEMM_GAIN;
        assert!(g.at(16.0, 2.0) < g.at(1024.0, 2.0));
        assert!(g.at(1e9, 2.0) <= 2.0);
        assert!(g.at(0.0, 2.0) >= 1.0);
        assert_eq!(g.at(1e9, 1.5), 1.5);
    }

    #[test]
    fn fp8_halves_the_weight_read_and_speeds_up_compute_at_most_twofold() {
        let bf16 = PerfModel::new(&h100(), &llama8b(), 1, Precision::Bf16);
        let fp8 = PerfModel::new(&h100(), &llama8b(), 1, Precision::Fp8);
        // Batch 1 decode, short context: the weight read halves.
        let (b, f) = (bf16.gemm_s(1.0, 1.0), fp8.gemm_s(1.0, 1.0));
        assert!((b / f - 2.0).abs() < 1e-9, "{}", b / f);
        for s in [256.0, 2048.0, 8192.0, 32768.0] {
            let ratio = bf16.prefill_s(s) / fp8.prefill_s(s);
            assert!(ratio > 1.0 && ratio <= 2.0, "prefill {s}: {ratio}");
        }
        // Attention does not change with the weights' precision.
        assert_eq!(bf16.attention_s(1e6, 1e6), fp8.attention_s(1e6, 1e6));
    }

    #[test]
    fn gpus_without_fp8_units_do_not_support_fp8() {
        let mut a100 = h100();
        a100.fp8_tflops = None;
        assert!(!a100.supports(Precision::Fp8));
        assert!(a100.supports(Precision::Bf16));
        assert!(h100().supports(Precision::Fp8));
    }
}
