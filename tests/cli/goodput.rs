//! `planner goodput`: the worked example, vLLM results and tiers from a
//! scenario, and bad logs.

use crate::{json, planner, stderr, stdout, temp_dir};
use std::path::{Path, PathBuf};

/// Writes a results log in which `met` of `n` requests meet TTFT ≤ 1 s and
/// TPOT ≤ 50 ms, every one with 100 output tokens, over one hour.
fn results_log(dir: &Path, name: &str, n: u32, met: u32) -> PathBuf {
    use std::fmt::Write as _;
    let mut text = String::from("arrival_s,ttft_ms,e2e_ms,output_tokens\n");
    for i in 0..n {
        let ttft = if i < met { 200 } else { 3000 };
        let arrival_s = f64::from(i) * 3600.0 / f64::from(n);
        let _ = writeln!(text, "{arrival_s:.3},{ttft},{},100", ttft + 99 * 30);
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn goodput_reproduces_the_worked_example() {
    let dir = temp_dir("goodput");
    let args = [
        "--ttft-ms",
        "1000",
        "--tpot-ms",
        "50",
        "--cost-per-hour",
        "60000",
        "--duration-s",
        "3600",
        "--currency",
        "KRW",
    ];
    let a = results_log(&dir, "a.csv", 6000, 5700);
    let b = results_log(&dir, "b.csv", 9000, 4500);
    let run = |log: &Path, format: &str| {
        let mut all = vec!["goodput", log.to_str().unwrap(), "--format", format];
        all.extend(args);
        planner(&all)
    };
    let text_a = stdout(&run(&a, "text"));
    assert!(
        text_a.contains("100.00 KRW (all output), 105.26 KRW (SLO-met output only)"),
        "{text_a}"
    );
    let text_b = stdout(&run(&b, "text"));
    assert!(
        text_b.contains("66.67 KRW (all output), 133.33 KRW (SLO-met output only)"),
        "{text_b}"
    );
    let ja = json(&run(&a, "json"));
    assert_eq!(ja["total"]["goodput_output_tokens"], 570_000);
    assert_eq!(ja["total"]["met_both"], 5700);
    let jb = json(&run(&b, "json"));
    assert_eq!(jb["total"]["goodput_output_tokens"], 450_000);
    let per_1k =
        |j: &serde_json::Value, k: &str| (j["total"][k].as_f64().unwrap() * 100.0).round() / 100.0;
    assert_eq!(per_1k(&ja, "cost_per_1k_output_tokens"), 100.0);
    assert_eq!(per_1k(&jb, "cost_per_1k_output_tokens"), 66.67);
    assert_eq!(per_1k(&ja, "cost_per_1k_goodput_tokens"), 105.26);
    assert_eq!(per_1k(&jb, "cost_per_1k_goodput_tokens"), 133.33);
    insta::assert_snapshot!("goodput_text", text_a.replace(a.to_str().unwrap(), "a.csv"));
    // A realistic hourly price over a short log is a small amount, printed
    // with its significant digits rather than rounded to 0.0.
    let short = planner(&[
        "goodput",
        a.to_str().unwrap(),
        "--ttft-ms",
        "1000",
        "--tpot-ms",
        "50",
        "--cost-per-hour",
        "3.6",
        "--duration-s",
        "36",
    ]);
    let text = stdout(&short);
    assert!(text.contains("  cost 0.0360 USD\n"), "{text}");
    assert!(!text.contains(" 0.0 "), "{text}");
}

#[test]
fn goodput_reads_vllm_results_and_tiers_from_a_scenario() {
    let dir = temp_dir("goodput-vllm");
    let vllm = dir.join("vllm.json");
    std::fs::write(
        &vllm,
        r#"{"duration": 10.0, "ttfts": [0.1, 0.2, 2.0, 0.0], "itls": [[0.02, 0.02], [0.09, 0.01], [], []], "output_lens": [3, 3, 1, 0], "errors": ["", "", "", "Bad Gateway"], "completed": 3}"#,
    )
    .unwrap();
    let j = json(&planner(&[
        "goodput",
        vllm.to_str().unwrap(),
        "--ttft-ms",
        "500",
        "--tpot-ms",
        "40",
        "--format",
        "json",
    ]));
    // Request 2: TPOT (0.09 + 0.01) / 2 = 50 ms misses; request 3 misses
    // TTFT; request 4 failed and counts as missing both.
    assert_eq!(j["total"]["requests"], 4);
    assert_eq!(j["total"]["failed"], 1);
    assert_eq!(j["total"]["met_both"], 1);
    assert_eq!(j["total"]["met_tpot"], 2);
    assert_eq!(j["total"]["goodput_output_tokens"], 3);
    assert_eq!(j["total"]["duration_s"], 10.0);
    let tiered = dir.join("tiered.csv");
    std::fs::write(
        &tiered,
        "arrival_s,ttft_ms,e2e_ms,output_tokens,tier\n0,300,2300,41,chat\n1,2500,4500,41,chat\n",
    )
    .unwrap();
    let j = json(&planner(&[
        "goodput",
        tiered.to_str().unwrap(),
        "--scenario",
        "tests/fixtures/ok/tiny.toml",
        "--format",
        "json",
    ]));
    assert_eq!(j["tiers"]["chat"]["met_both"], 1);
    assert_eq!(j["tiers"]["chat"]["met_ttft"], 1);
    // A tier the scenario does not define is named with where it first
    // appears.
    let stray = dir.join("stray.csv");
    std::fs::write(
        &stray,
        "arrival_s,ttft_ms,e2e_ms,output_tokens,tier\n0,300,2300,41,chat\n1,250,2500,41,batch\n",
    )
    .unwrap();
    let o = planner(&[
        "goodput",
        stray.to_str().unwrap(),
        "--scenario",
        "tests/fixtures/ok/tiny.toml",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!(
            "unknown: batch (the first at {}:3:15)",
            stray.display()
        )),
        "{}",
        stderr(&o)
    );
}

fn bad_log(name: &str, text: &str) -> String {
    let dir = temp_dir("bad-logs");
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let o = planner(&[
        "goodput",
        path.to_str().unwrap(),
        "--ttft-ms",
        "500",
        "--tpot-ms",
        "50",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "nothing on stdout for a bad log");
    stderr(&o).replace(dir.to_str().unwrap(), "<dir>")
}

#[test]
fn bad_logs_name_the_line_and_the_fix() {
    insta::assert_snapshot!(
        "log_missing_columns",
        bad_log("cols.csv", "arrival_s,ttft_ms\n0,10\n")
    );
    insta::assert_snapshot!(
        "log_bad_rows",
        bad_log(
            "rows.csv",
            "arrival_s,ttft_ms,e2e_ms,output_tokens\n0,-5,100,10\n1,100,200,0\n2,300,200,10\n3,abc,200,10\n4,100,200,10\n"
        )
    );
}

/// A result file as `vllm bench serve --save-result --save-detailed` writes
/// it (its summary keys beside the per-request lists) is read; one saved
/// without `--save-detailed` (no per-request lists) is refused naming the
/// flag; a request with fewer inter-token gaps than its tokens less one is
/// refused at its place.
#[test]
fn a_vllm_result_file_saved_in_detail_reads_and_one_without_is_refused() {
    let dir = temp_dir("goodput-vllm-detailed");
    let judged = |path: &std::path::Path| {
        planner(&[
            "goodput",
            path.to_str().unwrap(),
            "--ttft-ms",
            "500",
            "--tpot-ms",
            "30",
        ])
    };
    let summary = r#""date": "20261206-041500", "endpoint_type": "vllm", "backend": "vllm", "label": null, "model_id": "meta-llama/Llama-3.1-8B-Instruct", "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct", "num_prompts": 3, "request_rate": 2.0, "burstiness": 0.5, "max_concurrency": null, "duration": 4.0, "completed": 3, "total_input_tokens": 300, "total_output_tokens": 9, "request_throughput": 0.75, "request_goodput": 0.5, "output_throughput": 2.25, "total_token_throughput": 77.25, "mean_ttft_ms": 400.0, "median_ttft_ms": 200.0, "std_ttft_ms": 1.0, "p99_ttft_ms": 796.0, "mean_tpot_ms": 30.0, "median_tpot_ms": 20.0, "std_tpot_ms": 1.0, "p99_tpot_ms": 50.0"#;
    let detailed = dir.join("detailed.json");
    std::fs::write(
        &detailed,
        format!(
            r#"{{{summary}, "input_lens": [100, 100, 100], "output_lens": [3, 3, 3], "ttfts": [0.1, 0.2, 0.9], "itls": [[0.02, 0.02], [0.05, 0.03], [0.01, 0.01]], "generated_texts": ["a", "b", "c"], "errors": ["", "", ""]}}"#
        ),
    )
    .unwrap();
    let j = json(&planner(&[
        "goodput",
        detailed.to_str().unwrap(),
        "--ttft-ms",
        "500",
        "--tpot-ms",
        "30",
        "--format",
        "json",
    ]));
    // Request 2: TPOT (0.05 + 0.03) / 2 = 40 ms misses; request 3 misses
    // TTFT.
    assert_eq!(j["total"]["requests"], 3);
    assert_eq!(j["total"]["met_both"], 1);
    assert_eq!(j["total"]["duration_s"], 4.0);
    let plain = dir.join("plain.json");
    std::fs::write(&plain, format!("{{{summary}}}")).unwrap();
    let o = judged(&plain);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--save-result --save-detailed"),
        "{}",
        stderr(&o)
    );
    let short = dir.join("short.json");
    std::fs::write(
        &short,
        format!(
            r#"{{{summary}, "output_lens": [3, 3, 3], "ttfts": [0.1, 0.2, 0.9], "itls": [[0.02, 0.02], [0.05], [0.01, 0.01]], "errors": ["", "", ""]}}"#
        ),
    )
    .unwrap();
    let o = judged(&short);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("itls[1]: 1 inter-token gaps for 3 output tokens"),
        "{}",
        stderr(&o)
    );
}

/// A log's cost is of all its requests: with tiers it is not split between
/// them (the log does not say which GPUs served which tier), and the text
/// says so.
#[test]
fn a_tiered_logs_cost_is_not_split_between_its_tiers() {
    let dir = temp_dir("goodput-tiers");
    let log = dir.join("tiers.csv");
    std::fs::write(
        &log,
        "arrival_s,ttft_ms,e2e_ms,output_tokens,tier\n0,100,1100,11,chat\n1,100,2100,101,code\n2,100,1100,11,chat\n",
    )
    .unwrap();
    let run = |format: &str| {
        planner(&[
            "goodput",
            log.to_str().unwrap(),
            "--ttft-ms",
            "500",
            "--tpot-ms",
            "100",
            "--cost-per-hour",
            "3600",
            "--duration-s",
            "10",
            "--format",
            format,
        ])
    };
    let out = run("json");
    assert!(out.status.success(), "{}", stderr(&out));
    let j = json(&out);
    assert_eq!(j["total"]["cost"].as_f64(), Some(10.0));
    for tier in ["chat", "code"] {
        assert!(
            j["tiers"][tier]["cost"].is_null(),
            "{tier}: {}",
            j["tiers"][tier]
        );
    }
    let text = stdout(&run("text"));
    assert!(text.contains("so it is not split between them"), "{text}");
    let tiers = &text[text.find("tier chat").unwrap()..];
    assert!(!tiers.contains("  cost "), "{tiers}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// `planner predict`'s curve (one run per concurrency) is named as what it
/// is, with the one-run command to give instead.
#[test]
fn a_predicted_curve_is_named_as_a_curve() {
    let dir = temp_dir("goodput-curve");
    let curve = dir.join("curve.json");
    let out = planner(&[
        "predict",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "h100-sxm",
        "--random-input-len",
        "256",
        "--random-output-len",
        "16",
        "--num-prompts",
        "8",
        "--max-concurrency",
        "1,2",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::write(&curve, &out.stdout).unwrap();
    let out = planner(&[
        "goodput",
        curve.to_str().unwrap(),
        "--ttft-ms",
        "500",
        "--tpot-ms",
        "50",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("this is `planner predict`'s curve"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(dir).unwrap();
}
