//! The roofline's efficiency factors against measured kernel timings: Vidur's
//! profiling data (MIT, Microsoft) — per-operator GPU times of transformer
//! layers (H100, A100, A40; Llama-family and similar shapes; 1-4096 tokens;
//! TP 1-8), NCCL all-reduce times, and per-step CPU overheads.
//!
//! * GEMMs (QKV projection, attention output, MLP up/gate, MLP down): the
//!   roofline max(FLOPs / (η_c P), bytes / (η_m BW)) per operator, with FLOPs
//!   = 2 T K N and bytes = 2 (K N + T K + T N) for a T×K by K×N BF16 product
//!   on one tensor-parallel shard, plus a fixed time per kernel; η_c, η_m
//!   and that time are fitted per GPU minimising the mean
//!   |ln(predicted / measured)| (diagnosis per operator).
//! * A layer: the model's own form, max(Σ FLOPs / (η_c P), Σ bytes /
//!   (η_m BW)) over the four GEMMs plus a fixed time per layer, against the
//!   measured sum of all nine operators (norms, rotary embedding, activation
//!   and residual add included: the fixed time carries them at small token
//!   counts). This fit is what the profiles take.
//! * All-reduce: hop + 2 (n − 1) / n × bytes / link bandwidth, with the
//!   profile's figures (before) and fitted ones (after, minimising the mean
//!   |ln(predicted / measured)|); the profiled `size` is read as bytes.
//! * CPU overhead per step (schedule, sampler, input preparation, output
//!   processing) against the profile's `step_overhead_ms`.
//!
//! A folder with `attention.csv` and `fp8.csv` beside `compute/` (the H200's
//! measured timings, `data/h200-measured`) adds attention alone, FP8 GEMMs and
//! whole steps ([`measured`]).

pub mod measured;

use crate::base::error::{PlannerError, Problem};
use crate::profiles::GpuProfile;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The four GEMM operators and their Vidur column names.
pub const GEMMS: [&str; 4] = [
    "attn_pre_proj",
    "attn_post_proj",
    "mlp_up_proj",
    "mlp_down_proj",
];
/// Every per-layer operator Vidur times (the embedding runs once per step).
pub const LAYER_OPS: [&str; 9] = [
    "input_layernorm",
    "attn_pre_proj",
    "attn_rope",
    "attn_post_proj",
    "post_attention_layernorm",
    "mlp_up_proj",
    "mlp_act",
    "mlp_down_proj",
    "add",
];
/// The embedding lookup's column, where a file has it (once per step).
const EMBEDDING_COLUMN: &str = "time_stats.emb.median";
/// Which profile each device folder corresponds to.
pub const DEVICES: [(&str, &str); 3] = [
    ("h100", "h100-sxm"),
    ("a100", "a100-80gb"),
    ("h200", "h200"),
];
/// Which network folder calibrates each profile's all-reduce.
pub const NETWORKS: [(&str, &str); 2] = [("h100_dgx", "h100-sxm"), ("a100_dgx", "a100-80gb")];

/// One measured row: a layer of one model shape at T tokens on one TP shard.
#[derive(Debug, Clone)]
pub struct LayerRow {
    pub model: String,
    pub tokens: f64,
    pub tp: f64,
    pub heads: f64,
    pub kv_heads: f64,
    pub hidden: f64,
    pub ffn: f64,
    pub gated: bool,
    /// Median milliseconds per operator.
    pub ms: BTreeMap<&'static str, f64>,
}

impl LayerRow {
    /// (FLOPs, bytes) of GEMM `op` on one shard.
    pub fn gemm(&self, op: &str) -> (f64, f64) {
        let head_dim = self.hidden / self.heads;
        let (k, n) = match op {
            "attn_pre_proj" => (
                self.hidden,
                (self.heads + 2.0 * self.kv_heads) * head_dim / self.tp,
            ),
            "attn_post_proj" => (self.heads * head_dim / self.tp, self.hidden),
            "mlp_up_proj" => (
                self.hidden,
                if self.gated { 2.0 } else { 1.0 } * self.ffn / self.tp,
            ),
            _ => (self.ffn / self.tp, self.hidden),
        };
        let t = self.tokens;
        (2.0 * t * k * n, 2.0 * (k * n + t * k + t * n))
    }
}

