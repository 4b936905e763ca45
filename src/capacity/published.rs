//! The roofline model against published throughput: TensorRT-LLM's
//! max-throughput tables and MLPerf Inference v4.1 offline results (FP8 on
//! NVIDIA GPUs), all from `shared/reference/hardware-and-prices.md`.
//!
//! A published point is a whole system's output tokens/s at fixed input and
//! output lengths with no latency limit. The model's figure for the same work:
//! continuous batching with `B` sequences per replica, where each sequence's
//! cycle is its prefill plus its decode steps, so
//! tokens/s per replica = B × OSL / (OSL × step(B, ISL + OSL/2) + B × prefill(ISL)),
//! maximised over B up to what the KV cache holds, times the replicas.

use crate::base::error::PlannerError;
use crate::perf::{EngineModel, PerfModel, StepTime};
use crate::profiles::precision::Precision;
use crate::profiles::{load_engine, load_gpu, load_model, EngineProfile, GpuProfile, ModelProfile};
use serde::Serialize;
use std::path::Path;

/// One published throughput figure.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PublishedPoint {
    pub source: &'static str,
    pub model: &'static str,
    pub gpu: &'static str,
    pub gpus: u32,
    pub tensor_parallel: u32,
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// Output tokens/s of the whole system.
    pub published_tokens_per_s: f64,
}

const TRT: &str = "TensorRT-LLM max-throughput table, FP8";

/// The published points the model is checked against.
pub(crate) const PUBLISHED: &[PublishedPoint] = &[
    PublishedPoint {
        source: TRT,
        model: "llama-3.1-8b",
        gpu: "h100-sxm",
        gpus: 1,
        tensor_parallel: 1,
        input_tokens: 128,
        output_tokens: 128,
        published_tokens_per_s: 28_312.0,
    },
    PublishedPoint {
        source: TRT,
        model: "llama-3.1-8b",
        gpu: "h100-sxm",
        gpus: 1,
        tensor_parallel: 1,
        input_tokens: 128,
        output_tokens: 2048,
        published_tokens_per_s: 22_714.0,
    },
    PublishedPoint {
        source: TRT,
        model: "llama-3.1-8b",
        gpu: "h100-sxm",
        gpus: 1,
        tensor_parallel: 1,
        input_tokens: 1000,
        output_tokens: 1000,
        published_tokens_per_s: 15_220.0,
    },
    PublishedPoint {
        source: TRT,
        model: "llama-3.1-8b",
        gpu: "h100-sxm",
        gpus: 1,
        tensor_parallel: 1,
        input_tokens: 2048,
        output_tokens: 128,
        published_tokens_per_s: 3_450.0,
    },
    PublishedPoint {
        source: TRT,
        model: "llama-3.1-8b",
        gpu: "h100-sxm",
        gpus: 1,
        tensor_parallel: 1,
        input_tokens: 5000,
        output_tokens: 500,
        published_tokens_per_s: 3_459.0,
    },
    PublishedPoint {
        source: TRT,
        model: "llama-3.1-8b",
        gpu: "h200",
        gpus: 1,
        tensor_parallel: 1,
        input_tokens: 1000,
        output_tokens: 1000,
        published_tokens_per_s: 17_744.0,
    },
    PublishedPoint {
        source: TRT,
        model: "llama-3.1-8b",
        gpu: "h200",
        gpus: 1,
        tensor_parallel: 1,
        input_tokens: 2048,
        output_tokens: 2048,
        published_tokens_per_s: 12_194.0,
    },
    PublishedPoint {
        source: TRT,
        model: "llama-3.1-70b",
        gpu: "h100-sxm",
        gpus: 2,
        tensor_parallel: 2,
        input_tokens: 128,
        output_tokens: 128,
        published_tokens_per_s: 6_378.0,
    },
    PublishedPoint {
        source: TRT,
        model: "llama-3.1-70b",
        gpu: "h100-sxm",
        gpus: 2,
        tensor_parallel: 2,
        input_tokens: 1000,
        output_tokens: 1000,
        published_tokens_per_s: 4_205.0,
    },
    PublishedPoint {
        source: TRT,
        model: "llama-3.1-70b",
        gpu: "h100-sxm",
        gpus: 2,
        tensor_parallel: 2,
        input_tokens: 2048,
        output_tokens: 128,
        published_tokens_per_s: 762.0,
    },
    PublishedPoint {
        source: TRT,
        model: "llama-3.1-70b",
        gpu: "h100-sxm",
        gpus: 2,
        tensor_parallel: 2,
        input_tokens: 5000,
        output_tokens: 500,
        published_tokens_per_s: 898.0,
    },
    PublishedPoint {
        source: TRT,
        model: "llama-3.1-70b",
        gpu: "h200",
        gpus: 1,
        tensor_parallel: 1,
        input_tokens: 1000,
        output_tokens: 1000,
        published_tokens_per_s: 2_909.0,
    },
    PublishedPoint {
        source: TRT,
        model: "llama-3.1-70b",
        gpu: "h200",
        gpus: 1,
        tensor_parallel: 1,
        input_tokens: 2048,
        output_tokens: 2048,
        published_tokens_per_s: 2_003.0,
    },
    PublishedPoint {
        source: TRT,
        model: "llama-3.1-405b",
        gpu: "h100-sxm",
        gpus: 8,
        tensor_parallel: 8,
        input_tokens: 1000,
        output_tokens: 1000,
        published_tokens_per_s: 2_919.0,
    },
    PublishedPoint {
        source: TRT,
        model: "llama-3.1-405b",
        gpu: "h200",
        gpus: 8,
        tensor_parallel: 8,
        input_tokens: 2048,
        output_tokens: 2048,
        published_tokens_per_s: 2_948.0,
    },
];

