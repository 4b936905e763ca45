//! Calibration from measured benchmark runs: each run replayed by the
//! benchmark client against one replica of the engine-aware step model
//! ([`predict`]), the engine profile's free figures fitted by least squares
//! on the relative error of mean TTFT and mean TPOT ([`fit`]), with the
//! error per run and per (model, GPU, engine, precision) group before and
//! after, and a leave-one-group-out figure.

pub(crate) mod calibration;
pub(crate) mod disaggregated_check;
pub(crate) mod fit;
mod medians;
pub(crate) mod read;
mod read_disaggregated;

use crate::perf::{EngineModel, Layout, StepModel};
use crate::profiles::precision::Precision;
use crate::profiles::{EngineFamily, EngineProfile, GpuProfile, ModelProfile};
use crate::sim::bench::{self, BenchRun, Prompt};
use crate::sim::{KvTransfer, ReplicaSpec, SplitSpec};
use serde::Serialize;

/// One measured run: a closed-loop client at a fixed concurrency sending
/// prompts of the stated lengths (fixed, or drawn as its client draws them)
/// to one replica.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct MeasuredRun {
    /// The run's id in its file.
    pub label: String,
    /// `file:line`.
    pub location: String,
    /// Model and GPU profile ids.
    pub model: String,
    pub gpu: String,
    pub engine: EngineFamily,
    pub engine_version: String,
    pub precision: Precision,
    pub tp: u32,
    /// Expert-parallel degree and data-parallel attention ranks (1 and 1
    /// for tensor parallelism alone).
    pub ep: u32,
    pub attention_dp: u32,
    /// Whether the model is a mixture of experts (its groups name the
    /// layout).
    pub moe: bool,
    pub input_tokens: u32,
    pub output_tokens: u32,
    pub concurrency: u32,
    /// Prompts sent (the shared file does not record it: ten times the
    /// concurrency, as the InferenceX client sends).
    pub prompts: u32,
    /// How the client drew each prompt's lengths.
    pub lengths: RunLengths,
    /// Decode steps between the scheduler's receipts of new requests, as
    /// the run's launch set it (SGLang `--scheduler-recv-interval`; 1: every
    /// step): [`read::recv_interval_of`].
    pub recv_interval_steps: u32,
    pub ttft_ms: f64,
    pub tpot_ms: f64,
    /// A disaggregated run's prefill and decode workers (then `tp`, `ep`
    /// and `attention_dp` are its decode workers' layout); `None`: one
    /// aggregated replica.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disaggregated: Option<DisaggregatedRun>,
}

/// The two sides of a disaggregated run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct DisaggregatedRun {
    pub prefill: RunSide,
    pub decode: RunSide,
}

impl DisaggregatedRun {
    /// GPUs of the unit: every worker of both sides.
    pub(crate) fn gpus(&self) -> u32 {
        self.prefill.workers * self.prefill.layout.gpus()
            + self.decode.workers * self.decode.layout.gpus()
    }
}

/// One side of a disaggregated run: its workers, each a replica of
/// `layout`, and their batch cap per attention rank (`None`: the engine's).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub(crate) struct RunSide {
    pub workers: u32,
    pub layout: Layout,
    pub batch: Option<u32>,
}

/// How a run's client drew the input and output lengths of its prompts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RunLengths {
    /// Every prompt of the stated input and output lengths.
    Fixed,
    /// InferenceX's client (`utils/bench_serving/benchmark_serving.py`,
    /// `sample_random_requests`, run with `--random-range-ratio 0.8`): each
    /// length drawn uniformly from [⌊0.8 L⌋, L], so the prompts average 0.9 of
    /// the stated lengths and finish at different steps.
    InferenceX,
}

impl RunLengths {
    /// The shortest length InferenceX's client draws, as a fraction of the
    /// stated one.
    pub(crate) const INFERENCEX_FLOOR: f64 = 0.8;

    /// `n` (input, output) lengths for a run of `input` and `output` tokens,
    /// from a fixed seed.
    pub(crate) fn draw(self, n: usize, input: u32, output: u32) -> Vec<(u32, u32)> {
        use rand::{Rng, SeedableRng};
        match self {
            RunLengths::Fixed => vec![(input, output); n],
            RunLengths::InferenceX => {
                let mut rng = rand::rngs::StdRng::seed_from_u64(0);
                let floor =
                    |l: u32| ((f64::from(l) * Self::INFERENCEX_FLOOR).floor() as u32).clamp(1, l);
                (0..n)
                    .map(|_| {
                        (
                            rng.gen_range(floor(input)..=input),
                            rng.gen_range(floor(output)..=output),
                        )
                    })
                    .collect()
            }
        }
    }
}

