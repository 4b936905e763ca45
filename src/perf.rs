//! The roofline latency model: prefill time and decode step time of one
//! replica (a tensor-parallel group of GPUs) from the model shape, the GPU's
//! peaks and its efficiency factors. Formulas in `docs/model.md`.

use crate::profiles::{GpuProfile, ModelProfile};

/// Bytes per activation element exchanged by the all-reduces (BF16).
const ACTIVATION_BYTES: f64 = 2.0;

/// Latency model of one replica: `tp` GPUs of one type serving one model.
#[derive(Debug, Clone)]
pub struct PerfModel {
    /// Tensor-parallel degree (GPUs per replica).
    pub tp: u32,
    layers: f64,
    hidden: f64,
    heads: f64,
    head_dim: f64,
    active_params: f64,
    total_params: f64,
    bytes_per_weight: f64,
    kv_bytes_per_token: f64,
    peak_flops: f64,
    compute_efficiency: f64,
    bandwidth_bytes_per_s: f64,
    bandwidth_efficiency: f64,
    link_bytes_per_s: f64,
    hop_latency_s: f64,
    step_overhead_s: f64,
    /// Fixed GPU time of one forward pass: layers × time per layer.
    layers_fixed_s: f64,
    usable_memory_bytes: f64,
}

impl PerfModel {
    /// The model of `model` on `tp` GPUs of type `gpu`.
    pub fn new(gpu: &GpuProfile, model: &ModelProfile, tp: u32) -> Self {
        PerfModel {
            tp,
            layers: f64::from(model.layers),
            hidden: f64::from(model.hidden),
            heads: f64::from(model.heads),
            head_dim: f64::from(model.head_dim),
            active_params: model.active_params(),
            total_params: model.params_billion * 1e9,
            bytes_per_weight: model.bytes_per_weight,
            kv_bytes_per_token: model.kv_bytes_per_token(),
            peak_flops: gpu.peak_flops(model.bytes_per_weight),
            compute_efficiency: gpu.compute_efficiency,
            bandwidth_bytes_per_s: gpu.bandwidth_bytes_per_s(),
            bandwidth_efficiency: gpu.bandwidth_efficiency,
            link_bytes_per_s: gpu.interconnect_gb_s * 1e9,
            hop_latency_s: gpu.hop_latency_us * 1e-6,
            step_overhead_s: gpu.step_overhead_ms * 1e-3,
            layers_fixed_s: f64::from(model.layers) * gpu.layer_overhead_us * 1e-6,
            usable_memory_bytes: gpu.usable_memory_bytes(),
        }
    }

    fn tp(&self) -> f64 {
        f64::from(self.tp)
    }

    /// Time of a step that does not depend on its work: engine overhead plus
    /// the fixed GPU time of every layer.
    fn fixed_s(&self) -> f64 {
        self.step_overhead_s + self.layers_fixed_s
    }

    /// Weight bytes held by each GPU of the replica.
    pub fn weight_bytes_per_gpu(&self) -> f64 {
        self.total_params * self.bytes_per_weight / self.tp()
    }

    /// Tokens of KV cache the whole replica holds after the weights; negative
    /// when the weights alone do not fit.
    pub fn kv_capacity_tokens(&self) -> f64 {
        (self.usable_memory_bytes - self.weight_bytes_per_gpu()) * self.tp()
            / self.kv_bytes_per_token
    }

    /// KV-cache bytes per token of context.
    pub fn kv_bytes_per_token(&self) -> f64 {
        self.kv_bytes_per_token
    }

    /// Time of the two all-reduces per layer over `tokens` tokens of
    /// activations: ring cost 2 (TP−1)/TP × message / link bandwidth plus one
    /// hop latency each. Zero at TP 1.
    pub fn allreduce_s(&self, tokens: f64) -> f64 {
        if self.tp == 1 {
            return 0.0;
        }
        let message = tokens * self.hidden * ACTIVATION_BYTES;
        let one = 2.0 * (self.tp() - 1.0) / self.tp() * message / self.link_bytes_per_s
            + self.hop_latency_s;
        2.0 * self.layers * one
    }