/// Largest batch the search considers.
const MAX_BATCH: u32 = 2048;

/// The model's prediction for one point.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub source: String,
    pub model: String,
    pub gpu: String,
    pub gpus: u32,
    pub tensor_parallel: u32,
    pub input_tokens: u32,
    pub output_tokens: u32,
    pub published_tokens_per_s: f64,
    pub predicted_tokens_per_s: f64,
    /// Predicted over published, minus one.
    pub relative_error: f64,
    /// The batch the prediction settled on.
    pub batch: u32,
    /// The same prediction with the shipped TensorRT-LLM engine profile on
    /// top (the published points are TensorRT-LLM's), and its error.
    pub engine_tokens_per_s: f64,
    pub engine_relative_error: f64,
}

/// The shipped TensorRT-LLM profile, the engine the published points ran.
fn trtllm(profiles_dir: &Path) -> Result<EngineProfile, PlannerError> {
    load_engine(&profiles_dir.join("engines").join("trtllm.toml"))
        .map_err(|p| PlannerError::Profile(vec![p]))
}

/// Output tokens/s of `gpus` GPUs in replicas of `tp` GPUs of `perf`, at
/// the best batch.
pub(crate) fn offline_throughput(
    perf: &impl StepTime,
    tp: u32,
    gpus: u32,
    isl: f64,
    osl: f64,
) -> (f64, u32) {
    let kv_limit = (perf.kv_capacity_tokens() / (isl + osl)).floor().max(0.0) as u32;
    let replicas = f64::from(gpus / tp);
    let mut best = (0.0, 0);
    for b in 1..=kv_limit.min(MAX_BATCH) {
        let batch = f64::from(b);
        let cycle = osl * perf.decode_step_s(batch, isl + osl / 2.0) + batch * perf.prefill_s(isl);
        let tokens = batch * osl / cycle * replicas;
        if tokens > best.0 {
            best = (tokens, b);
        }
    }
    best
}

/// A GPU profile and a model profile with FP8 weights and KV cache, as the
/// published figures were measured.
fn fp8_profiles(
    profiles_dir: &Path,
    gpu: &str,
    model: &str,
) -> Result<(GpuProfile, ModelProfile), PlannerError> {
    let located = |e| PlannerError::Profile(vec![e]);
    let gpu = load_gpu(profiles_dir, gpu).map_err(located)?;
    let mut model = load_model(profiles_dir, model).map_err(located)?;
    model.bytes_per_weight = 1.0;
    model.kv_bytes_per_element = 1.0;
    Ok((gpu, model))
}

