//! `--set KEY=VALUE`: one run's change to the scenario, the same for `solve`,
//! `simulate` and `capacity`, and bad keys and values named.

use crate::{json, planner, stderr, stdout, temp_dir};

#[test]
fn set_changes_the_scenario_for_one_run() {
    let base = json(&planner(&[
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--format",
        "json",
        "--quiet",
    ]));
    let set = json(&planner(&[
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--set",
        "gpus[0].reserved_usd_per_gpu_hour=1",
        "--set",
        "tiers[0].ttft_ms=2500.5",
        "--format",
        "json",
        "--quiet",
    ]));
    assert_eq!(
        set["prices"]["gpus"]["h100-sxm"]["reserved_usd_per_gpu_hour"],
        1.0
    );
    assert_eq!(set["slo"]["chat"]["ttft_ms"], 2500.5);
    assert_eq!(
        base["prices"]["gpus"]["h100-sxm"]["reserved_usd_per_gpu_hour"],
        2.0
    );
}

#[test]
fn bad_set_keys_and_values_are_named() {
    let run = |sets: &[&str]| {
        let mut args = vec!["solve", "tests/fixtures/ok/tiny.toml", "--quiet"];
        for s in sets {
            args.extend(["--set", s]);
        }
        let out = planner(&args);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stdout(&out).is_empty());
        stderr(&out)
    };
    let message = [
        run(&[
            "gpus[5].max_gpus=4",
            "tiers[0].ttft_ms=fast",
            "tiers[0].name.first=x",
        ]),
        run(&["model.colour=red"]),
        run(&["gpus[1].max_gpus=2.5"]),
        run(&["tiers[0].ttft_ms=-5"]),
        run(&["demand[0]scale=2"]),
    ]
    .join("\n");
    insta::assert_snapshot!("bad_set", message);
}

#[test]
fn simulate_and_capacity_take_the_same_set_as_solve() {
    let dir = temp_dir("set-simulate");
    let plan = dir.join("plan.json");
    let solve = planner(&[
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--set",
        "tiers[0].ttft_ms=2500",
        "--plan-out",
        plan.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(solve.status.success(), "{}", stderr(&solve));
    let replay = json(&planner(&[
        "simulate",
        "tests/fixtures/ok/tiny.toml",
        "--set",
        "tiers[0].ttft_ms=2500",
        "--plan",
        plan.to_str().unwrap(),
        "--format",
        "json",
        "--quiet",
    ]));
    assert!(
        replay["verification"]["tiers"]["chat"]["attainment"]
            .as_f64()
            .is_some(),
        "{replay}"
    );
    for command in ["simulate", "capacity"] {
        let mut args = vec![
            command,
            "tests/fixtures/ok/tiny.toml",
            "--set",
            "tiers[0].ttft=1",
        ];
        if command == "simulate" {
            args.extend(["--plan", plan.to_str().unwrap()]);
        }
        let out = planner(&args);
        assert_eq!(out.status.code(), Some(2), "{command}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("--set tiers[0].ttft: unknown field `ttft`"),
            "{}",
            stderr(&out)
        );
    }
    std::fs::remove_dir_all(dir).unwrap();
}