    /// Prefill time of one prompt of `tokens` tokens, in seconds:
    /// max(FLOPs / (TP η_c P), weight bytes / (η_m BW)) + all-reduces + overhead,
    /// with FLOPs = 2 N S + 2 L S² H d (causal attention).
    pub fn prefill_s(&self, tokens: f64) -> f64 {
        let flops = 2.0 * self.active_params * tokens
            + 2.0 * self.layers * tokens * tokens * self.heads * self.head_dim;
        let compute = flops / (self.tp() * self.compute_efficiency * self.peak_flops);
        let weights = self.weight_read_bytes(tokens) / self.tp();
        let memory = weights / (self.bandwidth_efficiency * self.bandwidth_bytes_per_s);
        compute.max(memory) + self.allreduce_s(tokens) + self.fixed_s()
    }

    /// One decode step of `batch` sequences whose mean context is
    /// `mean_context` tokens, in seconds:
    /// max(bytes / (η_m BW), FLOPs / (TP η_c P)) + all-reduces + overhead,
    /// where bytes = weights read + KV cache read and FLOPs = 2 N B + 4 L H d B C.
    pub fn decode_step_s(&self, batch: f64, mean_context: f64) -> f64 {
        if batch <= 0.0 {
            return 0.0;
        }
        let kv = batch * mean_context * self.kv_bytes_per_token;
        let bytes = (self.weight_read_bytes(batch) + kv) / self.tp();
        let memory = bytes / (self.bandwidth_efficiency * self.bandwidth_bytes_per_s);
        let flops = 2.0 * self.active_params * batch
            + 4.0 * self.layers * self.heads * self.head_dim * batch * mean_context;
        let compute = flops / (self.tp() * self.compute_efficiency * self.peak_flops);
        memory.max(compute) + self.allreduce_s(batch) + self.fixed_s()
    }

    /// One engine step of continuous batching, in seconds: `work.tokens` tokens
    /// through the weights (prefill chunks plus one per decoding sequence),
    /// `work.attention_pairs` (query, key) pairs of attention and
    /// `work.kv_read_tokens` tokens of KV cache read:
    /// max(FLOPs / (TP η_c P), bytes / (TP η_m BW)) + all-reduces + overhead,
    /// with FLOPs = 2 N T + 4 L H d A and bytes = weights read + KV read.
    /// [`Self::prefill_s`] and [`Self::decode_step_s`] are its two pure cases.
    pub fn step_s(&self, work: &StepWork) -> f64 {
        if work.tokens <= 0.0 {
            return 0.0;
        }
        let flops = 2.0 * self.active_params * work.tokens
            + 4.0 * self.layers * self.heads * self.head_dim * work.attention_pairs;
        let compute = flops / (self.tp() * self.compute_efficiency * self.peak_flops);
        let bytes = (self.weight_read_bytes(work.tokens)
            + work.kv_read_tokens * self.kv_bytes_per_token)
            / self.tp();
        let memory = bytes / (self.bandwidth_efficiency * self.bandwidth_bytes_per_s);
        compute.max(memory) + self.allreduce_s(work.tokens) + self.fixed_s()
    }

    /// A run of decode-only steps of `batch` sequences whose contexts sum to
    /// `context_tokens` at the first step (each step adds `batch` tokens).
    pub fn decode_run(&self, batch: u32, context_tokens: f64) -> DecodeRun {
        let b = f64::from(batch);
        let flops_rate = self.tp() * self.compute_efficiency * self.peak_flops;
        let bytes_rate = self.tp() * self.bandwidth_efficiency * self.bandwidth_bytes_per_s;
        DecodeRun {
            compute: Line {
                at_zero_s: 2.0 * self.active_params * b / flops_rate,
                per_context_token_s: 4.0 * self.layers * self.heads * self.head_dim / flops_rate,
            },
            memory: Line {
                at_zero_s: self.weight_read_bytes(b) / bytes_rate,
                per_context_token_s: self.kv_bytes_per_token / bytes_rate,
            },
            fixed_s: self.allreduce_s(b) + self.fixed_s(),
            context_tokens,
            batch: b,
        }
    }

    /// Weight bytes one forward pass over `tokens` tokens reads: all weights of
    /// a dense model; for a mixture of experts, the active share per token up
    /// to all of them.
    fn weight_read_bytes(&self, tokens: f64) -> f64 {
        let params = (self.active_params * tokens.max(1.0)).min(self.total_params);
        params * self.bytes_per_weight
    }
}

