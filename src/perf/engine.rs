//! The engine-aware step model: the roofline model's kernel physics (GEMMs,
//! attention, bandwidth) with what a production engine does on top, from an
//! engine profile ([`crate::profiles::EngineProfile`]):
//!
//! * a decode-only step of B sequences with a captured CUDA graph runs the
//!   graph of the next captured size B' ≥ B: its GEMMs, LM head and
//!   all-reduces cover B' tokens and each layer costs `graph_layer_us`;
//!   any other step costs `eager_layer_us` per layer;
//! * the two all-reduces per layer use the engine's custom kernel for a
//!   message of at most `custom_allreduce_max_bytes` at a TP it supports on
//!   fully connected GPUs (one-shot: latency + (TP−1) m / bw; two-shot:
//!   2 latency + 2 (TP−1)/TP m / bw), NCCL's ring above (2 (TP−1)/TP m / bw
//!   plus the GPU profile's hop latency), where bw is
//!   `allreduce_bandwidth_fraction` × the GPU's peak link bandwidth;
//! * the CPU's time per step (`cpu_step_ms` + `cpu_per_sequence_us` × the
//!   step's sequences) overlaps the GPU's step (the step takes the longer)
//!   or adds to it;
//! * GEMM and attention efficiencies are the GPU profile's times the
//!   engine's scales, each at most 1; the memory for weights and KV cache is
//!   `memory_utilization` of the GPU's, and an FP8 recipe may halve the KV
//!   bytes.
//!
//! Formulas in `docs/model.md` §2.1.

use super::layout::{Layout, ACTIVATION_BYTES};
use super::moe::MoeFigures;
use super::{DecodeRun, PerfModel, StepParts, StepTime, StepWork};
use crate::profiles::precision::Precision;
use crate::profiles::{EngineProfile, GpuProfile, ModelProfile};

/// The step model of one replica on one engine.
#[derive(Debug, Clone)]
pub struct EngineModel {
    id: String,
    roofline: PerfModel,
    layers: f64,
    /// Fixed GPU time of the MoE layers' routing kernels per step, and
    /// what a step that runs without a captured graph adds to it (per
    /// routed expert of every MoE layer).
    moe_fixed_s: f64,
    moe_eager_s: f64,
    message_bytes_per_token: f64,
    graph_sizes: Vec<u32>,
    graph_layer_s: f64,
    eager_layer_s: f64,
    cpu_step_s: f64,
    cpu_per_sequence_s: f64,
    cpu_overlaps_gpu: bool,
    /// The custom all-reduce: (largest message, largest one-shot message,
    /// latency of one pass), when it runs at this TP on this GPU.
    custom_allreduce: Option<(f64, f64, f64)>,
    allreduce_bytes_per_s: f64,
    nccl_latency_s: f64,
    frontend_s: f64,
    /// The server's fixed time in a request's first token, and its time per
    /// prompt token (s).
    server_s: f64,
    server_s_per_prompt_token: f64,
    /// How much slower than the figures the steps run (the band's edge).
    slowdown: crate::profiles::engine::StepSlowdown,
    reserve_output_kv: bool,
    attention_dp_budget: crate::profiles::engine::AttentionDpBudget,
}

/// The efficiencies of `gpu` scaled by `engine`'s, each at most 1.
pub(crate) fn engine_efficiencies(gpu: &GpuProfile, engine: &EngineProfile) -> (f64, f64) {
    (
        (gpu.compute_efficiency * engine.gemm_efficiency_scale).min(1.0),
        (gpu.attention_efficiency() * engine.attention_efficiency_scale).min(1.0),
    )
}

/// Whether `engine` keeps the KV cache in FP8 at `precision` (its FP8
/// recipe, which the FP4 recipes keep too).
pub(crate) fn fp8_kv_cache(engine: &EngineProfile, precision: Precision) -> bool {
    engine.fp8_kv_cache && matches!(precision, Precision::Fp8 | Precision::Fp4)
}

