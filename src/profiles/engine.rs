//! An engine profile: what a serving engine (vLLM, SGLang, TensorRT-LLM)
//! adds to or removes from the kernel physics of a GPU profile, as read from
//! `profiles/engines/<id>.toml` or from a file `planner calibrate --runs`
//! wrote. The GPU profile keeps the GEMM and attention efficiencies and the
//! bandwidths; the engine profile holds the fixed costs of its steps (CUDA
//! graphs, fused kernels), its all-reduce, its CPU time and whether that
//! overlaps the GPU, its scheduler's defaults and how much of the memory it
//! takes. Formulas in `docs/model.md` §2.1.

use super::check_bound;
use super::Scheduler;
use crate::base::bounds::Bound;
use crate::base::error::Problem;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The accepted range of every number in an engine profile. The fitted
/// figures keep these ranges too: a scale never lifts an efficiency above 1
/// (checked against the GPU profile where both are known), no time is
/// negative.
pub(crate) const ENGINE_BOUNDS: &[Bound] = &[
    Bound::closed("max_num_batched_tokens", 16.0, 1_048_576.0, "tokens"),
    Bound::closed("max_num_seqs", 1.0, 65_536.0, "sequences"),
    Bound::positive("memory_utilization", 1.0, ""),
    Bound::closed("cuda_graph_batch_sizes", 1.0, 65_536.0, "sequences"),
    Bound::closed("graph_layer_us", 0.0, 10_000.0, "µs"),
    Bound::closed("eager_layer_us", 0.0, 10_000.0, "µs"),
    Bound::closed("cpu_step_ms", 0.0, 1_000.0, "ms"),
    Bound::closed("cpu_per_sequence_us", 0.0, 10_000.0, "µs"),
    Bound::closed("custom_allreduce_max_bytes", 0.0, 1e12, "bytes"),
    Bound::closed("custom_allreduce_one_shot_max_bytes", 0.0, 1e12, "bytes"),
    Bound::closed("custom_allreduce_world_sizes", 2.0, 64.0, "GPUs"),
    Bound::closed("custom_allreduce_latency_us", 0.0, 1_000.0, "µs"),
    Bound::positive("allreduce_bandwidth_fraction", 1.0, ""),
    Bound::positive("gemm_efficiency_scale", 10.0, ""),
    Bound::positive("attention_efficiency_scale", 10.0, ""),
    Bound::closed("frontend_ms_per_request", 0.0, 1_000.0, "ms"),
    Bound::closed("server_ms_per_request", 0.0, SERVER_MS_MAX, "ms"),
    Bound::closed(
        "server_us_per_prompt_token",
        0.0,
        SERVER_US_PER_TOKEN_MAX,
        "µs",
    ),
    Bound::closed("expert_imbalance", 1.0, 64.0, ""),
    Bound::positive("expert_gemm_efficiency_scale", 10.0, ""),
    Bound::positive("expert_bandwidth_efficiency_scale", 10.0, ""),
    Bound::positive("expert_weight_only_scale", 10.0, ""),
    Bound::closed("moe_layer_us", 0.0, 10_000.0, "µs"),
    Bound::closed("moe_eager_expert_us", 0.0, 1_000.0, "µs"),
    Bound::closed("expert_gemm_min_tokens", 1.0, 4_096.0, "tokens"),
    Bound::closed("all_to_all_latency_us", 0.0, 1_000.0, "µs"),
];

