//! `planner perf`: the predicted time of one engine step and its parts.

use super::engine_arg::load_engine_arg;
use super::{emit, finite};
use crate::base::error::PlannerError;
use crate::perf::{
    layout_problem, EngineModel, Layout, PerfModel, StepModel, StepParts, StepTime, StepWork,
};
use crate::profiles::precision::Precision;
use crate::profiles::{load_gpu, load_model, GpuProfile, ModelProfile};
use crate::report::{self, Format};
use clap::Args;
use serde::Serialize;
use std::fmt::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub(crate) struct PerfArgs {
    /// Model profile id (a file stem under PROFILES/models/), e.g. llama-3.1-8b.
    #[arg(long)]
    pub model: String,
    /// GPU profile id (a file stem under PROFILES/gpus/), e.g. h200.
    #[arg(long)]
    pub gpu: String,
    /// Tensor-parallel degree of each attention rank. Must divide the
    /// model's heads and be at most the GPU's NVLink domain.
    #[arg(long, default_value_t = 1)]
    pub tp: u32,
    #[command(flatten)]
    pub layout: super::layout_arg::LayoutArgs,
    #[command(flatten)]
    pub speculative: super::speculative_arg::SpeculativeArgs,
    /// KV-cache precision: `auto` (the engine's recipe: FP8 with FP8 or FP4
    /// weights where the engine keeps one), `fp8` (half the bytes of BF16)
    /// or `bf16`.
    #[arg(long, default_value = "auto")]
    pub kv_cache: String,
    /// Precision of the weights and their GEMMs: bf16, fp8 or fp4 (FP8
    /// needs FP8 units; FP4 runs on FP4 units where the GPU has them and
    /// weight-only elsewhere; a mixture keeps its dense parts in their
    /// published format at FP4).
    #[arg(long, default_value = "bf16")]
    pub precision: String,
    /// Prompt tokens of one new sequence prefilled in the step (the step
    /// completes it, so it yields one logit).
    #[arg(long, value_name = "P")]
    pub prefill: Option<u32>,
    /// Tokens of that prompt found in the prefix cache before the P computed
    /// ones (vLLM --enable-prefix-caching): the step computes P tokens that
    /// attend over K + their own (needs --prefill).
    #[arg(long, value_name = "K", requires = "prefill")]
    pub cached_tokens: Option<u32>,
    /// Sequences decoding one token each in the step (needs --context).
    #[arg(long, value_name = "B", requires = "context")]
    pub decode: Option<u32>,
    /// Context of each decoding sequence, in tokens (needs --decode).
    #[arg(long, value_name = "C", requires = "decode")]
    pub context: Option<u32>,
    /// Engine: an id under PROFILES/engines/ (vllm, sglang, trtllm), the
    /// path of a calibrated profile, or `roofline` for the eager roofline
    /// model with the GPU profile's fixed costs.
    #[arg(long, default_value = "vllm")]
    pub engine: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Folder holding gpus/, models/ and engines/.
    #[arg(long, default_value = "profiles")]
    pub profiles: PathBuf,
}

/// The parts of a step in milliseconds: the GPU's time is the sum of its
/// parts, or a mixture's expert set-up when that is longer; `step_ms` is the
/// GPU's time and the CPU's, added or the longer of the two.
#[derive(Debug, Serialize)]
struct PartsMs {
    gemm_ms: f64,
    /// A mixture's routed-expert GEMMs on the busiest GPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    expert_gemm_ms: Option<f64>,
    attention_ms: f64,
    allreduce_ms: f64,
    /// Expert-parallel dispatch and combine.
    #[serde(skip_serializing_if = "Option::is_none")]
    all_to_all_ms: Option<f64>,
    fixed_gpu_ms: f64,
    /// A mixture's per-expert set-up on a step without a captured graph,
    /// launched while the GPU runs the rest: the GPU's part is at least
    /// this long.
    #[serde(skip_serializing_if = "Option::is_none")]
    expert_setup_ms: Option<f64>,
    cpu_overhead_ms: f64,
    /// Whether the CPU's time overlaps the GPU's (the step is the longer of
    /// the two) rather than adding to it.
    cpu_overlaps_gpu: bool,
}

