//! The roofline against one GPU's own measured timings beyond the layers:
//! attention alone, FP8 GEMMs beside BF16 ones, and whole steps assembled
//! from measured operators (the H200 folder `data/h200-measured`).
//!
//! * Attention (`attention.csv`): `max(4 (H/TP) d A / (η_att P_bf16),
//!   R kv_shard / (η_m BW)) + fixed` per layer, with η_m the layer fit's;
//!   η_att and the fixed time fitted.
//! * Whole steps: every attention row whose token count has a layer row is a
//!   step (a prefill of S tokens with one logit, or B decodes at context C):
//!   measured = L × (the nine layer operators + attention) plus the
//!   embedding lookup, the final norm and the LM head GEMM. The LM head was not timed: the per-operator
//!   fit's prediction for its shape stands in. Predicted = the GPU parts of
//!   [`PerfModel::step_parts`] (GEMMs + attention + L τ_layer; one shard, so no
//!   all-reduce, and no CPU overhead: the timings are CUDA-graph GPU time).
//!   τ_layer is fitted here, on whole steps, with the layer and attention
//!   fits' efficiencies: it carries the norms, rotary embedding, activation,
//!   add and the attention kernel's own fixed time.
//! * FP8 (`fp8.csv`): the FP8 time is
//!   `max(2 T K N / (η_c P g(T)), (K N + T K + 2 T N) / (η_m BW)) + fixed` with the per-operator BF16 fit's factors;
//!   the gain `g(T) = a + b log2 T` (capped at the datasheet FP8/BF16 ratio)
//!   is fitted minimising the mean |ln(predicted / measured)|.

use super::{
    abs_log_error, coordinate_descent, errors, field, grid, problem, read_csv, roofline_loss,
    roofline_ms, Efficiency, GpuCalibration, LayerRow, LAYER_OPS,
};
use crate::base::error::PlannerError;
use crate::perf::{Fp8Gain, PerfModel, StepTime, StepWork};
use crate::profiles::precision::Precision;
use crate::profiles::{GpuProfile, ModelProfile};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Attention timings, at the folder's root.
pub const ATTENTION_FILE: &str = "attention.csv";
/// FP8 and BF16 GEMM timings, at the folder's root.
pub const FP8_FILE: &str = "fp8.csv";

/// One attention row: per layer, on one shard.
#[derive(Debug, Clone)]
struct AttentionRow {
    model: String,
    tp: f64,
    prefill: bool,
    batch: f64,
    tokens_or_context: f64,
    ms: f64,
}

fn read_attention(path: &Path) -> Result<Vec<AttentionRow>, PlannerError> {
    let (header, lines) = read_csv(path)?;
    let kind = header
        .get("kind")
        .copied()
        .ok_or_else(|| problem(path, "1".into(), "no column `kind`".into()))?;
    let model = header
        .get("model")
        .copied()
        .ok_or_else(|| problem(path, "1".into(), "no column `model`".into()))?;
    lines
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let f = |name: &str| field(path, &header, row, i + 2, name);
            let prefill = match row.get(kind).map(String::as_str) {
                Some("prefill") => true,
                Some("decode") => false,
                other => {
                    return Err(problem(
                        path,
                        (i + 2).to_string(),
                        format!("`kind` must be prefill or decode, got {other:?}"),
                    ))
                }
            };
            Ok(AttentionRow {
                model: row.get(model).cloned().unwrap_or_default(),
                tp: f("tp")?,
                prefill,
                batch: f("batch")?,
                tokens_or_context: f("tokens_or_context")?,
                ms: f("median_ms")?,
            })
        })
        .collect()
}

/// (tokens, K, N, FP8 ms, BF16 ms) of every row of `fp8.csv`.
fn read_fp8(path: &Path) -> Result<Vec<[f64; 5]>, PlannerError> {
    let (header, lines) = read_csv(path)?;
    lines
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let f = |name: &str| field(path, &header, row, i + 2, name);
            Ok([
                f("tokens")?,
                f("k")?,
                f("n")?,
                f("fp8_median_ms")?,
                f("bf16_median_ms")?,
            ])
        })
        .collect()
}