/// Efficiency factors and fixed time of the roofline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Efficiency {
    pub compute: f64,
    pub bandwidth: f64,
    /// Fixed GPU time of the unit predicted: per kernel for operators, per
    /// layer for layers (kernel tails, small-shard latency, the norms and
    /// other small operators).
    pub fixed_us: f64,
}

impl Efficiency {
    /// The profile's factors, with its fixed time per layer.
    pub fn of(gpu: &GpuProfile) -> Self {
        Efficiency {
            compute: gpu.compute_efficiency,
            bandwidth: gpu.bandwidth_efficiency,
            fixed_us: gpu.layer_overhead_us,
        }
    }
}

/// Roofline milliseconds of (FLOPs, bytes) on `gpu`, plus the fixed time.
pub(crate) fn roofline_ms(gpu: &GpuProfile, eff: Efficiency, flops: f64, bytes: f64) -> f64 {
    let compute = flops / (eff.compute * gpu.bf16_tflops * 1e12);
    let memory = bytes / (eff.bandwidth * gpu.memory_bandwidth_tb_s * 1e12);
    compute.max(memory) * 1e3 + eff.fixed_us * 1e-3
}

/// (FLOPs, bytes) of a row's four GEMMs together, and its measured layer
/// milliseconds (every operator).
fn layer_work(r: &LayerRow) -> (f64, f64, f64) {
    let (flops, bytes) = GEMMS.iter().fold((0.0, 0.0), |(f, b), op| {
        let (f2, b2) = r.gemm(op);
        (f + f2, b + b2)
    });
    (flops, bytes, LAYER_OPS.iter().map(|op| r.ms[op]).sum())
}

/// Minimises `loss` over a box by coordinate descent: each round searches
/// every coordinate on its grid with the others fixed.
pub(crate) fn coordinate_descent<const N: usize>(
    start: [f64; N],
    grids: [&[f64]; N],
    loss: impl Fn(&[f64; N]) -> f64,
) -> [f64; N] {
    let mut x = start;
    let mut best = loss(&x);
    for _ in 0..6 {
        let before = best;
        for i in 0..N {
            for &v in grids[i] {
                let mut y = x;
                y[i] = v;
                let l = loss(&y);
                if l < best {
                    best = l;
                    x = y;
                }
            }
        }
        if best >= before {
            break;
        }
    }
    x
}

pub(crate) fn grid(from: f64, to: f64, step: f64) -> Vec<f64> {
    let n = ((to - from) / step).round() as usize;
    (0..=n).map(|i| from + step * i as f64).collect()
}

/// Errors of one operator (or the layer) on one GPU.
#[derive(Debug, Clone, Serialize)]
pub struct OpError {
    pub operator: String,
    pub rows: usize,
    /// Mean |predicted − measured| / measured, before and after the fit.
    pub mean_abs_error_before: f64,
    pub mean_abs_error_after: f64,
    pub median_abs_error_after: f64,
    /// Mean predicted / measured after the fit (below 1: optimistic).
    pub mean_ratio_after: f64,
}

/// The calibration of one GPU's compute.
#[derive(Debug, Clone, Serialize)]
pub struct GpuCalibration {
    pub device: String,
    pub profile: String,
    pub models: Vec<String>,
    /// The profile's figures (fixed time per layer).
    pub before: Efficiency,
    /// Fitted on the four GEMMs, fixed time per kernel.
    pub fitted_operators: Efficiency,
    /// Fitted on whole layers in the model's form, fixed time per layer: the
    /// figures a profile takes.
    pub fitted_layers: Efficiency,
    pub operators: Vec<OpError>,
    /// Share of a layer's measured time in operators other than the GEMMs
    /// (norms, rotary embedding, activation, add), over all rows.
    pub unmodelled_share: f64,
}