/// One serving engine, as read from an engine profile.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EngineProfile {
    /// Human-readable name, e.g. "vLLM".
    pub name: String,
    /// The engine release the figures hold for, e.g. "0.12.0".
    pub version: String,
    /// `vllm`, `sglang` or `trtllm`: which launch and benchmark commands the
    /// plan prints for it.
    pub family: EngineFamily,
    /// How each step is filled (`decode-first-chunked`: vLLM V1 and
    /// TensorRT-LLM's in-flight batching; `prefill-first-chunked`: SGLang,
    /// whose prefill batches run without the decodes).
    pub scheduler: Scheduler,
    /// Default token budget of one step (vLLM `--max-num-batched-tokens`,
    /// SGLang `--chunked-prefill-size`, TensorRT-LLM `max_num_tokens`); a
    /// longer prompt is split into chunks of it.
    pub max_num_batched_tokens: u32,
    /// How data-parallel attention ranks share the token budget: each rank
    /// schedules its own steps with the whole budget (`per-rank`, the
    /// default: vLLM's data-parallel engine cores, TensorRT-LLM's
    /// attention-DP ranks) or with the budget divided among them (`shared`:
    /// SGLang, which divides `--chunked-prefill-size` by the DP size under
    /// `--enable-dp-attention`).
    #[serde(default)]
    pub attention_dp_budget: AttentionDpBudget,
    /// Default cap on running sequences (vLLM `--max-num-seqs`, SGLang
    /// `--max-running-requests`, TensorRT-LLM `max_batch_size`).
    pub max_num_seqs: u32,
    /// Whether a request is admitted only when the KV cache holds its whole
    /// prompt and output (TensorRT-LLM's GUARANTEED_NO_EVICT), rather than
    /// its prompt and one token (vLLM, SGLang: preempt on overflow).
    #[serde(default)]
    pub reserve_output_kv: bool,
    /// Fraction of each GPU's memory the engine takes for weights and KV
    /// cache (vLLM `--gpu-memory-utilization`, SGLang
    /// `--mem-fraction-static`).
    pub memory_utilization: f64,
    /// Whether the engine's FP8 recipe stores the KV cache in FP8 as well
    /// when the weights are FP8 (vLLM `--kv-cache-dtype fp8`, TensorRT-LLM
    /// `kv_cache_config.dtype: fp8`): half the KV bytes, read and held.
    #[serde(default)]
    pub fp8_kv_cache: bool,
    /// Decode batch sizes captured as CUDA graphs, ascending: a decode-only
    /// step of B sequences runs the graph of the next size up (its GEMMs
    /// over that many tokens) with `graph_layer_us` per layer; a larger
    /// decode batch, or a step with prefill work, runs eagerly with
    /// `eager_layer_us` per layer.
    pub cuda_graph_batch_sizes: Vec<u32>,
    /// Fixed GPU time per layer in a captured decode step, in µs (kernel
    /// launch gaps and tails of the fused kernels).
    pub graph_layer_us: f64,
    /// Fixed GPU time per layer in a step run outside a graph, in µs.
    pub eager_layer_us: f64,
    /// CPU time per step (scheduling, input preparation, sampling,
    /// detokenisation), in ms.
    pub cpu_step_ms: f64,
    /// CPU time per running sequence per step, in µs.
    pub cpu_per_sequence_us: f64,
    /// Whether the CPU's work for the next step runs while the GPU runs this
    /// one (vLLM V1 asynchronous scheduling, SGLang's overlap scheduler,
    /// TensorRT-LLM's overlap scheduler): a step then takes the longer of
    /// the two, else their sum.
    pub cpu_overlaps_gpu: bool,
    /// Largest all-reduce message, in bytes, the engine's own kernel takes
    /// (vLLM's custom all-reduce: 8 MiB); NCCL above it.
    pub custom_allreduce_max_bytes: f64,
    /// Largest message the one-shot kernel takes (every GPU reads every
    /// peer's buffer once); the two-shot kernel (reduce-scatter then
    /// all-gather) between this and `custom_allreduce_max_bytes`.
    pub custom_allreduce_one_shot_max_bytes: f64,
    /// Tensor-parallel sizes the custom kernel runs at; it also needs every
    /// pair of GPUs linked (`fully_connected` in the GPU profile).
    pub custom_allreduce_world_sizes: Vec<u32>,
    /// Latency of one pass of the custom kernel, in µs (launch and the
    /// barrier between GPUs; two passes for two-shot).
    pub custom_allreduce_latency_us: f64,
    /// Fraction of the GPU's peak link bandwidth (`link_peak_gb_s`) that
    /// the all-reduces reach, custom kernel and NCCL alike.
    pub allreduce_bandwidth_fraction: f64,
    /// The engine's GEMM efficiency over the GPU profile's
    /// `compute_efficiency` (fitted to plain PyTorch operator timings): the
    /// product stays at most 1.
    pub gemm_efficiency_scale: f64,
    /// The engine's attention efficiency over the GPU profile's
    /// `attention_efficiency` (FlashAttention or FlashInfer against
    /// PyTorch's kernels): the product stays at most 1.
    pub attention_efficiency_scale: f64,
    /// Time the front end (HTTP, tokenisation) takes per request before the
    /// engine sees it, in ms: requests sent at once reach the engine this
    /// far apart.
    #[serde(default)]
    pub frontend_ms_per_request: f64,
    /// The server's own time in a request's first token outside the GPU's
    /// steps, in ms, the same for every request: the HTTP request and the
    /// first streamed chunk, the hand-over to the engine's scheduler (vLLM
    /// V1's ZMQ queue to the engine core), the admission into the next step,
    /// the first token's detokenisation. Added to every TTFT (and end-to-end
    /// latency) beside the GPU's work; it takes no GPU time. At most
    /// [`SERVER_MS_MAX`].
    #[serde(default)]
    pub server_ms_per_request: f64,
    /// The server's time per prompt token before the engine sees the
    /// request, in µs: tokenising the prompt (and, with it, copying and
    /// hashing the token ids), added to the request's TTFT like
    /// `server_ms_per_request`. At most [`SERVER_US_PER_TOKEN_MAX`].
    #[serde(default)]
    pub server_us_per_prompt_token: f64,
    /// A mixture of experts: how many times its mean share of the touched
    /// experts and of the expert FLOPs the busiest expert-parallel rank
    /// carries (routing is skewed; 1 = uniform). The step waits for it.
    #[serde(default = "one")]
    pub expert_imbalance: f64,
    /// The grouped expert GEMMs' compute efficiency over the GPU profile's
    /// `compute_efficiency` (small GEMMs per expert, routing skew inside a
    /// layer): the product stays at most 1.
    #[serde(default = "one")]
    pub expert_gemm_efficiency_scale: f64,
    /// The expert GEMMs' bandwidth efficiency over the GPU profile's
    /// `bandwidth_efficiency` (a weight-only FP4 kernel dequantising on the
    /// fly reads below the memory's rate): the product stays at most 1.
    #[serde(default = "one")]
    pub expert_bandwidth_efficiency_scale: f64,
    /// The expert GEMMs' compute efficiency, when their weights run
    /// weight-only (FP4 experts on a GPU without FP4 units, dequantised to
    /// BF16 inside the kernel), over `expert_gemm_efficiency_scale`.
    #[serde(default = "one")]
    pub expert_weight_only_scale: f64,
    /// Rows the grouped expert GEMM computes for each expert it runs, at
    /// least (its tile: an expert sent 2 tokens costs the FLOPs of this
    /// many, though it reads its weights once).
    #[serde(default = "one")]
    pub expert_gemm_min_tokens: f64,
    /// Fixed GPU time per MoE layer, in µs: the router, top-k, the token
    /// sort and the permutes around the grouped GEMMs, added to the layer's.
    #[serde(default)]
    pub moe_layer_us: f64,
    /// What each routed expert of a MoE layer adds, in µs, to a step that
    /// runs without a captured CUDA graph (a prefill or mixed step): the
    /// per-expert token counts, offsets and grouped-GEMM set-up that a
    /// captured decode step replays for free, here launched and synchronised
    /// eagerly (× experts × MoE layers per step).
    #[serde(default)]
    pub moe_eager_expert_us: f64,
    /// Latency of one expert-parallel exchange (dispatch or combine) of one
    /// layer, in µs; its bytes run at `allreduce_bandwidth_fraction` of
    /// the link.
    #[serde(default = "default_all_to_all_latency_us")]
    pub all_to_all_latency_us: f64,
    /// The figures `planner calibrate --runs` fits; the others come from the
    /// engine's code and documentation.
    pub fitted: Vec<String>,
    /// Where the figures come from.
    pub source: String,
    /// The source of each figure, by key.
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
    /// The profile's measured error against the engine's runs, by
    /// `<GPU id> <precision>` (`h100-sxm fp8`), and over all of them
    /// (`all`): what `planner calibrate --runs --out` measured with the
    /// figures above. A GPU and precision without an entry is not measured.
    #[serde(default)]
    pub errors: BTreeMap<String, MeasuredError>,
    /// Steps slower than the figures say (the confidence band's pessimistic
    /// edge, set by the solve, never read from a file): 1 and 1 as profiled.
    #[serde(skip)]
    pub slowdown: StepSlowdown,
}