/// Attention alone against the roofline.
#[derive(Debug, Clone, Serialize)]
pub struct AttentionCalibration {
    pub rows: usize,
    /// The profile's attention efficiency and no fixed time.
    pub before: Efficiency,
    /// Fitted efficiency and fixed time per layer (bandwidth: the layer fit's).
    pub fitted: Efficiency,
    pub mean_abs_error_before: f64,
    pub mean_abs_error_after: f64,
}

/// The FP8 GEMM gain fit.
#[derive(Debug, Clone, Serialize)]
pub struct Fp8Calibration {
    pub rows: usize,
    pub fitted: Fp8Gain,
    /// Mean |error| of the predicted FP8 GEMM times.
    pub mean_abs_error_fp8_ms: f64,
    /// Mean |error| of the predicted gain (BF16 over FP8 time) against the
    /// measured one.
    pub mean_abs_error_gain: f64,
    /// Per token count: (tokens, mean measured BF16/FP8 ratio, fitted g(T)).
    pub gain_by_tokens: Vec<(f64, f64, f64)>,
}

/// Whole-step errors of one kind of step.
#[derive(Debug, Clone, Serialize)]
pub struct StepError {
    pub steps: String,
    pub rows: usize,
    /// The former single roofline over the whole step, the profile's figures.
    pub mean_abs_error_single_roofline: f64,
    /// Mean predicted / measured of the former single roofline.
    pub mean_ratio_single_roofline: f64,
    /// The split roofline, the profile's figures.
    pub mean_abs_error_before: f64,
    /// The split roofline, the fitted figures.
    pub mean_abs_error_after: f64,
    /// Mean predicted / measured after the fit.
    pub mean_ratio_after: f64,
}

/// The figures a profile takes from this calibration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProfileFit {
    pub compute_efficiency: f64,
    pub bandwidth_efficiency: f64,
    pub attention_efficiency: f64,
    pub layer_overhead_us: f64,
}

/// Attention, FP8 and whole steps of one device.
#[derive(Debug, Clone, Serialize)]
pub struct MeasuredCalibration {
    pub device: String,
    pub profile: String,
    pub attention: AttentionCalibration,
    pub fp8: Fp8Calibration,
    pub steps: Vec<StepError>,
    /// The profile's figures: η_c and η_m of the layer fit, the attention
    /// fit's efficiency, the fixed time per layer fitted on whole steps.
    pub profile_fit: ProfileFit,
}

/// (FLOPs, KV bytes) of one attention row on its shard, per layer.
fn attention_work(r: &AttentionRow, m: &ModelProfile) -> (f64, f64) {
    let heads = f64::from(m.heads) / r.tp;
    let kv_heads = (f64::from(m.kv_heads) / r.tp).max(1.0);
    let d = f64::from(m.head_dim);
    let (pairs, read) = pairs_and_read(r);
    (
        4.0 * heads * d * pairs,
        read * 2.0 * kv_heads * d * m.kv_bytes_per_element,
    )
}

/// (query-key pairs, KV tokens read) of one attention row.
fn pairs_and_read(r: &AttentionRow) -> (f64, f64) {
    if r.prefill {
        (r.tokens_or_context * r.tokens_or_context / 2.0, 0.0)
    } else {
        let n = r.batch * r.tokens_or_context;
        (n, n)
    }
}

/// The step an attention row stands for.
fn step_work(r: &AttentionRow) -> StepWork {
    let (pairs, read) = pairs_and_read(r);
    let (tokens, logit_tokens) = if r.prefill {
        (r.tokens_or_context, 1.0)
    } else {
        (r.batch, r.batch)
    };
    StepWork {
        tokens,
        attention_pairs: pairs,
        kv_read_tokens: read,
        logit_tokens,
        sequences: if r.prefill { 1.0 } else { r.batch },
    }
}

