//! How to run and check each configuration a plan chose: the engine's launch
//! command for one replica (vLLM, SGLang or TensorRT-LLM, with the
//! configuration's TP, batch cap, token budget and precision), and the
//! `vllm bench serve` command that checks one replica's capacity figure on
//! real hardware: the tier's mean lengths, the plan's requests/s per
//! replica with the tier's burstiness, and the limits it must meet at the
//! tier's percentile, saving every request (`--save-result --save-detailed`)
//! for `planner goodput`.

use crate::capacity::Config;
use crate::demand::TierDemand;
use crate::perf::{SpecMethod, StepTime};
use crate::profiles::precision::Precision;
use crate::profiles::EngineFamily;
use crate::scenario::{GpuOffer, ServedModel, SpeculativeChoice, Tier};
use serde::Serialize;
use std::fmt::Write;

/// The commands of one configuration serving one tier.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunCommands {
    pub tier: String,
    /// [`Config::label`].
    pub config: String,
    /// The engine and release its figures hold for ("vLLM 0.12.0").
    pub engine: String,
    /// Starts one replica.
    pub launch_command: String,
    /// Benchmarks one replica at the plan's rate.
    pub benchmark_command: String,
    /// What the benchmark must show for the plan's figure to hold.
    pub passes_if: String,
}

/// The model's published name, else its profile id.
fn model_name(model: &ServedModel) -> String {
    model
        .profile
        .hf_id
        .clone()
        .unwrap_or_else(|| model.id.clone())
}

/// Whether the replica keeps its KV cache in FP8: the scenario pins it, or
/// the engine's recipe does with FP8 or FP4 weights.
fn fp8_kv(config: &Config, e: &crate::profiles::EngineProfile, model: &ServedModel) -> bool {
    model.kv_cache == Some(Precision::Fp8) || crate::perf::engine::fp8_kv_cache(e, config.precision)
}

/// Whether the model's published checkpoint holds its weights at
/// `precision` already (gpt-oss-120b's MXFP4 experts, DeepSeek-V3's FP8):
/// then it is served as published, with no quantisation step.
fn published_at(model: &ServedModel, precision: Precision) -> bool {
    model.profile.published_precision() == precision
}

/// The checkpoint a replica at `precision` loads, when it is not the
/// published one and no engine flag makes it from the published one: an
/// engine quantises a BF16 checkpoint to FP8 as it loads it (`--quantization
/// fp8`), but it does not convert a checkpoint published quantised
/// (gpt-oss-120b's MXFP4 is refused with `--quantization fp8`), and FP4 is
/// always a checkpoint of its own.
fn converted_checkpoint(model: &ServedModel, precision: Precision) -> Option<String> {
    let published = model.profile.published_precision();
    let name = model_name(model);
    match (published, precision) {
        (p, q) if p == q => None,
        (Precision::Bf16, Precision::Fp8) => None,
        (_, Precision::Fp4) => Some(format!(
            "{name}-FP4 (an NVFP4 checkpoint quantised with TensorRT Model Optimizer)"
        )),
        (p, q) => {
            let (p, q) = (
                p.as_str().to_ascii_uppercase(),
                q.as_str().to_ascii_uppercase(),
            );
            Some(format!(
                "{name}-{q} (a checkpoint converted to {q} from the published {p} one: the engines do not convert a quantised checkpoint as they load it)"
            ))
        }
    }
}

/// The launch command of one replica of `config` on `offer`, with a note
/// when the replica spans more than one node; `prefix_caching` when the
/// plan counts on the engine's prefix cache (else it is turned off, so that
/// the engine runs as planned).
pub(crate) fn launch_command(
    config: &Config,
    offer: &GpuOffer,
    model: &ServedModel,
    prefix_caching: bool,
) -> String {
    if let Some(ratio) = config.disaggregated {
        return unit_launch(config, ratio, offer, model, prefix_caching);
    }
    let mut c = launch_command_alone(config, offer, model, prefix_caching);
    let (gpus, node) = (config.layout().gpus(), offer.profile.gpus_per_node);
    if gpus > node {
        let _ = write!(
            c,
            "  # one replica spans {} nodes of {node}: add the engine's multi-node options",
            gpus.div_ceil(node)
        );
    }
    c
}