/// The all-reduce calibration of one network.
#[derive(Debug, Clone, Serialize)]
pub struct AllReduceCalibration {
    pub network: String,
    pub profile: String,
    pub rows: usize,
    pub link_gb_s_before: f64,
    pub hop_latency_us_before: f64,
    pub link_gb_s_fitted: f64,
    pub hop_latency_us_fitted: f64,
    pub mean_abs_error_before: f64,
    pub mean_abs_error_after: f64,
}

/// CPU time per step measured against the profile's step overhead.
#[derive(Debug, Clone, Serialize)]
pub struct CpuOverhead {
    pub file: String,
    pub rows: usize,
    pub min_ms: f64,
    pub median_ms: f64,
    pub max_ms: f64,
}

/// The whole calibration.
#[derive(Debug, Clone, Serialize)]
pub struct KernelCalibration {
    pub source: String,
    pub gpus: Vec<GpuCalibration>,
    pub all_reduce: Vec<AllReduceCalibration>,
    pub cpu_overhead: Vec<CpuOverhead>,
    /// Attention, FP8 and whole steps, where the folder has them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured: Option<measured::MeasuredCalibration>,
}

pub(crate) fn problem(path: &Path, location: String, message: String) -> PlannerError {
    PlannerError::Data(Problem::new(path.to_path_buf(), location, message))
}

/// Column name → index.
pub(crate) type Header = BTreeMap<String, usize>;