/// The former single roofline's GPU time of a step, ms: max((2 N T + 4 L H
/// d A) / (TP η_c P), (2 N + R kv) / (TP η_m BW)) + L τ_layer, N all active
/// parameters, BF16.
fn single_roofline_ms(gpu: &GpuProfile, m: &ModelProfile, tp: f64, w: &StepWork) -> f64 {
    let n = m.active_params();
    let l = f64::from(m.layers);
    let flops = 2.0 * n * w.tokens
        + 4.0 * l * f64::from(m.heads) * f64::from(m.head_dim) * w.attention_pairs;
    let bytes = 2.0 * n + w.kv_read_tokens * m.kv_bytes_per_token();
    let compute = flops / (tp * gpu.compute_efficiency * gpu.bf16_tflops * 1e12);
    let memory = bytes / (tp * gpu.bandwidth_efficiency * gpu.bandwidth_bytes_per_s());
    compute.max(memory) * 1e3 + l * gpu.layer_overhead_us * 1e-3
}

/// The split roofline's GPU time of a step, ms.
fn split_ms(gpu: &GpuProfile, m: &ModelProfile, tp: u32, w: &StepWork) -> f64 {
    let p = PerfModel::new(gpu, m, tp, Precision::Bf16).step_parts(w);
    (p.gemm_s + p.attention_s + p.fixed_gpu_s) * 1e3
}

/// One measured whole step.
struct Step {
    model: usize,
    tp: f64,
    prefill: bool,
    work: StepWork,
    ms: f64,
}

/// Profile id of a measured model folder ("Llama-3.1-8B" → "llama-3.1-8b").
fn profile_id(model: &str) -> String {
    model.to_ascii_lowercase()
}