/// The launch commands of a disaggregated unit: its prefill replicas'
/// (no speculative decoding: they stop at the first token) and its decode
/// replicas', each with the engine's KV-transfer settings over NIXL, and
/// the router in front that sends a request to a prefill replica, then its
/// KV cache and the rest of its work to a decode replica.
fn unit_launch(
    config: &Config,
    ratio: crate::scenario::pd_ratio::PdRatio,
    offer: &GpuOffer,
    model: &ServedModel,
    prefix_caching: bool,
) -> String {
    let decode = Config {
        disaggregated: None,
        ..config.clone()
    };
    let prefill = Config {
        speculative: None,
        ..decode.clone()
    };
    let family = offer
        .engine
        .as_ref()
        .map_or(EngineFamily::Vllm, |e| e.profile.family);
    let side = |c: &Config, role: &str| {
        let cmd = launch_command(c, offer, model, prefix_caching);
        match family {
            EngineFamily::Vllm => format!(
                "{cmd} --kv-transfer-config '{{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}}'"
            ),
            EngineFamily::Sglang => format!(
                "{cmd} --disaggregation-mode {role} --disaggregation-transfer-backend nixl"
            ),
            EngineFamily::Trtllm => format!(
                "{cmd}  # with `cache_transceiver_config: {{backend: NIXL}}` in its options"
            ),
        }
    };
    let front = match family {
        EngineFamily::Vllm => "a prefill/decode proxy (vLLM's disaggregated-serving proxy, llm-d or Dynamo) that sends each request to a prefill replica with max_tokens 1, then to a decode replica",
        EngineFamily::Sglang => "python -m sglang_router.launch_router --pd-disaggregation --prefill http://PREFILL:PORT --decode http://DECODE:PORT (one flag per replica)",
        EngineFamily::Trtllm => "trtllm-serve disaggregated -c disagg_config.yaml (its context_servers the prefill replicas, its generation_servers the decode replicas)",
    };
    let replicas = |n: u32| {
        if n == 1 {
            "1 replica".to_string()
        } else {
            format!("{n} replicas")
        }
    };
    format!(
        "prefill, {}: {}; decode, {}: {}; in front: {front}",
        replicas(ratio.prefill),
        side(&prefill, "prefill"),
        replicas(ratio.decode),
        side(&decode, "decode")
    )
}

/// The flags that serve the context the scenario states
/// (`model.max_context_tokens`): the engine's limit, and past the published
/// context the YaRN RoPE scaling that reaches it, in each engine's form
/// (vLLM's `--hf-overrides` `rope_parameters`, SGLang's
/// `--json-model-override-args` `rope_scaling`; TensorRT-LLM reads it from
/// the checkpoint's config.json). Nothing when the scenario states none,
/// but for vLLM a limit of what the replica's KV cache holds
/// (`kv_tokens`, rounded down to its 16-token blocks) where that is under
/// the model's context, as vLLM will not start otherwise.
fn context_flags(model: &ServedModel, family: EngineFamily, kv_tokens: Option<u32>) -> String {
    // vLLM refuses to start when its KV cache holds fewer tokens than the
    // model's context: the limit is then what the cache holds.
    let kv_limited = kv_tokens
        .filter(|&kv| family == EngineFamily::Vllm && kv < model.profile.max_context_tokens);
    if model.context.is_none() && kv_limited.is_none() {
        return String::new();
    }
    // The profile holds the served context (the stated one, when stated).
    let tokens = kv_limited.unwrap_or(model.profile.max_context_tokens);
    let yarn = model.context.and_then(|c| c.yarn);
    let rope = |key: &str, theta: bool| {
        yarn.map(|y| {
            let theta = if theta {
                format!(", \"rope_theta\": {}", y.rope_theta)
            } else {
                String::new()
            };
            format!(
                "{{\"{key}\": {{\"rope_type\": \"yarn\", \"factor\": {}, \"original_max_position_embeddings\": {}{theta}}}}}",
                y.factor, y.original_max_position_embeddings
            )
        })
    };
    match family {
        EngineFamily::Vllm => match rope("rope_parameters", true) {
            Some(r) => format!(" --max-model-len {tokens} --hf-overrides '{r}'"),
            None => format!(" --max-model-len {tokens}"),
        },
        EngineFamily::Sglang => match rope("rope_scaling", false) {
            Some(r) => format!(" --context-length {tokens} --json-model-override-args '{r}'"),
            None => format!(" --context-length {tokens}"),
        },
        EngineFamily::Trtllm => match rope("rope_scaling", false) {
            Some(r) => {
                format!(" --max_seq_len {tokens}  # with {r} added to the checkpoint's config.json")
            }
            None => format!(" --max_seq_len {tokens}"),
        },
    }
}

