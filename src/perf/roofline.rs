//! The physical ceiling on a replica's throughput: the requests/s of a
//! tier's length mix that the replica's peak FLOPs and peak memory bandwidth
//! allow, with no efficiency loss, no overhead and no latency limit. Every
//! capacity figure must stay below it; it is independent of the latency
//! model's fitted factors, so it also checks them.

use crate::profiles::precision::Precision;
use crate::profiles::{GpuProfile, ModelProfile};

/// The ceiling for one configuration.
#[derive(Debug, Clone, Copy)]
pub struct RooflineBound {
    /// Mean seconds of pure compute per request at peak FLOPs.
    pub compute_s_per_request: f64,
    /// Mean seconds of pure memory traffic per request at peak bandwidth.
    pub memory_s_per_request: f64,
}

/// What the engine does not compute or read again: each request's prompt
/// tokens a prefix cache holds (beside the lengths; empty: none), and the
/// tokens a decode step gives each sequence (speculative decoding; 1
/// without).
#[derive(Debug, Clone, Copy)]
pub struct Savings<'a> {
    pub cached_tokens: &'a [u32],
    pub decode_tokens_per_step: f64,
}

impl Default for Savings<'_> {
    fn default() -> Self {
        Savings {
            cached_tokens: &[],
            decode_tokens_per_step: 1.0,
        }
    }
}

impl RooflineBound {
    /// Per request of `lengths` (input, output tokens), on `gpus` GPUs of
    /// `gpu` (a replica: TP × attention-DP) running `model` at `precision`,
    /// decoding at most `max_batch` sequences at once:
    /// * FLOPs = 2 N (in − c + out) + 4 L H d × ((in² − c²)/2 + in·out +
    ///   out²/2), all at the precision's peak (the FP8 or FP4 peak where
    ///   used: a ceiling), `c` the request's prompt tokens a prefix cache
    ///   holds (`savings`, beside `lengths`; 0 when empty);
    /// * bytes as below, over τ = `savings.decode_tokens_per_step` (speculative
    ///   decoding: a step reads the weights and each context once for τ
    ///   tokens of every sequence; 1 without);
    /// * bytes = weights read once per decode step, shared by at most
    ///   `max_batch` sequences (weights × out / max_batch), plus the KV cache
    ///   each output token reads (its whole context). A dense model's step
    ///   reads at most all its weights and at least the active ones once per
    ///   sequence, min(N_total, N_active × B); a mixture of experts' step reads
    ///   its non-routed weights and the experts B tokens touch under uniform
    ///   routing, L_moe × E (1 − (1 − k/E)^B) × P_e (tokens that share an
    ///   expert read it once).
    pub fn new(
        gpu: &GpuProfile,
        model: &ModelProfile,
        gpus: u32,
        precision: Precision,
        max_batch: u32,
        lengths: &[(u32, u32)],
        savings: Savings,
    ) -> Self {
        let (cached, decode_tokens_per_step) =
            (savings.cached_tokens, savings.decode_tokens_per_step);
        let tp = f64::from(gpus);
        let peak_flops = match (precision, gpu.fp8_tflops, gpu.fp4_tflops) {
            (Precision::Fp8, Some(fp8), _) => fp8.max(gpu.bf16_tflops),
            (Precision::Fp4, _, Some(fp4)) => fp4.max(gpu.bf16_tflops),
            _ => gpu.bf16_tflops,
        } * 1e12
            * tp;
        let bandwidth = gpu.memory_bandwidth_tb_s * 1e12 * tp;
        let params = model.active_params_billion * 1e9;
        let weights_read = match &model.moe {
            Some(moe) => {
                let touched = super::moe::touched_experts(
                    f64::from(moe.experts),
                    f64::from(moe.experts_per_token),
                    f64::from(max_batch.max(1)),
                );
                model.params_billion * 1e9 - model.routed_params_total()
                    + f64::from(model.moe_layers()) * touched * model.expert_params()
            }
            None => (model.params_billion * 1e9).min(params * f64::from(max_batch)),
        };
        let weight_bytes = weights_read * precision.bytes_per_weight();
        let attention = 4.0 * f64::from(model.layers * model.heads * model.head_dim);
        let kv_per_token = model.kv_bytes_per_token();
        let b = f64::from(max_batch.max(1));
        let tau = decode_tokens_per_step.max(1.0);
        let n = lengths.len().max(1) as f64;
        let (mut flops, mut bytes) = (0.0, 0.0);
        for (k, &(i, o)) in lengths.iter().enumerate() {
            // Prompt tokens a prefix cache holds are not computed: the
            // prompt's tokens c…i each attend to the context before them.
            let c = f64::from(cached.get(k).copied().unwrap_or(0).min(i));
            let (i, o) = (f64::from(i), f64::from(o));
            flops += 2.0 * params * (i - c + o)
                + attention * ((i * i - c * c) / 2.0 + i * o + o * o / 2.0);
            // Output token j (1…o) reads i + j − 1 tokens of context.
            let context_read = o * i + o * (o - 1.0) / 2.0;
            bytes += (weight_bytes * o / b + kv_per_token * context_read) / tau;
        }
        RooflineBound {
            compute_s_per_request: flops / n / peak_flops,
            memory_s_per_request: bytes / n / bandwidth,
        }
    }

