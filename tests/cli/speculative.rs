//! Speculative decoding: `perf` and `predict` flags, and a scenario that
//! searches it as a choice.

use super::*;

/// `planner perf` of 32 Llama 3.1 8B sequences decoding at 2,000 tokens of
/// context on one H100, as JSON, with `extra` flags.
fn perf_decode(extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "perf",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "h100-sxm",
        "--decode",
        "32",
        "--context",
        "2000",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    json(&planner(&args))
}

/// `perf` prices the verification step and the tokens it yields.
#[test]
fn perf_prices_a_speculative_step_and_its_tokens() {
    let plain = perf_decode(&[]);
    let eagle = perf_decode(&["--speculative-method", "eagle3", "--acceptance-rate", "0.7"]);
    let s = &eagle["speculation"];
    // 1 + 0.7 + 0.49 + 0.343 tokens a step.
    assert!(
        (s["tokens_per_step"].as_f64().unwrap() - 2.533).abs() < 1e-9,
        "{s}"
    );
    let step = eagle["step_ms"].as_f64().unwrap();
    let base = plain["step_ms"].as_f64().unwrap();
    // The step verifies four tokens a sequence and drafts three: longer
    // than a plain step, and shorter a token.
    assert!(step > base, "{step} against {base}");
    let per_token = s["ms_per_token"].as_f64().unwrap();
    assert!((per_token - step / 2.533).abs() < 1e-3 * per_token, "{s}");
    assert!(per_token < base);
    assert!(plain.get("speculation").is_none());
}

/// `predict` with speculation decodes faster, and bad flags are named.
#[test]
fn predict_decodes_faster_with_speculation_and_names_bad_flags() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "predict",
            "--model",
            "llama-3.1-8b",
            "--gpu",
            "h100-sxm",
            "--random-input-len",
            "1000",
            "--random-output-len",
            "300",
            "--max-concurrency",
            "16",
            "--num-prompts",
            "200",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        planner(&args)
    };
    let tpot = |o: &std::process::Output| json(o)["mean_tpot_ms"].as_f64().unwrap();
    let plain = tpot(&run(&[]));
    let eagle = tpot(&run(&[
        "--speculative-method",
        "eagle3",
        "--acceptance-rate",
        "0.7",
    ]));
    assert!(eagle < 0.7 * plain, "{eagle} against {plain}");
    for (flags, says) in [
        (
            &["--speculative-method", "medusa"][..],
            "--speculative-method: unknown method `medusa`",
        ),
        (
            &["--speculative-method", "eagle3"][..],
            "--acceptance-rate: `eagle3` has no acceptance rate",
        ),
        (
            &["--speculative-method", "ngram", "--acceptance-rate", "1.5"][..],
            "--acceptance-rate: an acceptance rate is a probability in (0, 1]",
        ),
        (
            &[
                "--speculative-method",
                "eagle3",
                "--acceptance-rate",
                "0.5",
                "--num-speculative-tokens",
                "40",
            ][..],
            "--num-speculative-tokens: 40 draft tokens a step; state 1 to 16",
        ),
        (
            &["--speculative-method", "mtp"][..],
            "Llama 3.1 8B carries no multi-token-prediction module",
        ),
    ] {
        let out = run(flags);
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        assert!(stderr(&out).contains(says), "{flags:?}: {}", stderr(&out));
    }
}