/// `model` as the engine holds it: one byte per KV element where the engine
/// keeps an FP8 KV cache.
pub(crate) fn engine_model_shape(
    model: &ModelProfile,
    engine: &EngineProfile,
    precision: Precision,
) -> ModelProfile {
    let mut shape = model.clone();
    if fp8_kv_cache(engine, precision) {
        shape.kv_bytes_per_element = shape.kv_bytes_per_element.min(1.0);
    }
    shape
}

/// Why `tp` GPUs of `gpu` cannot run `model` under a tensor-parallel engine
/// (vLLM, SGLang and TensorRT-LLM split the attention heads evenly and need
/// the KV heads split or replicated evenly; a replica stays in one node), or
/// `None` when they can.
pub fn tp_problem(gpu: &GpuProfile, model: &ModelProfile, tp: u32) -> Option<String> {
    if tp == 0 {
        return Some("a replica needs at least one GPU".into());
    }
    if !model.heads.is_multiple_of(tp) {
        return Some(format!(
            "TP {tp} does not divide {}'s {} attention heads",
            model.name, model.heads
        ));
    }
    if !(model.kv_heads.is_multiple_of(tp) || tp.is_multiple_of(model.kv_heads)) {
        return Some(format!(
            "TP {tp} neither divides nor is a multiple of {}'s {} KV heads",
            model.name, model.kv_heads
        ));
    }
    if tp > gpu.gpus_per_node {
        return Some(format!(
            "TP {tp} is more than the {} GPUs of one {} node",
            gpu.gpus_per_node, gpu.name
        ));
    }
    None
}

impl EngineModel {
    /// `model` on `tp` GPUs of `gpu` at `precision`, served by `engine`
    /// (whose id is `id`).
    pub fn new(
        id: &str,
        engine: &EngineProfile,
        gpu: &GpuProfile,
        model: &ModelProfile,
        tp: u32,
        precision: Precision,
    ) -> Self {
        Self::with_layout(id, engine, gpu, model, Layout::tp(tp), precision)
    }

    /// `model` over `layout` on GPUs of `gpu` at `precision`, served by
    /// `engine`: the experts' figures (imbalance, grouped-GEMM efficiency,
    /// all-to-all latency) from the engine profile, the all-to-all at its
    /// all-reduce bandwidth fraction of the link.
    pub fn with_layout(
        id: &str,
        engine: &EngineProfile,
        gpu: &GpuProfile,
        model: &ModelProfile,
        layout: Layout,
        precision: Precision,
    ) -> Self {
        let tp = layout.tp;
        let (gemm, attention) = engine_efficiencies(gpu, engine);
        let physics = GpuProfile {
            compute_efficiency: gemm,
            attention_efficiency: Some(attention),
            layer_overhead_us: 0.0,
            step_overhead_ms: 0.0,
            usable_memory_fraction: engine.memory_utilization,
            ..gpu.clone()
        };
        let shape = engine_model_shape(model, engine, precision);
        let link_bytes_per_s = engine.allreduce_bandwidth_fraction * gpu.link_peak_gb_s() * 1e9;
        let roofline = PerfModel::with_figures(
            &physics,
            &shape,
            layout,
            precision,
            MoeFigures::engine(engine, link_bytes_per_s),
        );
        let custom = (tp > 1
            && gpu.fully_connected
            && engine.custom_allreduce_world_sizes.contains(&tp)
            && engine.custom_allreduce_max_bytes > 0.0)
            .then_some((
                engine.custom_allreduce_max_bytes,
                engine.custom_allreduce_one_shot_max_bytes,
                engine.custom_allreduce_latency_us * 1e-6,
            ));
        EngineModel {
            id: id.to_string(),
            roofline,
            layers: f64::from(model.layers),
            moe_fixed_s: f64::from(model.moe_layers()) * engine.moe_layer_us * 1e-6,
            moe_eager_s: model.moe.as_ref().map_or(0.0, |m| {
                f64::from(model.moe_layers()) * f64::from(m.experts) * engine.moe_eager_expert_us
            }) * 1e-6,
            message_bytes_per_token: f64::from(model.hidden) * ACTIVATION_BYTES,
            graph_sizes: engine.cuda_graph_batch_sizes.clone(),
            graph_layer_s: engine.graph_layer_us * 1e-6,
            eager_layer_s: engine.eager_layer_us * 1e-6,
            cpu_step_s: engine.cpu_step_ms * 1e-3,
            cpu_per_sequence_s: engine.cpu_per_sequence_us * 1e-6,
            cpu_overlaps_gpu: engine.cpu_overlaps_gpu,
            custom_allreduce: custom,
            allreduce_bytes_per_s: link_bytes_per_s,
            nccl_latency_s: gpu.hop_latency_us * 1e-6,
            frontend_s: engine.frontend_ms_per_request * 1e-3,
            server_s: engine.server_ms_per_request * 1e-3,
            server_s_per_prompt_token: engine.server_us_per_prompt_token * 1e-6,
            slowdown: engine.slowdown,
            reserve_output_kv: engine.reserve_output_kv,
            attention_dp_budget: engine.attention_dp_budget,
        }
    }

