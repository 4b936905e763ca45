//! `planner predict`: vLLM's summary and result file, the round trip through
//! `planner goodput`, the concurrency curve and its SLO knee, and what it
//! refuses.

use crate::{json, planner, stderr, stdout, temp_dir};
use std::path::Path;

fn predict(extra: &[&str]) -> std::process::Output {
    let tp = if extra.contains(&"--tp") {
        &[][..]
    } else {
        &["--tp", "2"][..]
    };
    let mut args = vec![
        "predict",
        "--model",
        "qwen3-32b",
        "--gpu",
        "h100-sxm",
        "--random-input-len",
        "2048",
        "--random-output-len",
        "128",
        "--num-prompts",
        "200",
    ];
    args.extend_from_slice(tp);
    args.extend_from_slice(extra);
    planner(&args)
}

#[test]
fn a_closed_loop_prediction_reads_like_vllms_summary() {
    let text = stdout(&predict(&["--max-concurrency", "16"]));
    for line in [
        "Predicted (not measured): qwen3-32b on 2 x h100-sxm, vLLM 0.12.0 (vllm), bf16",
        "============ Serving Benchmark Result ============",
        "Successful requests:                    200",
        "Maximum request concurrency:            16",
        "Mean TTFT (ms):",
        "P99 TPOT (ms):",
        "Median ITL (ms):",
        "Mean E2EL (ms):",
    ] {
        assert!(text.contains(line), "missing `{line}` in\n{text}");
    }
}

#[test]
fn the_result_file_reads_back_through_goodput_with_the_same_attainment() {
    let dir = temp_dir("predict-roundtrip");
    let out = predict(&[
        "--max-concurrency",
        "16",
        "--ttft-ms",
        "600",
        "--tpot-ms",
        "25",
        "--format",
        "json",
    ]);
    let run = json(&out);
    for key in [
        "completed",
        "duration",
        "total_input_tokens",
        "total_output_tokens",
        "request_throughput",
        "output_throughput",
        "total_token_throughput",
        "mean_ttft_ms",
        "median_tpot_ms",
        "std_itl_ms",
        "p99_e2el_ms",
        "ttfts",
        "itls",
        "output_lens",
    ] {
        assert!(run.get(key).is_some(), "missing {key}");
    }
    assert_eq!(run["completed"], 200);
    let path = dir.join("run.json");
    std::fs::write(&path, &out.stdout).unwrap();
    let g = json(&planner(&[
        "goodput",
        path.to_str().unwrap(),
        "--ttft-ms",
        "600",
        "--tpot-ms",
        "25",
        "--format",
        "json",
    ]));
    let met = g["total"]["met_both"].as_f64().unwrap();
    let requests = g["total"]["requests"].as_f64().unwrap();
    let goodput_rps = run["request_goodput"].as_f64().unwrap();
    let duration = run["duration"].as_f64().unwrap();
    // predict's own count of requests meeting both limits is goodput's.
    assert_eq!(requests, 200.0);
    assert!(
        (goodput_rps * duration - met).abs() < 1e-6,
        "{goodput_rps} x {duration} vs {met}"
    );
    assert!(met > 0.0 && met <= 200.0);
}