/// The median |error| of mean TTFT and mean TPOT of one GPU and precision's
/// runs, as fractions (0.15 = 15%).
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MeasuredError {
    /// The runs measured.
    pub runs: u32,
    /// With the fitted figures.
    pub ttft: f64,
    pub tpot: f64,
    /// Predicted by fits that saw no run of the run's model (leave one
    /// model out), where measured: the error a model without runs can
    /// expect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_out_ttft: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_out_tpot: Option<f64>,
}

impl MeasuredError {
    /// The larger of the fitted and the left-out error, TTFT and TPOT: the
    /// band's half-width.
    pub fn band(&self) -> (f64, f64) {
        (
            self.ttft.max(self.model_out_ttft.unwrap_or(0.0)),
            self.tpot.max(self.model_out_tpot.unwrap_or(0.0)),
        )
    }
}

/// How much slower than its figures an engine's steps run: a step that
/// carries prompt tokens × `prompt` (and the server's time with it), a
/// decode-only step × `decode`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepSlowdown {
    pub prompt: f64,
    pub decode: f64,
}

impl Default for StepSlowdown {
    fn default() -> Self {
        StepSlowdown {
            prompt: 1.0,
            decode: 1.0,
        }
    }
}

/// Fewer runs than this on a GPU and precision measure too little of their
/// own: the band takes, TTFT and TPOT apart, the larger of their error and
/// the engine's over all its runs (`errors.all`).
pub(crate) const BAND_MIN_RUNS: u32 = 10;

