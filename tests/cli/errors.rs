//! Bad inputs: one bad-input fixture per error class of a scenario (messages
//! snapshotted), the hardened inputs that once crashed or hung, and inputs as
//! users save them.

use crate::{entries, json, planner, stderr, stdout, temp_dir};

/// Runs a bad fixture: non-zero exit, nothing on stdout, no output file.
fn bad(fixture: &str, code: i32) -> String {
    let dir = temp_dir(fixture);
    let file = dir.join("plan.json");
    let path = format!("tests/fixtures/bad/{fixture}.toml");
    let out = planner(&["solve", &path, "--out", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(code), "{fixture}: {}", stderr(&out));
    assert!(stdout(&out).is_empty());
    assert_eq!(
        entries(&dir),
        Vec::<String>::new(),
        "{fixture}: files left behind"
    );
    std::fs::remove_dir_all(dir).unwrap();
    stderr(&out)
}

#[test]
fn toml_syntax_error() {
    insta::assert_snapshot!("syntax", bad("syntax", 2));
}

#[test]
fn unknown_key() {
    insta::assert_snapshot!("unknown_key", bad("unknown-key", 2));
}

#[test]
fn wrong_type() {
    insta::assert_snapshot!("wrong_type", bad("wrong-type", 2));
}

#[test]
fn every_problem_is_reported_at_once() {
    insta::assert_snapshot!("many_problems", bad("many-problems", 2));
}

/// An unknown key, a wrong type, an unknown profile and an unknown tier:
/// all four in one run, the near key suggested.
#[test]
fn four_kinds_of_mistake_are_reported_in_one_run() {
    let err = bad("four-kinds", 2);
    assert!(err.contains("did you mean `slot_minutes`?"), "{err}");
    insta::assert_snapshot!("four_kinds", err);
}

#[test]
fn purchase_and_tier_rules_are_checked() {
    insta::assert_snapshot!("purchase_rules", bad("purchase-rules", 2));
}

#[test]
fn reserved_offers_are_checked() {
    insta::assert_snapshot!("reserved_offers", bad("reserved-offers", 2));
}

#[test]
fn unreachable_ttft_names_the_tier_and_the_best_figure() {
    insta::assert_snapshot!("infeasible_ttft", bad("infeasible-ttft", 3));
}

#[test]
fn rate_curve_shorter_than_the_horizon() {
    insta::assert_snapshot!("curve_too_short", bad("curve-too-short", 2));
}

#[test]
fn quotas_too_small() {
    insta::assert_snapshot!("quota", bad("quota", 3));
}

#[test]
fn missing_scenario_file() {
    let out = planner(&["solve", "scenarios/nope.toml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("scenarios/nope.toml: cannot read the file"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn chunk_sizes_out_of_range_and_fp8_without_units_are_located() {
    let dir = temp_dir("bad-configs");
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/ok/");
    let text = std::fs::read_to_string("tests/fixtures/ok/tiny.toml")
        .unwrap()
        .replace("\"../../../", &format!("\"{root}../../../"))
        .replace(
            "profile = \"h100-sxm\"",
            "profile = \"h100-sxm\"\nmax_batched_tokens = [32, 1000000]",
        )
        .replace(
            "profile = \"l40s\"",
            "profile = \"a100-80gb\"\nprecision = [\"fp8\"]",
        );
    let scenario = dir.join("bad-configs.toml");
    std::fs::write(&scenario, text).unwrap();
    let out = planner(&["solve", scenario.to_str().unwrap(), "--quiet"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("gpus[0].max_batched_tokens"), "{err}");
    assert!(
        err.contains("must be in [64, 1048576] tokens, got 32"),
        "{err}"
    );
    assert!(err.contains("chunk size 1000000 is outside"), "{err}");
    assert!(err.contains("`a100-80gb` has no FP8 units"), "{err}");
}

// Hardened inputs: one fixture per way an input once crashed, hung, left a
// file behind or printed nonsense. Each is refused with exit 2, nothing on
// standard output, and a message that locates the problem.

const HARDENED: &str = "tests/fixtures/hardened";

/// Runs `args`; expects exit 2, an empty stdout, and every `expected` piece
/// in the message. Returns the message.
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

/// `simulate` of the tiny scenario against the hardened plan `name`,
/// refused with every piece of `expected` in its message.
fn refused_plan(name: &str, expected: &[&str]) -> String {
    let plan = format!("{HARDENED}/plans/{name}");
    refused(
        &[
            "simulate",
            "tests/fixtures/ok/tiny.toml",
            "--plan",
            &plan,
            "--quiet",
        ],
        expected,
    )
}

#[test]
fn a_token_count_near_2_pow_32_is_refused_with_its_line_not_allocated() {
    let trace = format!("{HARDENED}/traces/token-count-near-2-32.csv");
    refused(
        &["trace", "stats", &trace, "--quiet"],
        &[
            "token-count-near-2-32.csv:2:",
            "longer than the 10000000 tokens",
        ],
    );
}

#[test]
fn a_servegen_window_start_far_in_the_future_is_refused_with_its_line() {
    let dir = temp_dir("far-window");
    let curve = format!("{HARDENED}/traces/servegen-window-start-far-future.csv");
    let out = dir.join("curve.csv");
    refused(
        &["trace", "shape", &curve, "--out", out.to_str().unwrap()],
        &["servegen-window-start-far-future.csv:2:", "400 days"],
    );
    assert_eq!(entries(&dir), Vec::<String>::new());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn trace_synth_refuses_4294967295_days_and_a_cv_of_1e_300_before_writing() {
    let dir = temp_dir("synth-bounds");
    let out = dir.join("t.csv");
    let out = out.to_str().unwrap();
    let tiny = "tests/fixtures/traces/tiny.csv";
    let base = [
        "trace",
        "synth",
        "--quiet",
        "--lengths-from",
        tiny,
        "--out",
        out,
    ];
    for (extra, expected) in [
        (
            ["--days", "4294967295"],
            "`--days` must be in [1, 366] days",
        ),
        (["--cv", "1e-300"], "`--cv` must be in"),
        (["--mean-rps", "1e308"], "`--mean-rps` must be in"),
    ] {
        let mut args = base.to_vec();
        args.extend(extra);
        refused(&args, &[expected]);
    }
    let mut args = base.to_vec();
    args.extend(["--days", "366", "--mean-rps", "100000"]);
    refused(&args, &["more than the 2e8 a synthetic trace may hold"]);
    assert_eq!(entries(&dir), Vec::<String>::new());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn capacity_requests_4294967295_is_refused_with_its_key() {
    let scenario = format!("{HARDENED}/capacity-requests-4294967295.toml");
    refused(
        &["solve", &scenario, "--quiet"],
        &[
            "simulation.capacity_requests",
            "[500, 50000] requests, got 4294967295",
        ],
    );
}

#[test]
fn a_plan_of_4294967295_replicas_does_not_wrap_past_the_gpu_check() {
    refused_plan(
        "replicas-4294967295.json",
        &["on_demand[0].l40s", "4294967295 l40s GPUs"],
    );
}

/// `calibrate` without its profiles says where it looked and how to point
/// it there, instead of refusing every run for a model it cannot find.
#[test]
fn calibrate_without_profiles_says_how_to_find_them() {
    for mode in [
        &["--runs", "data/engine-runs/disaggregated.csv"][..],
        &["--kernels"][..],
    ] {
        let mut args = vec!["calibrate", "--profiles", "tests/fixtures/no-such-folder"];
        args.extend_from_slice(mode);
        refused(
            &args,
            &[
                "no profiles in tests/fixtures/no-such-folder",
                "--profiles DIR",
            ],
        );
    }
}

/// Every API share out of [0, 1] is named, not only the first.
#[test]
fn every_api_share_out_of_range_is_named() {
    refused_plan(
        "api-shares-out-of-range.json",
        &[
            "has 2 problems",
            "tiers.chat.api_share_by_slot[0]: an API share must be in [0, 1], got 1.5",
            "tiers.chat.api_share_by_slot[1]: an API share must be in [0, 1], got -0.2",
        ],
    );
}

/// A plan that runs no replica: the replay misses, and says that no
/// request ran on a GPU rather than printing latencies and costs of zero.
#[test]
fn a_plan_with_no_replica_shows_dashes_not_zero_latencies() {
    let plan = format!("{HARDENED}/plans/no-replicas.json");
    let out = planner(&["simulate", "tests/fixtures/ok/tiny.toml", "--plan", &plan]);
    assert_eq!(out.status.code(), Some(5));
    let stdout = stdout(&out);
    let row = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("chat "))
        .expect("the tier's row");
    assert_eq!(row.matches('—').count(), 7, "{row}");
    assert!(!row.contains("0ms"), "{row}");
    assert!(stdout.contains("replicas: none was up"), "{stdout}");
    let stderr = stderr(&out);
    assert!(
        stderr.contains("served none of the requests meant for its GPUs"),
        "{stderr}"
    );
}

#[test]
fn a_plan_using_a_configuration_the_scenario_does_not_offer_is_refused() {
    refused_plan(
        "tensor-parallel-3-max-batch-100000.json",
        &[
            "tiers.chat.configurations[0].tensor_parallel: tensor parallel 3 is not offered for `l40s`",
            "tiers.chat.configurations[0].max_batch: max batch 100000 is not offered",
        ],
    );
}

#[test]
fn two_rows_399_days_apart_in_1_minute_slots_are_refused_not_planned() {
    let scenario = format!("{HARDENED}/slots-399-days-of-1-minute.toml");
    refused(
        &["solve", &scenario, "--quiet"],
        &[
            "planning.slot_minutes",
            "more than the 2000 a plan may have",
        ],
    );
}

#[test]
fn solver_settings_and_prices_out_of_range_are_all_named_by_key() {
    let scenario = format!("{HARDENED}/solver-settings-and-prices-out-of-range.toml");
    refused(
        &["solve", &scenario, "--quiet"],
        &[
            "has 4 problems",
            "planning.time_limit_s",
            "planning.threads",
            "demand[0].scale",
            "api.usd_per_million_input_tokens",
        ],
    );
}

#[test]
fn a_gpu_profile_with_a_negative_hop_latency_and_a_nan_efficiency_is_refused() {
    let scenario = format!("{HARDENED}/gpu-profile-negative-hop-latency-and-nan-efficiency.toml");
    refused(
        &["solve", &scenario, "--quiet"],
        &[
            "negative-hop-latency.toml:hop_latency_us: `hop_latency_us` must be in [0, 1000] µs, got -8",
            "negative-hop-latency.toml:compute_efficiency: `compute_efficiency` must be in (0, 1], got NaN",
        ],
    );
    refused(
        &[
            "perf",
            "--profiles",
            &format!("{HARDENED}/profiles"),
            "--model",
            "llama-3.1-8b",
            "--gpu",
            "negative-hop-latency",
            "--decode",
            "8",
            "--context",
            "100",
        ],
        &["hop_latency_us"],
    );
}

#[test]
fn a_prompt_longer_than_the_models_context_is_refused_with_its_trace_line() {
    let scenario = format!("{HARDENED}/prompt-longer-than-context.toml");
    let err = refused(
        &["solve", &scenario, "--quiet"],
        &[
            "prompt-longer-than-context.csv:3:",
            "200000 input + 50 output tokens does not fit the model's context of 131072 tokens",
        ],
    );
    assert!(
        !err.contains("--skip-bad-rows"),
        "solve has no --skip-bad-rows: {err}"
    );
}

#[test]
fn goodput_refuses_a_duration_of_1e308_and_a_vllm_duration_of_minus_30() {
    let log = format!("{HARDENED}/logs/vllm-duration-negative.json");
    refused(
        &["goodput", &log, "--ttft-ms", "500", "--tpot-ms", "50"],
        &["vllm-duration-negative.json:duration", "got -30"],
    );
    let dir = temp_dir("goodput-1e308");
    let csv = dir.join("log.csv");
    std::fs::write(
        &csv,
        "arrival_s,ttft_ms,e2e_ms,output_tokens\n0,100,300,5\n",
    )
    .unwrap();
    refused(
        &[
            "goodput",
            csv.to_str().unwrap(),
            "--ttft-ms",
            "500",
            "--tpot-ms",
            "50",
            "--cost-per-hour",
            "10",
            "--duration-s",
            "1e308",
        ],
        &["`--duration-s` must be in (0, 315360000] s, got 1e308"],
    );
    std::fs::remove_dir_all(dir).unwrap();
}

// Inputs as users save them: a UTF-8 BOM and CRLF line ends are accepted in
// every text input; invalid UTF-8, lone carriage returns, impossible dates and
// TOML syntax errors are located.

#[test]
fn files_saved_with_a_bom_and_crlf_are_read_like_any_other() {
    for trace in [
        "saved-by-excel-bom-crlf.csv",
        "mooncake-saved-with-bom-crlf.jsonl",
    ] {
        let path = format!("{HARDENED}/traces/{trace}");
        let stats = json(&planner(&[
            "trace", "stats", &path, "--format", "json", "--quiet",
        ]));
        assert!(stats["requests"].as_u64().unwrap() >= 2, "{trace}: {stats}");
    }
    let scenario = format!("{HARDENED}/saved-with-bom-and-crlf.toml");
    let a = json(&planner(&[
        "solve", &scenario, "--format", "json", "--quiet",
    ]));
    let b = json(&planner(&[
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--format",
        "json",
        "--quiet",
    ]));
    assert_eq!(a["total_cost_usd"], b["total_cost_usd"]);
    let plan = format!("{HARDENED}/plans/tiny-plan-saved-with-bom-crlf.json");
    let replay = planner(&[
        "simulate",
        "tests/fixtures/ok/tiny.toml",
        "--plan",
        &plan,
        "--quiet",
    ]);
    assert!(replay.status.success(), "{}", stderr(&replay));
    let log = format!("{HARDENED}/logs/goodput-log-saved-with-bom-crlf.csv");
    let g = json(&planner(&[
        "goodput",
        &log,
        "--ttft-ms",
        "500",
        "--tpot-ms",
        "100",
        "--format",
        "json",
    ]));
    assert_eq!(g["total"]["requests"], 2);
}

#[test]
fn invalid_utf8_in_a_trace_is_refused_with_its_line_and_column() {
    let trace = format!("{HARDENED}/traces/invalid-utf8-on-line-3.csv");
    refused(
        &["trace", "stats", &trace, "--quiet"],
        &["invalid-utf8-on-line-3.csv:3:22: invalid UTF-8 (byte 0xE9)"],
    );
}

#[test]
fn impossible_dates_and_offsets_are_refused_with_line_and_column() {
    let date = format!("{HARDENED}/traces/impossible-date-2023-11-31.csv");
    refused(
        &["trace", "stats", &date, "--quiet"],
        &["impossible-date-2023-11-31.csv:3:9: impossible date 2023-11-31: November 2023 has 30 days"],
    );
    let offset = format!("{HARDENED}/traces/impossible-offset-plus-99-99.csv");
    refused(
        &["trace", "stats", &offset, "--quiet"],
        &["impossible-offset-plus-99-99.csv:2:20: impossible UTC offset +99:99"],
    );
    let dir = temp_dir("synth-date");
    let out = dir.join("t.csv");
    refused(
        &[
            "trace",
            "synth",
            "--quiet",
            "--lengths-from",
            "tests/fixtures/traces/tiny.csv",
            "--out",
            out.to_str().unwrap(),
            "--start",
            "2023-11-31",
        ],
        &["--start 2023-11-31: impossible date 2023-11-31: November 2023 has 30 days"],
    );
    assert_eq!(entries(&dir), Vec::<String>::new());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn toml_syntax_errors_on_four_lines_are_reported_in_one_run() {
    let scenario = format!("{HARDENED}/syntax-errors-on-four-lines.toml");
    refused(
        &["solve", &scenario, "--quiet"],
        &[
            "syntax-errors-on-four-lines.toml:6:",
            "syntax-errors-on-four-lines.toml:8:",
            "syntax-errors-on-four-lines.toml:9:16: `1 2` is not a TOML value",
            "syntax-errors-on-four-lines.toml:10:",
            "checked past this error, has 3 more, below",
        ],
    );
}

#[test]
fn a_key_without_a_value_and_cr_only_line_ends_get_a_message() {
    let end = format!("{HARDENED}/key-without-value-at-end-of-file.toml");
    refused(
        &["solve", &end, "--quiet"],
        &["key-without-value-at-end-of-file.toml:3:6: a value is missing after `=`"],
    );
    let cr = format!("{HARDENED}/cr-only-line-ends.toml");
    refused(
        &["solve", &cr, "--quiet"],
        &["cr-only-line-ends.toml:1:46: a carriage return not followed by a line feed"],
    );
}

#[test]
fn a_failing_standard_error_does_not_turn_an_error_into_a_panic() {
    // Writes to /dev/full fail (no space left): the error message is lost,
    // the exit code is still the input error's.
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return;
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_planner"))
        .args(["solve", "tests/fixtures/no-such-scenario.toml"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn a_missing_profiles_folder_is_said_once_not_for_every_profile() {
    let dir = temp_dir("no-profiles");
    let scenario = dir.join("s.toml");
    let text = std::fs::read_to_string("tests/fixtures/ok/tiny.toml").unwrap();
    let text = text.replace(
        "profiles_dir = \"../../../profiles\"",
        "profiles_dir = \"no-such-folder\"",
    );
    assert!(text.contains("no-such-folder"));
    std::fs::write(&scenario, text).unwrap();
    let out = planner(&["solve", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("s.toml:profiles_dir: the profiles folder ") && err.contains("does not exist"),
        "{err}"
    );
    assert!(!err.contains("unknown model profile"), "{err}");
    assert!(!err.contains("unknown GPU profile"), "{err}");
    assert!(!err.contains("unknown engine"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn trace_shape_refuses_to_write_into_the_folder_it_sums() {
    let dir = temp_dir("shape-into-itself");
    std::fs::copy(
        "tests/fixtures/hardened/traces/servegen-two-hours.csv",
        dir.join("a.csv"),
    )
    .unwrap();
    let out = dir.join("sum.csv");
    refused(
        &[
            "trace",
            "shape",
            dir.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &["is in the folder it reads", "write it elsewhere"],
    );
    assert_eq!(entries(&dir), vec!["a.csv".to_string()]);
    std::fs::remove_dir_all(dir).unwrap();
}

/// An `aggregate` that names a file (a per-request trace, say) is located
/// and called a file, not a folder that does not exist.
#[test]
fn an_aggregate_that_names_a_file_is_located_and_called_a_file() {
    let dir = temp_dir("aggregate-file");
    let scenario = dir.join("s.toml");
    let trace = std::fs::canonicalize("tests/fixtures/traces/tiny.csv").unwrap();
    let text = std::fs::read_to_string("tests/fixtures/ok/tiny.toml")
        .unwrap()
        .replace(
            "profiles_dir = \"../../../profiles\"",
            &format!(
                "profiles_dir = \"{}\"",
                std::fs::canonicalize("profiles").unwrap().display()
            ),
        )
        .replace(
            "trace = \"../traces/tiny.csv\"",
            &format!("aggregate = \"{}\"", trace.display()),
        );
    std::fs::write(&scenario, text).unwrap();
    let out = planner(&["solve", scenario.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("s.toml:37:13: aggregate ")
            && err.contains("tiny.csv is a file; `aggregate` names the folder"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// A trace whose requests exceed the model's context is refused at the first
/// such row, with how many there are and their share of the prompt tokens.
#[test]
fn a_trace_over_the_models_context_is_refused_with_how_much_of_it_is_over() {
    let dir = temp_dir("over-context");
    let trace = dir.join("long.csv");
    std::fs::write(
        &trace,
        "TIMESTAMP,ContextTokens,GeneratedTokens\n\
         2024-05-10 00:00:01+00:00,1000,100\n\
         2024-05-10 00:00:02+00:00,140000,100\n\
         2024-05-10 00:00:03+00:00,2000,100\n\
         2024-05-10 00:00:04+00:00,150000,100\n\
         2024-05-10 00:00:05+00:00,7000,100\n",
    )
    .unwrap();
    let out = planner(&[
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--set",
        &format!("demand[0].trace=\"{}\"", trace.display()),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("long.csv:3"), "the first such row: {err}");
    // 290,000 of the 300,000 prompt tokens.
    assert!(
        err.contains("in all, 2 of its 5 requests (96.7% of its prompt tokens) do not fit"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// A trace over the model's context names both ways out; a stated context
/// past the documented limit, a context no chat fits, an unknown choice
/// and a drop on an aggregate are each located, all in one run.
#[test]
fn a_context_too_short_for_the_trace_names_both_ways_out_and_bad_choices_are_located() {
    let scenario = "tests/fixtures/ok/long-context.toml";
    refused(
        &["solve", scenario, "--quiet"],
        &[
            "long-prompts.jsonl:4:",
            "3 of its 24 requests (87.5% of its prompt tokens) do not fit",
            "`demand[0].over_context = \"drop\"`",
            "[model] max_context_tokens (up to 131072 for qwen3-32b, by YaRN)",
        ],
    );
    refused(
        &[
            "solve",
            scenario,
            "--quiet",
            "--set",
            "model.max_context_tokens=200000",
            "--set",
            "demand[0].over_context=keep",
        ],
        &[
            "--set model.max_context_tokens: `max_context_tokens` = 200000 is over the 131072 tokens qwen3-32b is documented to reach with YaRN",
            "--set demand[0].over_context: unknown `over_context` choice `keep`",
        ],
    );
    refused(
        &[
            "solve",
            scenario,
            "--quiet",
            "--set",
            "model.max_context_tokens=500",
        ],
        &["`max_context_tokens` = 500 is under 1,024 tokens"],
    );
    refused(
        &[
            "solve",
            "tests/fixtures/ok/tiny-aggregate.toml",
            "--quiet",
            "--set",
            "demand[0].over_context=drop",
            "--set",
            "model.max_context_tokens=200000",
        ],
        &[
            "llama-3.1-8b's context of 131072 tokens, and its profile documents no longer one",
            "`over_context = \"drop\"` reads a trace's rows",
        ],
    );
}

/// A model that no offered GPU type can hold is an input error at
/// `model.profile`, naming each type's memory, as it is for a listed model
/// at `models[j].profile`: not a plan that failed.
#[test]
fn a_model_no_offered_gpu_can_hold_is_named_at_its_profile() {
    refused(
        &[
            "solve",
            "tests/fixtures/ok/tiny.toml",
            "--set",
            "model.profile=llama-3.1-405b",
        ],
        &[
            "model.profile: no offered GPU type can hold `Llama 3.1 405B`",
            "h100-sxm holds 80 GB on 1 GPU, l40s holds 48 GB on 1 GPU",
            "(set by --set model.profile=llama-3.1-405b)",
        ],
    );
}

/// An override that names no entry is said beside the problems the other
/// overrides make, not instead of them.
#[test]
fn every_set_problem_is_said_at_once() {
    let err = refused(
        &[
            "solve",
            "tests/fixtures/ok/tiny.toml",
            "--set",
            "tiers[0].ttft_ms=-5",
            "--set",
            "gpus[5].max_gpus=3",
        ],
        &[
            "the scenario has 2 problems",
            "--set gpus[5].max_gpus: `gpus` has 2 entries",
            "tiers[0].ttft_ms: `tiers[0].ttft_ms` must be in (0, 600000] ms, got -5 (set by --set tiers[0].ttft_ms=-5)",
        ],
    );
    assert!(err.find("gpus[5]") < err.find("ttft_ms"), "{err}");
}

/// A trace read in the wrong stated format names the key that stated it
/// and the format the file shows.
#[test]
fn a_trace_in_another_format_than_stated_names_the_key() {
    let out = planner(&[
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--set",
        "demand[0].format=mooncake",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(
            "`demand[0].format = \"mooncake\"` reads it as that format; the file reads as azure"
        ),
        "{err}"
    );
}