/// [`launch_command`] without the multi-node note.
fn launch_command_alone(
    config: &Config,
    offer: &GpuOffer,
    model: &ServedModel,
    prefix_caching: bool,
) -> String {
    let converted = converted_checkpoint(model, config.precision);
    // A checkpoint already at the precision (the published one, or the
    // converted one named) needs no quantisation flag.
    let at_precision = published_at(model, config.precision) || converted.is_some();
    let name = converted.unwrap_or_else(|| model_name(model));
    let tp = config.tensor_parallel;
    let (ep, dp) = (config.expert_parallel, config.attention_dp);
    let kv_blocks = config.perf(offer, model).kv_capacity_tokens().max(0.0) / 16.0;
    let kv_tokens = Some((kv_blocks.floor() * 16.0).min(f64::from(u32::MAX)) as u32);
    let fp8 = config.precision == Precision::Fp8;
    let speculative = config.speculative.as_ref().and(model.speculative.as_ref());
    let Some(engine) = &offer.engine else {
        // The roofline model stands for an eager engine: vLLM's command.
        let mut c = format!(
            "vllm serve {name} --tensor-parallel-size {tp} --max-num-seqs {} --max-num-batched-tokens {}",
            config.max_batch, config.max_batched_tokens
        );
        if fp8 && !at_precision {
            c.push_str(" --quantization fp8");
        }
        if prefix_caching {
            c.push_str(" --enable-prefix-caching");
        }
        if let Some(s) = speculative {
            c.push_str(&speculative_flags(s, EngineFamily::Vllm));
        }
        c.push_str(&context_flags(model, EngineFamily::Vllm, kv_tokens));
        return c;
    };
    let e = &engine.profile;
    match e.family {
        EngineFamily::Vllm => {
            let mut c = format!(
                "vllm serve {name} --tensor-parallel-size {tp} --max-num-seqs {} --max-num-batched-tokens {} --gpu-memory-utilization {}",
                config.max_batch, config.max_batched_tokens, e.memory_utilization
            );
            if fp8 && !at_precision {
                c.push_str(" --quantization fp8");
            }
            if fp8_kv(config, e, model) {
                c.push_str(" --kv-cache-dtype fp8");
            }
            if dp > 1 {
                let _ = write!(c, " --data-parallel-size {dp}");
            }
            if ep > 1 {
                c.push_str(" --enable-expert-parallel");
            }
            let overlaps = config.speculative_method().map_or(e.cpu_overlaps_gpu, |m| {
                crate::perf::speculation::engine_under(e, m).cpu_overlaps_gpu
            });
            if overlaps {
                c.push_str(" --async-scheduling");
            }
            c.push_str(if prefix_caching {
                " --enable-prefix-caching"
            } else {
                " --no-enable-prefix-caching"
            });
            if let Some(s) = speculative {
                c.push_str(&speculative_flags(s, EngineFamily::Vllm));
            }
            c.push_str(&context_flags(model, EngineFamily::Vllm, kv_tokens));
            c
        }
        EngineFamily::Sglang => {
            let mut c = format!(
                "python -m sglang.launch_server --model-path {name} --tp {} --max-running-requests {} --chunked-prefill-size {} --mem-fraction-static {}",
                tp * dp,
                config.max_batch,
                config.max_batched_tokens,
                e.memory_utilization
            );
            if fp8 && !at_precision {
                c.push_str(" --quantization fp8");
            }
            if fp8_kv(config, e, model) {
                c.push_str(" --kv-cache-dtype fp8_e4m3");
            }
            if ep > 1 {
                let _ = write!(c, " --ep-size {ep}");
            }
            if dp > 1 {
                let _ = write!(c, " --enable-dp-attention --dp {dp}");
            }
            if !e.cpu_overlaps_gpu {
                c.push_str(" --disable-overlap-schedule");
            }
            if !prefix_caching {
                c.push_str(" --disable-radix-cache");
            }
            if let Some(s) = speculative {
                c.push_str(&speculative_flags(s, EngineFamily::Sglang));
            }
            c.push_str(&context_flags(model, EngineFamily::Sglang, kv_tokens));
            c
        }
        EngineFamily::Trtllm => {
            let checkpoint = if fp8 && !at_precision {
                format!("{name}-FP8 (an FP8 checkpoint quantised with TensorRT Model Optimizer)")
            } else {
                name
            };
            let mut c = format!(
                "trtllm-serve {checkpoint} --backend pytorch --tp_size {} --max_batch_size {} --max_num_tokens {} --kv_cache_free_gpu_memory_fraction {}",
                tp * dp,
                config.max_batch,
                config.max_batched_tokens,
                e.memory_utilization
            );
            if ep > 1 {
                let _ = write!(c, " --ep_size {ep}");
            }
            // Block reuse (its prefix cache) is on by default.
            let speculative = speculative.map(|s| speculative_flags(s, EngineFamily::Trtllm));
            let options: Vec<&str> = [
                (dp > 1).then_some("`enable_attention_dp: true`"),
                (!prefix_caching).then_some("`kv_cache_config: {enable_block_reuse: false}`"),
                speculative.as_deref(),
            ]
            .into_iter()
            .flatten()
            .collect();
            if !options.is_empty() {
                let _ = write!(
                    c,
                    " --extra_llm_api_options llm_api_options.yaml (a YAML file holding {})",
                    options.join(" and ")
                );
            }
            c.push_str(&context_flags(model, EngineFamily::Trtllm, kv_tokens));
            c
        }
    }
}