/// A CSV file as its header and rows of fields.
pub(crate) fn read_csv(path: &Path) -> Result<(Header, Vec<Vec<String>>), PlannerError> {
    let text = std::fs::read_to_string(path).map_err(|e| PlannerError::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    let mut lines = text.lines();
    let header = lines
        .next()
        .ok_or_else(|| problem(path, "1".into(), "empty file".into()))?
        .split(',')
        .enumerate()
        .map(|(i, c)| (c.to_string(), i))
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    Ok((header, rows))
}

pub(crate) fn field(
    path: &Path,
    header: &Header,
    row: &[String],
    line: usize,
    name: &str,
) -> Result<f64, PlannerError> {
    let i = *header
        .get(name)
        .ok_or_else(|| problem(path, "1".into(), format!("no column `{name}`")))?;
    row.get(i)
        .and_then(|v| v.parse::<f64>().ok())
        .ok_or_else(|| problem(path, line.to_string(), format!("`{name}` is not a number")))
}

/// Every `mlp.csv` under `compute/<device>/`, as rows.
pub fn read_layers(dir: &Path, device: &str) -> Result<Vec<LayerRow>, PlannerError> {
    let mut files: Vec<PathBuf> = Vec::new();
    let root = dir.join("compute").join(device);
    let orgs = std::fs::read_dir(&root).map_err(|e| PlannerError::Io {
        path: root.clone(),
        source: e,
    })?;
    for org in orgs.flatten() {
        for model in std::fs::read_dir(org.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let f = model.path().join("mlp.csv");
            if f.exists() {
                files.push(f);
            }
        }
    }
    files.sort();
    let mut rows = Vec::new();
    for path in files {
        let model = path
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (header, lines) = read_csv(&path)?;
        for (i, row) in lines.iter().enumerate() {
            let line = i + 2;
            let f = |name: &str| field(&path, &header, row, line, name);
            let mut ms = BTreeMap::new();
            for op in LAYER_OPS {
                ms.insert(op, f(&format!("time_stats.{op}.median"))?);
            }
            if header.contains_key(EMBEDDING_COLUMN) {
                ms.insert("emb", f(EMBEDDING_COLUMN)?);
            }
            let gated = header
                .get("use_gated_mlp")
                .and_then(|&c| row.get(c))
                .is_some_and(|v| v == "True");
            rows.push(LayerRow {
                model: model.clone(),
                tokens: f("num_tokens")?,
                tp: f("num_tensor_parallel_workers")?,
                heads: f("n_head")?,
                kv_heads: f("n_kv_head")?,
                hidden: f("n_embd")?,
                ffn: f("n_expanded_embd")?,
                gated,
                ms,
            });
        }
    }
    Ok(rows)
}

pub(crate) fn abs_log_error(pred: f64, meas: f64) -> f64 {
    (pred / meas).ln().abs()
}

/// Σ |ln(predicted / measured)| of the roofline with efficiencies `e` over
/// (FLOPs, bytes, measured ms) points: what every fit here minimises.
pub fn roofline_loss(gpu: &GpuProfile, e: Efficiency, points: &[(f64, f64, f64)]) -> f64 {
    points
        .iter()
        .map(|&(f, b, m)| abs_log_error(roofline_ms(gpu, e, f, b), m))
        .sum()
}

/// Fits (η_c, η_m, fixed µs) to (FLOPs, bytes, measured ms) points by
/// coordinate descent on grids of 0.005 and 0.5 µs, minimising the mean
/// |ln(predicted / measured)|.
pub fn fit(gpu: &GpuProfile, points: &[(f64, f64, f64)], start: Efficiency) -> Efficiency {
    let eff = |x: &[f64; 3]| Efficiency {
        compute: x[0],
        bandwidth: x[1],
        fixed_us: x[2],
    };
    let loss = |x: &[f64; 3]| roofline_loss(gpu, eff(x), points);
    let shares = grid(0.2, 1.0, 0.005);
    let fixed = grid(0.0, 100.0, 0.5);
    eff(&coordinate_descent(
        [start.compute, start.bandwidth, start.fixed_us],
        [&shares, &shares, &fixed],
        loss,
    ))
}

/// Every GEMM of every row as (FLOPs, bytes, measured ms).
fn gemm_points(rows: &[LayerRow]) -> Vec<(f64, f64, f64)> {
    rows.iter()
        .flat_map(|r| {
            GEMMS.iter().filter_map(move |op| {
                let (flops, bytes) = r.gemm(op);
                let meas = r.ms[op];
                (meas > 0.0).then_some((flops, bytes, meas))
            })
        })
        .collect()
}

/// (mean |rel error|, median |rel error|, mean ratio) of predictions.
pub(crate) fn errors(pairs: &[(f64, f64)]) -> (f64, f64, f64) {
    if pairs.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let mut rel: Vec<f64> = pairs.iter().map(|(p, m)| ((p - m) / m).abs()).collect();
    let n = pairs.len() as f64;
    let mean = rel.iter().sum::<f64>() / n;
    rel.sort_by(f64::total_cmp);
    let ratio = pairs.iter().map(|(p, m)| p / m).sum::<f64>() / n;
    (mean, rel[rel.len() / 2], ratio)
}

/// Calibrates one device's compute against `gpu` (its profile): operators
/// with their own fit (fixed time per kernel), layers with the model's form
/// (fixed time per layer) — the latter is what a profile takes.
pub fn calibrate_gpu(
    device: &str,
    profile: &str,
    gpu: &GpuProfile,
    rows: &[LayerRow],
) -> GpuCalibration {
    let before = Efficiency::of(gpu);
    let before_op = Efficiency {
        fixed_us: 0.0,
        ..before
    };
    let operators_fit = fit(gpu, &gemm_points(rows), before_op);
    let layers: Vec<(f64, f64, f64)> = rows.iter().map(layer_work).collect();
    let layers_fit = fit(gpu, &layers, before);
    let mut operators = Vec::new();
    for op in GEMMS {
        let pairs = |eff| -> Vec<(f64, f64)> {
            rows.iter()
                .filter(|r| r.ms[op] > 0.0)
                .map(|r| {
                    let (f, b) = r.gemm(op);
                    (roofline_ms(gpu, eff, f, b), r.ms[op])
                })
                .collect()
        };
        operators.push(op_error(op, &pairs(before_op), &pairs(operators_fit)));
    }
    let layer = |eff| -> Vec<(f64, f64)> {
        layers
            .iter()
            .map(|&(f, b, m)| (roofline_ms(gpu, eff, f, b), m))
            .collect()
    };
    operators.push(op_error(
        "layer (model form; all nine operators measured)",
        &layer(before),
        &layer(layers_fit),
    ));
    let total: f64 = layers.iter().map(|l| l.2).sum();
    let gemm: f64 = rows
        .iter()
        .flat_map(|r| GEMMS.iter().map(|op| r.ms[op]))
        .sum();
    let mut models: Vec<String> = rows.iter().map(|r| r.model.clone()).collect();
    models.dedup();
    GpuCalibration {
        device: device.into(),
        profile: profile.into(),
        models,
        before,
        fitted_operators: operators_fit,
        fitted_layers: layers_fit,
        operators,
        unmodelled_share: if total > 0.0 { 1.0 - gemm / total } else { 0.0 },
    }
}

pub(crate) fn op_error(name: &str, before: &[(f64, f64)], after: &[(f64, f64)]) -> OpError {
    let (mean_before, ..) = errors(before);
    let (mean_after, median_after, ratio) = errors(after);
    OpError {
        operator: name.to_string(),
        rows: after.len(),
        mean_abs_error_before: mean_before,
        mean_abs_error_after: mean_after,
        median_abs_error_after: median_after,
        mean_ratio_after: ratio,
    }
}

/// Fits link bandwidth and hop latency of the ring all-reduce to `network`'s
/// all_reduce.csv by least squares on t = hop + 2 (n − 1)/n × bytes / link.
pub fn calibrate_all_reduce(
    dir: &Path,
    network: &str,
    profile: &str,
    gpu: &GpuProfile,
) -> Result<AllReduceCalibration, PlannerError> {
    let path = dir.join("network").join(network).join("all_reduce.csv");
    let (header, lines) = read_csv(&path)?;
    let mut points = Vec::new();
    for (i, row) in lines.iter().enumerate() {
        let f = |name: &str| field(&path, &header, row, i + 2, name);
        let n = f("num_workers")?;
        let bytes = f("size")?;
        let ms = f("time_stats.all_reduce.median")?;
        if n >= 2.0 && ms > 0.0 {
            points.push((2.0 * (n - 1.0) / n * bytes, ms * 1e-3));
        }
    }
    // Minimise the mean |ln(predicted / measured)|: small messages weigh as
    // much as large ones.
    let loss = |x: &[f64; 2]| -> f64 {
        points
            .iter()
            .map(|&(b, t)| abs_log_error(x[1] * 1e-6 + b / (x[0] * 1e9), t))
            .sum()
    };
    let links: Vec<f64> = (0..=400).map(|i| 10.0 * 1.0125f64.powi(i)).collect();
    let hops = grid(0.0, 400.0, 0.5);
    let [link_gb_s, hop_us] = coordinate_descent(
        [gpu.interconnect_gb_s, gpu.hop_latency_us],
        [&links, &hops],
        loss,
    );
    let predict = |link_b_s: f64, hop: f64| -> Vec<(f64, f64)> {
        points
            .iter()
            .map(|&(x, y)| (hop + x / link_b_s, y))
            .collect()
    };
    let (before, ..) = errors(&predict(
        gpu.interconnect_gb_s * 1e9,
        gpu.hop_latency_us * 1e-6,
    ));
    let (after, ..) = errors(&predict(link_gb_s * 1e9, hop_us * 1e-6));
    Ok(AllReduceCalibration {
        network: network.into(),
        profile: profile.into(),
        rows: points.len(),
        link_gb_s_before: gpu.interconnect_gb_s,
        hop_latency_us_before: gpu.hop_latency_us,
        link_gb_s_fitted: link_gb_s,
        hop_latency_us_fitted: hop_us,
        mean_abs_error_before: before,
        mean_abs_error_after: after,
    })
}

/// Per-step CPU time (schedule + sampler + input preparation + output
/// processing, medians) in a legacy `*_cpu_overheads.csv`.
pub fn cpu_overhead(path: &Path) -> Result<CpuOverhead, PlannerError> {
    let (header, lines) = read_csv(path)?;
    let mut ms = Vec::new();
    for (i, row) in lines.iter().enumerate() {
        let f = |name: &str| field(path, &header, row, i + 2, name);
        ms.push(
            f("schedule_median")?
                + f("sampler_e2e_median")?
                + f("prepare_inputs_e2e_median")?
                + f("process_model_outputs_median")?,
        );
    }
    ms.sort_by(f64::total_cmp);
    Ok(CpuOverhead {
        file: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        rows: ms.len(),
        min_ms: ms.first().copied().unwrap_or(0.0),
        median_ms: ms.get(ms.len() / 2).copied().unwrap_or(0.0),
        max_ms: ms.last().copied().unwrap_or(0.0),
    })
}

/// Runs every calibration the folder `dir` has data for against the
/// profiles in `profiles_dir`: each device under `compute/`, each network
/// under `network/`, the CPU overheads under `legacy/`, and, with
/// `attention.csv` and `fp8.csv`, the measured calibration of [`measured`].
pub fn calibrate(dir: &Path, profiles_dir: &Path) -> Result<KernelCalibration, PlannerError> {
    let load = |profile: &str| {
        crate::profiles::load_gpu(profiles_dir, profile).map_err(|p| PlannerError::Profile(vec![p]))
    };
    let mut gpus = Vec::new();
    let mut rows_by_device = Vec::new();
    for (device, profile) in DEVICES {
        if !dir.join("compute").join(device).is_dir() {
            continue;
        }
        let gpu = load(profile)?;
        let rows = read_layers(dir, device)?;
        gpus.push(calibrate_gpu(device, profile, &gpu, &rows));
        rows_by_device.push((gpu, rows));
    }
    let mut all_reduce = Vec::new();
    for (network, profile) in NETWORKS {
        if dir.join("network").join(network).is_dir() {
            all_reduce.push(calibrate_all_reduce(
                dir,
                network,
                profile,
                &load(profile)?,
            )?);
        }
    }
    let cpu_overhead = ["a100_cpu_overheads.csv", "a40_cpu_overheads.csv"]
        .iter()
        .map(|f| dir.join("legacy").join(f))
        .filter(|f| f.exists())
        .map(|f| cpu_overhead(&f))
        .collect::<Result<_, _>>()?;
    let measured = if dir.join(measured::ATTENTION_FILE).exists() {
        let (Some(g), [(gpu, rows)]) = (gpus.first(), rows_by_device.as_slice()) else {
            return Err(problem(
                &dir.join("compute"),
                String::new(),
                "attention.csv needs exactly one device folder under compute/ to belong to".into(),
            ));
        };
        Some(measured::calibrate(dir, profiles_dir, g, gpu, rows)?)
    } else {
        None
    };
    if gpus.is_empty() {
        return Err(problem(
            dir,
            String::new(),
            format!(
                "no kernel timings found: expected compute/<device>/<org>/<model>/mlp.csv \
                 with a device among {}",
                DEVICES.map(|d| d.0).join(", ")
            ),
        ));
    }
    Ok(KernelCalibration {
        source: dir.display().to_string(),
        gpus,
        all_reduce,
        cpu_overhead,
        measured,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_shapes_of_llama_2_70b() {
        let r = LayerRow {
            model: "Llama-2-70b-hf".into(),
            tokens: 4096.0,
            tp: 1.0,
            heads: 64.0,
            kv_heads: 8.0,
            hidden: 8192.0,
            ffn: 28672.0,
            gated: true,
            ms: BTreeMap::new(),
        };
        // Gate and up projections together: 4096 x 8192 by 8192 x 57344.
        assert_eq!(r.gemm("mlp_up_proj").0, 2.0 * 4096.0 * 8192.0 * 57344.0);
        // QKV: 8192 -> (64 + 16) x 128 = 10240 columns.
        assert_eq!(r.gemm("attn_pre_proj").0, 2.0 * 4096.0 * 8192.0 * 10240.0);
    }
}
