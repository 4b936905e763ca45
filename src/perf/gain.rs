//! What a lower precision's GEMM gains over BF16 on the same GPU: the FP8
//! gain measured on the H200 as a function of the tokens through the GEMM,
//! and FP4's on GPUs with FP4 units (the FP8 curve scaled by the datasheet
//! ratio of the two peaks).

use crate::profiles::precision::Precision;
use crate::profiles::GpuProfile;
use serde::Serialize;

/// Speed-up of an FP8 GEMM's compute over BF16 on the same GPU, as a function
/// of the tokens `T` through it: `at_one_token + per_token_doubling × log2 T`,
/// at least 1 and at most the datasheet ratio `fp8_tflops / bf16_tflops`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Fp8Gain {
    /// The gain at one token.
    pub at_one_token: f64,
    /// What each doubling of the tokens adds.
    pub per_token_doubling: f64,
}

impl Fp8Gain {
    /// The gain at `tokens` tokens, capped at `max`.
    pub fn at(&self, tokens: f64, max: f64) -> f64 {
        (self.at_one_token + self.per_token_doubling * tokens.max(1.0).log2())
            .clamp(1.0, max.max(1.0))
    }
}

/// Seconds of a GEMM at its own bound: the longer of `flops` at
/// `flops_per_s` × the precision `gain` at `tokens` (1 without one) and
/// `memory_s`. A gain is at least 1 and only shortens the compute, so a GEMM
/// whose compute at gain 1 is within its memory time is memory-bound at any
/// gain: the same value, without the gain's logarithm.
pub(crate) fn bound_s(
    flops: f64,
    flops_per_s: f64,
    memory_s: f64,
    gain: Option<(Fp8Gain, f64)>,
    tokens: f64,
) -> f64 {
    if flops / flops_per_s <= memory_s {
        return memory_s;
    }
    let gain = gain.map_or(1.0, |(gain, max)| gain.at(tokens, max));
    (flops / (flops_per_s * gain)).max(memory_s)
}

/// The FP8 GEMM gain fitted by `planner calibrate --kernels` to the H200's
/// measured FP8 and BF16 GEMMs (`data/h200-measured/fp8.csv`: Llama 3.1 70B
/// shapes, TP 1-8, 16-8,192 tokens): 1.47× at 16 tokens, 1.67× at 256, 1.77×
/// at 1,024, 1.92× at 8,192. Every FP8 GPU takes it (only the H200 was
/// measured).
pub const FP8_GEMM_GAIN: Fp8Gain = Fp8Gain {
    at_one_token: 1.27,
    per_token_doubling: 0.05,
};

/// The FP8 or FP4 gain over BF16 of a GEMM at `precision` on `gpu`, with
/// its cap (the datasheet ratio); `None` where it runs on the BF16 units.
pub(crate) fn precision_gain(gpu: &GpuProfile, precision: Precision) -> Option<(Fp8Gain, f64)> {
    let fp8 = FP8_GEMM_GAIN;
    match (precision, gpu.fp8_tflops, gpu.fp4_tflops) {
        (Precision::Fp8, Some(f8), _) => Some((fp8, f8 / gpu.bf16_tflops)),
        (Precision::Fp4, Some(f8), Some(f4)) => {
            let r = f4 / f8;
            Some((
                Fp8Gain {
                    at_one_token: fp8.at_one_token * r,
                    per_token_doubling: fp8.per_token_doubling * r,
                },
                f4 / gpu.bf16_tflops,
            ))
        }
        _ => None,
    }
}