/// Every published point with the model's prediction, FP8 weights and KV cache.
pub(crate) fn compare(profiles_dir: &Path) -> Result<Vec<Comparison>, PlannerError> {
    let engine = trtllm(profiles_dir)?;
    PUBLISHED
        .iter()
        .map(|p| {
            let (gpu, model) = fp8_profiles(profiles_dir, p.gpu, p.model)?;
            let perf = PerfModel::new(&gpu, &model, p.tensor_parallel, Precision::Fp8);
            let (isl, osl) = (f64::from(p.input_tokens), f64::from(p.output_tokens));
            let (predicted, batch) = offline_throughput(&perf, p.tensor_parallel, p.gpus, isl, osl);
            let engine = EngineModel::new(
                "trtllm",
                &engine,
                &gpu,
                &model,
                p.tensor_parallel,
                Precision::Fp8,
            );
            let (engine_predicted, _) =
                offline_throughput(&engine, p.tensor_parallel, p.gpus, isl, osl);
            Ok(Comparison {
                source: p.source.into(),
                model: p.model.into(),
                gpu: p.gpu.into(),
                gpus: p.gpus,
                tensor_parallel: p.tensor_parallel,
                input_tokens: p.input_tokens,
                output_tokens: p.output_tokens,
                published_tokens_per_s: p.published_tokens_per_s,
                predicted_tokens_per_s: predicted,
                relative_error: predicted / p.published_tokens_per_s - 1.0,
                batch,
                engine_tokens_per_s: engine_predicted,
                engine_relative_error: engine_predicted / p.published_tokens_per_s - 1.0,
            })
        })
        .collect()
}

/// One published MLPerf Inference v4.1 result for Llama 2 70B (FP8).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MlperfSystem {
    pub system: &'static str,
    pub gpu: &'static str,
    pub gpus: u32,
    /// Output tokens/s of the whole system, offline scenario.
    pub offline_tokens_per_s: f64,
    /// Output tokens/s of the whole system, server scenario (Poisson arrivals,
    /// p99 TTFT ≤ 2 s and p99 TPOT ≤ 200 ms).
    pub server_tokens_per_s: f64,
}

/// MLPerf Inference v4.1, Llama 2 70B, closed division, offline.
pub(crate) const MLPERF: &[MlperfSystem] = &[
    MlperfSystem {
        system: "8x H100 SXM",
        gpu: "h100-sxm",
        gpus: 8,
        offline_tokens_per_s: 24_525.0,
        server_tokens_per_s: 21_606.0,
    },
    MlperfSystem {
        system: "8x H200",
        gpu: "h200",
        gpus: 8,
        offline_tokens_per_s: 31_303.0,
        server_tokens_per_s: 29_228.0,
    },
    MlperfSystem {
        system: "1x B200 (preview)",
        gpu: "b200",
        gpus: 1,
        offline_tokens_per_s: 11_264.0,
        server_tokens_per_s: 10_756.0,
    },
    MlperfSystem {
        system: "8x MI300X (vLLM)",
        gpu: "mi300x",
        gpus: 8,
        offline_tokens_per_s: 23_515.0,
        server_tokens_per_s: 21_028.0,
    },
];

/// Length mixes at which the MLPerf ratios are evaluated: the benchmark's
/// dataset lengths are not among the reference figures, so two plausible
/// chat mixes bracket them.
pub(crate) const MLPERF_LENGTHS: [(u32, u32); 2] = [(256, 256), (1024, 256)];

/// A system's throughput relative to 8x H100, published and predicted.
#[derive(Debug, Clone, Serialize)]
pub struct RatioComparison {
    pub system: String,
    pub input_tokens: u32,
    pub output_tokens: u32,
    /// Published offline tokens/s over 8x H100's.
    pub published_ratio: f64,
    /// The model's, best tensor-parallel degree per system.
    pub predicted_ratio: f64,
    pub relative_error: f64,
}