impl MeasuredRun {
    /// The (model, GPU, engine, precision) group the run belongs to
    /// (disaggregated runs apart).
    pub(crate) fn group(&self) -> String {
        let group = format!(
            "{} {} {} {}{}",
            self.model,
            self.gpu,
            self.engine.as_str(),
            self.precision,
            if self.disaggregated.is_some() {
                " disagg"
            } else {
                ""
            }
        );
        if self.disaggregated.is_some() {
            return group;
        }
        if self.moe {
            format!("{group} {}", self.layout().label())
        } else {
            group
        }
    }

    /// The replica's layout.
    pub(crate) fn layout(&self) -> Layout {
        Layout {
            tp: self.tp,
            ep: self.ep,
            attention_dp: self.attention_dp,
        }
    }
}

/// The replica of `engine` a run measured, with the engine's scheduler,
/// token budget and batch cap.
pub(crate) fn replica(
    engine: &EngineProfile,
    engine_id: &str,
    gpu: &GpuProfile,
    model: &ModelProfile,
    layout: Layout,
    precision: Precision,
) -> ReplicaSpec {
    let m = EngineModel::with_layout(engine_id, engine, gpu, model, layout, precision);
    ReplicaSpec::new(
        StepModel::Engine(Box::new(m)),
        engine.max_num_seqs,
        engine.max_num_batched_tokens,
        engine.scheduler,
    )
}

/// The mean TTFT and mean TPOT (ms) the run's client would measure against
/// the roofline model (the GPU profile's eager fixed costs: the planner's
/// step model before engines) under `engine`'s scheduler and token budget,
/// and the run's launch (its scheduler's receive interval).
pub(crate) fn predict_roofline(
    run: &MeasuredRun,
    engine: &EngineProfile,
    gpu: &GpuProfile,
    model: &ModelProfile,
) -> Option<(f64, f64)> {
    if run.disaggregated.is_some() {
        return None; // the roofline column compares aggregated replicas
    }
    let m = crate::perf::PerfModel::with_layout(gpu, model, run.layout(), run.precision);
    let mut spec = ReplicaSpec::new(
        StepModel::Roofline(m),
        engine.max_num_seqs,
        engine.max_num_batched_tokens,
        engine.scheduler,
    );
    spec.recv_interval_steps = run.recv_interval_steps;
    simulate_run(run, &spec, model)
}

/// The client of `run` against `spec`: its prompts drawn as the run's
/// client drew them, sent at once, `concurrency` at a time.
fn client_run(run: &MeasuredRun, spec: &ReplicaSpec, model: &ModelProfile) -> Option<BenchRun> {
    if spec.kv_capacity_tokens == 0 {
        return None;
    }
    let prompts: Vec<Prompt> = run
        .lengths
        .draw(run.prompts as usize, run.input_tokens, run.output_tokens)
        .into_iter()
        .map(|(input_tokens, output_tokens)| Prompt {
            input_tokens,
            output_tokens,
            send_s: 0.0,
            chain: crate::traces::block_chains::NO_CHAIN,
        })
        .collect();
    Some(match spec.split {
        Some(_) => bench::unit_run(
            spec,
            &prompts,
            Some(run.concurrency),
            model.max_context_tokens,
            false,
        ),
        None => bench::run(
            spec,
            &prompts,
            Some(run.concurrency),
            model.max_context_tokens,
            false,
            None,
        ),
    })
}

/// The unit a disaggregated run measured ([`unit_of`]), each side's
/// memory as [`run_replica`] gives it for its share of the concurrency.
fn run_unit(
    run: &MeasuredRun,
    d: &DisaggregatedRun,
    engine: &EngineProfile,
    gpu: &GpuProfile,
    model: &ModelProfile,
) -> ReplicaSpec {
    let side_spec = |side: &RunSide| {
        let side_run = MeasuredRun {
            tp: side.layout.tp,
            ep: side.layout.ep,
            attention_dp: side.layout.attention_dp,
            concurrency: run.concurrency.div_ceil(side.workers.max(1)),
            disaggregated: None,
            ..run.clone()
        };
        run_replica(&side_run, engine, gpu, model).0
    };
    let shape = crate::perf::engine::engine_model_shape(model, engine, run.precision);
    unit_of(side_spec(&d.prefill), side_spec(&d.decode), d, gpu, &shape)
}

