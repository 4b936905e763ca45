//! `planner perf`: a step's parts, physical bounds, and what it refuses.

use crate::{json, planner, stderr};

pub(crate) fn perf_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["perf", "--format", "json"];
    all.extend_from_slice(args);
    json(&planner(&all))
}

#[test]
fn perf_parts_sum_to_the_step() {
    for args in [
        &[
            "--model",
            "llama-3.1-8b",
            "--gpu",
            "h200",
            "--decode",
            "256",
            "--context",
            "2000",
        ][..],
        &[
            "--model",
            "llama-3.1-70b",
            "--gpu",
            "h100-sxm",
            "--tp",
            "4",
            "--prefill",
            "2048",
        ],
        &[
            "--model",
            "llama-3.1-8b",
            "--gpu",
            "l40s",
            "--precision",
            "fp8",
            "--prefill",
            "512",
            "--decode",
            "32",
            "--context",
            "1000",
        ],
    ] {
        let r = perf_json(args);
        let parts = r["parts"].as_object().unwrap();
        let keys: Vec<&str> = parts.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "gemm_ms",
                "attention_ms",
                "allreduce_ms",
                "fixed_gpu_ms",
                "cpu_overhead_ms",
                "cpu_overlaps_gpu"
            ]
        );
        let ms = |k: &str| parts[k].as_f64().unwrap();
        let gpu = ms("gemm_ms") + ms("attention_ms") + ms("allreduce_ms") + ms("fixed_gpu_ms");
        let cpu = ms("cpu_overhead_ms");
        // The default engine (vLLM) overlaps the CPU with the GPU: the step
        // is the longer part; the roofline model adds them.
        let expected = if parts["cpu_overlaps_gpu"] == true {
            gpu.max(cpu)
        } else {
            gpu + cpu
        };
        let step = r["step_ms"].as_f64().unwrap();
        assert!(
            (expected - step).abs() < 1e-9 * step,
            "{args:?}: {expected} vs {step}"
        );
        let mut roofline = args.to_vec();
        roofline.extend_from_slice(&["--engine", "roofline"]);
        let r = perf_json(&roofline);
        let sum: f64 = [
            "gemm_ms",
            "attention_ms",
            "allreduce_ms",
            "fixed_gpu_ms",
            "cpu_overhead_ms",
        ]
        .iter()
        .map(|k| r["parts"][k].as_f64().unwrap())
        .sum();
        assert!((sum - r["step_ms"].as_f64().unwrap()).abs() < 1e-9 * sum);
        assert_eq!(r["parts"]["cpu_overlaps_gpu"], false);
    }
}

#[test]
fn perf_numbers_respect_physical_bounds() {
    let step = |args: &[&str]| perf_json(args);
    // Llama 3.1 8B batch-1 decode on H200: the GEMMs read every weight but
    // the embedding once, no faster than 15.0 GB / 4.8 TB/s = 3.13 ms.
    let d = step(&[
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "h200",
        "--decode",
        "1",
        "--context",
        "1000",
    ]);
    let gemm = d["parts"]["gemm_ms"].as_f64().unwrap();
    assert!((3.13..3.13 / 0.8).contains(&gemm), "{gemm}");
    // FP8 prefill: faster than BF16, at most twice as fast.
    let prefill = |p: &str| {
        step(&[
            "--model",
            "llama-3.1-8b",
            "--gpu",
            "h200",
            "--precision",
            p,
            "--prefill",
            "2048",
        ])["step_ms"]
            .as_f64()
            .unwrap()
    };
    let ratio = prefill("bf16") / prefill("fp8");
    assert!(ratio > 1.0 && ratio <= 2.0, "{ratio}");
    // A 2,048-token prefill is no faster than its FLOPs at the dense peak.
    let bf16 = prefill("bf16");
    assert!(bf16 >= 2.0 * 8.03e9 * 2048.0 / 989e12 * 1e3, "{bf16}");
}

#[test]
fn perf_refuses_what_it_cannot_answer() {
    let fails = |args: &[&str], needle: &str| {
        let mut all = vec!["perf"];
        all.extend_from_slice(args);
        let out = planner(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(err.contains(needle), "{args:?}: {err}");
        err
    };
    insta::assert_snapshot!(
        "perf_fp8_without_units",
        fails(
            &[
                "--model",
                "llama-3.1-8b",
                "--gpu",
                "a100-80gb",
                "--precision",
                "fp8",
                "--prefill",
                "128"
            ],
            "no FP8 units"
        )
    );
    fails(
        &["--model", "llama-3.1-8b", "--gpu", "h300", "--prefill", "1"],
        "known: a100-80gb, b200",
    );
    fails(
        &["--model", "llama-9", "--gpu", "h200", "--prefill", "1"],
        "llama-3.1-8b",
    );
    for (tp, needle) in [("3", "does not divide"), ("16", "at most --tp 8")] {
        fails(
            &[
                "--model",
                "llama-3.1-8b",
                "--gpu",
                "h200",
                "--tp",
                tp,
                "--prefill",
                "1",
            ],
            needle,
        );
    }
    fails(&["--model", "llama-3.1-8b", "--gpu", "h200"], "no work");
}

/// A prompt's tokens found in the prefix cache are not computed, but the
/// computed ones attend over them: the step lies between the computed
/// part alone and the whole prompt computed.
#[test]
fn cached_prompt_tokens_are_attended_to_not_computed() {
    let base = ["--model", "qwen3-32b", "--gpu", "h100-sxm", "--tp", "2"];
    let step = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend_from_slice(extra);
        let v = perf_json(&args);
        (
            v["step_ms"].as_f64().unwrap(),
            v["parts"]["attention_ms"].as_f64().unwrap(),
            v,
        )
    };
    let (alone, alone_attention, _) = step(&["--prefill", "2048"]);
    let (cached, cached_attention, v) = step(&["--prefill", "2048", "--cached-tokens", "30000"]);
    let (whole, _, _) = step(&["--prefill", "32048"]);
    assert_eq!(v["cached_tokens"], 30000);
    assert!(
        alone < cached && cached < whole / 4.0,
        "{alone} {cached} {whole}"
    );
    assert!(cached_attention > alone_attention);
    // The prompt's whole length counts against the context.
    let o = planner(&[
        "perf",
        "--model",
        "qwen3-32b",
        "--gpu",
        "h100-sxm",
        "--tp",
        "2",
        "--prefill",
        "2048",
        "--cached-tokens",
        "40000",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--prefill + --cached-tokens 42048 is longer than qwen3-32b's context"),
        "{}",
        stderr(&o)
    );
}