#[test]
fn the_curve_names_the_highest_concurrency_that_meets_the_limits() {
    let out = predict(&[
        "--max-concurrency",
        "1,4,16,64",
        "--ttft-ms",
        "800",
        "--tpot-ms",
        "30",
    ]);
    let text = stdout(&out);
    assert!(
        text.contains(
            "Highest concurrency at which p99 TTFT <= 800 ms and p99 TPOT <= 30 ms still hold:"
        ),
        "{text}"
    );
    let j = json(&predict(&[
        "--max-concurrency",
        "1,4,16,64",
        "--ttft-ms",
        "800",
        "--tpot-ms",
        "30",
        "--format",
        "json",
    ]));
    let runs = j["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    // More concurrency, more throughput and a longer step.
    let rps: Vec<f64> = runs
        .iter()
        .map(|r| r["request_throughput"].as_f64().unwrap())
        .collect();
    let tpot: Vec<f64> = runs
        .iter()
        .map(|r| r["mean_tpot_ms"].as_f64().unwrap())
        .collect();
    assert!(rps.windows(2).all(|w| w[1] > w[0]), "{rps:?}");
    assert!(tpot.windows(2).all(|w| w[1] >= w[0]), "{tpot:?}");
    let best = j["slo"]["highest_concurrency"].as_u64().unwrap();
    assert!([1, 4, 16].contains(&best), "{best}");
    // The next concurrency misses a limit at p99.
    let next = runs
        .iter()
        .position(|r| r["max_concurrency"].as_u64() == Some(best))
        .unwrap()
        + 1;
    if let Some(r) = runs.get(next) {
        let p99_ttft = r["p99_ttft_ms"].as_f64().unwrap();
        let p99_tpot = r["p99_tpot_ms"].as_f64().unwrap();
        assert!(p99_ttft > 800.0 || p99_tpot > 30.0, "{r}");
    }
}

#[test]
fn a_prediction_is_the_same_on_every_run() {
    let a = predict(&[
        "--request-rate",
        "3",
        "--random-range-ratio",
        "0.5",
        "--format",
        "json",
    ]);
    let b = predict(&[
        "--request-rate",
        "3",
        "--random-range-ratio",
        "0.5",
        "--format",
        "json",
    ]);
    assert!(a.status.success(), "{}", stderr(&a));
    assert_eq!(a.stdout, b.stdout);
}

/// An engine profile given on the command line that cannot be read is the
/// profile's problem, at its line and column, not the scenario's.
#[test]
fn a_broken_engine_profile_is_named_as_a_profile() {
    let dir = temp_dir("broken-engine");
    let file = dir.join("engine.toml");
    let shipped = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/engines/vllm.toml"),
    )
    .unwrap();
    std::fs::write(
        &file,
        shipped.replace("cpu_step_ms = ", "cpu_step_ms = \"x\" #"),
    )
    .unwrap();
    let out = predict(&["--engine", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("the profile has 1 problem"), "{err}");
    assert!(
        err.contains("engine.toml:") && err.contains("cpu_step_ms"),
        "{err}"
    );
    assert!(!err.contains("scenario"), "{err}");
}

#[test]
fn predict_refuses_what_it_cannot_run() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--max-concurrency", "0"],
            "--max-concurrency 0 lets no request in",
        ),
        (
            &["--engine", "tgi"],
            "unknown --engine `tgi`; known: sglang, trtllm, vllm",
        ),
        (
            &["--tp", "3"],
            "vLLM cannot run --tp 3: TP 3 does not divide Qwen3 32B's 64 attention heads",
        ),
        (
            &["--tp", "16"],
            "TP 16 is more than the 8 GPUs of one H100 SXM5 80GB node",
        ),
        (&["--request-rate", "fast"], "--request-rate `fast`"),
        (&["--request-rate", "trace"], "give --dataset TRACE"),
        (
            &["--random-range-ratio", "1"],
            "--random-range-ratio 1 is outside [0, 1)",
        ),
    ];
    for (extra, message) in cases {
        let out = predict(extra);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(
            stderr(&out).contains(message),
            "{extra:?}: {}",
            stderr(&out)
        );
    }
    let out = planner(&[
        "predict",
        "--model",
        "qwen3-32b",
        "--gpu",
        "l4",
        "--tp",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot run: the weights need 65.5 GB per GPU"),
        "{}",
        stderr(&out)
    );
    // Prompts past the model's context: refused by the engine, so refused
    // here, not reported as requests that all failed.
    let out = planner(&[
        "predict",
        "--model",
        "qwen3-32b",
        "--gpu",
        "h100-sxm",
        "--tp",
        "2",
        "--random-input-len",
        "200000",
        "--num-prompts",
        "20",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("20 of the 20 prompts") && stderr(&out).contains("context of"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).is_empty());
}

#[test]
fn a_trace_drives_the_lengths_and_with_rate_trace_the_arrivals() {
    let out = json(&planner(&[
        "predict",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "h100-sxm",
        "--dataset",
        "tests/fixtures/traces/tiny.csv",
        "--request-rate",
        "trace",
        "--num-prompts",
        "50",
        "--format",
        "json",
    ]));
    let trace = std::fs::read_to_string("tests/fixtures/traces/tiny.csv").unwrap();
    let rows = trace
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .count()
        .min(50);
    assert_eq!(out["completed"].as_u64().unwrap() as usize, rows);
    assert_eq!(out["planner"]["dataset"], "tests/fixtures/traces/tiny.csv");
}

/// A layout that ran on real hardware with more of the memory than the
/// engine's default fraction: refused at the default with the flag that
/// states it named, predicted with it; the summary carries P90 beside P99
/// as `vllm bench serve --metric-percentiles 90,99` prints them.
#[test]
fn a_measured_layout_runs_with_the_memory_its_launch_gave_and_prints_p90() {
    let args = [
        "predict",
        "--model",
        "deepseek-v3",
        "--gpu",
        "b200",
        "--tp",
        "4",
        "--precision",
        "fp8",
        "--engine",
        "sglang",
        "--random-input-len",
        "8192",
        "--random-output-len",
        "64",
        "--max-concurrency",
        "2",
        "--num-prompts",
        "6",
    ];
    let refused = planner(&args);
    assert_eq!(refused.status.code(), Some(2));
    let e = stderr(&refused);
    assert!(
        e.contains("167.8 GB per GPU") && e.contains("--memory-utilization 0.85"),
        "{e}"
    );
    let mut with = args.to_vec();
    with.extend(["--memory-utilization", "0.95"]);
    let out = planner(&with);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for line in [
        "P90 TTFT (ms):",
        "P99 TTFT (ms):",
        "P90 TPOT (ms):",
        "Median ITL (ms):",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    with.extend(["--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&planner(&with).stdout).unwrap();
    let (p90, p99) = (
        v["p90_ttft_ms"].as_f64().unwrap(),
        v["p99_ttft_ms"].as_f64().unwrap(),
    );
    assert!(v["median_ttft_ms"].as_f64().unwrap() <= p90 && p90 <= p99);
    let bad = planner(&[&args[..], &["--memory-utilization", "1.5"]].concat());
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("--memory-utilization must be a fraction in (0, 1]"));
}

/// SGLang launched to receive new requests every 30 decode steps (as
/// InferenceX launches it on Blackwell from 16 concurrent requests): a
/// closed loop's later requests wait for a receipt, so the mean first token
/// comes later, while the prompts received together are prefilled together
/// and interrupt the decodes (SGLang's prefill batches run without them)
/// less often, so the mean TPOT does not rise; another engine refuses the
/// flag.
#[test]
fn sglangs_receive_interval_delays_the_first_tokens_of_a_closed_loop() {
    let args = [
        "predict",
        "--model",
        "deepseek-v3",
        "--gpu",
        "b200",
        "--tp",
        "8",
        "--precision",
        "fp8",
        "--engine",
        "sglang",
        "--random-input-len",
        "1024",
        "--random-output-len",
        "256",
        "--random-range-ratio",
        "0.8",
        "--max-concurrency",
        "16",
        "--num-prompts",
        "64",
        "--format",
        "json",
    ];
    let mean = |extra: &[&str]| {
        let out = planner(&[&args[..], extra].concat());
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            v["mean_ttft_ms"].as_f64().unwrap(),
            v["mean_tpot_ms"].as_f64().unwrap(),
        )
    };
    let (every_step, tpot_every) = mean(&[]);
    let (every_30, tpot_30) = mean(&["--scheduler-recv-interval", "30"]);
    // Half an interval of ~10 ms decode steps, give or take.
    assert!(every_30 > every_step + 50.0, "{every_step} -> {every_30}");
    assert!(tpot_30 <= tpot_every, "{tpot_every} -> {tpot_30}");
    let mut vllm = args.to_vec();
    vllm[10] = "vllm";
    vllm.extend(["--scheduler-recv-interval", "30"]);
    let vllm = planner(&vllm);
    assert_eq!(vllm.status.code(), Some(2));
    assert!(stderr(&vllm).contains("--scheduler-recv-interval is SGLang's flag"));
}

/// The conversation trace's block hashes through `predict`: with
/// `--enable-prefix-caching` a request prefills only what no earlier prompt
/// computed; without it nothing changes; a trace without hashes finds none.
#[test]
fn prefix_caching_on_a_trace_with_block_hashes_skips_the_prefill_it_finds() {
    let conversation = |extra: &[&str]| {
        let mut args = vec![
            "predict",
            "--model",
            "qwen3-32b",
            "--gpu",
            "h200",
            "--tp",
            "8",
            "--dataset",
            "data/mooncake/conversation_trace.jsonl",
            "--num-prompts",
            "300",
            "--max-concurrency",
            "8",
        ];
        args.extend_from_slice(extra);
        planner(&args)
    };
    let run = |extra: &[&str]| {
        let mut args = vec!["--format", "json"];
        args.extend_from_slice(extra);
        json(&conversation(&args))
    };
    let plain = run(&[]);
    let cached = run(&["--enable-prefix-caching"]);
    assert!(plain.get("prefix_cache_hit_rate").is_none());
    assert!(plain["planner"].get("enable_prefix_caching").is_none());
    assert_eq!(cached["planner"]["enable_prefix_caching"], true);
    let f = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap();
    let hit = f(&cached, "prefix_cache_hit_rate");
    // No more than an unbounded cache finds on the same prompts (about 20%
    // of the first 300 requests' prompt tokens), and some.
    assert!(hit > 0.05 && hit < 0.25, "{hit}");
    assert!(
        (f(&cached, "prefix_cached_tokens") / f(&cached, "total_input_tokens") - hit).abs() < 1e-12
    );
    assert!(f(&cached, "mean_ttft_ms") < f(&plain, "mean_ttft_ms"));
    assert!(f(&cached, "duration") <= f(&plain, "duration"));
    assert_eq!(cached["completed"], plain["completed"]);
    // A trace without block hashes: the flag finds nothing.
    let azure = json(&planner(&[
        "predict",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "h100-sxm",
        "--dataset",
        "tests/fixtures/traces/tiny.csv",
        "--enable-prefix-caching",
        "--format",
        "json",
    ]));
    assert_eq!(azure["prefix_cache_hit_rate"], 0.0);
    assert_eq!(azure["planner"]["dataset_has_block_hashes"], false);
    assert_eq!(cached["planner"]["dataset_has_block_hashes"], true);
    let text = stdout(&conversation(&["--enable-prefix-caching"]));
    assert!(
        text.contains("Prefix cache hit rate (prompt tokens):"),
        "{text}"
    );
}

/// `vllm serve` on a GPU below 70 GiB or an A100 takes 256 sequences and
/// 2,048 tokens a step unless told otherwise, and so does `predict`; the
/// flags still win, and an H100 keeps the profile's figures.
#[test]
fn vllms_defaults_follow_the_gpu_as_vllm_serve_sets_them() {
    let header = |gpu: &str, extra: &[&str]| {
        let mut args = vec![
            "predict",
            "--model",
            "llama-3.1-8b",
            "--gpu",
            gpu,
            "--random-input-len",
            "256",
            "--random-output-len",
            "16",
            "--num-prompts",
            "8",
            "--max-concurrency",
            "4",
        ];
        args.extend_from_slice(extra);
        let out = planner(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out).lines().next().unwrap().to_string()
    };
    for gpu in ["a100-80gb", "l40s"] {
        let line = header(gpu, &[]);
        assert!(
            line.contains("max-num-seqs 256, max-num-batched-tokens 2048"),
            "{line}"
        );
    }
    let line = header("l40s", &["--max-num-seqs", "512"]);
    assert!(
        line.contains("max-num-seqs 512, max-num-batched-tokens 2048"),
        "{line}"
    );
    let line = header("h100-sxm", &[]);
    assert!(
        line.contains("max-num-seqs 1024, max-num-batched-tokens 4096"),
        "{line}"
    );
}

/// The plan's benchmark line runs as written: `--burstiness` draws gamma
/// gaps (burstier arrivals at the same rate wait longer for their first
/// token), and vLLM's `--goodput ttft:MS tpot:MS` states the limits as
/// `--ttft-ms` and `--tpot-ms` do.
#[test]
fn the_plans_benchmark_flags_run_as_vllm_takes_them() {
    let mean_ttft = |extra: &[&str]| {
        let mut args = vec!["--request-rate", "3", "--format", "json"];
        args.extend_from_slice(extra);
        let out = predict(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        json(&out)["mean_ttft_ms"].as_f64().unwrap()
    };
    let poisson = mean_ttft(&[]);
    assert_eq!(poisson, mean_ttft(&["--burstiness", "1"]));
    let bursty = mean_ttft(&["--burstiness", "0.1"]);
    assert!(bursty > poisson, "{bursty} ms against {poisson} ms");
    let limits = stdout(&predict(&[
        "--max-concurrency",
        "8",
        "--ttft-ms",
        "900",
        "--tpot-ms",
        "40",
    ]));
    let goodput = stdout(&predict(&[
        "--max-concurrency",
        "8",
        "--goodput",
        "ttft:900",
        "tpot:40",
    ]));
    assert_eq!(limits, goodput);
    for (args, says) in [
        (&["--goodput", "ttft:900"][..], "needs both limits"),
        (&["--goodput", "e2el:900", "tpot:40"][..], "end-to-end"),
        (&["--burstiness", "0"][..], "must be above 0"),
        (
            &["--burstiness", "0.5"][..],
            "shapes the gaps of a --request-rate",
        ),
    ] {
        let out = predict(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
}