/// Speculative decoding in the step (`--speculative-method`).
#[derive(Debug, Serialize)]
struct SpeculationInStep {
    method: crate::perf::SpecMethod,
    draft_tokens: u32,
    acceptance_rate: f64,
    /// The proposer's pass as a share of the target's decode step.
    draft_share: f64,
    /// Tokens each decoding sequence gains in the step on average: 1 + α +
    /// … + α^K for a decode-only step (which verifies K + 1 tokens a
    /// sequence), 1 for a step with a prompt chunk (which does not
    /// speculate).
    tokens_per_step: f64,
    /// The step's time over those tokens.
    ms_per_token: f64,
}

/// A mixture's experts in the step: what the step reads and sends.
#[derive(Debug, Serialize)]
struct ExpertsInStep {
    /// Experts of one layer the step's tokens touch (uniform routing; a
    /// decode step replaying a captured graph counts the graph's padded
    /// batch, as its expert GEMMs do), and those the busiest expert-parallel
    /// rank reads (with the engine's imbalance).
    touched_per_layer: f64,
    busiest_rank_per_layer: f64,
    /// Experts each EP rank holds per layer.
    held_per_rank: f64,
    /// Expert weights the busiest GPU reads in the step, in GB.
    expert_weights_read_gb_per_gpu: f64,
}

/// What `planner perf --format json` prints.
#[derive(Debug, Serialize)]
struct PerfReport {
    model: String,
    gpu: String,
    tp: u32,
    #[serde(skip_serializing_if = "crate::capacity::config::is_one")]
    ep: u32,
    #[serde(skip_serializing_if = "crate::capacity::config::is_one")]
    attention_dp: u32,
    precision: Precision,
    engine: String,
    prefill_tokens: u32,
    /// Tokens of the prompt found in the prefix cache (`--cached-tokens`).
    #[serde(skip_serializing_if = "crate::capacity::config::is_zero")]
    cached_tokens: u32,
    decode_batch: u32,
    context_tokens: u32,
    /// The captured CUDA graph's batch the step replays (padding included);
    /// null when it runs eagerly.
    graph_batch: Option<u32>,
    /// Whether the step is the eager roofline model's (no engine).
    #[serde(skip)]
    roofline: bool,
    step_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    speculation: Option<SpeculationInStep>,
    parts: PartsMs,
    #[serde(skip_serializing_if = "Option::is_none")]
    experts: Option<ExpertsInStep>,
}

/// Loads profile `id` of `kind` ("gpus" or "models"); an unknown id lists the
/// known ones.
pub(super) fn load<T>(
    profiles: &Path,
    kind: &str,
    flag: &str,
    id: &str,
    read: fn(&Path, &str) -> Result<T, crate::base::error::Problem>,
) -> Result<T, PlannerError> {
    let dir = profiles.join(kind);
    if !dir.join(format!("{id}.toml")).is_file() {
        let known = crate::profiles::known_ids(&dir);
        return Err(PlannerError::Usage(if known.is_empty() {
            format!(
                "no profiles in {}: run from the repository root or pass --profiles DIR",
                dir.display()
            )
        } else {
            format!(
                "unknown {flag} `{id}`; known: {} (files in {})",
                known.join(", "),
                dir.display()
            )
        }));
    }
    read(profiles, id).map_err(|p| PlannerError::Profile(vec![p]))
}

