//! A GPU profile: memory, bandwidth, dense FLOPS, interconnect and the
//! efficiency factors of the roofline model.

use super::check_bound;
use crate::base::bounds::Bound;
use crate::base::error::Problem;
use crate::profiles::precision::Precision;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The accepted range of every number in a GPU profile (a GPU of today
/// lies well inside each).
pub(crate) const GPU_BOUNDS: &[Bound] = &[
    Bound::positive("memory_gb", 1_024.0, "GB"),
    Bound::positive("memory_bandwidth_tb_s", 100.0, "TB/s"),
    Bound::positive("bf16_tflops", 100_000.0, "TFLOP/s"),
    Bound::positive("fp8_tflops", 100_000.0, "TFLOP/s"),
    Bound::positive("fp4_tflops", 100_000.0, "TFLOP/s"),
    Bound::positive("scaleout_gb_s", 10_000.0, "GB/s"),
    Bound::closed("nvlink_domain_gpus", 1.0, 576.0, "GPUs"),
    Bound::positive("interconnect_gb_s", 10_000.0, "GB/s"),
    Bound::positive("link_peak_gb_s", 10_000.0, "GB/s"),
    Bound::closed("hop_latency_us", 0.0, 1_000.0, "µs"),
    Bound::closed("gpus_per_node", 1.0, 64.0, "GPUs"),
    Bound::positive("compute_efficiency", 1.0, ""),
    Bound::positive("bandwidth_efficiency", 1.0, ""),
    Bound::positive("attention_efficiency", 1.0, ""),
    Bound::closed("step_overhead_ms", 0.0, 1_000.0, "ms"),
    Bound::closed("layer_overhead_us", 0.0, 10_000.0, "µs"),
    Bound::positive("usable_memory_fraction", 1.0, ""),
];

/// One GPU type, as read from `profiles/gpus/<id>.toml`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GpuProfile {
    /// Human-readable name, e.g. "H100 SXM5 80GB".
    pub name: String,
    /// Who makes it (`nvidia`, `amd`): each vendor a plan runs on is a
    /// software stack to operate; absent: the profile counts as its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// Memory per GPU in GB (10^9 bytes).
    pub memory_gb: f64,
    /// Memory bandwidth in TB/s (10^12 bytes/s).
    pub memory_bandwidth_tb_s: f64,
    /// Dense BF16 peak in TFLOP/s (not the "with sparsity" figure).
    pub bf16_tflops: f64,
    /// Dense FP8 peak in TFLOP/s; absent when the GPU has no FP8 units.
    #[serde(default)]
    pub fp8_tflops: Option<f64>,
    /// Dense FP4 (NVFP4) peak in TFLOP/s; absent when the GPU has no FP4
    /// units (FP4 weights then run weight-only on the BF16 units).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp4_tflops: Option<f64>,
    /// Name of the scale-up link (NVLink4, PCIe Gen4, ...).
    pub interconnect: String,
    /// Scale-up link bandwidth per GPU in GB/s (one direction).
    pub interconnect_gb_s: f64,
    /// The link's datasheet bandwidth per GPU in GB/s (one direction), the
    /// ceiling an engine's all-reduce is held to; absent: `interconnect_gb_s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_peak_gb_s: Option<f64>,
    /// Whether every pair of GPUs in a node is linked at full rate (NVLink
    /// through NVSwitch, Infinity Fabric's mesh), which engines' custom
    /// all-reduce kernels need; PCIe GPUs are not.
    #[serde(default)]
    pub fully_connected: bool,
    /// Latency of one all-reduce hop in microseconds.
    #[serde(default = "default_hop_latency_us")]
    pub hop_latency_us: f64,
    /// GPUs in one node (the largest tensor-parallel group).
    pub gpus_per_node: u32,
    /// GPUs in one NVLink domain (72 on a GB200 or GB300 NVL72 rack); absent:
    /// one node. A replica larger than this crosses the scale-out network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlink_domain_gpus: Option<u32>,
    /// Scale-out (network) bandwidth per GPU in GB/s, one direction, which an
    /// expert-parallel exchange that leaves the NVLink domain runs at;
    /// absent: 50 GB/s (one 400 Gb/s NIC per GPU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scaleout_gb_s: Option<f64>,
    /// Fraction of peak FLOPS that large GEMMs reach (prefill), 0-1.
    pub compute_efficiency: f64,
    /// Fraction of peak bandwidth that decode reaches, 0-1 (weights and KV
    /// cache alike).
    pub bandwidth_efficiency: f64,
    /// Fraction of the BF16 peak that attention reaches, 0-1; absent: the
    /// same as `compute_efficiency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention_efficiency: Option<f64>,
    /// Fixed engine overhead per step (scheduling, launch) in milliseconds.
    pub step_overhead_ms: f64,
    /// Fixed GPU time per transformer layer in microseconds (kernel tails,
    /// latency of small shards, norms and other small operators).
    #[serde(default)]
    pub layer_overhead_us: f64,
    /// Fraction of memory usable for weights and KV cache (the rest: activations,
    /// CUDA context, fragmentation), 0-1.
    #[serde(default = "default_usable_memory_fraction")]
    pub usable_memory_fraction: f64,
    /// Where the figures come from.
    pub source: String,
    /// What the efficiency figures were fitted to: how far a plan resting
    /// on this GPU can be trusted.
    #[serde(default)]
    pub calibration: Calibration,
}