/// The work of one engine step (see [`PerfModel::step_s`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepWork {
    /// Tokens through the weights: prefill chunk tokens + decoding sequences.
    pub tokens: f64,
    /// (query, key) pairs of attention: a decoding sequence contributes its
    /// context; a prefill chunk of c tokens after o cached ones c·o + c²/2.
    pub attention_pairs: f64,
    /// Tokens of KV cache read from memory.
    pub kv_read_tokens: f64,
}

/// `at_zero_s + per_context_token_s × C`: one bound of a decode step's time as
/// a function of the summed context C.
#[derive(Debug, Clone, Copy)]
struct Line {
    at_zero_s: f64,
    per_context_token_s: f64,
}

impl Line {
    fn at(&self, context: f64) -> f64 {
        self.at_zero_s + self.per_context_token_s * context
    }

    /// Σ_{j<k} at(c0 + j b).
    fn sum(&self, c0: f64, b: f64, k: f64) -> f64 {
        k * self.at_zero_s + self.per_context_token_s * (k * c0 + b * k * (k - 1.0) / 2.0)
    }
}

/// Consecutive decode-only steps with a fixed batch: step j takes
/// max(compute(C_j), memory(C_j)) + fixed with C_j = C_0 + j B. Both bounds
/// are linear in C, so the time of k steps has a closed form and the
/// simulator advances a whole run at once.
#[derive(Debug, Clone, Copy)]
pub struct DecodeRun {
    compute: Line,
    memory: Line,
    fixed_s: f64,
    context_tokens: f64,
    batch: f64,
}

impl DecodeRun {
    /// Seconds taken by the first `steps` steps.
    pub fn elapsed_s(&self, steps: u64) -> f64 {
        let k = steps as f64;
        let (c0, b) = (self.context_tokens, self.batch);
        // The steeper line dominates from the crossing on: steps before the
        // crossing follow the flatter line.
        let (flat, steep) = if self.compute.per_context_token_s <= self.memory.per_context_token_s {
            (self.compute, self.memory)
        } else {
            (self.memory, self.compute)
        };
        let slope_gap = steep.per_context_token_s - flat.per_context_token_s;
        let split = if slope_gap <= 0.0 {
            if steep.at_zero_s >= flat.at_zero_s {
                0.0
            } else {
                k
            }
        } else {
            let crossing = (flat.at_zero_s - steep.at_zero_s) / slope_gap;
            if b > 0.0 {
                ((crossing - c0) / b).ceil().clamp(0.0, k)
            } else if c0 >= crossing {
                0.0
            } else {
                k
            }
        };
        flat.sum(c0, b, split) + steep.sum(c0 + split * b, b, k - split) + k * self.fixed_s
    }

    /// Seconds of step `j` alone (0-based).
    pub fn step_s(&self, j: u64) -> f64 {
        let c = self.context_tokens + j as f64 * self.batch;
        self.compute.at(c).max(self.memory.at(c)) + self.fixed_s
    }