/// The engine's settings for speculative decoding `s`: vLLM's
/// `--speculative-config`, SGLang's `--speculative-*` flags, or (for
/// TensorRT-LLM's options file) its `speculative_config`.
fn speculative_flags(s: &SpeculativeChoice, family: EngineFamily) -> String {
    let k = s.speculation.tokens;
    let draft = s.draft.as_deref().unwrap_or("DRAFT");
    match (family, s.speculation.method) {
        (EngineFamily::Vllm, SpecMethod::Eagle3) => format!(
            " --speculative-config '{{\"method\": \"eagle3\", \"model\": \"{draft}\", \"num_speculative_tokens\": {k}}}'"
        ),
        (EngineFamily::Vllm, SpecMethod::Ngram) => format!(
            " --speculative-config '{{\"method\": \"ngram\", \"num_speculative_tokens\": {k}, \"prompt_lookup_max\": 4}}'"
        ),
        (EngineFamily::Vllm, SpecMethod::Mtp) => format!(
            " --speculative-config '{{\"method\": \"mtp\", \"num_speculative_tokens\": {k}}}'"
        ),
        (EngineFamily::Sglang, SpecMethod::Eagle3) => format!(
            " --speculative-algorithm EAGLE3 --speculative-draft-model-path {draft} --speculative-num-steps {k} --speculative-eagle-topk 1 --speculative-num-draft-tokens {}",
            k + 1
        ),
        (EngineFamily::Sglang, SpecMethod::Mtp) => format!(
            " --speculative-algorithm EAGLE --speculative-num-steps {k} --speculative-eagle-topk 1 --speculative-num-draft-tokens {}",
            k + 1
        ),
        (EngineFamily::Sglang, SpecMethod::Ngram) => format!(
            " --speculative-algorithm NGRAM --speculative-num-draft-tokens {}",
            k + 1
        ),
        (EngineFamily::Trtllm, SpecMethod::Eagle3) => format!(
            "`speculative_config: {{decoding_type: Eagle, max_draft_len: {k}, speculative_model_dir: {draft}}}` (TensorRT-LLM 1.0 runs an EAGLE-3 head as `Eagle`)"
        ),
        (EngineFamily::Trtllm, SpecMethod::Mtp) => format!(
            "`speculative_config: {{decoding_type: MTP, num_nextn_predict_layers: {k}}}`"
        ),
        (EngineFamily::Trtllm, SpecMethod::Ngram) => format!(
            "`speculative_config: {{decoding_type: NGram, max_draft_len: {k}, max_matching_ngram_size: 4}}`"
        ),
    }
}