/// What a GPU profile's efficiency figures were fitted to, best first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Calibration {
    /// Measured runs of production engines on this GPU (and kernel timings).
    EngineRuns,
    /// Measured kernel or layer timings on this GPU.
    KernelTimings,
    /// Published throughput figures (MLPerf, vendor tables) only.
    PublishedThroughput,
    /// Datasheet figures, efficiencies assumed from other GPUs.
    #[default]
    Datasheet,
}

impl Calibration {
    /// In words, for the reports.
    pub fn words(self) -> &'static str {
        match self {
            Calibration::EngineRuns => "fitted to measured engine runs on it",
            Calibration::KernelTimings => "fitted to measured kernel timings on it",
            Calibration::PublishedThroughput => {
                "fitted to published throughput only, no measured kernels or engine runs"
            }
            Calibration::Datasheet => "from datasheets, efficiencies assumed from other GPUs",
        }
    }

    /// Whether figures of this basis were measured on the GPU.
    pub fn measured(self) -> bool {
        matches!(self, Calibration::EngineRuns | Calibration::KernelTimings)
    }
}

fn default_hop_latency_us() -> f64 {
    8.0
}

fn default_usable_memory_fraction() -> f64 {
    0.9
}

impl GpuProfile {
    /// Whether the GPU runs GEMMs at `precision`: every GPU runs BF16; FP8
    /// needs FP8 units, which a profile states with `fp8_tflops`.
    pub fn supports(&self, precision: Precision) -> bool {
        match precision {
            Precision::Bf16 | Precision::Fp4 => true,
            Precision::Fp8 => self.fp8_tflops.is_some(),
        }
    }

    /// Whether FP4 GEMMs run on FP4 units (else FP4 is weight-only).
    pub fn has_fp4_units(&self) -> bool {
        self.fp4_tflops.is_some()
    }

    /// GPUs that share one NVLink domain.
    pub fn nvlink_domain(&self) -> u32 {
        self.nvlink_domain_gpus.unwrap_or(self.gpus_per_node)
    }

    /// Scale-out bandwidth per GPU in bytes/s (one direction).
    pub fn scaleout_bytes_per_s(&self) -> f64 {
        self.scaleout_gb_s.unwrap_or(50.0) * 1e9
    }

    /// The link's datasheet bandwidth per GPU in GB/s (one direction).
    pub fn link_peak_gb_s(&self) -> f64 {
        self.link_peak_gb_s.unwrap_or(self.interconnect_gb_s)
    }

    /// Fraction of the BF16 peak that attention reaches.
    pub fn attention_efficiency(&self) -> f64 {
        self.attention_efficiency.unwrap_or(self.compute_efficiency)
    }

    /// Memory bandwidth in bytes/s.
    pub fn bandwidth_bytes_per_s(&self) -> f64 {
        self.memory_bandwidth_tb_s * 1e12
    }

    /// Usable memory per GPU in bytes.
    pub fn usable_memory_bytes(&self) -> f64 {
        self.memory_gb * 1e9 * self.usable_memory_fraction
    }

    /// Checks ranges; returns every problem found.
    pub fn check(&self, file: &Path) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut bound =
            |key: &str, value: f64| check_bound(&mut problems, file, GPU_BOUNDS, key, value);
        bound("memory_gb", self.memory_gb);
        bound("memory_bandwidth_tb_s", self.memory_bandwidth_tb_s);
        bound("bf16_tflops", self.bf16_tflops);
        if let Some(fp8) = self.fp8_tflops {
            bound("fp8_tflops", fp8);
        }
        if let Some(fp4) = self.fp4_tflops {
            bound("fp4_tflops", fp4);
        }
        if let Some(n) = self.nvlink_domain_gpus {
            bound("nvlink_domain_gpus", f64::from(n));
        }
        if let Some(bw) = self.scaleout_gb_s {
            bound("scaleout_gb_s", bw);
        }
        bound("interconnect_gb_s", self.interconnect_gb_s);
        if let Some(peak) = self.link_peak_gb_s {
            bound("link_peak_gb_s", peak);
        }
        bound("hop_latency_us", self.hop_latency_us);
        bound("gpus_per_node", f64::from(self.gpus_per_node));
        bound("compute_efficiency", self.compute_efficiency);
        bound("bandwidth_efficiency", self.bandwidth_efficiency);
        if let Some(e) = self.attention_efficiency {
            bound("attention_efficiency", e);
        }
        bound("step_overhead_ms", self.step_overhead_ms);
        bound("layer_overhead_us", self.layer_overhead_us);
        bound("usable_memory_fraction", self.usable_memory_fraction);
        if let Some(peak) = self.link_peak_gb_s {
            if peak < self.interconnect_gb_s {
                problems.push(Problem::new(
                file.to_path_buf(),
                "link_peak_gb_s",
                format!(
                    "the datasheet link bandwidth ({peak} GB/s) is below the fitted `interconnect_gb_s` ({} GB/s); a fit cannot beat the datasheet",
                    self.interconnect_gb_s
                ),
            ));
            }
        }
        problems
    }
}
