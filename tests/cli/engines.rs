//! Engines in scenarios and `calibrate --runs`: the default engine, the
//! roofline model, a calibrated profile a scenario names, and the errors of
//! a bad engine name or runs file.

use crate::{json, planner, stderr, stdout, temp_dir};
use std::path::Path;

/// The header and the first `n` rows of the runs file `source` that `keep`
/// accepts, written to `dir/runs.csv`.
fn runs_subset(
    dir: &Path,
    source: &str,
    keep: impl Fn(&str) -> bool,
    n: usize,
) -> std::path::PathBuf {
    let all = std::fs::read_to_string(source).unwrap();
    let mut lines = all.lines();
    let mut text = format!("{}\n", lines.next().unwrap());
    for l in lines.filter(|l| keep(l)).take(n) {
        text.push_str(l);
        text.push('\n');
    }
    let runs = dir.join("runs.csv");
    std::fs::write(&runs, text).unwrap();
    runs
}

/// `tests/fixtures/ok/tiny.toml` with its offers' `engine` lines set to
/// `engine`, written to `dir`.
fn tiny_with_engine(dir: &Path, engine: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string("tests/fixtures/ok/tiny.toml")
        .unwrap()
        .replace("engine = \"roofline\"", &format!("engine = \"{engine}\""))
        .replace(
            "profiles_dir = \"../../../profiles\"",
            &format!("profiles_dir = \"{}/profiles\"", env!("CARGO_MANIFEST_DIR")),
        )
        .replace(
            "trace = \"../traces/tiny.csv\"",
            &format!(
                "trace = \"{}/tests/fixtures/traces/tiny.csv\"",
                env!("CARGO_MANIFEST_DIR")
            ),
        );
    let path = dir.join(format!("tiny-{}.toml", engine.replace('/', "_")));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn an_unknown_engine_is_located_and_lists_the_known_ones() {
    let dir = temp_dir("engine-unknown");
    let path = tiny_with_engine(&dir, "tgi");
    let out = planner(&["solve", path.to_str().unwrap(), "--quiet"]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(e.contains(":16:10: unknown engine `tgi`"), "{e}");
    assert!(e.contains(":24:10: unknown engine `tgi`"), "{e}");
    assert!(e.contains("known: sglang, trtllm, vllm, roofline"), "{e}");
}

#[test]
fn every_engine_plans_the_tiny_scenario_and_names_itself() {
    let dir = temp_dir("engine-each");
    for engine in ["vllm", "sglang", "trtllm", "roofline"] {
        let path = tiny_with_engine(&dir, engine);
        let plan = json(&planner(&[
            "solve",
            path.to_str().unwrap(),
            "--format",
            "json",
            "--quiet",
        ]));
        let c = &plan["tiers"]["chat"]["configurations"][0];
        assert_eq!(c["engine"], engine, "{c}");
        let run = &plan["how_to_run"][0];
        let launch = run["launch_command"].as_str().unwrap();
        let expected = match engine {
            "sglang" => {
                "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct"
            }
            "trtllm" => "trtllm-serve meta-llama/Llama-3.1-8B-Instruct",
            _ => "vllm serve meta-llama/Llama-3.1-8B-Instruct",
        };
        assert!(launch.starts_with(expected), "{engine}: {launch}");
        assert!(run["benchmark_command"]
            .as_str()
            .unwrap()
            .starts_with("vllm bench serve"));
    }
}

#[test]
fn calibration_writes_a_profile_that_predict_and_a_scenario_read() {
    let dir = temp_dir("engine-calibrate");
    // Twenty vLLM runs of the shared file.
    let runs = runs_subset(
        &dir,
        "data/engine-runs/qwen3-32b.csv",
        |l| l.contains(",vllm,0.12.0,") && l.contains(",h100_sxm,,agg,"),
        20,
    );
    let out_dir = dir.join("calibrated");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = planner(&[
        "calibrate",
        "--runs",
        runs.to_str().unwrap(),
        "--max-evaluations",
        "40",
        "--out",
        out_dir.to_str().unwrap(),
        "--quiet",
    ]);
    let report = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(report.contains("vllm (20 runs): loss"), "{report}");
    assert!(
        report.contains("qwen3-32b h100-sxm vllm bf16 (20 runs)"),
        "{report}"
    );
    let profile = out_dir.join("vllm.toml");
    let written = std::fs::read_to_string(&profile).unwrap();
    assert!(
        written.contains("calibrated by `planner calibrate --runs"),
        "{written}"
    );
    // The fitted loss never exceeds the starting one.
    let loss: Vec<f64> = report
        .lines()
        .find(|l| l.starts_with("vllm (20 runs): loss"))
        .unwrap()
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(loss[1] <= loss[0], "{loss:?}");
    let p = json(&planner(&[
        "predict",
        "--model",
        "qwen3-32b",
        "--gpu",
        "h100-sxm",
        "--tp",
        "4",
        "--engine",
        profile.to_str().unwrap(),
        "--max-concurrency",
        "8",
        "--num-prompts",
        "40",
        "--format",
        "json",
    ]));
    assert_eq!(p["planner"]["engine"], profile.to_str().unwrap());
    let scenario = tiny_with_engine(&dir, profile.to_str().unwrap());
    let plan = json(&planner(&[
        "solve",
        scenario.to_str().unwrap(),
        "--format",
        "json",
        "--quiet",
    ]));
    assert_eq!(
        plan["tiers"]["chat"]["configurations"][0]["engine"],
        profile.to_str().unwrap()
    );
}

/// InferenceX's rows are replayed with its client's lengths, and the report
/// says so and names the loss the fit minimised.
#[test]
fn inferencex_rows_are_replayed_with_its_lengths_and_the_loss_is_named() {
    let dir = temp_dir("engine-runs-inferencex");
    let runs = runs_subset(
        &dir,
        "data/engine-runs/moe.csv",
        |l| {
            l.contains("source_file=2026-04-06.csv")
                && l.contains(",vllm,")
                && (l.contains("_1024x1024_c4_") || l.contains("_1024x1024_c8_"))
        },
        3,
    );
    let out = planner(&[
        "calibrate",
        "--runs",
        runs.to_str().unwrap(),
        "--fit",
        "moe_eager_expert_us",
        "--loss",
        "capped",
        "--max-evaluations",
        "3",
        "--no-held-out",
        "--quiet",
    ]);
    let report = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        report.contains("3 runs are InferenceX's, replayed with its client's lengths"),
        "{report}"
    );
    assert!(
        report.contains(
            "loss (mean absolute log error of mean TTFT + mean TPOT, each capped at ln 3)"
        ),
        "{report}"
    );
    // The capped loss says how many runs the fit left beyond its cap.
    assert!(
        report.contains("beyond the cap (predicted more than 3x off, counted at ln 3): ")
            && report.contains(" of 3 runs' TTFT, "),
        "{report}"
    );
    // Three groups of one run each: divided by its group's median error,
    // every run is exact.
    assert!(
        report.contains("    centred    TTFT   +0.0% (|  0.0%|)   TPOT   +0.0% (|  0.0%|)")
            && report.contains("  centred: after, with each group's median log error divided out"),
        "{report}"
    );
}

#[test]
fn a_runs_file_that_cannot_be_read_names_its_row_and_column() {
    let dir = temp_dir("engine-runs-bad");
    let all = std::fs::read_to_string("data/engine-runs/qwen3-32b.csv").unwrap();
    let header = all.lines().next().unwrap();
    let row = all.lines().find(|l| l.contains(",vllm,0.12.0,")).unwrap();
    let bad = row.replacen(",1024,", ",a lot,", 1);
    let path = dir.join("bad.csv");
    std::fs::write(&path, format!("{header}\n{row}\n{bad}\n")).unwrap();
    let out = planner(&["calibrate", "--runs", path.to_str().unwrap(), "--quiet"]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(
        e.contains("bad.csv:line 3, column `isl`: a whole number from 1 to 1048576, got `a lot`"),
        "{e}"
    );
    let missing = dir.join("missing.csv");
    std::fs::write(&missing, "backend,model_path\nvllm,Qwen/Qwen3-32B\n").unwrap();
    let out = planner(&["calibrate", "--runs", missing.to_str().unwrap(), "--quiet"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("the header lacks the columns backend_version, system"),
        "{}",
        stderr(&out)
    );
    let engine = dir.join("unknown-engine.csv");
    std::fs::write(
        &engine,
        format!("{header}\n{}\n", row.replacen(",vllm,", ",tgi,", 1)),
    )
    .unwrap();
    let out = planner(&["calibrate", "--runs", engine.to_str().unwrap(), "--quiet"]);
    assert!(
        stderr(&out)
            .contains("column `backend`: the engine must be vllm, sglang or trtllm, got `tgi`"),
        "{}",
        stderr(&out)
    );
    let result = dir.join("result.json");
    std::fs::write(&result, "{}").unwrap();
    let out = planner(&["calibrate", "--runs", result.to_str().unwrap(), "--quiet"]);
    assert!(
        stderr(&out).contains("give --gpu, --tp, --engine and --precision (missing --gpu, --tp, --engine, --precision)"),
        "{}",
        stderr(&out)
    );
    // A layout given by the flags is checked as `predict` checks it.
    let predicted = planner(&[
        "predict",
        "--model",
        "qwen3-32b",
        "--gpu",
        "h100-sxm",
        "--tp",
        "2",
        "--max-concurrency",
        "4",
        "--num-prompts",
        "20",
        "--format",
        "json",
    ]);
    assert!(predicted.status.success(), "{}", stderr(&predicted));
    std::fs::write(&result, &predicted.stdout).unwrap();
    let out = planner(&[
        "calibrate",
        "--runs",
        result.to_str().unwrap(),
        "--gpu",
        "h100-sxm",
        "--tp",
        "3",
        "--engine",
        "vllm",
        "--precision",
        "bf16",
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--tp 3 cannot run the runs of")
            && stderr(&out).contains("does not divide Qwen3 32B's 64 attention heads"),
        "{}",
        stderr(&out)
    );
}

/// `--held-out model` predicts each model by fits on the other's runs
/// alone; every row not predicted is listed with its file, line and why;
/// the written profile carries its measured error per GPU and precision.
#[test]
fn calibration_leaves_each_model_out_lists_what_it_cannot_predict_and_writes_the_errors() {
    let dense_dir = temp_dir("engine-runs-model-out-dense");
    let dense = runs_subset(
        &dense_dir,
        "data/engine-runs/qwen3-32b.csv",
        |l| {
            (l.contains(",vllm,0.12.0,") && l.contains("_1024x128_"))
                || l.contains("_2000x500_c288_")
        },
        4,
    );
    let moe_dir = temp_dir("engine-runs-model-out-moe");
    let moe = runs_subset(
        &moe_dir,
        "data/engine-runs/moe.csv",
        |l| {
            l.contains("source_file=2026-04-06.csv")
                && l.contains(",vllm,")
                && l.contains("_1024x1024_c4_")
        },
        3,
    );
    let out_dir = dense_dir.join("calibrated");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = planner(&[
        "calibrate",
        "--runs",
        dense.to_str().unwrap(),
        moe.to_str().unwrap(),
        "--fit",
        "graph_layer_us,server_ms_per_request",
        "--max-evaluations",
        "4",
        "--held-out",
        "model",
        "--out",
        out_dir.to_str().unwrap(),
        "--quiet",
    ]);
    let report = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(report.contains("    model out  TTFT"), "{report}");
    assert!(!report.contains("    held out  "), "{report}");
    assert!(
        report
            .contains("model out: predicted by each engine's fit to the other models' runs alone"),
        "{report}"
    );
    // The shipped vLLM profile it starts from was fitted to these runs.
    assert!(
        report
            .contains("caution on model out: the starting profiles of vllm were themselves fitted"),
        "{report}"
    );
    // The GB200 row whose id's concurrency disagrees with its batch size,
    // named by its file and line.
    let listed = report
        .lines()
        .find(|l| l.contains("_2000x500_c288_"))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        listed.contains("runs.csv:") && listed.contains("`batch_size` disagree"),
        "{listed}"
    );
    let written = std::fs::read_to_string(out_dir.join("vllm.toml")).unwrap();
    assert!(written.contains("[errors.all]"), "{written}");
    assert!(written.contains("[errors.\"h100-sxm bf16\"]"), "{written}");
    assert!(written.contains("model_out_ttft = "), "{written}");
}

/// InferenceX's SGLang runs on B200 are replayed with the receive interval
/// its scripts launched them with, and the report says how many.
#[test]
fn inferencex_sglang_blackwell_runs_are_replayed_with_their_receive_interval() {
    let dir = temp_dir("engine-runs-recv-interval");
    let runs = runs_subset(
        &dir,
        "data/engine-runs/moe.csv",
        |l| l.starts_with("dsr1_b200_sglang_fp8_agg_1024x1024_c"),
        4,
    );
    let calibrate = |format: &str| {
        planner(&[
            "calibrate",
            "--runs",
            runs.to_str().unwrap(),
            "--fit",
            "moe_eager_expert_us",
            "--max-evaluations",
            "2",
            "--no-held-out",
            "--format",
            format,
            "--quiet",
        ])
    };
    let out = calibrate("json");
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for r in v["runs"].as_array().unwrap() {
        let c = r["run"]["concurrency"].as_u64().unwrap();
        let expected = if c < 16 { 10 } else { 30 };
        assert_eq!(r["run"]["recv_interval_steps"], expected, "{r}");
    }
    let text = calibrate("text");
    assert!(
        stdout(&text).contains(
            "4 SGLang runs replayed with the scheduler's receive interval their launch set"
        ),
        "{}",
        stdout(&text)
    );
}
