//! Calibration from measured benchmark runs: each run replayed by the
//! benchmark client against one replica of the engine-aware step model
//! ([`predict`]), the engine profile's free figures fitted by least squares
//! on the relative error of mean TTFT and mean TPOT ([`fit`]), with the
//! error per run and per (model, GPU, engine, precision) group before and
//! after, and a leave-one-group-out figure.

pub(crate) mod calibration;
pub(crate) mod fit;
pub(crate) mod read;

use crate::perf::{EngineModel, Layout, StepModel};
use crate::profiles::precision::Precision;
use crate::profiles::{EngineFamily, EngineProfile, GpuProfile, ModelProfile};
use crate::sim::bench::{self, BenchRun, Prompt};
use crate::sim::ReplicaSpec;
use serde::Serialize;

/// One measured run: a closed-loop client at a fixed concurrency sending
/// prompts of fixed lengths to one replica.
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
    pub ttft_ms: f64,
    pub tpot_ms: f64,
}

impl MeasuredRun {
    /// The (model, GPU, engine, precision) group the run belongs to.
    pub(crate) fn group(&self) -> String {
        let group = format!(
            "{} {} {} {}",
            self.model,
            self.gpu,
            self.engine.as_str(),
            self.precision
        );
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
/// step model before engines) under `engine`'s scheduler and token budget.
pub(crate) fn predict_roofline(
    run: &MeasuredRun,
    engine: &EngineProfile,
    gpu: &GpuProfile,
    model: &ModelProfile,
) -> Option<(f64, f64)> {
    let m = crate::perf::PerfModel::with_layout(gpu, model, run.layout(), run.precision);
    let spec = ReplicaSpec::new(
        StepModel::Roofline(m),
        engine.max_num_seqs,
        engine.max_num_batched_tokens,
        engine.scheduler,
    );
    simulate_run(run, &spec, model)
}

/// The client of `run` against `spec`.
fn simulate_run(run: &MeasuredRun, spec: &ReplicaSpec, model: &ModelProfile) -> Option<(f64, f64)> {
    if spec.kv_capacity_tokens == 0 {
        return None;
    }
    let prompts = vec![
        Prompt {
            input_tokens: run.input_tokens,
            output_tokens: run.output_tokens,
            send_s: 0.0,
        };
        run.prompts as usize
    ];
    let result = bench::run(
        spec,
        &prompts,
        Some(run.concurrency),
        model.max_context_tokens,
        false,
    );
    mean_latencies(&result)
}

/// The mean TTFT and mean TPOT (ms) the run's client would measure against
/// `engine`, or `None` when the replica cannot serve its prompts.
pub(crate) fn predict(
    run: &MeasuredRun,
    engine: &EngineProfile,
    gpu: &GpuProfile,
    model: &ModelProfile,
) -> Option<(f64, f64)> {
    let spec = replica(engine, "fit", gpu, model, run.layout(), run.precision);
    simulate_run(run, &spec, model)
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
