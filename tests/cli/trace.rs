//! `planner trace stats`, `synth` and `shape`: the trace formats, bad and
//! unsorted rows, seeded synthesis, summed rate curves, quantised timestamps.

use crate::{json, planner, solve_json, stderr, stdout, temp_dir};
use std::path::Path;

#[test]
fn trace_stats_json() {
    let out = planner(&[
        "trace",
        "stats",
        "tests/fixtures/traces/tiny.csv",
        "--format",
        "json",
    ]);
    insta::assert_snapshot!("tiny_trace_stats", stdout(&out));
}

#[test]
fn trace_stats_text_on_the_real_conversation_trace() {
    let out = planner(&[
        "trace",
        "stats",
        "data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv",
    ]);
    insta::assert_snapshot!("conv_trace_stats", stdout(&out));
}

#[test]
fn trace_stats_reads_mooncake_with_relative_times() {
    let s = json(&planner(&[
        "trace",
        "stats",
        "tests/fixtures/traces/tiny.jsonl",
        "--format",
        "json",
    ]));
    assert_eq!(s["requests"], 3);
    assert_eq!(s["clock"], "relative");
    assert_eq!(s["per_minute"]["windows"], 2);
    assert_eq!(s["input_tokens"]["max"], 6758);
}

#[test]
fn mooncake_block_hashes_give_the_traces_prefix_share() {
    let s = json(&planner(&[
        "trace",
        "stats",
        "data/mooncake/conversation_trace.jsonl",
        "--format",
        "json",
        "--quiet",
    ]));
    let p = &s["prefix"];
    assert_eq!(p["block_tokens"], 512);
    assert_eq!(p["requests_with_hashes"], 12_031);
    let share = |k: &str| p[k].as_f64().unwrap();
    // An unbounded cache finds about 38% of the conversation's prompts,
    // the blocks of outputs that next turns name included.
    assert!((0.37..0.38).contains(&share("block_hit_share")), "{p}");
    assert!((0.38..0.39).contains(&share("token_hit_share")), "{p}");
    assert_eq!(p["next_turns"], 2_142);
    assert_eq!(p["generated_blocks"], 2_458);
    let shared = &p["shared_prefix_tokens"];
    assert!(
        shared["max"].as_u64() <= s["input_tokens"]["max"].as_u64(),
        "{p}"
    );
    let text = stdout(&planner(&[
        "trace",
        "stats",
        "data/mooncake/conversation_trace.jsonl",
        "--quiet",
    ]));
    assert!(
        text.contains(
            "38.2% of all prompt tokens (37.5% of the hashed 512-token blocks) were computed by an earlier request; of the 12,031 requests with block hashes, all but 1 find some\n  2,142 requests continue a conversation whose previous turn's output fills 2,458 blocks they name"
        ),
        "{text}"
    );
    // A trace without hashes says nothing of prefixes: none is invented.
    let azure = json(&planner(&[
        "trace",
        "stats",
        "tests/fixtures/traces/tiny.csv",
        "--format",
        "json",
    ]));
    assert!(azure.get("prefix").is_none());
}

