//! `planner predict`: the benchmark a user would run with `vllm bench
//! serve`, predicted against one replica of the engine-aware step model.

use super::args::FormatArg;
use super::engine_arg::load_engine_arg;
use super::perf::load;
use super::{emit, finite};
use crate::base::error::PlannerError;
use crate::capacity::runs::replica;
use crate::perf::engine::tp_problem;
use crate::perf::StepTime;
use crate::profiles::precision::Precision;
use crate::profiles::{load_gpu, load_model, EngineFamily};
use crate::report::predict_text::{self, Curve, Point, Predicted, Slo};
use crate::report::{self, Format};
use crate::sim::bench::prompts::{prompts, random_lengths, SendTimes};
use crate::sim::bench::{self, BenchSummary};
use clap::Args;
use std::path::PathBuf;

/// Most prompts one prediction sends.
const MAX_PROMPTS: u32 = 1_000_000;

#[derive(Debug, Args)]
pub(crate) struct PredictArgs {
    /// Model profile id (a file stem under PROFILES/models/), e.g. qwen3-32b.
    #[arg(long)]
    pub model: String,
    /// GPU profile id (a file stem under PROFILES/gpus/), e.g. h100-sxm.
    #[arg(long)]
    pub gpu: String,
    /// Engine: an id under PROFILES/engines/ (vllm, sglang, trtllm) or the
    /// path of a profile `planner calibrate --runs --out` wrote.
    #[arg(long, default_value = "vllm")]
    pub engine: String,
    /// Tensor-parallel degree of each attention rank.
    #[arg(long, default_value_t = 1)]
    pub tp: u32,
    #[command(flatten)]
    pub layout: super::layout_arg::LayoutArgs,
    #[command(flatten)]
    pub speculative: super::speculative_arg::SpeculativeArgs,
    #[command(flatten)]
    pub disaggregated: super::disaggregated_arg::DisaggregatedArgs,
    /// Weight precision: bf16, fp8 or fp4 (weight-only on GPUs without FP4
    /// units; a mixture keeps its dense parts in their published format).
    #[arg(long, default_value = "bf16")]
    pub precision: String,
    /// KV-cache precision: `auto` (the engine's recipe: FP8 with FP8 or FP4
    /// weights where the engine keeps one), `fp8` (half the bytes of BF16:
    /// more sequences fit, less to read) or `bf16`.
    #[arg(long, default_value = "auto")]
    pub kv_cache: String,
    /// Prompt tokens of each request of the random dataset.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    pub random_input_len: u32,
    /// Output tokens of each request of the random dataset.
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    pub random_output_len: u32,
    /// Spread of the random lengths: each drawn from [L (1 - r), L (1 + r)],
    /// 0 <= r < 1 (vLLM's --random-range-ratio).
    #[arg(long, default_value_t = 0.0)]
    pub random_range_ratio: f64,
    /// Requests kept in flight by the client (a closed loop); a list
    /// (1,2,4,...) prints the curve, one run per value.
    #[arg(long, value_delimiter = ',', value_name = "N[,N...]")]
    pub max_concurrency: Vec<u32>,
    /// Requests per second of an open-loop client (a Poisson process);
    /// `inf` sends every prompt at once (vLLM's default); `trace` sends them
    /// at the --dataset trace's own arrival times.
    #[arg(long, default_value = "inf", allow_negative_numbers = true)]
    pub request_rate: String,
    /// The arrivals' burstiness at a --request-rate (vLLM's --burstiness):
    /// gaps drawn from a gamma distribution of this shape, whose CV is
    /// 1/√shape; 1 is Poisson, below 1 burstier.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    pub burstiness: f64,
    /// Prompts sent per run.
    #[arg(long, default_value_t = 1000)]
    pub num_prompts: u32,
    /// Seed of the random lengths and the Poisson arrivals.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Draw the lengths (and with --request-rate trace the arrivals) from
    /// this trace's first --num-prompts requests instead of the random
    /// dataset.
    #[arg(long, value_name = "TRACE")]
    pub dataset: Option<PathBuf>,
    /// The --dataset trace's format (detected from the content by default).
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub trace_format: FormatArg,
    /// Skip and count the --dataset trace's bad rows instead of stopping at
    /// the first.
    #[arg(long)]
    pub skip_bad_rows: bool,
    /// The engine's cap on running sequences (vLLM --max-num-seqs); default:
    /// the engine profile's (vLLM on a GPU below 70 GiB or an A100: at most
    /// 256, as `vllm serve` sets it there).
    #[arg(long)]
    pub max_num_seqs: Option<u32>,
    /// The engine's token budget per step (vLLM --max-num-batched-tokens);
    /// default: the engine profile's (vLLM on a GPU below 70 GiB or an A100:
    /// at most 2,048).
    #[arg(long)]
    pub max_num_batched_tokens: Option<u32>,
    /// The fraction of each GPU's memory the engine takes for weights and
    /// KV cache (vLLM --gpu-memory-utilization, SGLang
    /// --mem-fraction-static); default: the engine profile's.
    #[arg(long, value_name = "FRACTION")]
    pub memory_utilization: Option<f64>,
    /// SGLang only: the scheduler receives new requests every N decode
    /// steps (SGLang --scheduler-recv-interval; InferenceX's Blackwell
    /// scripts pass 10 below 16 concurrent requests and 30 from it). A
    /// request that reaches a decoding server waits for the next receipt.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub scheduler_recv_interval: u32,
    /// Cache the KV blocks of prompts by prefix (vLLM
    /// --enable-prefix-caching; SGLang's radix cache): a request finds the
    /// leading blocks that an earlier request computed (its prompt, or its
    /// output where the request is its conversation's next turn) and
    /// prefills the rest. Hits come from the --dataset trace's block hashes
    /// (Mooncake's `hash_ids`, 512-token blocks); a dataset without hashes, or the
    /// random one, finds none (no hit is invented). Off by default (the
    /// engines' own default is on: plans turn it on or off by the
    /// scenario's `[simulation] prefix_caching`).
    #[arg(long)]
    pub enable_prefix_caching: bool,
    /// TTFT limit in ms: with --tpot-ms, prints the SLO attainment and
    /// goodput, and along a --max-concurrency curve the highest concurrency
    /// that still meets both at --percentile.
    #[arg(long, requires = "tpot_ms")]
    pub ttft_ms: Option<f64>,
    /// TPOT limit in ms (see --ttft-ms).
    #[arg(long, requires = "ttft_ms")]
    pub tpot_ms: Option<f64>,
    /// The limits as vLLM's --goodput states them, `ttft:MS tpot:MS` (in
    /// place of --ttft-ms and --tpot-ms).
    #[arg(long, num_args = 1.., value_name = "KEY:MS", conflicts_with_all = ["ttft_ms", "tpot_ms"])]
    pub goodput: Vec<String>,
    /// The percentile at which the limits must hold along a curve.
    #[arg(long, default_value_t = 99.0)]
    pub percentile: f64,
    /// Output format: text (as vLLM's summary) or json (the keys of vLLM's
    /// --save-result file, which `planner goodput` reads).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Folder holding gpus/, models/ and engines/.
    #[arg(long, default_value = "profiles")]
    pub profiles: PathBuf,
}