/// Calibrates attention, FP8 and whole steps of the one device in `dir`,
/// whose layer calibration is `layers` (rows `rows`, profile `gpu`).
pub fn calibrate(
    dir: &Path,
    profiles_dir: &Path,
    layers: &GpuCalibration,
    gpu: &GpuProfile,
    rows: &[LayerRow],
) -> Result<MeasuredCalibration, PlannerError> {
    let attention_path = dir.join(ATTENTION_FILE);
    let attention_rows = read_attention(&attention_path)?;
    let mut models: Vec<(String, ModelProfile)> = Vec::new();
    for r in &attention_rows {
        if !models.iter().any(|(name, _)| *name == r.model) {
            let id = profile_id(&r.model);
            let profile = crate::profiles::load_model(profiles_dir, &id)
                .map_err(|p| PlannerError::Profile(vec![p]))?;
            models.push((r.model.clone(), profile));
        }
    }
    let model_of = |name: &str| models.iter().position(|(n, _)| n == name).unwrap_or(0);

    // Attention alone, with the layer fit's bandwidth efficiency.
    let bandwidth = layers.fitted_layers.bandwidth;
    let points: Vec<(f64, f64, f64)> = attention_rows
        .iter()
        .map(|r| {
            let (f, b) = attention_work(r, &models[model_of(&r.model)].1);
            (f, b, r.ms)
        })
        .collect();
    let attention_loss = |e: Efficiency| roofline_loss(gpu, e, &points);
    let shares = grid(0.2, 1.0, 0.005);
    let fixed = grid(0.0, 100.0, 0.5);
    let [att_eff, att_fixed] =
        coordinate_descent([gpu.attention_efficiency(), 0.0], [&shares, &fixed], |x| {
            attention_loss(Efficiency {
                compute: x[0],
                bandwidth,
                fixed_us: x[1],
            })
        });
    let attention_before = Efficiency {
        compute: gpu.attention_efficiency(),
        bandwidth: gpu.bandwidth_efficiency,
        fixed_us: 0.0,
    };
    let attention_fitted = Efficiency {
        compute: att_eff,
        bandwidth,
        fixed_us: att_fixed,
    };
    let attention_pairs = |e| -> Vec<(f64, f64)> {
        points
            .iter()
            .map(|&(f, b, m)| (roofline_ms(gpu, e, f, b), m))
            .collect()
    };
    let attention = AttentionCalibration {
        rows: points.len(),
        before: attention_before,
        fitted: attention_fitted,
        mean_abs_error_before: errors(&attention_pairs(attention_before)).0,
        mean_abs_error_after: errors(&attention_pairs(attention_fitted)).0,
    };

    // Whole steps from measured operators.
    let per_op = layers.fitted_operators;
    let layer_at = |model: &str, tp: f64, tokens: f64| {
        rows.iter()
            .find(|l| l.model == model && l.tp == tp && l.tokens == tokens)
    };
    let mut steps = Vec::new();
    for r in &attention_rows {
        let work = step_work(r);
        let (Some(layer), Some(last)) = (
            layer_at(&r.model, r.tp, work.tokens),
            layer_at(&r.model, r.tp, work.logit_tokens),
        ) else {
            continue;
        };
        let i = model_of(&r.model);
        let m = &models[i].1;
        let (hidden, vocab) = (f64::from(m.hidden), f64::from(m.vocab_size));
        let t = work.logit_tokens;
        let n = vocab / r.tp;
        let lm_head_ms = roofline_ms(
            gpu,
            per_op,
            2.0 * t * hidden * n,
            2.0 * (hidden * n + t * hidden + t * n),
        );
        let layer_ms: f64 = LAYER_OPS.iter().map(|op| layer.ms[op]).sum();
        let ms = f64::from(m.layers) * (layer_ms + r.ms)
            + layer.ms.get("emb").copied().unwrap_or(0.0)
            + last.ms["input_layernorm"]
            + lm_head_ms;
        steps.push(Step {
            model: i,
            tp: r.tp,
            prefill: r.prefill,
            work,
            ms,
        });
    }
    let with = |fixed_us: f64| GpuProfile {
        compute_efficiency: layers.fitted_layers.compute,
        bandwidth_efficiency: bandwidth,
        attention_efficiency: Some(att_eff),
        layer_overhead_us: fixed_us,
        ..gpu.clone()
    };
    let predict = |g: &GpuProfile, s: &Step| split_ms(g, &models[s.model].1, s.tp as u32, &s.work);
    let fixed_steps = grid(0.0, 200.0, 0.5);
    let [layer_overhead_us] = coordinate_descent([gpu.layer_overhead_us], [&fixed_steps], |x| {
        let g = with(x[0]);
        steps
            .iter()
            .map(|s| abs_log_error(predict(&g, s), s.ms))
            .sum()
    });
    let fitted = with(layer_overhead_us);
    let step_errors = |name: &str, keep: &dyn Fn(&Step) -> bool| {
        let chosen: Vec<&Step> = steps.iter().filter(|s| keep(s)).collect();
        let pairs = |f: &dyn Fn(&Step) -> f64| -> Vec<(f64, f64)> {
            chosen.iter().map(|s| (f(s), s.ms)).collect()
        };
        let single = pairs(&|s| single_roofline_ms(gpu, &models[s.model].1, s.tp, &s.work));
        let before = pairs(&|s| predict(gpu, s));
        let after = pairs(&|s| predict(&fitted, s));
        StepError {
            steps: name.into(),
            rows: chosen.len(),
            mean_abs_error_single_roofline: errors(&single).0,
            mean_ratio_single_roofline: errors(&single).2,
            mean_abs_error_before: errors(&before).0,
            mean_abs_error_after: errors(&after).0,
            mean_ratio_after: errors(&after).2,
        }
    };
    let step_rows = vec![
        step_errors("prefill (one prompt, one logit)", &|s| s.prefill),
        step_errors("decode (B sequences at context C)", &|s| !s.prefill),
        step_errors("decode, B >= 64 (large batches)", &|s| {
            !s.prefill && s.work.tokens >= 64.0
        }),
        step_errors("decode, B >= 64, C <= 2048 (GEMMs ~ KV)", &|s| {
            !s.prefill && s.work.tokens >= 64.0 && s.work.kv_read_tokens <= 2048.0 * s.work.tokens
        }),
        step_errors("all steps", &|_| true),
    ];

    let fp8 = calibrate_fp8(&dir.join(FP8_FILE), gpu, per_op)?;
    Ok(MeasuredCalibration {
        device: layers.device.clone(),
        profile: layers.profile.clone(),
        attention,
        fp8,
        steps: step_rows,
        profile_fit: ProfileFit {
            compute_efficiency: layers.fitted_layers.compute,
            bandwidth_efficiency: bandwidth,
            attention_efficiency: att_eff,
            layer_overhead_us,
        },
    })
}