fn best_system_throughput(
    profiles_dir: &Path,
    system: &MlperfSystem,
    isl: f64,
    osl: f64,
) -> Result<f64, PlannerError> {
    let (gpu, model) = fp8_profiles(profiles_dir, system.gpu, "llama-2-70b")?;
    Ok([1u32, 2, 4, 8]
        .iter()
        .filter(|&&tp| tp <= system.gpus && tp <= gpu.gpus_per_node)
        .map(|&tp| {
            let perf = PerfModel::new(&gpu, &model, tp, Precision::Fp8);
            offline_throughput(&perf, tp, system.gpus, isl, osl).0
        })
        .fold(0.0, f64::max))
}

/// Server over offline throughput of one MLPerf system: what the latency
/// limits cost, published and predicted by the capacity model.
#[derive(Debug, Clone, Serialize)]
pub struct ServerComparison {
    pub system: String,
    pub input_tokens: u32,
    pub output_tokens: u32,
    pub published_server_over_offline: f64,
    pub predicted_server_over_offline: f64,
    pub relative_error: f64,
    /// Server output tokens/s of the whole system: published, from the
    /// queueing model, and from the replay simulator's capacity search.
    pub published_server_tokens_per_s: f64,
    pub analytic_server_tokens_per_s: f64,
    pub simulated_server_tokens_per_s: f64,
    /// Simulated over published server tokens/s, minus one.
    pub simulated_relative_error: f64,
}

/// Batch caps tried for the MLPerf server scenario.
const SERVER_BATCHES: [u32; 4] = [64, 128, 256, 512];
/// Chunk size of the MLPerf server comparison (vLLM's default budget for
/// long-context serving).
const SERVER_MAX_BATCHED_TOKENS: u32 = 8192;

/// The server throughput of one MLPerf system, output tokens/s: the best
/// (TP, batch cap) whose replicas sustain the most requests/s under MLPerf's
/// server limits (p99 TTFT ≤ 2 s, TPOT ≤ 200 ms) with Poisson arrivals,
/// times the output length. (analytic queueing model, replay simulator)
fn server_throughput(
    profiles_dir: &Path,
    system: &MlperfSystem,
    (isl, osl): (u32, u32),
    cache_dir: Option<&Path>,
) -> Result<(f64, f64), PlannerError> {
    use crate::capacity::{evaluate, Config, Verdict};
    use crate::profiles::precision::Precision;
    use crate::scenario::{GpuOffer, ServedModel, Simulation, Tier};
    use crate::traces::stats::LengthStats;
    let (gpu, model) = fp8_profiles(profiles_dir, system.gpu, "llama-2-70b")?;
    let served = ServedModel {
        id: "llama-2-70b".into(),
        profile: model,
        precision: Some(Precision::Fp8),
        kv_cache: None,
        context: None,
        speculative: None,
        api: None,
        gpus: Vec::new(),
        name: "llama-2-70b".into(),
    };
    let offer = GpuOffer {
        id: system.gpu.into(),
        profile: gpu,
        engine: None,
        on_demand_usd_per_gpu_hour: None,
        reserved_usd_per_gpu_hour: None,
        reserved_term: String::new(),
        reserved_offers: Vec::new(),
        reserved_offer: None,
        price_source: String::new(),
        max_gpus: None,
        purchase: crate::scenario::PurchaseTerms::default(),
        spot: None,
        tensor_parallel: vec![],
        expert_parallel: vec![],
        attention_dp: vec![],
        cross_node: false,
        layouts: vec![],
        max_batch: vec![],
        max_batched_tokens: vec![],
        precision: vec![],
        weights_load_gb_per_s: crate::scenario::DEFAULT_WEIGHTS_LOAD_GB_PER_S,
        disaggregated: Vec::new(),
        network_gb_s: None,
    };
    let tier = Tier {
        name: "server".into(),
        ttft_ms: 2000.0,
        tpot_ms: 200.0,
        percentile: 99.0,
        api_allowed: false,
        model: 0,
        rules: crate::scenario::ServingRules::default(),
    };
    let lengths = |v: u32| LengthStats {
        mean: f64::from(v),
        p50: u64::from(v),
        p90: u64::from(v),
        p99: u64::from(v),
        max: u64::from(v),
    };
    let demand = crate::demand::TierDemand {
        tier: "server".into(),
        peak_rps: vec![],
        mean_rps: vec![],
        input_tokens: lengths(isl),
        output_tokens: lengths(osl),
        interarrival_cv: Some(1.0),
        within_minute_cv: 1.0,
        peak_to_mean_minute: 1.0,
        lengths: vec![(isl, osl)],
        prefix_reuse: None,
        sample_chains: Vec::new(),
        sources: vec![],
    };
    let (mut analytic, mut simulated): (f64, f64) = (0.0, 0.0);
    for tp in [1u32, 2, 4, 8].into_iter().filter(|&tp| tp <= system.gpus) {
        let replicas = system.gpus / tp;
        // The system's replicas behind one router: the fleet step function
        // up to that many replicas.
        let simulation = Simulation {
            fleet_max_replicas: replicas,
            ..Simulation::default()
        };
        let setting = crate::capacity::simulated::Setting {
            model: &served,
            simulation: &simulation,
            cache_dir,
        };
        for batch in SERVER_BATCHES {
            let config = Config {
                gpu_type: system.gpu.into(),
                tensor_parallel: tp,
                expert_parallel: 1,
                attention_dp: 1,
                max_batch: batch,
                max_batched_tokens: SERVER_MAX_BATCHED_TOKENS,
                precision: Precision::Fp8,
                engine: crate::capacity::config::ROOFLINE.into(),
                speculative: None,
                disaggregated: None,
            };
            if let Verdict::Serves(s) =
                evaluate(0, &offer, &served, &config, &tier, &demand).verdict
            {
                analytic = analytic.max(f64::from(replicas) * s.max_rps * f64::from(osl));
            }
            let fleet = crate::capacity::simulated::fleet(
                &setting,
                &offer,
                &config,
                &tier,
                &demand,
                f64::INFINITY,
                None,
            );
            if let Some(f) = fleet {
                simulated = simulated.max(f.capacity_rps(replicas) * f64::from(osl));
            }
        }
    }
    Ok((analytic, simulated))
}