impl EngineProfile {
    /// The measured error of the engine on `gpu` at `precision`: its own
    /// when at least [`BAND_MIN_RUNS`] runs measured it, the larger of its
    /// own and the engine's over all its runs when fewer did, `None` when
    /// none did (not measured).
    pub fn error_on(&self, gpu: &str, precision: impl std::fmt::Display) -> Option<MeasuredError> {
        self.error_basis(gpu, precision).map(|(e, _)| e)
    }

    /// [`Self::error_on`] with what it rests on, e.g. `84 runs on b200
    /// fp4` or `all 353 runs (3 on h100-sxm fp8)`.
    pub fn error_basis(
        &self,
        gpu: &str,
        precision: impl std::fmt::Display,
    ) -> Option<(MeasuredError, String)> {
        let key = format!("{gpu} {precision}");
        let own = self.errors.get(&key).copied()?;
        match self.errors.get("all").copied() {
            Some(all) if own.runs < BAND_MIN_RUNS => {
                let (own_ttft, own_tpot) = own.band();
                let (all_ttft, all_tpot) = all.band();
                let larger = MeasuredError {
                    runs: all.runs,
                    ttft: own_ttft.max(all_ttft),
                    tpot: own_tpot.max(all_tpot),
                    model_out_ttft: None,
                    model_out_tpot: None,
                };
                Some((
                    larger,
                    format!(
                        "the larger of all {} runs' and the {} on {key}",
                        all.runs, own.runs
                    ),
                ))
            }
            _ => Some((own, format!("{} runs on {key}", own.runs))),
        }
    }
}

fn one() -> f64 {
    1.0
}

/// How data-parallel attention ranks share a replica's token budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AttentionDpBudget {
    /// Each rank takes the whole budget.
    #[default]
    PerRank,
    /// The ranks divide it.
    Shared,
}

fn default_all_to_all_latency_us() -> f64 {
    20.0
}

/// Which engine's command line the plan prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineFamily {
    Vllm,
    Sglang,
    Trtllm,
}

impl EngineFamily {
    /// The family's name as `runs.csv` (`backend`) and the profiles spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            EngineFamily::Vllm => "vllm",
            EngineFamily::Sglang => "sglang",
            EngineFamily::Trtllm => "trtllm",
        }
    }

    /// Parses `vllm`, `sglang` or `trtllm`.
    pub fn parse(text: &str) -> Option<EngineFamily> {
        match text {
            "vllm" => Some(EngineFamily::Vllm),
            "sglang" => Some(EngineFamily::Sglang),
            "trtllm" => Some(EngineFamily::Trtllm),
            _ => None,
        }
    }
}