/// A scenario that states speculative decoding searches it beside running
/// without: at a tight TPOT the EAGLE-3 configuration carries more
/// requests a replica, its launch line carries the engine's settings, and
/// the plan never needs more GPUs; bad figures are all named in one run.
#[test]
fn a_scenario_searches_speculative_decoding_as_a_choice() {
    let eagle = [
        "model.speculative.method=eagle3",
        "model.speculative.acceptance=0.7",
        "tiers[0].tpot_ms=20",
    ];
    let with = solve_json("scenarios/api-vs-reserved.toml", &eagle);
    let without = solve_json("scenarios/api-vs-reserved.toml", &["tiers[0].tpot_ms=20"]);
    let config = |plan: &serde_json::Value| plan["tiers"]["assistant"]["configurations"][0].clone();
    let (c, plain) = (config(&with), config(&without));
    assert!(c["config"].as_str().unwrap().ends_with("eagle3"), "{c}");
    assert!(
        c["rps_per_replica"].as_f64().unwrap() > plain["rps_per_replica"].as_f64().unwrap(),
        "{c} against {plain}"
    );
    let launch = with["how_to_run"][0]["launch_command"].as_str().unwrap();
    assert!(
        launch.contains(r#"--speculative-config '{"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}'"#),
        "{launch}"
    );
    assert!(reserved_gpus(&with) <= reserved_gpus(&without));
    let out = planner(&[
        "solve",
        "scenarios/api-vs-reserved.toml",
        "--set",
        "model.speculative.method=eagle3",
        "--set",
        "model.speculative.tokens=40",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    // The draft head is the one Llama 3.1 8B's profile names; the two
    // figures are wrong, both named.
    for key in ["model.speculative.tokens", "model.speculative.acceptance"] {
        assert!(err.contains(key), "{key}: {err}");
    }
}

/// vLLM refuses n-gram lookup beside asynchronous scheduling: the launch
/// line drops it and the step model runs the CPU's work beside the GPU's;
/// the report states the acceptance rate it assumed; a plan that speculates
/// is replayed only with the scenario's own speculation.
#[test]
fn ngram_runs_synchronously_and_a_plan_keeps_its_speculation() {
    let sets = [
        "model.speculative.method=ngram",
        "model.speculative.acceptance=0.9",
        "tiers[0].tpot_ms=20",
    ];
    let dir = temp_dir("speculative-plan");
    let plan = dir.join("plan.json");
    let mut args = vec![
        "solve",
        "scenarios/api-vs-reserved.toml",
        "--plan-out",
        plan.to_str().unwrap(),
    ];
    for s in &sets {
        args.extend(["--set", s]);
    }
    let out = planner(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("speculative decoding searched beside running without: ngram, 3 draft tokens a step, acceptance 0.90 (stated in the scenario)"),
        "{text}"
    );
    let launch = text
        .lines()
        .find(|l| l.contains("launch:") && l.contains("ngram"))
        .expect("an n-gram configuration is deployed");
    assert!(!launch.contains("--async-scheduling"), "{launch}");
    assert!(text.contains("with ngram speculative decoding"), "{text}");
    let perf = perf_decode(&["--speculative-method", "ngram", "--acceptance-rate", "0.5"]);
    assert_eq!(perf["parts"]["cpu_overlaps_gpu"], false);
    // Replayed without the scenario's speculation: refused at the key.
    let replay = planner(&[
        "simulate",
        "scenarios/api-vs-reserved.toml",
        "--plan",
        plan.to_str().unwrap(),
        "--set",
        "tiers[0].tpot_ms=20",
    ]);
    assert_eq!(replay.status.code(), Some(2), "{}", stderr(&replay));
    let err = stderr(&replay);
    assert!(
        err.contains(".speculative") && err.contains("the scenario states none"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// Choices that can only help never make the plan dearer beyond the MILP's
/// gap, on three seeds: caching prefixes (api-vs-reserved at a 2,000 ms
/// TTFT, where the cache saves a GPU) and searching speculative decoding (at
/// a 20 ms TPOT, where it does).
#[test]
fn prefix_caching_and_speculation_never_cost_more_on_any_seed() {
    for seed in 1..=3 {
        let cost = |extra: &[&str]| {
            solve_met_on_seed("scenarios/api-vs-reserved.toml", seed, extra)["total_cost_usd"]
                .as_f64()
                .unwrap()
        };
        let within_gap = |helped: f64, plain: f64| helped <= plain * 1.01 + 1e-9;
        let ttft = "tiers[0].ttft_ms=2000";
        let (cached, uncached) = (
            cost(&[ttft]),
            cost(&[ttft, "simulation.prefix_caching=false"]),
        );
        assert!(
            within_gap(cached, uncached),
            "seed {seed}: {cached} against {uncached}"
        );
        let tpot = "tiers[0].tpot_ms=20";
        let speculating = cost(&[
            tpot,
            "model.speculative.method=eagle3",
            "model.speculative.acceptance=0.7",
        ]);
        let plain = cost(&[tpot]);
        assert!(
            within_gap(speculating, plain),
            "seed {seed}: {speculating} against {plain}"
        );
    }
}