    /// The engine's id (its profile's file stem, or the calibrated file's
    /// path).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The roofline model underneath, with the engine's efficiencies and
    /// memory and no fixed costs of its own.
    pub fn roofline(&self) -> &PerfModel {
        &self.roofline
    }

    /// Whether a request is admitted only when its whole output fits too.
    pub fn reserve_output_kv(&self) -> bool {
        self.reserve_output_kv
    }

    /// How data-parallel attention ranks share the token budget.
    pub fn attention_dp_budget(&self) -> crate::profiles::engine::AttentionDpBudget {
        self.attention_dp_budget
    }

    /// Seconds the front end takes per request.
    pub fn frontend_s(&self) -> f64 {
        self.frontend_s
    }

    /// Seconds the server adds to the first token of a request of
    /// `input_tokens` outside the GPU's steps (`docs/model.md` §2.1).
    pub fn server_s(&self, input_tokens: u32) -> f64 {
        (self.server_s + self.server_s_per_prompt_token * f64::from(input_tokens))
            * self.slowdown.prompt
    }

    /// The batch a step replays as a captured CUDA graph, when it is a
    /// decode-only step that one holds; `None` when the step runs eagerly.
    pub(crate) fn captured(&self, work: &StepWork) -> Option<f64> {
        let decode_only = work.tokens <= work.sequences && work.logit_tokens >= work.tokens;
        if decode_only {
            self.graph_batch(work.tokens)
        } else {
            None
        }
    }

    /// The fixed GPU time of a step's layers and MoE layers: replayed from a
    /// captured graph, or launched eagerly (each routed expert's set-up
    /// included).
    fn fixed_gpu_s(&self, captured: bool) -> f64 {
        if captured {
            self.layers * self.graph_layer_s + self.moe_fixed_s
        } else {
            self.layers * self.eager_layer_s + self.moe_fixed_s
        }
    }

    /// The per-expert set-up of a step's MoE layers when it runs without
    /// a captured graph (0 when one is replayed, and for a dense model).
    fn moe_setup_s(&self, captured: bool) -> f64 {
        if captured {
            0.0
        } else {
            self.moe_eager_s
        }
    }

    /// The captured size a decode-only step of `batch` sequences runs as.
    /// With data-parallel attention each rank captures its own graphs:
    /// the busiest rank's sequences pad to the next size, on every rank.
    fn graph_batch(&self, batch: f64) -> Option<f64> {
        let dp = f64::from(self.roofline.attention_ranks());
        let per_rank = if dp > 1.0 { (batch / dp).ceil() } else { batch };
        self.graph_sizes
            .iter()
            .map(|&s| f64::from(s))
            .find(|&s| s >= per_rank)
            .map(|s| s * dp)
    }