/// vLLM's defaults for its OpenAI server on `gpu` where they are smaller
/// than on the GPUs its profile states them for: (256 sequences, 2,048
/// tokens a step) on a GPU with less than 70 GiB of memory or an A100
/// (`vllm/engine/arg_utils.py`, `_set_default_args`: larger defaults only
/// where `device_memory >= 70 GiB` and the device name has no "a100");
/// `None` for another engine or a larger GPU.
pub(crate) fn vllm_small_gpu_defaults(
    engine: &EngineProfile,
    gpu: &crate::profiles::GpuProfile,
) -> Option<(u32, u32)> {
    const GIB: f64 = 1_073_741_824.0;
    let small = gpu.memory_gb * 1e9 < 70.0 * GIB || gpu.name.to_lowercase().contains("a100");
    (engine.family == EngineFamily::Vllm && small).then_some((256, 2048))
}

/// The most the server's fixed time per request may be, in ms: the first
/// token of the fastest aggregated run of `runs.csv` (vLLM, gpt-oss-120b on 4
/// B200 at concurrency 4 with 1,024-token prompts: 25.4 ms) holds it and at
/// least one prefill step, so no engine's fixed part can be longer.
pub(crate) const SERVER_MS_MAX: f64 = 25.0;

/// The most the server's time per prompt token may be, in µs: the first
/// token of the fastest 8,192-token run of `runs.csv` (vLLM, gpt-oss-120b on
/// 8 B200 at concurrency 4: 74.2 ms, 9.05 µs a token) holds it and the
/// prompt's prefill. Published tokenisers are well inside it (Hugging Face's
/// Rust `tokenizers` and OpenAI's `tiktoken` encode at the order of a million
/// tokens a second on one core, about 1 µs a token).
pub(crate) const SERVER_US_PER_TOKEN_MAX: f64 = 9.0;

/// The figures a calibration may fit, with the range it searches: physical
/// (no negative time, a bandwidth fraction at most 1, scales bounded so an
/// efficiency stays at most 1 on the GPU the runs came from).
pub(crate) const FITTABLE: &[(&str, f64, f64)] = &[
    ("graph_layer_us", 0.0, 500.0),
    ("eager_layer_us", 0.0, 500.0),
    ("cpu_step_ms", 0.0, 50.0),
    ("cpu_per_sequence_us", 0.0, 200.0),
    ("custom_allreduce_latency_us", 0.0, 100.0),
    ("allreduce_bandwidth_fraction", 0.05, 1.0),
    ("gemm_efficiency_scale", 0.2, 10.0),
    ("attention_efficiency_scale", 0.05, 10.0),
    ("expert_imbalance", 1.0, 4.0),
    ("expert_gemm_efficiency_scale", 0.05, 10.0),
    ("expert_bandwidth_efficiency_scale", 0.1, 10.0),
    ("expert_weight_only_scale", 0.05, 1.0),
    ("moe_layer_us", 0.0, 500.0),
    ("moe_eager_expert_us", 0.0, 100.0),
    ("expert_gemm_min_tokens", 1.0, 256.0),
    ("all_to_all_latency_us", 0.0, 200.0),
    ("server_ms_per_request", 0.0, SERVER_MS_MAX),
    ("server_us_per_prompt_token", 0.0, SERVER_US_PER_TOKEN_MAX),
];

impl EngineProfile {
    /// The value of fitted figure `key`.
    pub fn figure(&self, key: &str) -> Option<f64> {
        Some(match key {
            "graph_layer_us" => self.graph_layer_us,
            "eager_layer_us" => self.eager_layer_us,
            "cpu_step_ms" => self.cpu_step_ms,
            "cpu_per_sequence_us" => self.cpu_per_sequence_us,
            "custom_allreduce_latency_us" => self.custom_allreduce_latency_us,
            "allreduce_bandwidth_fraction" => self.allreduce_bandwidth_fraction,
            "gemm_efficiency_scale" => self.gemm_efficiency_scale,
            "attention_efficiency_scale" => self.attention_efficiency_scale,
            "expert_imbalance" => self.expert_imbalance,
            "expert_gemm_efficiency_scale" => self.expert_gemm_efficiency_scale,
            "expert_bandwidth_efficiency_scale" => self.expert_bandwidth_efficiency_scale,
            "expert_weight_only_scale" => self.expert_weight_only_scale,
            "moe_layer_us" => self.moe_layer_us,
            "moe_eager_expert_us" => self.moe_eager_expert_us,
            "expert_gemm_min_tokens" => self.expert_gemm_min_tokens,
            "all_to_all_latency_us" => self.all_to_all_latency_us,
            "server_ms_per_request" => self.server_ms_per_request,
            "server_us_per_prompt_token" => self.server_us_per_prompt_token,
            _ => return None,
        })
    }

