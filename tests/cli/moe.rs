//! Mixtures of experts end to end: the shipped MoE scenario solved and
//! replayed, a layout that cannot run refused with its key, and `perf`'s
//! expert parts.

use crate::perf::perf_json;
use crate::{check_shipped, json, planner, stderr, temp_dir};
use std::path::{Path, PathBuf};

/// `scenarios/moe.toml` with each `(from, to)` of `edits` made once, its
/// traces and profiles named by absolute path, written to a folder of its
/// own as `NAME.toml`.
fn moe_edited(name: &str, edits: &[(&str, &str)]) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut text = std::fs::read_to_string(root.join("scenarios/moe.toml"))
        .unwrap()
        .replace("../data/", &format!("{}/data/", root.display()))
        .replace(
            "[model]",
            &format!("profiles_dir = \"{}/profiles\"\n\n[model]", root.display()),
        );
    for (from, to) in edits {
        assert!(text.contains(from), "moe.toml has no `{from}`");
        text = text.replacen(from, to, 1);
    }
    let path = temp_dir(&format!("moe-{name}")).join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_moe_scenario_solves_meets_its_targets_and_names_its_layout() {
    let plan = check_shipped("scenarios/moe.toml");
    assert_eq!(plan["model"]["precision"], "fp4");
    // Every configuration the plan uses names its layout and runs FP4.
    for (tier, t) in plan["tiers"].as_object().unwrap() {
        for c in t["configurations"].as_array().unwrap() {
            let label = c["config"].as_str().unwrap();
            assert!(
                label.contains(" tp") && label.contains(" fp4 "),
                "{tier}: {label}"
            );
        }
    }
    assert_eq!(plan["missed_targets"].as_array().map(Vec::len), Some(0));
}