    /// The two all-reduces per layer over `tokens` tokens, all layers.
    pub fn allreduce_s(&self, tokens: f64, sequences: f64) -> f64 {
        let tp = f64::from(self.roofline.tp);
        if self.roofline.tp == 1 || tokens <= 0.0 {
            return 0.0;
        }
        let message = tokens * self.roofline.rank_share(sequences) * self.message_bytes_per_token;
        let bw = self.allreduce_bytes_per_s;
        let one = match self.custom_allreduce {
            Some((max, one_shot_max, latency)) if message <= max => {
                if message <= one_shot_max {
                    latency + (tp - 1.0) * message / bw
                } else {
                    2.0 * latency + 2.0 * (tp - 1.0) / tp * message / bw
                }
            }
            _ => 2.0 * (tp - 1.0) / tp * message / bw + self.nccl_latency_s,
        };
        self.roofline.allreduces_per_step() * one
    }

    /// The CPU's seconds for a step of `sequences` sequences.
    fn cpu_s(&self, sequences: f64) -> f64 {
        self.cpu_step_s + self.cpu_per_sequence_s * sequences
    }
}

impl StepTime for EngineModel {
    fn step_parts(&self, work: &StepWork) -> StepParts {
        if work.tokens <= 0.0 {
            return StepParts::default();
        }
        let graph = self.captured(work);
        let (tokens, logits, sequences) = match graph {
            Some(padded) => (padded, padded, padded),
            None => (work.tokens, work.logit_tokens, work.sequences),
        };
        // A step carries prompt tokens when it has more tokens than
        // sequences (each decoding sequence brings one).
        let k = if work.tokens > work.sequences {
            self.slowdown.prompt
        } else {
            self.slowdown.decode
        };
        StepParts {
            gemm_s: k * self.roofline.gemm_s(tokens, logits),
            expert_gemm_s: k * self.roofline.expert_gemm_s(tokens),
            attention_s: k * self.roofline.attention_work_s(work),
            allreduce_s: k * self.allreduce_s(tokens, sequences),
            all_to_all_s: k * self.roofline.all_to_all_s(tokens),
            fixed_gpu_s: k * self.fixed_gpu_s(graph.is_some()),
            moe_setup_s: k * self.moe_setup_s(graph.is_some()),
            cpu_overhead_s: k * self.cpu_s(work.sequences),
            cpu_overlaps_gpu: self.cpu_overlaps_gpu,
        }
    }

    fn decode_run(&self, batch: u32, context_tokens: f64) -> DecodeRun {
        let b = f64::from(batch);
        let graph = self.graph_batch(b);
        let tokens = graph.unwrap_or(b);
        let (compute, memory) = self.roofline.decode_attention_lines(b);
        let gpu_fixed_s = self.roofline.gemm_s(tokens, tokens)
            + self.roofline.expert_gemm_s(tokens)
            + self.allreduce_s(tokens, tokens)
            + self.roofline.all_to_all_s(tokens)
            + self.fixed_gpu_s(graph.is_some());
        let cpu_s = self.cpu_s(b);
        let setup_s = self.moe_setup_s(graph.is_some());
        let (fixed_s, floor_s) = if self.cpu_overlaps_gpu {
            (gpu_fixed_s, cpu_s.max(setup_s))
        } else {
            // The CPU adds to every step; a set-up is a floor under the
            // GPU's part, so the step is at least the two together (no
            // floor without a set-up: the step already holds the CPU's).
            (
                gpu_fixed_s + cpu_s,
                if setup_s > 0.0 { setup_s + cpu_s } else { 0.0 },
            )
        };
        let k = self.slowdown.decode;
        let scaled = |(a, b): (f64, f64)| (k * a, k * b);
        DecodeRun::new(
            scaled(compute),
            scaled(memory),
            k * fixed_s,
            k * floor_s,
            context_tokens,
            b,
        )
    }