    /// The value of `key` of `fitted`: a figure, or the token budget.
    pub fn fitted_value(&self, key: &str) -> Option<f64> {
        if key == "max_num_batched_tokens" {
            return Some(f64::from(self.max_num_batched_tokens));
        }
        self.figure(key)
    }

    /// Sets fitted figure `key`; false when there is none of that name.
    pub fn set_figure(&mut self, key: &str, value: f64) -> bool {
        let slot = match key {
            "graph_layer_us" => &mut self.graph_layer_us,
            "eager_layer_us" => &mut self.eager_layer_us,
            "cpu_step_ms" => &mut self.cpu_step_ms,
            "cpu_per_sequence_us" => &mut self.cpu_per_sequence_us,
            "custom_allreduce_latency_us" => &mut self.custom_allreduce_latency_us,
            "allreduce_bandwidth_fraction" => &mut self.allreduce_bandwidth_fraction,
            "gemm_efficiency_scale" => &mut self.gemm_efficiency_scale,
            "attention_efficiency_scale" => &mut self.attention_efficiency_scale,
            "expert_imbalance" => &mut self.expert_imbalance,
            "expert_gemm_efficiency_scale" => &mut self.expert_gemm_efficiency_scale,
            "expert_bandwidth_efficiency_scale" => &mut self.expert_bandwidth_efficiency_scale,
            "expert_weight_only_scale" => &mut self.expert_weight_only_scale,
            "moe_layer_us" => &mut self.moe_layer_us,
            "moe_eager_expert_us" => &mut self.moe_eager_expert_us,
            "expert_gemm_min_tokens" => &mut self.expert_gemm_min_tokens,
            "all_to_all_latency_us" => &mut self.all_to_all_latency_us,
            "server_ms_per_request" => &mut self.server_ms_per_request,
            "server_us_per_prompt_token" => &mut self.server_us_per_prompt_token,
            _ => return false,
        };
        *slot = value;
        true
    }

    /// The padded batch a decode-only step of `batch` sequences runs as, or
    /// `None` when no captured graph holds it.
    pub fn graph_batch(&self, batch: u32) -> Option<u32> {
        self.cuda_graph_batch_sizes
            .iter()
            .copied()
            .find(|&size| size >= batch)
    }

    /// Checks ranges and the lists' order; returns every problem found.
    pub fn check(&self, file: &Path) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut bound =
            |key: &str, value: f64| check_bound(&mut problems, file, ENGINE_BOUNDS, key, value);
        bound(
            "max_num_batched_tokens",
            f64::from(self.max_num_batched_tokens),
        );
        bound("max_num_seqs", f64::from(self.max_num_seqs));
        bound("memory_utilization", self.memory_utilization);
        for &size in &self.cuda_graph_batch_sizes {
            bound("cuda_graph_batch_sizes", f64::from(size));
        }
        bound("graph_layer_us", self.graph_layer_us);
        bound("eager_layer_us", self.eager_layer_us);
        bound("cpu_step_ms", self.cpu_step_ms);
        bound("cpu_per_sequence_us", self.cpu_per_sequence_us);
        bound(
            "custom_allreduce_max_bytes",
            self.custom_allreduce_max_bytes,
        );
        bound(
            "custom_allreduce_one_shot_max_bytes",
            self.custom_allreduce_one_shot_max_bytes,
        );
        for &size in &self.custom_allreduce_world_sizes {
            bound("custom_allreduce_world_sizes", f64::from(size));
        }
        bound(
            "custom_allreduce_latency_us",
            self.custom_allreduce_latency_us,
        );
        bound(
            "allreduce_bandwidth_fraction",
            self.allreduce_bandwidth_fraction,
        );
        bound("gemm_efficiency_scale", self.gemm_efficiency_scale);
        bound(
            "attention_efficiency_scale",
            self.attention_efficiency_scale,
        );
        bound("frontend_ms_per_request", self.frontend_ms_per_request);
        bound("server_ms_per_request", self.server_ms_per_request);
        bound(
            "server_us_per_prompt_token",
            self.server_us_per_prompt_token,
        );
        bound("expert_imbalance", self.expert_imbalance);
        bound(
            "expert_gemm_efficiency_scale",
            self.expert_gemm_efficiency_scale,
        );
        bound(
            "expert_bandwidth_efficiency_scale",
            self.expert_bandwidth_efficiency_scale,
        );
        bound("expert_weight_only_scale", self.expert_weight_only_scale);
        bound("moe_layer_us", self.moe_layer_us);
        bound("moe_eager_expert_us", self.moe_eager_expert_us);
        bound("expert_gemm_min_tokens", self.expert_gemm_min_tokens);
        bound("all_to_all_latency_us", self.all_to_all_latency_us);
        if self.cuda_graph_batch_sizes.windows(2).any(|w| w[0] >= w[1]) {
            problems.push(Problem::new(
                file.to_path_buf(),
                "cuda_graph_batch_sizes",
                "the captured batch sizes must be listed in ascending order, each once",
            ));
        }
        for key in &self.fitted {
            if self.figure(key).is_none() && key != "max_num_batched_tokens" {
                let known: Vec<&str> = FITTABLE.iter().map(|f| f.0).collect();
                problems.push(Problem::new(
                    file.to_path_buf(),
                    "fitted",
                    format!(
                        "`{key}` is not a figure a calibration fits; it fits: {}, max_num_batched_tokens",
                        known.join(", ")
                    ),
                ));
            }
        }
        problems
    }
}

