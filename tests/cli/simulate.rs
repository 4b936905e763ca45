//! `planner simulate`: replaying the plan `solve` wrote, plans that do not
//! match the scenario, and the scheduler and router on the code trace.

use crate::{json, planner, stderr, temp_dir};

#[test]
fn simulate_replays_the_plan_solve_wrote() {
    let dir = temp_dir("simulate");
    let plan_path = dir.join("plan.json");
    let solved = json(&planner(&[
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--format",
        "json",
        "--quiet",
        "--plan-out",
        plan_path.to_str().unwrap(),
    ]));
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan_path).unwrap()).unwrap();
    assert_eq!(plan["slots"], solved["solver"]["slots"]);
    assert_eq!(plan["reserved"], solved["reserved"]);
    let run = |slots: &str| {
        json(&planner(&[
            "simulate",
            "tests/fixtures/ok/tiny.toml",
            "--plan",
            plan_path.to_str().unwrap(),
            "--slots",
            slots,
            "--format",
            "json",
            "--quiet",
        ]))
    };
    let sample = run("sample");
    // `solve` verified the same sample with the same seed.
    assert_eq!(
        sample["verification"]["tiers"],
        solved["verification"]["tiers"]
    );
    let all = run("all");
    let chat = &all["verification"]["tiers"]["chat"];
    let requests = chat["requests"].as_u64().unwrap();
    let tiny_rows = std::fs::read_to_string("tests/fixtures/traces/tiny.csv")
        .unwrap()
        .lines()
        .count() as u64
        - 1;
    assert_eq!(
        requests, tiny_rows,
        "every trace request is replayed once at scale 1"
    );
    assert_eq!(
        chat["api_requests"].as_u64().unwrap()
            + chat["served_requests"].as_u64().unwrap()
            + chat["unserved_requests"].as_u64().unwrap(),
        requests
    );
    assert_eq!(run("all"), all, "same seed, same replay");
    // The per-request log, read back by `goodput`, gives the same verdicts.
    let log = dir.join("requests.csv");
    let o = planner(&[
        "simulate",
        "tests/fixtures/ok/tiny.toml",
        "--plan",
        plan_path.to_str().unwrap(),
        "--requests-out",
        log.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let counted = json(&planner(&[
        "goodput",
        log.to_str().unwrap(),
        "--scenario",
        "tests/fixtures/ok/tiny.toml",
        "--format",
        "json",
    ]));
    let g = &counted["tiers"]["chat"];
    assert_eq!(g["requests"], chat["served_requests"]);
    assert_eq!(g["met_both"], chat["met_both"]);
    assert_eq!(g["goodput_output_tokens"], chat["goodput_output_tokens"]);
    let o = planner(&[
        "simulate",
        "tests/fixtures/ok/tiny.toml",
        "--plan",
        plan_path.to_str().unwrap(),
        "--slots",
        "sample",
        "--requests-out",
        log.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
}

fn bad_plan(name: &str, edit: impl Fn(&mut serde_json::Value)) -> String {
    let dir = temp_dir(&format!("bad-plan-{name}"));
    let good = dir.join("good.json");
    json(&planner(&[
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--format",
        "json",
        "--quiet",
        "--plan-out",
        good.to_str().unwrap(),
    ]));
    let mut plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&good).unwrap()).unwrap();
    edit(&mut plan);
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(&plan).unwrap()).unwrap();
    let out = dir.join("report.txt");
    let o = planner(&[
        "simulate",
        "tests/fixtures/ok/tiny.toml",
        "--plan",
        path.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!out.exists(), "nothing is written for a bad plan");
    stderr(&o).replace(dir.to_str().unwrap(), "<dir>")
}

#[test]
fn plans_that_do_not_match_the_scenario_are_rejected() {
    insta::assert_snapshot!(
        "plan_unknown_gpu",
        bad_plan("unknown-gpu", |p| {
            p["tiers"]["chat"]["configurations"][0]["gpu_type"] = "tpu-v9".into();
        })
    );
    insta::assert_snapshot!(
        "plan_wrong_slots",
        bad_plan("wrong-slots", |p| {
            p["slots"] = 3.into();
        })
    );
    insta::assert_snapshot!(
        "plan_wrong_type",
        bad_plan("wrong-type", |p| {
            p["reserved"]["h100-sxm"] = "two".into();
        })
    );
}

/// `tests/fixtures/ok/code-burst.toml` with `[simulation]` `scheduler` and
/// `router` set, replayed against its fixed eight-replica plan: the code
/// tier's (TTFT p99, TPOT p99) in ms.
fn code_burst(scheduler: &str, router: &str) -> (f64, f64) {
    let dir = temp_dir(&format!("code-burst-{scheduler}-{router}"));
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/");
    let text = std::fs::read_to_string("tests/fixtures/ok/code-burst.toml")
        .unwrap()
        .replace("\"../../../", &format!("\"{root}"));
    let scenario = dir.join("code-burst.toml");
    std::fs::write(
        &scenario,
        format!("{text}scheduler = \"{scheduler}\"\nrouter = \"{router}\"\n"),
    )
    .unwrap();
    let v = json(&planner(&[
        "simulate",
        scenario.to_str().unwrap(),
        "--plan",
        "tests/fixtures/ok/code-burst-plan.json",
        "--format",
        "json",
        "--quiet",
        // The worse schedulers miss the target: their figures are the point.
        "--accept-miss",
    ]));
    let code = &v["verification"]["tiers"]["code"];
    assert_eq!(code["served_requests"].as_u64(), Some(8819));
    (
        code["ttft_p99_ms"].as_f64().unwrap(),
        code["tpot_p99_ms"].as_f64().unwrap(),
    )
}

#[test]
fn prefill_first_stalls_decodes_and_round_robin_queues_bursts_on_the_code_trace() {
    let (ttft, tpot) = code_burst("decode-first-chunked", "least-work");
    // Whole-prompt prefill steps hold every decoding sequence back.
    let (_, prefill_first_tpot) = code_burst("prefill-first", "least-work");
    assert!(
        prefill_first_tpot > 2.0 * tpot,
        "{prefill_first_tpot} vs {tpot}"
    );
    // Taking turns ignores how much work each replica already holds.
    let (round_robin_ttft, _) = code_burst("decode-first-chunked", "round-robin");
    assert!(
        round_robin_ttft > 1.25 * ttft,
        "{round_robin_ttft} vs {ttft}"
    );
}

/// A replay that misses a tier's target is not a success: the report is
/// written, the exit is 5 with a message naming the tier, its attainment
/// and what to do; `--accept-miss` exits 0 with the same report.
#[test]
fn a_replay_that_misses_its_target_exits_5_after_its_report() {
    let dir = temp_dir("simulate-miss");
    let plan_path = dir.join("plan.json");
    let solved = planner(&[
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--quiet",
        "--plan-out",
        plan_path.to_str().unwrap(),
    ]);
    assert!(solved.status.success(), "{}", stderr(&solved));
    let simulate = |extra: &[&str]| {
        let mut args = vec![
            "simulate",
            "tests/fixtures/ok/tiny.toml",
            "--plan",
            plan_path.to_str().unwrap(),
            "--quiet",
            // A TTFT limit no replica can keep: the same plan now misses.
            "--set",
            "tiers[0].ttft_ms=1",
        ];
        args.extend_from_slice(extra);
        planner(&args)
    };
    let missed = simulate(&[]);
    assert_eq!(missed.status.code(), Some(5), "{}", stderr(&missed));
    let message = stderr(&missed);
    assert!(
        message.contains("the replay misses the target: tier `chat`"),
        "{message}"
    );
    assert!(message.contains("--accept-miss"), "{message}");
    let report = String::from_utf8_lossy(&missed.stdout).to_string();
    assert!(report.contains("MISSES TARGET"), "{report}");
    let accepted = simulate(&["--accept-miss"]);
    assert!(accepted.status.success(), "{}", stderr(&accepted));
    assert_eq!(accepted.stdout, missed.stdout);
}