/// The unit of `d`'s workers: `decode` (one decode worker's replica)
/// behind `prefill`'s, each with its batch cap per attention rank times the
/// ranks where `d` states one, the KV cache of `shape` (the model at its KV
/// precision) moved as [`KvTransfer::between`] says: over NVLink when the
/// workers fit one NVLink domain (an NVL72 rack's 72 GPUs), else the
/// profile's scale-out network.
pub(crate) fn unit_of(
    prefill: ReplicaSpec,
    decode: ReplicaSpec,
    d: &DisaggregatedRun,
    gpu: &GpuProfile,
    shape: &ModelProfile,
) -> ReplicaSpec {
    let capped = |mut spec: ReplicaSpec, side: &RunSide| {
        if let Some(b) = side.batch {
            spec.max_batch = b * side.layout.attention_dp;
        }
        spec
    };
    let unit_gpus = d.gpus();
    capped(decode, &d.decode).split(SplitSpec {
        prefill: capped(prefill, &d.prefill),
        prefill_replicas: d.prefill.workers,
        decode_replicas: d.decode.workers,
        transfer: KvTransfer::between(
            gpu,
            shape,
            d.prefill.layout,
            unit_gpus,
            gpu.scaleout_bytes_per_s() / 1e9,
        ),
    })
}

/// What the run measured: its replica, or its unit when disaggregated.
fn measured(
    run: &MeasuredRun,
    engine: &EngineProfile,
    gpu: &GpuProfile,
    model: &ModelProfile,
) -> ReplicaSpec {
    match &run.disaggregated {
        Some(d) => run_unit(run, d, engine, gpu, model),
        None => run_replica(run, engine, gpu, model).0,
    }
}

/// The mean latencies of the client of `run` against `spec`.
fn simulate_run(run: &MeasuredRun, spec: &ReplicaSpec, model: &ModelProfile) -> Option<(f64, f64)> {
    mean_latencies(&client_run(run, spec, model)?)
}

/// Every request of the client of `run` against `engine` (the checks on a
/// run's throughput).
#[cfg(test)]
pub(crate) fn predict_requests(
    run: &MeasuredRun,
    engine: &EngineProfile,
    gpu: &GpuProfile,
    model: &ModelProfile,
) -> Option<BenchRun> {
    client_run(run, &measured(run, engine, gpu, model), model)
}

/// The mean TTFT and mean TPOT (ms) the run's client would measure against
/// `engine`, or `None` when the replica cannot serve its prompts.
pub(crate) fn predict(
    run: &MeasuredRun,
    engine: &EngineProfile,
    gpu: &GpuProfile,
    model: &ModelProfile,
) -> Option<(f64, f64)> {
    simulate_run(run, &measured(run, engine, gpu, model), model)
}

/// The most of each GPU's memory a replay gives an engine whose default
/// fraction cannot hold a measured run's weights and requests: the runs'
/// launch flags are not recorded, and InferenceX's scripts set the fraction
/// themselves (SGLang `--mem-fraction-static`, vLLM
/// `--gpu-memory-utilization`); 0.95 leaves 5% of the GPU for activations,
/// CUDA graphs and the communication buffers.
pub(crate) const MEASURED_MEMORY_FRACTION_MAX: f64 = 0.95;