    /// Requests/s the replica cannot exceed.
    pub fn max_rps(&self) -> f64 {
        1.0 / self.compute_s_per_request.max(self.memory_s_per_request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::step::tests::{h100, llama8b};

    #[test]
    fn llama_8b_on_one_h100_is_bounded_by_its_flops() {
        // 2,000-token prompts, 200-token answers: 2 × 8.03e9 × 2,200 =
        // 3.53e13 FLOPs of weights plus 4 × 32 × 32 × 128 × (2e6 + 4e5 + 2e4)
        // = 1.27e12 of attention, at 989 TFLOP/s: 36.9 ms, so at most 27.1
        // requests/s, whatever the batch.
        let b = RooflineBound::new(
            &h100(),
            &llama8b(),
            1,
            Precision::Bf16,
            256,
            &[(2000, 200)],
            Savings::default(),
        );
        let expected_s = (2.0 * 8.03e9 * 2200.0 + 4.0 * 32.0 * 32.0 * 128.0 * 2.42e6) / 989e12;
        assert!((b.compute_s_per_request - expected_s).abs() < 1e-9);
        assert!((b.max_rps() - 1.0 / expected_s).abs() < 1e-6);
        assert!(b.max_rps() < 28.0 && b.max_rps() > 26.0);
    }

    #[test]
    fn small_batches_are_bound_by_reading_the_weights() {
        // Batch 1: every output token reads all 16.06 GB of weights.
        let b = RooflineBound::new(
            &h100(),
            &llama8b(),
            1,
            Precision::Bf16,
            1,
            &[(10, 100)],
            Savings::default(),
        );
        let weights_s = 16.06e9 * 100.0 / 3.35e12;
        assert!(b.memory_s_per_request > weights_s);
        assert!(b.memory_s_per_request < weights_s * 1.01);
        assert!(b.memory_s_per_request > b.compute_s_per_request);
    }

    #[test]
    fn fp8_raises_the_ceiling_by_at_most_its_peak_ratio() {
        let lengths = [(2000, 200), (500, 20)];
        let bf16 = RooflineBound::new(
            &h100(),
            &llama8b(),
            1,
            Precision::Bf16,
            256,
            &lengths,
            Savings::default(),
        );
        let fp8 = RooflineBound::new(
            &h100(),
            &llama8b(),
            1,
            Precision::Fp8,
            256,
            &lengths,
            Savings::default(),
        );
        assert!(fp8.max_rps() > bf16.max_rps());
        // H100: 1,979 / 989 TFLOP/s; bytes at most halve.
        let ratio = (1979.0f64 / 989.0).max(2.0);
        assert!(fp8.max_rps() <= ratio * bf16.max_rps() + 1e-9);
    }
}