/// vLLM's `--burstiness` for arrivals whose interarrival CV is `cv`: its
/// client draws gaps from a gamma distribution of shape `burstiness`, whose
/// CV is 1/√shape, so shape = 1/CV²; nothing for Poisson arrivals (CV 1,
/// its default) or a CV the flag cannot state.
fn burstiness_flag(cv: f64) -> String {
    if !(cv.is_finite() && cv > 0.0) || (cv - 1.0).abs() < 0.05 {
        return String::new();
    }
    format!(" --burstiness {:.3}", 1.0 / (cv * cv))
}

/// The result file of a tier's benchmark of a configuration: the tier's
/// name and the configuration's label, with any character a shell or a
/// file system would trip on made `-`.
fn result_file(tier: &str, config: &str) -> String {
    let safe = |t: &str| -> String {
        t.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' {
                    c
                } else {
                    '-'
                }
            })
            .collect()
    };
    format!("{}-{}.json", safe(tier), safe(config))
}

/// The commands for one configuration of `tier`, sized at `rps_per_replica`.
pub(crate) fn commands(
    config: &Config,
    offer: &GpuOffer,
    model: &ServedModel,
    tier: &Tier,
    demand: &TierDemand,
    rps_per_replica: f64,
) -> RunCommands {
    let input = demand.input_tokens.mean.round().max(1.0);
    let output = demand.output_tokens.mean.round().max(1.0);
    // The plan counts on prefix caching where its traces name their blocks.
    let caching = demand.prefix_reuse.is_some();
    // Ten minutes of requests at the planned rate, at least 200.
    let prompts = (rps_per_replica * 600.0).ceil().max(200.0);
    let p = tier.percentile;
    let result = result_file(&tier.name, &config.label());
    let benchmark = format!(
        "vllm bench serve --model {} --dataset-name random --random-input-len {input} --random-output-len {output} --request-rate {rps_per_replica:.3}{} --num-prompts {prompts} --ignore-eos --percentile-metrics ttft,tpot,e2el --metric-percentiles {p} --goodput ttft:{} tpot:{} --save-result --save-detailed --result-filename {result}",
        model_name(model),
        burstiness_flag(demand.within_minute_cv),
        tier.ttft_ms,
        tier.tpot_ms
    );
    let passes_if = format!(
        "p{p} TTFT <= {} ms and p{p} TPOT <= {} ms, and at least {p}% of the requests meet both (the attainment `planner goodput {result} --ttft-ms {} --tpot-ms {}` prints; vLLM's request goodput divides them by the run's duration, which moves with the draw of the arrivals, so it is not the test); {rps_per_replica:.3} req/s is the capacity figure's edge, the most one replica sustained in the simulation, so runs on other seeds (--seed) pass or miss narrowly about as often: judge three, and read the figure as optimistic where most miss or one misses by more than a point of attainment; lengths are the tier's trace means ({input} in, {output} out), so a run of the trace itself (`planner predict --dataset`) is the closer check",
        tier.ttft_ms,
        tier.tpot_ms,
        tier.ttft_ms,
        tier.tpot_ms
    ) + if caching {
        "; its random prompts share no prefix, so it measures the replica without the cache hits the plan counts on: `planner predict --dataset TRACE --enable-prefix-caching` replays the trace's own prompts"
    } else {
        ""
    };
    RunCommands {
        tier: tier.name.clone(),
        config: config.label(),
        engine: offer.engine.as_ref().map_or_else(
            || "roofline model, an eager engine: vLLM's command shown".to_string(),
            |e| format!("{} {}", e.profile.name, e.profile.version),
        ),
        launch_command: launch_command(config, offer, model, caching),
        benchmark_command: benchmark,
        passes_if,
    }
}