/// The replica a measured run ran on, and the memory fraction it was given
/// when the engine's default could not hold it. A measured run proves that
/// its weights and its requests fitted: when `engine`'s default fraction
/// leaves no room for one request of the run's stated lengths (the replay
/// would refuse every prompt), the fraction is raised, by hundredths, to the
/// least that holds the run's `concurrency` requests, at most
/// [`MEASURED_MEMORY_FRACTION_MAX`]. A run the default holds keeps it, even
/// where its requests then queue for the cache.
pub(crate) fn run_replica(
    run: &MeasuredRun,
    engine: &EngineProfile,
    gpu: &GpuProfile,
    model: &ModelProfile,
) -> (ReplicaSpec, Option<f64>) {
    let launched = |mut s: ReplicaSpec| {
        s.recv_interval_steps = run.recv_interval_steps;
        s
    };
    let spec = launched(replica(
        engine,
        "fit",
        gpu,
        model,
        run.layout(),
        run.precision,
    ));
    let one = u64::from(run.input_tokens) + u64::from(run.output_tokens);
    if spec.kv_capacity_tokens >= one {
        return (spec, None);
    }
    let needed = u64::from(run.concurrency) * one;
    let mut raised = engine.clone();
    let start = (engine.memory_utilization * 100.0).floor() as u32 + 1;
    let last = (MEASURED_MEMORY_FRACTION_MAX * 100.0).round() as u32;
    let mut most = None;
    for hundredths in start..=last {
        raised.memory_utilization = f64::from(hundredths) / 100.0;
        let s = launched(replica(
            &raised,
            "fit",
            gpu,
            model,
            run.layout(),
            run.precision,
        ));
        if s.kv_capacity_tokens >= needed {
            return (s, Some(raised.memory_utilization));
        }
        most = Some(s);
    }
    // No fraction holds them all: the most memory, where one fits (its
    // requests then queue for the cache).
    match most {
        Some(s) if s.kv_capacity_tokens >= one => (s, Some(raised.memory_utilization)),
        _ => (spec, None),
    }
}

/// Why the replica of `run` cannot serve its prompts, if it cannot: the
/// weights against the memory the engine leaves, or a prompt against the
/// KV cache.
pub(crate) fn refusal(
    run: &MeasuredRun,
    engine: &EngineProfile,
    gpu: &GpuProfile,
    model: &ModelProfile,
) -> Option<String> {
    let longest = u64::from(run.input_tokens) + u64::from(run.output_tokens);
    if longest > u64::from(model.max_context_tokens) {
        return Some(format!(
            "{longest} tokens exceed the model's context of {}",
            model.max_context_tokens
        ));
    }
    if let Some(d) = &run.disaggregated {
        let unit = run_unit(run, d, engine, gpu, model);
        let prefill = unit
            .split
            .as_ref()
            .map_or(0, |s| s.prefill.kv_capacity_tokens);
        return (!unit.holds(run.input_tokens, run.output_tokens)).then(|| {
            format!(
                "a request of {longest} tokens does not fit the unit: its prefill workers' KV cache holds {prefill} tokens, its decode workers' {}",
                unit.kv_capacity_tokens
            )
        });
    }
    if run_replica(run, engine, gpu, model).0.kv_capacity_tokens >= longest {
        return None;
    }
    // Not even the most a replay gives holds one request: say so at it.
    let mut most = engine.clone();
    most.memory_utilization = MEASURED_MEMORY_FRACTION_MAX.max(engine.memory_utilization);
    let spec = replica(&most, "fit", gpu, model, run.layout(), run.precision);
    let weights_gb = spec.perf.weight_bytes_per_gpu() / 1e9;
    let room_gb = most.memory_utilization * gpu.memory_gb;
    if spec.kv_capacity_tokens == 0 {
        return Some(format!(
            "{weights_gb:.1} GB of {} weights a GPU leave no room for a request in the {room_gb:.1} GB that {} of the {} GB holds (the most a replay of a measured run gives): either the model profile's weight bytes or the reading of the row's layout is wrong, or the row records a layout that could not have run",
            run.precision, most.memory_utilization, gpu.memory_gb,
        ));
    }
    Some(format!(
        "a request of {longest} tokens exceeds the replica's KV cache of {} tokens even at {} of the GPU's memory ({weights_gb:.1} GB of weights a GPU in {room_gb:.1} GB)",
        spec.kv_capacity_tokens, most.memory_utilization
    ))
}

/// Mean TTFT and mean TPOT (ms) of a run whose every request was served, as
/// vLLM averages them (TPOT over requests of more than one output token).
fn mean_latencies(run: &BenchRun) -> Option<(f64, f64)> {
    if run.requests.is_empty() || run.requests.iter().any(|r| r.error.is_some()) {
        return None;
    }
    let n = run.requests.len() as f64;
    let ttft = run.requests.iter().map(|r| r.ttft_s).sum::<f64>() / n * 1e3;
    let tpots: Vec<f64> = run
        .requests
        .iter()
        .filter(|r| r.output_tokens > 1)
        .map(|r| (r.e2e_s - r.ttft_s) / f64::from(r.output_tokens - 1))
        .collect();
    let tpot = if tpots.is_empty() {
        0.0
    } else {
        tpots.iter().sum::<f64>() / tpots.len() as f64 * 1e3
    };
    Some((ttft, tpot))
}

#[cfg(test)]
mod tests;