#[test]
fn a_layout_that_cannot_run_the_model_is_refused_with_its_key() {
    let path = moe_edited(
        "bad-ep",
        &[("expert_parallel = [1, 2, 4]", "expert_parallel = [1, 3]")],
    );
    let out = planner(&["solve", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("gpus[0].expert_parallel") && err.contains("EP 3 does not divide"),
        "{err}"
    );
    // Data-parallel attention needs the experts spread by EP: the scenario
    // is told which list to change.
    let path = moe_edited(
        "dp-without-ep",
        &[(
            "expert_parallel = [1, 2, 4]",
            "expert_parallel = [1]\nattention_dp = [2]",
        )],
    );
    let out = planner(&["solve", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("gpus[0].attention_dp")
            && err.contains("attention-DP 2 with EP 1")
            && err.contains("list an `expert_parallel` degree above 1"),
        "{err}"
    );
    // Expert parallelism on a dense model is an error too, and a replica
    // past the NVLink domain needs --cross-node.
    for (args, needle) in [
        (
            "--model llama-3.1-8b --gpu h100-sxm --tp 2 --ep 2",
            "dense model",
        ),
        (
            "--model deepseek-v3 --gpu h200 --tp 8 --attention-dp 2 --ep 16 --precision fp8",
            "--cross-node",
        ),
        (
            "--model deepseek-v3 --gpu h200 --tp 1 --attention-dp 8 --precision fp8",
            "with EP 1",
        ),
    ] {
        let mut all = vec!["perf", "--decode", "8", "--context", "100"];
        all.extend(args.split(' '));
        let out = planner(&all);
        assert_eq!(out.status.code(), Some(2), "{args}");
        assert!(stderr(&out).contains(needle), "{args}: {}", stderr(&out));
    }
}

#[test]
fn perf_shows_the_expert_gemms_and_the_all_to_all() {
    let run = |layout: &[&str], work: &[&str]| {
        let mut args = vec![
            "--model",
            "deepseek-v3",
            "--gpu",
            "h200",
            "--precision",
            "fp8",
            "--engine",
            "sglang",
        ];
        args.extend_from_slice(layout);
        args.extend_from_slice(work);
        perf_json(&args)
    };
    let tp8_ep8 = ["--tp", "8", "--ep", "8"];
    let step = |batch: &str| run(&tp8_ep8, &["--decode", batch, "--context", "1000"]);
    let (one, many) = (step("1"), step("256"));
    let dp8 = run(
        &["--tp", "1", "--attention-dp", "8", "--ep", "8"],
        &["--decode", "256", "--context", "1000"],
    );
    let prefill = run(&tp8_ep8, &["--prefill", "1024"]);
    for r in [&one, &many, &dp8, &prefill] {
        let p = &r["parts"];
        let sum: f64 = [
            "gemm_ms",
            "expert_gemm_ms",
            "attention_ms",
            "allreduce_ms",
            "all_to_all_ms",
            "fixed_gpu_ms",
        ]
        .iter()
        .map(|k| p[k].as_f64().unwrap())
        .sum();
        // The expert set-up is a floor under the GPU's parts; the CPU
        // overlaps: the step is the longest of the three.
        let gpu_ms = sum.max(p["expert_setup_ms"].as_f64().unwrap());
        let step_ms = r["step_ms"].as_f64().unwrap();
        assert!((step_ms - gpu_ms.max(p["cpu_overhead_ms"].as_f64().unwrap())).abs() < 1e-9);
    }
    // Tensor-parallel attention exchanges no tokens (the all-reduces
    // combine the experts' parts); data-parallel attention does.
    for r in [&one, &many, &prefill] {
        assert_eq!(r["parts"]["all_to_all_ms"].as_f64(), Some(0.0));
        assert!(r["parts"]["allreduce_ms"].as_f64().unwrap() > 0.0);
    }
    assert!(dp8["parts"]["all_to_all_ms"].as_f64().unwrap() > 0.0);
    assert_eq!(dp8["parts"]["allreduce_ms"].as_f64(), Some(0.0));
    // A decode step replays its graph: no set-up; a prefill sets up each of
    // 256 experts in 58 MoE layers.
    assert_eq!(one["graph_batch"], 1);
    assert!(prefill["graph_batch"].is_null());
    assert_eq!(one["parts"]["expert_setup_ms"].as_f64(), Some(0.0));
    assert!(prefill["parts"]["expert_setup_ms"].as_f64().unwrap() > 0.0);
    // One token touches its 8 experts; 256 touch nearly all 256 and every
    // rank reads all 32 it holds, 81.7 GB of FP8 experts a GPU.
    assert_eq!(one["experts"]["touched_per_layer"], 8.0);
    assert_eq!(many["experts"]["busiest_rank_per_layer"], 32.0);
    let gb = many["experts"]["expert_weights_read_gb_per_gpu"]
        .as_f64()
        .unwrap();
    assert!(
        (gb - 58.0 * 32.0 * 3.0 * 7168.0 * 2048.0 / 1e9).abs() < 1e-6,
        "{gb}"
    );
    assert!(
        many["parts"]["expert_gemm_ms"].as_f64().unwrap()
            > 10.0 * one["parts"]["expert_gemm_ms"].as_f64().unwrap()
    );
}

#[test]
fn the_kv_cache_precision_is_the_scenarios_to_pin() {
    let launch = |kv: &str| {
        let out = planner(&[
            "solve",
            "scenarios/moe.toml",
            "--set",
            &format!("model.kv_cache=\"{kv}\""),
            "--set",
            "simulation.verify=\"off\"",
            "--format",
            "json",
            "--quiet",
        ]);
        crate::launch_commands(&json(&out))
    };
    assert!(launch("fp8")
        .iter()
        .all(|c| c.contains("--kv-cache-dtype fp8")));
    assert!(launch("bf16")
        .iter()
        .all(|c| !c.contains("--kv-cache-dtype")));
    let out = planner(&[
        "solve",
        "scenarios/moe.toml",
        "--set",
        "model.kv_cache=\"int4\"",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("model.kv_cache"), "{}", stderr(&out));
}

#[test]
fn a_purchase_unit_is_checked_even_when_the_model_cannot_be_read() {
    let path = moe_edited(
        "unit",
        &[
            ("profile = \"gpt-oss-120b\"", "profile = \"no-such-model\""),
            ("purchase_unit_gpus = 2", "purchase_unit_gpus = 3"),
        ],
    );
    let out = planner(&["solve", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("no-such-model") && err.contains("gpus[2].purchase_unit_gpus"),
        "{err}"
    );
}

/// gpt-oss-120b's checkpoint is published in MXFP4: a scenario that pins no
/// precision searches that one (not BF16 and FP8, which its checkpoint does
/// not hold), and a configuration pinned to FP8 names the FP8 checkpoint it
/// needs instead of a `--quantization fp8` the engine would refuse.
#[test]
fn gpt_oss_is_planned_in_its_published_format_and_no_launch_fights_its_checkpoint() {
    let unpinned = moe_edited(
        "unpinned",
        &[
            ("precision = [\"fp4\"]", ""),
            ("precision = [\"fp4\"]", ""),
            ("precision = [\"fp4\"]", ""),
        ],
    );
    let plan = |path: &str, extra: &[&str]| {
        let mut args = vec!["solve", path, "--set", "simulation.verify=\"off\""];
        args.extend_from_slice(extra);
        args.extend(["--format", "json", "--quiet"]);
        let out = planner(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        json(&out)
    };
    let searched = plan(unpinned.to_str().unwrap(), &[]);
    let runs = searched["how_to_run"].as_array().unwrap();
    assert!(!runs.is_empty());
    for run in runs {
        assert!(run["config"].as_str().unwrap().contains(" fp4"), "{run}");
        assert!(
            !run["launch_command"]
                .as_str()
                .unwrap()
                .contains("--quantization"),
            "{run}"
        );
    }
    let fp8 = plan(
        "scenarios/moe.toml",
        &["--set", "gpus[*].precision=[\"fp8\"]"],
    );
    for run in fp8["how_to_run"].as_array().unwrap() {
        let launch = run["launch_command"].as_str().unwrap();
        assert!(!launch.contains("--quantization"), "{launch}");
        assert!(
            launch.contains(
                "openai/gpt-oss-120b-FP8 (a checkpoint converted to FP8 from the published FP4 one"
            ),
            "{launch}"
        );
        assert!(
            run["benchmark_command"]
                .as_str()
                .unwrap()
                .contains("--save-result --save-detailed --result-filename"),
            "{run}"
        );
    }
}