    /// The number of steps, at most `max_steps`, needed for the run to reach
    /// `elapsed_s`: the step in flight at that moment counts as done.
    pub fn steps_to_reach(&self, elapsed_s: f64, max_steps: u64) -> u64 {
        let (mut lo, mut hi) = (0u64, max_steps);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.elapsed_s(mid) >= elapsed_s {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn h100() -> GpuProfile {
        GpuProfile {
            name: "H100".into(),
            memory_gb: 80.0,
            memory_bandwidth_tb_s: 3.35,
            bf16_tflops: 989.0,
            fp8_tflops: Some(1979.0),
            interconnect: "NVLink4".into(),
            interconnect_gb_s: 450.0,
            hop_latency_us: 8.0,
            gpus_per_node: 8,
            compute_efficiency: 0.7,
            bandwidth_efficiency: 0.8,
            step_overhead_ms: 0.0,
            layer_overhead_us: 0.0,
            usable_memory_fraction: 0.9,
            source: "test".into(),
        }
    }

    pub(crate) fn llama8b() -> ModelProfile {
        ModelProfile {
            name: "Llama 3.1 8B".into(),
            params_billion: 8.03,
            active_params_billion: 8.03,
            layers: 32,
            hidden: 4096,
            heads: 32,
            kv_heads: 8,
            head_dim: 128,
            bytes_per_weight: 2.0,
            kv_bytes_per_element: 2.0,
            max_context_tokens: 131072,
            source: "test".into(),
        }
    }

    #[test]
    fn decode_at_batch_one_is_the_weight_read_time() {
        let m = PerfModel::new(&h100(), &llama8b(), 1);
        // 8.03e9 params x 2 B = 16.06 GB at 0.8 x 3.35 TB/s = 5.993 ms, plus the
        // KV read of 1,000 tokens x 128 KiB = 0.131 GB (0.049 ms).
        let expected = (16.06e9 + 1000.0 * 131_072.0) / (0.8 * 3.35e12);
        assert!((m.decode_step_s(1.0, 1000.0) - expected).abs() < 1e-9);
    }

    #[test]
    fn prefill_of_a_long_prompt_is_compute_bound() {
        let m = PerfModel::new(&h100(), &llama8b(), 1);
        let s = 2048.0;
        let flops = 2.0 * 8.03e9 * s + 2.0 * 32.0 * s * s * 32.0 * 128.0;
        let expected = flops / (0.7 * 989e12);
        assert!(
            (m.prefill_s(s) - expected).abs() < 1e-9,
            "{} vs {expected}",
            m.prefill_s(s)
        );
    }

    #[test]
    fn tensor_parallel_adds_all_reduce_cost() {
        let m = PerfModel::new(&h100(), &llama8b(), 2);
        // One token: 2 layers-worth of all-reduces per layer: 2 x 32 x (0.5 x 2 x 8192 B / 450 GB/s + 8 us).
        let one = 2.0 * 0.5 * 4096.0 * 2.0 / 450e9 + 8e-6;
        assert!((m.allreduce_s(1.0) - 64.0 * one).abs() < 1e-12);
        assert_eq!(PerfModel::new(&h100(), &llama8b(), 1).allreduce_s(1.0), 0.0);
    }

    #[test]
    fn kv_capacity_after_weights() {
        let m = PerfModel::new(&h100(), &llama8b(), 1);
        let expected = (72e9 - 16.06e9) / 131_072.0;
        assert!((m.kv_capacity_tokens() - expected).abs() < 1e-6);
    }
    #[test]
    fn step_work_reduces_to_prefill_and_decode() {
        let m = PerfModel::new(&h100(), &llama8b(), 2);
        let prefill = StepWork {
            tokens: 3000.0,
            attention_pairs: 3000.0 * 3000.0 / 2.0,
            kv_read_tokens: 0.0,
        };
        assert!((m.step_s(&prefill) - m.prefill_s(3000.0)).abs() < 1e-12);
        let decode = StepWork {
            tokens: 16.0,
            attention_pairs: 16.0 * 900.0,
            kv_read_tokens: 16.0 * 900.0,
        };
        assert!((m.step_s(&decode) - m.decode_step_s(16.0, 900.0)).abs() < 1e-12);
    }

    #[test]
    fn decode_run_sums_its_steps_exactly() {
        // Small and large batches cross between memory- and compute-bound.
        for (batch, context) in [(1u32, 500.0), (64, 64.0 * 2000.0), (512, 512.0 * 100.0)] {
            let m = PerfModel::new(&h100(), &llama8b(), 1);
            let run = m.decode_run(batch, context);
            let mut total = 0.0;
            for j in 0..300u64 {
                let c = context + j as f64 * f64::from(batch);
                let step = m.decode_step_s(f64::from(batch), c / f64::from(batch));
                assert!((run.step_s(j) - step).abs() < 1e-12);
                total += step;
                let closed = run.elapsed_s(j + 1);
                assert!(
                    (closed - total).abs() < 1e-9 * total.max(1.0),
                    "{closed} vs {total}"
                );
            }
            let half = run.elapsed_s(150) - 1e-9;
            assert_eq!(run.steps_to_reach(half, 300), 150);
            assert_eq!(run.steps_to_reach(1e9, 300), 300);
            assert_eq!(run.steps_to_reach(0.0, 300), 0);
        }
    }
}