/// Refuses what the model cannot answer, saying how to fix it.
fn check(
    args: &PerfArgs,
    gpu: &GpuProfile,
    model: &ModelProfile,
    precision: Precision,
) -> Result<(), PlannerError> {
    let usage = |m: String| Err(PlannerError::Usage(m));
    if args.tp == 0 || !model.heads.is_multiple_of(args.tp) {
        return usage(format!(
            "--tp {} does not divide {}'s {} attention heads; use a divisor such as 1, 2, 4 or 8",
            args.tp, model.name, model.heads
        ));
    }
    if args.tp > gpu.nvlink_domain() {
        return usage(format!(
            "--tp {} is more than the {} GPUs of one {} NVLink domain; use at most --tp {}",
            args.tp,
            gpu.nvlink_domain(),
            gpu.name,
            gpu.nvlink_domain()
        ));
    }
    if let Some(problem) = layout_problem(gpu, model, layout(args), args.layout.cross_node) {
        let hint = if problem.fix == crate::perf::LayoutFix::NvlinkDomain {
            "; lower --tp or --attention-dp, or pass --cross-node"
        } else {
            "; see `planner perf --help`"
        };
        return usage(format!("{problem}{hint}"));
    }
    if !gpu.supports(precision) {
        return usage(format!(
            "{} has no FP8 units (its profile has no fp8_tflops); use --precision bf16 or a GPU with FP8",
            gpu.name
        ));
    }
    let (prefill, decode) = (args.prefill.unwrap_or(0), args.decode.unwrap_or(0));
    if prefill == 0 && decode == 0 {
        return usage(
            "no work in the step: give --prefill P (prompt tokens) and/or --decode B --context C"
                .into(),
        );
    }
    Ok(())
}

/// Refuses a step that could not run: weights beyond the replica's memory,
/// a sequence longer than the model's context, or more KV cache than the
/// memory left after the weights.
fn fits(args: &PerfArgs, perf: &StepModel, model: &ModelProfile) -> Result<(), PlannerError> {
    let usage = |m: String| Err(PlannerError::Usage(m));
    let replica = format!("{} on {} x {}", args.model, layout(args).gpus(), args.gpu);
    if perf.kv_capacity_tokens() <= 0.0 {
        return usage(format!(
            "{replica} cannot run: the weights need {:.1} GB per GPU at {}, and a {} holds {:.1} GB usable; raise --tp (or --attention-dp with --ep for a mixture of experts), use a lower --precision, or a GPU with more memory",
            perf.weight_bytes_per_gpu() / 1e9,
            args.precision,
            args.gpu,
            perf.usable_memory_bytes_per_gpu() / 1e9
        ));
    }
    let limit = u64::from(model.max_context_tokens);
    let prompt = args
        .prefill
        .map(|p| p.saturating_add(args.cached_tokens.unwrap_or(0)));
    let prompt_flag = if args.cached_tokens.is_some() {
        "--prefill + --cached-tokens"
    } else {
        "--prefill"
    };
    for (flag, tokens) in [(prompt_flag, prompt), ("--context", args.context)] {
        if let Some(t) = tokens.filter(|&t| u64::from(t) > limit) {
            return usage(format!(
                "{flag} {t} is longer than {}'s context of {limit} tokens",
                args.model
            ));
        }
    }
    let kv_tokens = f64::from(args.decode.unwrap_or(0)) * f64::from(args.context.unwrap_or(0))
        + f64::from(prompt.unwrap_or(0));
    if kv_tokens > perf.kv_capacity_tokens() {
        let given: Vec<&str> = [
            ("--decode", args.decode.is_some()),
            ("--context", args.context.is_some()),
            ("--prefill", args.prefill.is_some()),
            ("--cached-tokens", args.cached_tokens.is_some()),
        ]
        .iter()
        .filter(|(_, given)| *given)
        .map(|(flag, _)| *flag)
        .collect();
        // One byte a KV element already: FP8 is no way out.
        let fp8_kv = model.kv_bytes_per_element <= 1.0
            || perf.kv_bytes_per_token() < model.kv_bytes_per_token();
        let or_fp8 = if fp8_kv { "" } else { " or use --kv-cache fp8" };
        return usage(format!(
            "{replica} cannot hold this step: it needs {:.0} tokens of KV cache, and the memory left after the weights holds {:.0}; lower {}, or {}{or_fp8}",
            kv_tokens,
            perf.kv_capacity_tokens(),
            given.join(" or "),
            if model.kv_replicated_over_tp() {
                "spread the sequences over --attention-dp ranks (every TP rank holds a latent attention's whole KV cache)"
            } else {
                "raise --tp"
            }
        ));
    }
    Ok(())
}