/// The MLPerf comparisons, each system's offline throughput computed once per
/// length mix: (systems relative to 8x H100, server over offline per system).
/// `cache_dir` caches the simulator's capacity searches.
pub(crate) fn compare_mlperf(
    profiles_dir: &Path,
    cache_dir: Option<&Path>,
) -> Result<(Vec<RatioComparison>, Vec<ServerComparison>), PlannerError> {
    let (mut ratios, mut server_ratios) = (Vec::new(), Vec::new());
    for (isl, osl) in MLPERF_LENGTHS {
        let offline: Vec<f64> = MLPERF
            .iter()
            .map(|system| {
                best_system_throughput(profiles_dir, system, f64::from(isl), f64::from(osl))
            })
            .collect::<Result<_, _>>()?;
        for (system, &system_offline) in MLPERF.iter().zip(&offline) {
            if system.gpu != MLPERF[0].gpu {
                let predicted = system_offline / offline[0];
                let published = system.offline_tokens_per_s / MLPERF[0].offline_tokens_per_s;
                ratios.push(RatioComparison {
                    system: system.system.into(),
                    input_tokens: isl,
                    output_tokens: osl,
                    published_ratio: published,
                    predicted_ratio: predicted,
                    relative_error: predicted / published - 1.0,
                });
            }
            let (server, simulated) =
                server_throughput(profiles_dir, system, (isl, osl), cache_dir)?;
            let predicted = if system_offline > 0.0 {
                server / system_offline
            } else {
                0.0
            };
            let published = system.server_tokens_per_s / system.offline_tokens_per_s;
            server_ratios.push(ServerComparison {
                system: system.system.into(),
                input_tokens: isl,
                output_tokens: osl,
                published_server_over_offline: published,
                predicted_server_over_offline: predicted,
                relative_error: predicted / published - 1.0,
                published_server_tokens_per_s: system.server_tokens_per_s,
                analytic_server_tokens_per_s: server,
                simulated_server_tokens_per_s: simulated,
                simulated_relative_error: simulated / system.server_tokens_per_s - 1.0,
            });
        }
    }
    Ok((ratios, server_ratios))
}