#[cfg(test)]
/// An engine profile with round figures, for tests.
pub(crate) fn vllm_fixture() -> EngineProfile {
    EngineProfile {
        name: "vLLM".into(),
        version: "test".into(),
        family: EngineFamily::Vllm,
        scheduler: Scheduler::DecodeFirstChunked,
        max_num_batched_tokens: 8192,
        attention_dp_budget: AttentionDpBudget::PerRank,
        max_num_seqs: 1024,
        reserve_output_kv: false,
        memory_utilization: 0.9,
        fp8_kv_cache: true,
        cuda_graph_batch_sizes: vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
        graph_layer_us: 20.0,
        eager_layer_us: 60.0,
        cpu_step_ms: 3.0,
        cpu_per_sequence_us: 10.0,
        cpu_overlaps_gpu: true,
        custom_allreduce_max_bytes: 8.0 * 1024.0 * 1024.0,
        custom_allreduce_one_shot_max_bytes: 512.0 * 1024.0,
        custom_allreduce_world_sizes: vec![2, 4, 6, 8],
        custom_allreduce_latency_us: 10.0,
        allreduce_bandwidth_fraction: 0.8,
        gemm_efficiency_scale: 1.0,
        attention_efficiency_scale: 1.0,
        frontend_ms_per_request: 0.0,
        server_ms_per_request: 0.0,
        server_us_per_prompt_token: 0.0,
        expert_imbalance: 1.0,
        expert_gemm_efficiency_scale: 1.0,
        expert_bandwidth_efficiency_scale: 1.0,
        expert_weight_only_scale: 1.0,
        moe_layer_us: 0.0,
        moe_eager_expert_us: 0.0,
        expert_gemm_min_tokens: 1.0,
        all_to_all_latency_us: 20.0,
        fitted: vec!["graph_layer_us".into()],
        source: "test".into(),
        sources: BTreeMap::new(),
        errors: BTreeMap::new(),
        slowdown: StepSlowdown::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_engine_profiles_parse_and_check() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/engines");
        for id in ["vllm", "sglang", "trtllm"] {
            let profile = super::super::load_engine(&dir.join(format!("{id}.toml")))
                .unwrap_or_else(|p| panic!("{id}: {p}"));
            assert_eq!(profile.family.as_str(), id);
            assert!(!profile.fitted.is_empty());
            for key in profile
                .fitted
                .iter()
                .filter(|k| *k != "max_num_batched_tokens")
            {
                let (_, lo, hi) = FITTABLE.iter().find(|f| f.0 == key).unwrap();
                let v = profile.figure(key).unwrap();
                assert!((*lo..=*hi).contains(&v), "{id} {key} = {v}");
            }
        }
    }

    #[test]
    fn a_decode_batch_runs_as_the_next_captured_size() {
        let mut p = vllm_fixture();
        p.cuda_graph_batch_sizes = vec![1, 2, 4, 8, 16];
        assert_eq!(p.graph_batch(3), Some(4));
        assert_eq!(p.graph_batch(16), Some(16));
        assert_eq!(p.graph_batch(17), None);
    }
}