pub(super) fn predict(args: &PredictArgs) -> Result<(), PlannerError> {
    let usage = |m: String| Err(PlannerError::Usage(m));
    let precision = Precision::parse(&args.precision).ok_or_else(|| {
        PlannerError::Usage(format!(
            "unknown --precision `{}`; accepted: bf16, fp8, fp4",
            args.precision
        ))
    })?;
    if args.max_concurrency.contains(&0) {
        return usage("--max-concurrency 0 lets no request in; give 1 or more (a list such as 1,2,4,8 prints the curve)".into());
    }
    if args.max_concurrency.len() > 64 {
        return usage(format!(
            "--max-concurrency lists {} values; give at most 64",
            args.max_concurrency.len()
        ));
    }
    if !(0.0..1.0).contains(&args.random_range_ratio) {
        return usage(format!(
            "--random-range-ratio {} is outside [0, 1)",
            args.random_range_ratio
        ));
    }
    if args.num_prompts == 0 || args.num_prompts > MAX_PROMPTS {
        return usage(format!(
            "--num-prompts {} is outside [1, {MAX_PROMPTS}]",
            args.num_prompts
        ));
    }
    if !(args.percentile > 0.0 && args.percentile <= 100.0) {
        return usage(format!(
            "--percentile {} is outside (0, 100]",
            args.percentile
        ));
    }
    let (ttft_limit_ms, tpot_limit_ms) = match goodput_limits(&args.goodput) {
        Ok(Some((ttft, tpot))) => (Some(ttft), Some(tpot)),
        Ok(None) => (args.ttft_ms, args.tpot_ms),
        Err(why) => return usage(why),
    };
    for (flag, v) in [("--ttft-ms", ttft_limit_ms), ("--tpot-ms", tpot_limit_ms)] {
        if v.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
            return usage(format!("{flag} must be a latency above 0 ms"));
        }
    }
    if !(args.burstiness.is_finite() && args.burstiness > 0.0) {
        return usage(format!(
            "--burstiness {} must be above 0 (1: Poisson; below 1: burstier)",
            args.burstiness
        ));
    }
    let times = match args.request_rate.as_str() {
        "inf" | "trace" if args.burstiness != 1.0 => return usage(format!(
            "--burstiness shapes the gaps of a --request-rate in requests per second; --request-rate {} has none", args.request_rate
        )),
        "inf" => SendTimes::AllAtOnce,
        "trace" if args.dataset.is_some() => SendTimes::Trace,
        "trace" => return usage("--request-rate trace sends at a trace's arrival times: give --dataset TRACE".into()),
        text => match text.parse::<f64>() {
            Ok(r) if r.is_finite() && r > 0.0 && r <= 1e6 && args.burstiness == 1.0 => SendTimes::Poisson(r),
            Ok(r) if r.is_finite() && r > 0.0 && r <= 1e6 => SendTimes::Gamma { rate: r, shape: args.burstiness },
            _ => return usage(format!("--request-rate `{text}`: give requests per second in (0, 1000000], `inf` or `trace`")),
        },
    };
    let mut model = load(&args.profiles, "models", "--model", &args.model, load_model)?;
    let gpu = load(&args.profiles, "gpus", "--gpu", &args.gpu, load_gpu)?;
    let (engine_id, mut engine) = load_engine_arg(&args.profiles, &args.engine)?;
    let layout = args.layout.with_tp(args.tp);
    let unit = args.disaggregated.sides(layout);
    let layouts: Vec<(&str, crate::perf::Layout)> = match &unit {
        Some(d) => vec![
            ("--prefill-", d.prefill.layout),
            ("--decode-", d.decode.layout),
        ],
        None => vec![("--", layout)],
    };
    for (prefix, layout) in layouts {
        if let Some(problem) = tp_problem(&gpu, &model, layout.tp)
            .filter(|_| layout.is_tp_only())
            .or_else(|| {
                crate::perf::layout_problem(&gpu, &model, layout, args.layout.cross_node)
                    .map(|p| p.why)
            })
            .or_else(|| crate::perf::engine_layout_problem(engine.family, layout))
        {
            let what = if layout.is_tp_only() {
                format!("{prefix}tp {}", layout.tp)
            } else {
                format!(
                    "{prefix}tp {} {prefix}ep {} {prefix}attention-dp {}",
                    layout.tp, layout.ep, layout.attention_dp
                )
            };
            return usage(format!("{} cannot run {what}: {problem}", engine.name));
        }
    }
    if unit.is_some() && args.enable_prefix_caching {
        return usage("--enable-prefix-caching is not modelled for a disaggregated unit (--prefill-workers): its prefill workers would need the prompts' blocks routed to them; leave out one or the other".into());
    }
    super::perf::apply_kv_cache(&mut model, &mut engine, &args.kv_cache)?;
    let speculation = args.speculative.speculation(&model)?;
    if let Some(s) = &speculation {
        engine = crate::perf::speculation::engine_under(&engine, s.method);
    }
    if !gpu.supports(precision) {
        return usage(format!("{} has no FP8 units (its profile has no fp8_tflops); use --precision bf16 or a GPU with FP8", gpu.name));
    }
    // vLLM's OpenAI server takes smaller defaults on a GPU below 70 GiB or
    // an A100 (vllm/engine/arg_utils.py), as `vllm serve` on it would.
    if let Some((seqs, tokens)) = crate::profiles::engine::vllm_small_gpu_defaults(&engine, &gpu) {
        engine.max_num_seqs = engine.max_num_seqs.min(seqs);
        engine.max_num_batched_tokens = engine.max_num_batched_tokens.min(tokens);
    }
    if let Some(n) = args.max_num_seqs {
        if n == 0 {
            return usage("--max-num-seqs must be at least 1".into());
        }
        engine.max_num_seqs = n;
    }
    if let Some(n) = args.max_num_batched_tokens {
        if !(16..=1_048_576).contains(&n) {
            return usage("--max-num-batched-tokens must be in [16, 1048576]".into());
        }
        engine.max_num_batched_tokens = n;
    }
    if let Some(f) = args.memory_utilization {
        if !(f > 0.0 && f <= 1.0) {
            return usage(format!(
                "--memory-utilization must be a fraction in (0, 1], got {f}"
            ));
        }
        engine.memory_utilization = f;
    }
    if args.scheduler_recv_interval == 0 {
        return usage("--scheduler-recv-interval must be at least 1 (1: every step)".into());
    }
    if args.scheduler_recv_interval > 1 && engine.family != EngineFamily::Sglang {
        return usage(format!(
            "--scheduler-recv-interval is SGLang's flag; {} receives new requests at every step (use --engine sglang)",
            engine.name
        ));
    }
    let side = |layout: crate::perf::Layout, speculating: bool| {
        let mut spec = replica(&engine, &engine_id, &gpu, &model, layout, precision);
        spec.recv_interval_steps = args.scheduler_recv_interval;
        if let Some(s) = speculation.filter(|_| speculating) {
            spec = spec.speculating(s);
        }
        if spec.perf.kv_capacity_tokens() <= 0.0 {
            return Err(PlannerError::Usage(format!(
                "{} on {} x {} cannot run: the weights need {:.1} GB per GPU at {precision} and {} leaves {:.1} GB to them at --memory-utilization {}; raise --tp, use a smaller --precision, or give the engine more of the memory (--memory-utilization, as its launch would)",
                model.name, layout.gpus(), gpu.name, spec.perf.weight_bytes_per_gpu() / 1e9, engine.name, spec.perf.usable_memory_bytes_per_gpu() / 1e9, engine.memory_utilization
            )));
        }
        Ok(spec)
    };
    // A unit: its decode workers' replica (speculating, where asked) behind
    // its prefill workers'.
    let spec = match &unit {
        Some(d) => crate::capacity::runs::unit_of(
            side(d.prefill.layout, false)?,
            side(d.decode.layout, true)?,
            d,
            &gpu,
            &crate::perf::engine::engine_model_shape(&model, &engine, precision),
        ),
        None => side(layout, true)?,
    };
    let n = args.num_prompts as usize;
    let (lengths, arrivals) = match &args.dataset {
        Some(path) => {
            let options = crate::traces::ReaderOptions {
                format: args.trace_format.to_format(),
                skip_bad_rows: args.skip_bad_rows,
                ..Default::default()
            };
            let requests = crate::traces::read_all(path, options).map_err(PlannerError::Trace)?;
            if requests.is_empty() {
                return usage(format!(
                    "--dataset {}: the trace holds no request",
                    path.display()
                ));
            }
            let take = requests.iter().take(n);
            (
                take.clone()
                    .map(|r| (r.input_tokens.max(1), r.output_tokens.max(1)))
                    .collect::<Vec<_>>(),
                take.map(|r| r.arrival_s).collect::<Vec<_>>(),
            )
        }
        None => (
            random_lengths(
                n,
                args.random_input_len,
                args.random_output_len,
                args.random_range_ratio,
                args.seed,
            ),
            Vec::new(),
        ),
    };
    // A request longer than the context is refused by the engine (vLLM's
    // `max_model_len`): say so rather than report requests that all fail.
    let context = u64::from(model.max_context_tokens);
    let too_long = lengths
        .iter()
        .filter(|&&(i, o)| u64::from(i) + u64::from(o) > context)
        .count();
    if too_long > 0 && (args.dataset.is_none() || too_long == lengths.len()) {
        let longest = lengths
            .iter()
            .map(|&(i, o)| u64::from(i) + u64::from(o))
            .max()
            .unwrap_or(0);
        let asked = match &args.dataset {
            Some(path) => format!("every request of --dataset {}", path.display()),
            None => format!(
                "{too_long} of the {} prompts (--random-input-len {} + --random-output-len {}, up to {longest} tokens with --random-range-ratio {})",
                lengths.len(),
                args.random_input_len,
                args.random_output_len,
                args.random_range_ratio
            ),
        };
        return usage(format!(
            "{asked} would be longer than {}'s context of {context} tokens (prompt + output), which the engine refuses; shorten the lengths",
            args.model
        ));
    }
    let mut sent = prompts(&lengths, times, &arrivals, args.seed);
    let chains = match &args.dataset {
        Some(path) if args.enable_prefix_caching => {
            let chains = crate::traces::block_chains::BlockChains::read_mooncake(
                path,
                "fix or remove the row's `hash_ids`, or leave out --enable-prefix-caching to read the trace without them",
            )
            .map_err(PlannerError::Trace)?;
            // Request i of the trace is prompt i; a trace without hashes
            // (not Mooncake's) gives no chain, and no hit.
            for (i, p) in sent.iter_mut().enumerate().take(chains.len()) {
                p.chain = i as u32;
            }
            Some(std::sync::Arc::new(chains))
        }
        None if args.enable_prefix_caching => Some(std::sync::Arc::new(
            crate::traces::block_chains::BlockChains::new(
                crate::traces::mooncake::MOONCAKE_BLOCK_TOKENS,
            ),
        )),
        _ => None,
    };
    let slo = ttft_limit_ms
        .zip(tpot_limit_ms)
        .map(|(ttft_ms, tpot_ms)| Slo {
            ttft_ms,
            tpot_ms,
            percentile: args.percentile,
        });
    let concurrencies: Vec<Option<u32>> = if args.max_concurrency.is_empty() {
        vec![None]
    } else {
        args.max_concurrency.iter().map(|&c| Some(c)).collect()
    };
    let mut points = Vec::new();
    for c in concurrencies {
        let run = match &unit {
            Some(_) => bench::unit_run(&spec, &sent, c, model.max_context_tokens, true),
            None => bench::run(
                &spec,
                &sent,
                c,
                model.max_context_tokens,
                true,
                chains.as_ref(),
            ),
        };
        let summary = BenchSummary::of(&run);
        points.push(Point::new(c, run, summary, slo));
    }
    let predicted = Predicted {
        model: args.model.clone(),
        model_id: model.hf_id.clone().unwrap_or_else(|| args.model.clone()),
        gpu: args.gpu.clone(),
        engine: engine_id,
        engine_name: format!("{} {}", engine.name, engine.version),
        backend: engine.family.as_str().to_string(),
        tp: args.tp,
        ep: args.layout.ep,
        attention_dp: args.layout.attention_dp,
        precision,
        max_num_seqs: engine.max_num_seqs,
        max_num_batched_tokens: engine.max_num_batched_tokens,
        request_rate: if args.burstiness == 1.0 {
            args.request_rate.clone()
        } else {
            format!("{} (burstiness {})", args.request_rate, args.burstiness)
        },
        // A dataset shorter than --num-prompts sends what it holds.
        num_prompts: lengths.len() as u32,
        dataset: args.dataset.as_ref().map(|p| p.display().to_string()),
        prefix_caching: args.enable_prefix_caching,
        prompt_blocks: chains.as_ref().is_some_and(|c| !c.is_empty()),
        speculation,
        kv_link: unit.as_ref().map_or(String::new(), |d| {
            let unit_gpus = d.gpus();
            if unit_gpus <= gpu.nvlink_domain() {
                format!(
                    "NVLink ({} GB/s a link; the unit's {unit_gpus} GPUs fit one {}-GPU NVLink domain)",
                    gpu.interconnect_gb_s,
                    gpu.nvlink_domain()
                )
            } else {
                format!(
                    "the scale-out network ({} GB/s a GPU, the GPU profile's `scaleout_gb_s` or 50 where it states none; the unit's {unit_gpus} GPUs span more than one {}-GPU NVLink domain)",
                    gpu.scaleout_bytes_per_s() / 1e9,
                    gpu.nvlink_domain()
                )
            }
        }),
        disaggregated: unit,
    };
    let curve = Curve::new(points, slo);
    let text = match args.format {
        Format::Json => {
            let json = curve.json(&predicted);
            finite(&json)?;
            report::json::render(&json)
        }
        Format::Text => {
            finite(&curve.summary_json(&predicted))?;
            predict_text::render(&predicted, &curve)
        }
    };
    emit(&text)
}

/// The limits of vLLM's `--goodput ttft:MS tpot:MS`: `None` when not given,
/// an error naming what to write when a part is missing or unknown.
fn goodput_limits(parts: &[String]) -> Result<Option<(f64, f64)>, String> {
    if parts.is_empty() {
        return Ok(None);
    }
    let (mut ttft, mut tpot) = (None, None);
    for part in parts {
        let value = |v: &str| {
            v.parse::<f64>()
                .map_err(|_| format!("--goodput {part}: `{v}` is not a number of ms"))
        };
        match part.split_once(':') {
            Some(("ttft", v)) => ttft = Some(value(v)?),
            Some(("tpot", v)) => tpot = Some(value(v)?),
            Some(("e2el", _)) => {
                return Err(format!(
                    "--goodput {part}: an end-to-end limit is not modelled; give ttft:MS tpot:MS"
                ))
            }
            _ => {
                return Err(format!(
                    "--goodput {part}: give the limits as vLLM does, ttft:MS tpot:MS"
                ))
            }
        }
    }
    match (ttft, tpot) {
        (Some(a), Some(b)) => Ok(Some((a, b))),
        _ => Err("--goodput needs both limits, ttft:MS tpot:MS".into()),
    }
}