    fn kv_capacity_tokens(&self) -> f64 {
        self.roofline.kv_capacity_tokens()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::perf::step::tests::{h100, llama8b};
    use crate::profiles::engine_fixture as vllm;

    fn nvlink_h100() -> GpuProfile {
        GpuProfile {
            fully_connected: true,
            link_peak_gb_s: Some(450.0),
            ..h100()
        }
    }

    /// A decode-only step of `batch` sequences each at `context` tokens.
    pub(crate) fn decode(batch: f64, context: f64) -> StepWork {
        StepWork {
            tokens: batch,
            attention_pairs: batch * context,
            kv_read_tokens: batch * context,
            logit_tokens: batch,
            sequences: batch,
        }
    }

    #[test]
    fn a_decode_step_pads_to_its_graph_and_hides_the_cpu() {
        let e = vllm();
        let m = EngineModel::new("vllm", &e, &nvlink_h100(), &llama8b(), 1, Precision::Bf16);
        let p = m.step_parts(&decode(3.0, 500.0));
        // Batch 3 runs the graph of 4: the GEMMs over 4 tokens, 32 layers x 20 us.
        assert!((p.gemm_s - m.roofline().gemm_s(4.0, 4.0)).abs() < 1e-15);
        assert!((p.fixed_gpu_s - 32.0 * 20e-6).abs() < 1e-15);
        assert_eq!(p.allreduce_s, 0.0);
        // The CPU (3 ms + 3 x 10 us) overlaps: the step is the longer part.
        assert!((p.cpu_overhead_s - 3.03e-3).abs() < 1e-12);
        assert!((p.total_s() - p.gpu_s().max(3.03e-3)).abs() < 1e-15);
        // A batch past the largest graph runs eagerly.
        let big = m.step_parts(&decode(600.0, 500.0));
        assert!((big.fixed_gpu_s - 32.0 * 60e-6).abs() < 1e-15);
    }

    #[test]
    fn small_all_reduces_take_the_custom_kernel_large_ones_nccl() {
        let e = vllm();
        let m = EngineModel::new("vllm", &e, &nvlink_h100(), &llama8b(), 4, Precision::Bf16);
        let bw = 0.8 * 450e9;
        // 8 tokens x 4096 x 2 B = 64 KiB: one-shot.
        let msg = 8.0 * 4096.0 * 2.0;
        let one_shot = 10e-6 + 3.0 * msg / bw;
        assert!((m.allreduce_s(8.0, 8.0) - 64.0 * one_shot).abs() < 1e-12);
        // 512 tokens = 4 MiB: two-shot.
        let msg = 512.0 * 4096.0 * 2.0;
        let two_shot = 20e-6 + 1.5 * msg / bw;
        assert!((m.allreduce_s(512.0, 512.0) - 64.0 * two_shot).abs() < 1e-12);
        // 8,192 tokens = 64 MiB: NCCL with the GPU's hop latency (8 us).
        let msg = 8192.0 * 4096.0 * 2.0;
        let ring = 1.5 * msg / bw + 8e-6;
        assert!((m.allreduce_s(8192.0, 8192.0) - 64.0 * ring).abs() < 1e-12);
        // Without a fully connected link the custom kernel is off.
        let pcie = EngineModel::new("vllm", &e, &h100(), &llama8b(), 4, Precision::Bf16);
        let msg = 8.0 * 4096.0 * 2.0;
        let bw = 0.8 * h100().link_peak_gb_s() * 1e9;
        assert!((pcie.allreduce_s(8.0, 8.0) - 64.0 * (1.5 * msg / bw + 8e-6)).abs() < 1e-12);
    }

    #[test]
    fn a_tp_must_split_the_heads_evenly_and_fit_a_node() {
        let gpu = h100();
        let mut m = llama8b();
        assert_eq!(tp_problem(&gpu, &m, 4), None);
        assert!(tp_problem(&gpu, &m, 3).unwrap().contains("does not divide"));
        // 12 KV heads: TP 8 neither divides them nor is a multiple.
        m.kv_heads = 12;
        m.heads = 48;
        assert!(tp_problem(&gpu, &m, 8).unwrap().contains("KV heads"));
        m.kv_heads = 2;
        assert_eq!(tp_problem(&gpu, &m, 8), None);
        assert!(tp_problem(&gpu, &m, 16).unwrap().contains("node"));
        assert!(tp_problem(&gpu, &m, 0).is_some());
    }

    #[test]
    fn efficiencies_stay_at_most_one_and_fp8_halves_the_kv_cache() {
        let mut e = vllm();
        e.gemm_efficiency_scale = 5.0;
        e.attention_efficiency_scale = 5.0;
        let (g, a) = engine_efficiencies(&h100(), &e);
        assert_eq!((g, a), (1.0, 1.0));
        let bf16 = EngineModel::new("vllm", &e, &h100(), &llama8b(), 1, Precision::Bf16);
        let fp8 = EngineModel::new("vllm", &e, &h100(), &llama8b(), 1, Precision::Fp8);
        assert!((bf16.roofline().kv_bytes_per_token() - 131_072.0).abs() < 1e-9);
        assert!((fp8.roofline().kv_bytes_per_token() - 65_536.0).abs() < 1e-9);
        assert!(fp8.kv_capacity_tokens() > 2.0 * bf16.kv_capacity_tokens());
    }

    /// The band's edge slows a step that carries prompt tokens (and the
    /// server's time) by its prompt factor and a decode-only step by its
    /// decode factor, and nothing else.
    #[test]
    fn a_slowdown_scales_prompt_steps_and_decode_steps_apart() {
        let mut e = vllm();
        e.server_ms_per_request = 4.0;
        e.server_us_per_prompt_token = 1.0;
        let base = EngineModel::new("vllm", &e, &nvlink_h100(), &llama8b(), 2, Precision::Bf16);
        e.slowdown = crate::profiles::engine::StepSlowdown {
            prompt: 1.5,
            decode: 1.2,
        };
        let slow = EngineModel::new("vllm", &e, &nvlink_h100(), &llama8b(), 2, Precision::Bf16);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
        assert!(close(slow.prefill_s(2000.0), 1.5 * base.prefill_s(2000.0)));
        assert!(close(
            slow.decode_step_s(16.0, 900.0),
            1.2 * base.decode_step_s(16.0, 900.0)
        ));
        assert!(close(slow.server_s(2000), 1.5 * base.server_s(2000)));
        assert!(close(base.server_s(2000), 0.006));
        assert_eq!(slow.kv_capacity_tokens(), base.kv_capacity_tokens());
    }

    #[test]
    fn decode_runs_sum_the_engine_steps_with_and_without_overlap() {
        for overlap in [true, false] {
            let mut e = vllm();
            e.cpu_overlaps_gpu = overlap;
            // A CPU floor above the GPU's step at short contexts only.
            e.cpu_step_ms = 7.0;
            // The band's edge slows the closed form as it slows each step.
            if overlap {
                e.slowdown.decode = 1.3;
            }
            let m = EngineModel::new("vllm", &e, &nvlink_h100(), &llama8b(), 2, Precision::Bf16);
            for (batch, context) in [(1u32, 100.0), (24, 24.0 * 50.0), (300, 300.0 * 900.0)] {
                let run = m.decode_run(batch, context);
                let mut total = 0.0;
                for j in 0..400u64 {
                    let c = context + j as f64 * f64::from(batch);
                    let step = m.decode_step_s(f64::from(batch), c / f64::from(batch));
                    assert!(
                        (run.step_s(j) - step).abs() < 1e-12,
                        "{overlap} {batch} {j}"
                    );
                    total += step;
                    let closed = run.elapsed_s(j + 1);
                    assert!((closed - total).abs() < 1e-9 * total.max(1.0));
                }
            }
        }
    }
}
