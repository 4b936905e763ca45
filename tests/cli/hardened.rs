//! Regression tests of the second fuzzing pass: outputs written through
//! links and devices, bounded lines, nothing left after a signal, steps that
//! cannot run refused, and messages that say what is wrong. Each test is
//! named after what it guards.

use crate::{entries, planner, stderr, stdout, temp_dir};
use std::path::Path;
use std::process::Command;

/// Runs `args`, expects exit 2 with nothing on stdout and every piece in
/// the message; returns the message.
fn refused(args: &[&str], expected: &[&str]) -> String {
    let out = planner(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(stdout(&out).is_empty(), "{args:?}: {}", stdout(&out));
    for piece in expected {
        assert!(err.contains(piece), "{args:?}: `{piece}` not in: {err}");
    }
    err
}

#[test]
fn an_out_that_is_a_symlink_is_written_through_not_replaced() {
    let dir = temp_dir("out-symlink");
    let target = dir.join("schedule-real.csv");
    std::fs::write(&target, "old").unwrap();
    let link = dir.join("schedule.csv");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = planner(&[
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--format",
        "csv",
        "--out",
        link.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let meta = std::fs::symlink_metadata(&link).unwrap();
    assert!(meta.file_type().is_symlink(), "the link is still a link");
    let written = std::fs::read_to_string(&target).unwrap();
    assert!(
        written.starts_with("slot,"),
        "the target got the schedule: {written}"
    );
    assert_eq!(entries(&dir), ["schedule-real.csv", "schedule.csv"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn out_dash_is_standard_output() {
    let out = planner(&[
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--format",
        "json",
        "--out",
        "-",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["outcome_format"], 1);
}

#[test]
fn a_huge_field_is_quoted_in_part() {
    let dir = temp_dir("huge-field");
    let trace = dir.join("t.csv");
    let field = "7".repeat(200_000);
    std::fs::write(
        &trace,
        format!("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00.0,{field},10\n"),
    )
    .unwrap();
    let err = refused(
        &["trace", "stats", trace.to_str().unwrap(), "--quiet"],
        &["t.csv:2:", "(200000 bytes)"],
    );
    assert!(err.len() < 1_000, "quoted whole: {} bytes", err.len());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_line_over_the_cap_is_refused_with_its_number() {
    let dir = temp_dir("long-line");
    let trace = dir.join("t.csv");
    let line = "x".repeat(3 << 20);
    std::fs::write(
        &trace,
        format!("TIMESTAMP,ContextTokens,GeneratedTokens\n{line}\n"),
    )
    .unwrap();
    refused(
        &[
            "trace",
            "stats",
            trace.to_str().unwrap(),
            "--quiet",
            "--skip-bad-rows",
        ],
        &["t.csv:2:", "longer than 1,048,576 bytes"],
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn trace_aggregate_of_dev_zero_is_refused_and_leaves_nothing() {
    let dir = temp_dir("agg-dev-zero");
    let out = dir.join("agg");
    refused(
        &[
            "trace",
            "aggregate",
            "--trace-format",
            "azure",
            "--out",
            out.to_str().unwrap(),
            "chat=/dev/zero",
            "-q",
        ],
        &["/dev/zero: is a device; a trace is a regular file"],
    );
    assert!(entries(&dir).is_empty(), "{:?}", entries(&dir));
    std::fs::remove_dir_all(dir).unwrap();
}

/// An endless scenario file is refused once the cap on a TOML file has
/// been read, not read until the memory runs out.
#[test]
fn an_endless_scenario_is_refused_past_its_size_cap() {
    refused(
        &["solve", "/dev/zero"],
        &["/dev/zero: the file is longer than 64 MiB, the most a TOML file"],
    );
}

/// The queueing model has no 100th percentile: the scenario is refused
/// naming the key, before any solve.
#[test]
fn an_analytic_solve_at_the_100th_percentile_names_the_key() {
    refused(
        &[
            "solve",
            "scenarios/peak.toml",
            "--set",
            "simulation.capacity=\"analytic\"",
            "--set",
            "tiers[0].percentile=100",
        ],
        &[
            "scenarios/peak.toml:tiers[0].percentile: tier `interactive` asks for its 100th percentile",
            "use a percentile below 100",
        ],
    );
}

#[test]
fn trace_aggregate_into_new_folders_removes_every_one_it_made() {
    let dir = temp_dir("agg-new-folders");
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "TIMESTAMP,ContextTokens,GeneratedTokens\nnot a row\n").unwrap();
    let out = dir.join("new1").join("new2").join("agg");
    let run = planner(&[
        "trace",
        "aggregate",
        "--out",
        out.to_str().unwrap(),
        &format!("chat={}", bad.display()),
        "-q",
    ]);
    assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
    assert_eq!(entries(&dir), ["bad.csv"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn zero_and_subnormal_inputs_are_refused_naming_the_input() {
    refused(
        &[
            "solve",
            "tests/fixtures/ok/tiny.toml",
            "--set",
            "gpus[0].on_demand_usd_per_gpu_hour=1e-300",
        ],
        &["gpus[0].on_demand_usd_per_gpu_hour", "below 1e-9"],
    );
    refused(
        &[
            "solve",
            "tests/fixtures/ok/tiny.toml",
            "--set",
            "demand[0].scale=5e-324",
        ],
        &["demand[0].scale", "got 5e-324"],
    );
    let dir = temp_dir("zero-tokens");
    let trace = dir.join("zero.csv");
    std::fs::write(
        &trace,
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00.0,0,0\n2023-11-16 18:00:01.0,0,0\n",
    )
    .unwrap();
    refused(
        &[
            "solve",
            "tests/fixtures/ok/tiny.toml",
            "--set",
            &format!("demand[0].trace={}", trace.display()),
        ],
        &[
            "zero.csv",
            "0 input and 0 output tokens",
            "(the trace of `demand[0]` in tests/fixtures/ok/tiny.toml)",
        ],
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn perf_refuses_steps_that_cannot_run() {
    let perf = |extra: &[&str]| {
        let mut args = vec![
            "perf",
            "--model",
            "llama-3.1-405b",
            "--gpu",
            "l4",
            "--tp",
            "8",
        ];
        args.extend_from_slice(extra);
        args.iter().map(|s| (*s).to_string()).collect::<Vec<_>>()
    };
    let run = |args: Vec<String>, expected: &[&str]| {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(&refs, expected);
    };
    run(
        perf(&["--decode", "64", "--context", "8000"]),
        &["cannot run: the weights need", "raise --tp"],
    );
    refused(
        &[
            "perf",
            "--model",
            "llama-3.1-8b",
            "--gpu",
            "h100-sxm",
            "--decode",
            "1",
            "--context",
            "1000000000",
        ],
        &["--context 1000000000 is longer than llama-3.1-8b's context of 131072"],
    );
    refused(
        &[
            "perf",
            "--model",
            "llama-3.1-8b",
            "--gpu",
            "h100-sxm",
            "--prefill",
            "4294967295",
        ],
        &["--prefill 4294967295 is longer"],
    );
    refused(
        &[
            "perf",
            "--model",
            "llama-3.1-8b",
            "--gpu",
            "h100-sxm",
            "--decode",
            "512",
            "--context",
            "100000",
        ],
        &["cannot hold this step", "tokens of KV cache"],
    );
}

/// A run stopped by SIGTERM while it writes removes its temporary file and
/// exits 143. The test waits for the temporary to appear (the write has
/// begun), not for any time to pass.
#[test]
fn an_interrupted_run_leaves_no_temporary() {
    let dir = temp_dir("sigterm");
    let out = dir.join("week.csv");
    let mut child = Command::new(env!("CARGO_BIN_EXE_planner"))
        .args([
            "trace",
            "synth",
            "--out",
            out.to_str().unwrap(),
            "--lengths-from",
            "data/azure-llm-2023/AzureLLMInferenceTrace_code.csv",
            "--days",
            "60",
            "--quiet",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .spawn()
        .unwrap();
    let temporary = dir.join(format!(".week.csv.{}.planner-tmp", child.id()));
    loop {
        if temporary.exists() {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("trace synth ended ({status:?}) before it began writing");
        }
        std::thread::yield_now();
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert!(entries(&dir).is_empty(), "left behind: {:?}", entries(&dir));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_temporary_that_a_killed_run_left_is_swept_by_the_next() {
    let dir = temp_dir("stale-temporary");
    // No process has a PID this large on Linux (the limit is 2^22).
    let stale = dir.join(".plan.json.4194999.planner-tmp");
    std::fs::write(&stale, "half a plan").unwrap();
    let out = planner(&[
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--format",
        "json",
        "--out",
        dir.join("plan.json").to_str().unwrap(),
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(entries(&dir), ["plan.json"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_p100_tier_gets_finite_figures_from_the_queueing_model() {
    let out = planner(&[
        "capacity",
        "tests/fixtures/ok/tiny.toml",
        "--set",
        "tiers[0].percentile=100",
        "--format",
        "json",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("no finite p100 TTFT"), "{text}");
}

#[test]
fn a_mip_gap_of_minus_zero_is_refused_naming_the_key() {
    refused(
        &[
            "solve",
            "tests/fixtures/ok/tiny.toml",
            "--set",
            "planning.mip_gap=-0.0",
        ],
        &["`planning.mip_gap` must be in [0, 1), got -0"],
    );
}

#[test]
fn a_goodput_duration_too_small_to_mean_anything_is_refused_naming_the_flag() {
    let dir = temp_dir("goodput-duration");
    let log = dir.join("log.csv");
    std::fs::write(
        &log,
        "arrival_s,ttft_ms,e2e_ms,output_tokens\n0,100,1000,10\n",
    )
    .unwrap();
    refused(
        &[
            "goodput",
            log.to_str().unwrap(),
            "--ttft-ms",
            "500",
            "--tpot-ms",
            "50",
            "--duration-s",
            "1e-310",
        ],
        &["--duration-s", "below 1e-9"],
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_sweep_grid_past_the_ceiling_is_refused_even_with_the_flag() {
    let hundred: Vec<String> = (1..=100)
        .map(|i| (f64::from(i) / 10.0).to_string())
        .collect();
    let mut args = vec![
        "sweep".to_string(),
        "tests/fixtures/ok/tiny.toml".to_string(),
        "--allow-large-grid".to_string(),
    ];
    for key in [
        "demand[0].scale",
        "api.usd_per_million_input_tokens",
        "api.usd_per_million_output_tokens",
    ] {
        args.push("--set".into());
        args.push(format!("{key}={}", hundred.join(",")));
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    refused(
        &refs,
        &["1,000,000 variants", "even with --allow-large-grid"],
    );
}

#[test]
fn a_long_set_key_is_refused_at_once() {
    let key = format!("{}b=1", "a.".repeat(60_000));
    let err = refused(
        &["solve", "tests/fixtures/ok/tiny.toml", "--set", &key],
        &["bytes long"],
    );
    assert!(err.len() < 1_000, "{} bytes", err.len());
}

#[test]
fn messages_say_what_is_wrong() {
    // The format hint names the flag that exists.
    let dir = temp_dir("wording");
    let odd = dir.join("odd.txt");
    std::fs::write(&odd, "what is this\n").unwrap();
    refused(
        &["trace", "stats", odd.to_str().unwrap(), "--quiet"],
        &["--trace-format"],
    );
    // An empty file and a CR-only CSV say so.
    let empty = dir.join("empty.csv");
    std::fs::write(&empty, "").unwrap();
    refused(
        &["trace", "stats", empty.to_str().unwrap(), "--quiet"],
        &["the trace is empty"],
    );
    let cr = dir.join("cr.csv");
    std::fs::write(&cr, "TIMESTAMP,ContextTokens,GeneratedTokens\r1,2,3\r").unwrap();
    refused(
        &["trace", "stats", cr.to_str().unwrap(), "--quiet"],
        &["cr.csv:1", "carriage return"],
    );
    // Located too when a scenario's demand reads it.
    refused(
        &[
            "solve",
            "tests/fixtures/ok/tiny.toml",
            "--set",
            &format!("demand[0].trace=\"{}\"", cr.display()),
        ],
        &["cr.csv:1", "carriage return"],
    );
    // A trace path that is a folder or a device says which.
    refused(
        &[
            "solve",
            "tests/fixtures/ok/tiny.toml",
            "--set",
            "demand[0].trace=/dev/null",
        ],
        &["is a device; a trace is a regular file"],
    );
    refused(
        &["trace", "stats", dir.to_str().unwrap(), "--quiet"],
        &["is a folder"],
    );
    // An empty tier name is not taken as a path.
    refused(
        &[
            "trace",
            "aggregate",
            "--out",
            dir.join("agg").to_str().unwrap(),
            "=data/azure-llm-2023/AzureLLMInferenceTrace_code.csv",
            "-q",
        ],
        &["the tier name before `=` is empty"],
    );
    // A key set twice is refused by solve as by sweep.
    refused(
        &[
            "solve",
            "tests/fixtures/ok/tiny.toml",
            "--set",
            "api.usd_per_million_input_tokens=1",
            "--set",
            "api.usd_per_million_input_tokens=2",
        ],
        &["is set twice"],
    );
    assert!(Path::new(&dir).exists());
    std::fs::remove_dir_all(dir).unwrap();
}