/// `--kv-cache`: `auto` keeps the engine's recipe, `fp8` stores one byte
/// per KV element whatever the weights, `bf16` two.
pub(super) fn apply_kv_cache(
    model: &mut ModelProfile,
    engine: &mut crate::profiles::EngineProfile,
    kv_cache: &str,
) -> Result<(), PlannerError> {
    match kv_cache {
        "auto" => {}
        "fp8" => model.kv_bytes_per_element = model.kv_bytes_per_element.min(1.0),
        "bf16" => {
            model.kv_bytes_per_element = 2.0;
            engine.fp8_kv_cache = false;
        }
        other => {
            return Err(PlannerError::Usage(format!(
                "unknown --kv-cache `{other}`; accepted: auto, fp8, bf16"
            )))
        }
    }
    Ok(())
}

/// The replica's layout from the flags.
fn layout(args: &PerfArgs) -> Layout {
    args.layout.with_tp(args.tp)
}

pub(super) fn perf(args: &PerfArgs) -> Result<(), PlannerError> {
    let precision = Precision::parse(&args.precision).ok_or_else(|| {
        PlannerError::Usage(format!(
            "unknown --precision `{}`; accepted: bf16, fp8, fp4",
            args.precision
        ))
    })?;
    let mut model = load(&args.profiles, "models", "--model", &args.model, load_model)?;
    let gpu = load(&args.profiles, "gpus", "--gpu", &args.gpu, load_gpu)?;
    check(args, &gpu, &model, precision)?;
    let (engine_name, perf) = if args.engine == "roofline" {
        match args.kv_cache.as_str() {
            "fp8" => model.kv_bytes_per_element = model.kv_bytes_per_element.min(1.0),
            "bf16" => model.kv_bytes_per_element = 2.0,
            "auto" => {}
            other => {
                return Err(PlannerError::Usage(format!(
                    "unknown --kv-cache `{other}`; accepted: auto, fp8, bf16"
                )))
            }
        }
        (
            "the roofline model (an eager engine: the GPU profile's fixed costs)".to_string(),
            StepModel::Roofline(PerfModel::with_layout(
                &gpu,
                &model,
                layout(args),
                precision,
            )),
        )
    } else {
        let (id, mut engine) = load_engine_arg(&args.profiles, &args.engine)?;
        if let Some(problem) = crate::perf::engine_layout_problem(engine.family, layout(args)) {
            return Err(PlannerError::Usage(format!(
                "{problem}; choose another layout or --engine"
            )));
        }
        apply_kv_cache(&mut model, &mut engine, &args.kv_cache)?;
        if let Some(s) = args.speculative.speculation(&model)? {
            engine = crate::perf::speculation::engine_under(&engine, s.method);
        }
        (
            format!("{} {} ({id})", engine.name, engine.version),
            StepModel::Engine(Box::new(EngineModel::with_layout(
                &id,
                &engine,
                &gpu,
                &model,
                layout(args),
                precision,
            ))),
        )
    };
    let speculation = args.speculative.speculation(&model)?;
    let perf = match speculation {
        Some(s) => perf.speculating(s),
        None => perf,
    };
    fits(args, &perf, &model)?;
    let (p, b, c) = (
        f64::from(args.prefill.unwrap_or(0)),
        f64::from(args.decode.unwrap_or(0)),
        f64::from(args.context.unwrap_or(0)),
    );
    // A chunk of p tokens after k cached ones: p·k + p²/2 query-key pairs,
    // the k read from the cache (as the simulator's prefill chunk).
    let k = f64::from(args.cached_tokens.unwrap_or(0));
    let work = StepWork {
        tokens: p + b,
        attention_pairs: p * k + p * p / 2.0 + b * c,
        kv_read_tokens: k + b * c,
        logit_tokens: if p > 0.0 { 1.0 } else { 0.0 } + b,
        sequences: if p > 0.0 { 1.0 } else { 0.0 } + b,
    };
    // Under speculation a decode-only step is counted as τ steps of a token
    // each: shown here as the one step it is.
    let verifying = speculation.filter(|_| crate::perf::decode_only(&work));
    let tau = verifying.map_or(1.0, |s| s.tokens_per_step());
    let parts = perf.step_parts(&work).scaled(tau);
    let moe = model.moe.is_some();
    let tokens = perf.run_tokens(&work);
    let experts = perf.roofline().moe().map(|m| {
        let busiest = m.busiest_rank_experts(tokens);
        ExpertsInStep {
            touched_per_layer: m.touched_experts(tokens),
            busiest_rank_per_layer: busiest,
            held_per_rank: m.held_per_rank(),
            expert_weights_read_gb_per_gpu: m.layers() * busiest * m.expert_bytes_per_gpu() / 1e9,
        }
    });
    let report = PerfReport {
        model: args.model.clone(),
        gpu: args.gpu.clone(),
        tp: args.tp,
        ep: args.layout.ep,
        attention_dp: args.layout.attention_dp,
        precision,
        engine: engine_name,
        graph_batch: perf.graph_batch(&work).map(|g| g as u32),
        roofline: perf.engine_id().is_none(),
        prefill_tokens: args.prefill.unwrap_or(0),
        cached_tokens: args.cached_tokens.unwrap_or(0),
        decode_batch: args.decode.unwrap_or(0),
        context_tokens: args.context.unwrap_or(0),
        step_ms: parts.total_s() * 1e3,
        speculation: speculation.map(|s| SpeculationInStep {
            method: s.method,
            draft_tokens: s.tokens,
            acceptance_rate: s.acceptance,
            draft_share: s.draft_share,
            tokens_per_step: if verifying.is_some() { tau } else { 1.0 },
            ms_per_token: parts.total_s() * 1e3 / tau,
        }),
        parts: PartsMs {
            gemm_ms: parts.gemm_s * 1e3,
            expert_gemm_ms: moe.then_some(parts.expert_gemm_s * 1e3),
            attention_ms: parts.attention_s * 1e3,
            allreduce_ms: parts.allreduce_s * 1e3,
            all_to_all_ms: moe.then_some(parts.all_to_all_s * 1e3),
            fixed_gpu_ms: parts.fixed_gpu_s * 1e3,
            expert_setup_ms: moe.then_some(parts.moe_setup_s * 1e3),
            cpu_overhead_ms: parts.cpu_overhead_s * 1e3,
            cpu_overlaps_gpu: parts.cpu_overlaps_gpu,
        },
        experts,
    };
    finite(&report)?;
    let text = match args.format {
        Format::Json => report::json::render(&report),
        Format::Text => text(&report, &parts, &gpu, &model),
    };
    emit(&text)
}