#[test]
fn block_hashes_that_contradict_the_prompt_are_refused_with_their_line() {
    let dir = temp_dir("bad-hashes");
    let path = dir.join("bad.jsonl");
    for (row, says) in [
        (
            r#"{"timestamp": 5, "input_length": 600, "output_length": 1, "hash_ids": [0, 1, 2]}"#,
            "`hash_ids` names 3 blocks, but a prompt of 600 tokens makes 2 blocks of 512 tokens",
        ),
        (
            r#"{"timestamp": 5, "input_length": 600, "output_length": 1, "hash_ids": ["a"]}"#,
            "`hash_ids` must be a list of non-negative integers",
        ),
    ] {
        std::fs::write(
            &path,
            format!("{{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, \"hash_ids\": [7]}}\n{row}\n"),
        )
        .unwrap();
        let out = planner(&["trace", "stats", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let e = stderr(&out);
        assert!(e.contains(says), "{e}");
        assert!(e.contains("bad.jsonl:2:59"), "{e}");
        assert!(e.contains("or pass --skip-bad-rows"), "{e}");
        assert!(stdout(&out).is_empty());
        // A plan that caches prefixes reads them too, and says so.
        let trace = format!("demand[0].trace={}", path.display());
        let solve = planner(&["solve", "scenarios/api-vs-reserved.toml", "--set", &trace]);
        assert_eq!(solve.status.code(), Some(2), "{}", stderr(&solve));
        let e = stderr(&solve);
        assert!(e.contains(says) && e.contains("bad.jsonl:2:59"), "{e}");
        assert!(
            e.contains("or set [simulation] prefix_caching = false"),
            "{e}"
        );
        // Skipped: the row is read without its hashes, and a warning says so.
        let skipped = planner(&[
            "trace",
            "stats",
            path.to_str().unwrap(),
            "--skip-bad-rows",
            "--format",
            "json",
        ]);
        assert!(skipped.status.success(), "{}", stderr(&skipped));
        assert!(stderr(&skipped).contains("1 rows' `hash_ids` contradict"));
        assert_eq!(json(&skipped)["prefix"]["requests_with_hashes"], 1);
        // Whoever does not read the hashes is not stopped by them.
        let predict = |extra: &[&str]| {
            let mut args = vec![
                "predict",
                "--model",
                "llama-3.1-8b",
                "--gpu",
                "h100-sxm",
                "--dataset",
                path.to_str().unwrap(),
            ];
            args.extend_from_slice(extra);
            planner(&args)
        };
        assert!(predict(&[]).status.success());
        let refused = predict(&["--enable-prefix-caching"]);
        assert_eq!(refused.status.code(), Some(2));
        assert!(
            stderr(&refused).contains("or leave out --enable-prefix-caching"),
            "{}",
            stderr(&refused)
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_trace_rows_fail_with_their_line() {
    let out = planner(&["trace", "stats", "tests/fixtures/traces/bad-rows.csv"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!("bad_rows", stderr(&out));
}

#[test]
fn bad_trace_rows_can_be_skipped_and_counted() {
    let out = planner(&[
        "trace",
        "stats",
        "tests/fixtures/traces/bad-rows.csv",
        "--skip-bad-rows",
        "--format",
        "json",
    ]);
    let s = json(&out);
    assert_eq!(s["requests"], 2);
    assert_eq!(s["skipped_rows"], 4);
    assert!(
        stderr(&out).contains("skipped 4 bad rows; the first, line 3"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn unsorted_trace_is_rejected() {
    let out = planner(&["trace", "stats", "tests/fixtures/traces/unsorted.csv"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unsorted.csv:3: arrival time"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn unknown_trace_format_says_what_is_accepted() {
    let out = planner(&["trace", "stats", "tests/fixtures/traces/unknown-format.txt"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot tell the trace format"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn synth_is_seeded_and_readable() {
    let dir = temp_dir("synth");
    let a = dir.join("a.csv");
    let b = dir.join("b.csv");
    for f in [&a, &b] {
        let out = planner(&[
            "trace",
            "synth",
            "--out",
            f.to_str().unwrap(),
            "--lengths-from",
            "tests/fixtures/traces/tiny.csv",
            "--days",
            "1",
            "--mean-rps",
            "2",
            "--seed",
            "9",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let s = json(&planner(&[
        "trace",
        "stats",
        a.to_str().unwrap(),
        "--format",
        "json",
    ]));
    let requests = s["requests"].as_f64().unwrap();
    assert!((requests - 2.0 * 86_400.0).abs() < 3000.0, "{requests}");
    assert_eq!(s["start"], "2024-05-10 00:00:00 UTC");
    assert_eq!(s["per_hour"]["windows"], 24);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn shape_sums_client_series() {
    let dir = temp_dir("shape");
    let out_file = dir.join("sum.csv");
    // The ServeGen client files live in the shared data folder beside the
    // checkout; the repository ships only their sum.
    if !Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data/servegen/language/m-small")
        .exists()
    {
        return;
    }
    let out = planner(&[
        "trace",
        "shape",
        "../shared/data/servegen/language/m-small",
        "--out",
        out_file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("summed 43 client series into 2016 windows"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn quantised_timestamps_are_detected_and_planned_with_the_fallback() {
    let stats = json(&planner(&[
        "trace",
        "stats",
        "data/mooncake/conversation_trace.jsonl",
        "--format",
        "json",
    ]));
    let q = &stats["quantised_timestamps"];
    let step = q["step_s"].as_f64().unwrap();
    assert!((2.9..3.1).contains(&step), "{q}");
    assert!(stats["within_minute_cv"].as_f64().unwrap() > 2.0);
    let conv = json(&planner(&[
        "trace",
        "stats",
        "data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv",
        "--format",
        "json",
    ]));
    assert!(conv.get("quantised_timestamps").is_none());
    // solve: the fallback of 1.0 (Poisson), or the scenario's figure.
    let mooncake = "demand[0].trace=\"../../../data/mooncake/conversation_trace.jsonl\"";
    let ttft = "tiers[0].ttft_ms=20000";
    for (sets, cv) in [
        (vec![mooncake, ttft], 1.0),
        (vec![mooncake, ttft, "demand[0].within_minute_cv=1.7"], 1.7),
    ] {
        let plan = solve_json("tests/fixtures/ok/tiny.toml", &sets);
        let d = &plan["demand"]["chat"];
        assert_eq!(d["within_minute_cv"].as_f64().unwrap(), cv);
        let step = d["sources"][0]["quantised_step_s"].as_f64().unwrap();
        assert!((2.9..3.1).contains(&step));
    }
}

#[test]
fn burstgpt_csv_is_a_fourth_trace_format() {
    // Rows written in BurstGPT's published column layout (a fixture, not its data).
    let s = json(&planner(&[
        "trace",
        "stats",
        "tests/fixtures/traces/tiny-burstgpt.csv",
        "--format",
        "json",
    ]));
    assert_eq!(s["requests"], 4);
    assert_eq!(s["clock"], "relative");
    assert_eq!(s["input_tokens"]["max"], 1301);
    assert_eq!(s["output_tokens"]["max"], 307);
    let dir = temp_dir("burstgpt-bad");
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,999,Conversation log\n").unwrap();
    let out = planner(&["trace", "stats", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(":2:"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("`Total tokens` 999"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A first line of other columns under `--trace-format azure` is named as
/// a header Azure's is not, not as a bad timestamp.
#[test]
fn another_header_under_the_azure_format_is_named_as_a_header() {
    let dir = crate::temp_dir("wrong-columns");
    let file = dir.join("wrongcols.csv");
    std::fs::write(&file, "time,prompt,completion\n1,2,3\n").unwrap();
    let out = crate::planner(&[
        "trace",
        "stats",
        file.to_str().unwrap(),
        "--trace-format",
        "azure",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = crate::stderr(&out);
    assert!(
        err.contains("wrongcols.csv:1: unexpected header `time,prompt,completion`; expected `TIMESTAMP,ContextTokens,GeneratedTokens`"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}