/// FP8 GEMM time, ms, of a T×K by K×N product with gain `gain`.
fn fp8_ms(gpu: &GpuProfile, e: Efficiency, [t, k, n]: [f64; 3], gain: f64) -> f64 {
    let flops = 2.0 * t * k * n;
    let bytes = k * n + t * k + 2.0 * t * n;
    let compute = flops / (e.compute * gpu.bf16_tflops * 1e12 * gain);
    let memory = bytes / (e.bandwidth * gpu.bandwidth_bytes_per_s());
    compute.max(memory) * 1e3 + e.fixed_us * 1e-3
}

/// Fits the FP8 gain to `path` (FP8 beside BF16 GEMM times) with the
/// per-operator BF16 factors `per_op`.
fn calibrate_fp8(
    path: &Path,
    gpu: &GpuProfile,
    per_op: Efficiency,
) -> Result<Fp8Calibration, PlannerError> {
    let rows = read_fp8(path)?;
    let cap = gpu.fp8_tflops.unwrap_or(gpu.bf16_tflops) / gpu.bf16_tflops;
    let gain = |x: &[f64; 2]| Fp8Gain {
        at_one_token: x[0],
        per_token_doubling: x[1],
    };
    let predict =
        |g: Fp8Gain, r: &[f64; 5]| fp8_ms(gpu, per_op, [r[0], r[1], r[2]], g.at(r[0], cap));
    let bases = grid(0.5, 2.5, 0.01);
    let slopes = grid(0.0, 0.3, 0.002);
    let x = coordinate_descent([1.5, 0.05], [&bases, &slopes], |x| {
        rows.iter()
            .map(|r| abs_log_error(predict(gain(x), r), r[3]))
            .sum()
    });
    let fitted = gain(&x);
    let bf16_ms = |r: &[f64; 5]| {
        let (t, k, n) = (r[0], r[1], r[2]);
        roofline_ms(gpu, per_op, 2.0 * t * k * n, 2.0 * (k * n + t * k + t * n))
    };
    let times: Vec<(f64, f64)> = rows.iter().map(|r| (predict(fitted, r), r[3])).collect();
    let gains: Vec<(f64, f64)> = rows
        .iter()
        .map(|r| (bf16_ms(r) / predict(fitted, r), r[4] / r[3]))
        .collect();
    let mut by_tokens: BTreeMap<u64, (f64, usize)> = BTreeMap::new();
    for r in &rows {
        let e = by_tokens.entry(r[0] as u64).or_default();
        e.0 += r[4] / r[3];
        e.1 += 1;
    }
    Ok(Fp8Calibration {
        rows: rows.len(),
        fitted,
        mean_abs_error_fp8_ms: errors(&times).0,
        mean_abs_error_gain: errors(&gains).0,
        gain_by_tokens: by_tokens
            .into_iter()
            .map(|(t, (sum, n))| {
                let t = t as f64;
                (t, sum / n as f64, fitted.at(t, cap))
            })
            .collect(),
    })
}