fn text(r: &PerfReport, parts: &StepParts, gpu: &GpuProfile, model: &ModelProfile) -> String {
    let mut o = String::new();
    let mut work = Vec::new();
    if r.prefill_tokens > 0 && r.cached_tokens > 0 {
        work.push(format!(
            "a {}-token prompt prefilled after {} tokens found in the prefix cache (one new sequence, one logit)",
            r.prefill_tokens, r.cached_tokens
        ));
    } else if r.prefill_tokens > 0 {
        work.push(format!(
            "a {}-token prompt prefilled (one new sequence, one logit)",
            r.prefill_tokens
        ));
    }
    if r.decode_batch > 0 {
        work.push(format!(
            "{} sequence{} decoding at {} tokens of context",
            r.decode_batch,
            if r.decode_batch == 1 { "" } else { "s" },
            r.context_tokens
        ));
    }
    let layout = Layout {
        tp: r.tp,
        ep: r.ep,
        attention_dp: r.attention_dp,
    };
    let _ = writeln!(
        o,
        "{} on {} x {} ({}), {}",
        model.name,
        layout.gpus(),
        gpu.name,
        layout.label().to_uppercase(),
        r.precision.as_str().to_uppercase()
    );
    let _ = writeln!(o, "engine: {}", r.engine);
    let graph = match (r.graph_batch, r.prefill_tokens, r.decode_batch) {
        (Some(g), _, b) if g > b => {
            format!("replays the captured CUDA graph of {g} sequences ({b} padded to it)")
        }
        (Some(1), _, _) => "replays the captured CUDA graph of 1 sequence".into(),
        (Some(g), _, _) => format!("replays the captured CUDA graph of {g} sequences"),
        (None, p, _) if p > 0 => "runs eagerly (a step with a prompt has no captured graph)".into(),
        (None, _, _) if r.roofline => "runs eagerly (the roofline model captures no graphs)".into(),
        (None, _, b) => {
            format!("runs eagerly ({b} sequences are past the engine's largest captured graph)")
        }
    };
    let _ = writeln!(o, "step: {}; {graph}", work.join(" + "));
    let _ = writeln!(o);
    let _ = writeln!(o, "  step time               {:>10.3} ms", r.step_ms);
    if let Some(s) = r.speculation.as_ref().filter(|_| r.decode_batch > 0) {
        let _ = writeln!(
            o,
            "  speculative decoding    {} drafting {} token{}, acceptance {:.2}: {:.3} tokens a sequence per step, {:.3} ms a token{}",
            s.method.name(),
            s.draft_tokens,
            if s.draft_tokens == 1 { "" } else { "s" },
            s.acceptance_rate,
            s.tokens_per_step,
            s.ms_per_token,
            if s.tokens_per_step > 1.0 {
                format!(
                    " (the step verifies {} tokens a sequence; each draft token costs {:.1}% of a decode step, in the weight GEMMs row)",
                    s.draft_tokens + 1,
                    s.draft_share * 100.0
                )
            } else {
                " (a step with a prompt chunk does not speculate)".to_string()
            }
        );
    }
    let moe = model.moe.is_some();
    let mut rows = vec![
        (
            "weight GEMMs",
            parts.gemm_s,
            if moe {
                "GPU: attention projections, dense and shared MLPs, LM head"
            } else {
                "GPU: layers and LM head"
            },
        ),
        (
            "expert GEMMs",
            parts.expert_gemm_s,
            "GPU: the routed experts the step touches, on the busiest GPU",
        ),
        (
            "attention",
            parts.attention_s,
            "GPU: BF16 FLOPs or the KV cache read, the longer",
        ),
        (
            "all-reduces",
            parts.allreduce_s,
            "GPU interconnect; 0 at TP 1",
        ),
        (
            "all-to-all",
            parts.all_to_all_s,
            "GPU interconnect: dispatch and combine; 0 unless attention-DP and EP are both above 1 (else the all-reduces combine the experts' parts)",
        ),
        (
            "fixed GPU time",
            parts.fixed_gpu_s,
            if moe {
                "GPU: layers x fixed time per layer, MoE layers' routing"
            } else {
                "GPU: layers x fixed time per layer"
            },
        ),
        (
            "expert set-up",
            parts.moe_setup_s,
            "without a captured graph, each expert's set-up, beside the GPU rows above: the GPU time is the larger of their sum and this",
        ),
        (
            "CPU/engine overhead",
            parts.cpu_overhead_s,
            if parts.cpu_overlaps_gpu {
                "CPU: overlaps the GPU's step (the step is the longer)"
            } else {
                "CPU: added to the GPU's step"
            },
        ),
    ];
    if !moe {
        rows.retain(|(name, _, _)| {
            *name != "expert GEMMs" && *name != "all-to-all" && *name != "expert set-up"
        });
    }
    for (name, s, what) in rows {
        let _ = writeln!(o, "    {name:<21} {:>10.3} ms   {what}", s * 1e3);
    }
    if let Some(e) = &r.experts {
        let _ = writeln!(o);
        if r.ep > 1 {
            let _ = writeln!(
                o,
                "  experts per layer: {:.1} touched by the step's tokens, {:.1} read by the busiest EP rank (of {:.0} it holds); {:.2} GB of expert weights read per GPU in the step (every MoE layer)",
                e.touched_per_layer, e.busiest_rank_per_layer, e.held_per_rank, e.expert_weights_read_gb_per_gpu
            );
        } else {
            let _ = writeln!(
                o,
                "  experts per layer: {:.1} of {:.0} touched by the step's tokens, each GPU reading its slice of every one; {:.2} GB of expert weights read per GPU in the step (every MoE layer)",
                e.touched_per_layer, e.held_per_rank, e.expert_weights_read_gb_per_gpu
            );
        }
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "Predictions of the calibrated step model (docs/model.md), not measurements."
    );
    o
}
