//! Disaggregated units (`gpus[].disaggregated`): planned where they pay,
//! beside aggregated replicas, replayed, launched on both sides, carried by
//! the plan file, and their mistakes located.

use crate::{check_shipped, json, launch_commands, planner, solve_json, stderr, temp_dir};

const SCENARIO: &str = "scenarios/disaggregated.toml";

#[test]
fn a_tight_stream_is_planned_on_units_and_an_easy_one_on_aggregated_replicas() {
    let plan = check_shipped(SCENARIO);
    let config = |tier: &str| plan["tiers"][tier]["configurations"][0].clone();
    let code = config("code");
    assert_eq!(code["disaggregated"], "2P1D", "{code}");
    // A unit's GPUs are its replicas' together.
    assert_eq!(code["gpus_per_replica"], 6, "{code}");
    assert!(config("chat").get("disaggregated").is_none());
    // Every window is met in the replay of the units.
    let verified = &plan["verification"]["tiers"]["code"];
    assert_eq!(verified["meets_target"], true, "{verified}");
    // Both sides and the router are launched.
    let launch = launch_commands(&plan).join("\n");
    for said in [
        "prefill, 2 replicas: vllm serve",
        "decode, 1 replica: vllm serve",
        "NixlConnector",
        "in front: a prefill/decode proxy",
    ] {
        assert!(launch.contains(said), "{said}: {launch}");
    }
    let text = crate::stdout(&planner(&["solve", SCENARIO, "--quiet"]));
    assert!(
        text.contains("code: h200 TP2 in 2P1D units (2 prefill and 1 decode replica each"),
        "{text}"
    );
}

#[test]
fn without_units_the_tight_stream_costs_more_and_the_easy_one_the_same() {
    // The code tier's aggregated replicas keep small batches to hold their
    // streams within 30 ms; the chat tier runs aggregated either way.
    let with = check_shipped(SCENARIO);
    let without = solve_json(SCENARIO, &["gpus[0].disaggregated=[]"]);
    let cost = |p: &serde_json::Value| p["total_cost_usd"].as_f64().unwrap();
    assert!(
        cost(&without) > 2.0 * cost(&with),
        "{} vs {}",
        cost(&without),
        cost(&with)
    );
    assert_eq!(
        with["tiers"]["chat"]["configurations"],
        without["tiers"]["chat"]["configurations"]
    );
    // The plan with units says what it saves against aggregated replicas.
    let compared = &with["without_units"];
    assert_eq!(compared["aggregated_chosen"], false, "{compared}");
    assert_eq!(compared["without_units_usd"], without["total_cost_usd"]);
    // At an easy stream the units' replays ask more of their figures: the
    // plan without them is returned, never a dearer one.
    let easy = solve_json(SCENARIO, &["tiers[0].tpot_ms=100"]);
    let easy_alone = solve_json(
        SCENARIO,
        &["tiers[0].tpot_ms=100", "gpus[0].disaggregated=[]"],
    );
    assert_eq!(
        easy["without_units"]["aggregated_chosen"], true,
        "{}",
        easy["without_units"]
    );
    assert_eq!(easy["total_cost_usd"], easy_alone["total_cost_usd"]);
    assert!(easy["without_units"]["with_units_usd"].as_f64() > easy["total_cost_usd"].as_f64());
    assert!(easy["tiers"]["code"]["configurations"][0]
        .get("disaggregated")
        .is_none());
}

#[test]
fn offering_units_never_costs_more_than_offering_none_on_any_seed() {
    // Where units pay (30 ms) and where they do not (100 ms), seeds 1-3.
    for seed in ["1", "2", "3"] {
        for tpot in ["30", "100"] {
            let sets = [
                format!("tiers[0].tpot_ms={tpot}"),
                format!("simulation.seed={seed}"),
                format!("simulation.capacity_seed={seed}"),
            ];
            let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
            let with = solve_json(SCENARIO, &sets);
            let mut none = sets.clone();
            none.push("gpus[0].disaggregated=[]");
            let without = solve_json(SCENARIO, &none);
            let cost = |p: &serde_json::Value| p["total_cost_usd"].as_f64().unwrap();
            assert!(
                cost(&with) <= cost(&without) + 1e-9,
                "seed {seed}, TPOT {tpot} ms: {} with units, {} without",
                cost(&with),
                cost(&without)
            );
        }
    }
}

#[test]
fn a_planned_unit_round_trips_through_the_plan_file() {
    let dir = temp_dir("disaggregated-plan");
    let plan_path = dir.join("plan.json");
    let solved = json(&planner(&[
        "solve",
        SCENARIO,
        "--format",
        "json",
        "--quiet",
        "--plan-out",
        plan_path.to_str().unwrap(),
    ]));
    let file = std::fs::read_to_string(&plan_path).unwrap();
    assert!(file.contains("\"disaggregated\": \"2P1D\""), "{file}");
    let replay = json(&planner(&[
        "simulate",
        SCENARIO,
        "--plan",
        plan_path.to_str().unwrap(),
        "--format",
        "json",
        "--quiet",
    ]));
    assert_eq!(
        replay["verification"]["tiers"]["code"]["attainment"],
        solved["verification"]["tiers"]["code"]["attainment"]
    );
    // A unit the scenario does not offer is refused by name.
    let edited = file.replace("\"2P1D\"", "\"3P1D\"");
    let bad_plan = dir.join("bad.json");
    std::fs::write(&bad_plan, edited).unwrap();
    let out = planner(&[
        "simulate",
        SCENARIO,
        "--plan",
        bad_plan.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("the disaggregated unit 3P1D is not offered for `h200`; the scenario offers 1P1D, 1P2D, 2P1D"),
        "{err}"
    );
}

#[test]
fn a_units_mistakes_are_located_at_once() {
    let out = planner(&["solve", "tests/fixtures/bad/disaggregated.toml", "--quiet"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    for said in [
        "gpus[0].disaggregated[0]: `1:2` is not a unit's shape: write it xPyD",
        "gpus[0].disaggregated[1]: `0P1D`: 0 prefill replicas per unit; give 1 to 16",
        "gpus[0].disaggregated[2]: a 2P2D unit of 4-GPU replicas holds 16 GPUs, more than the",
        "state `gpus[0].network_gb_s`",
        "gpus[1].network_gb_s",
    ] {
        assert!(err.contains(said), "{said}: {err}");
    }
    assert!(!err.contains("disaggregated[3]"), "{err}");
    insta::assert_snapshot!("disaggregated_bad", err);
    // The queueing model has no prefill and decode apart.
    let out = planner(&[
        "solve",
        SCENARIO,
        "--set",
        "simulation.capacity=analytic",
        "--quiet",
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out)
            .contains("gpus[0].disaggregated: disaggregated units are sized by replaying them"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn predict_takes_a_disaggregated_unit_named_as_the_runs_columns() {
    let base = [
        "predict",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "h100-sxm",
        "--random-input-len",
        "2048",
        "--random-output-len",
        "128",
        "--max-concurrency",
        "16",
        "--num-prompts",
        "200",
    ];
    let mut unit = base.to_vec();
    unit.extend([
        "--prefill-workers",
        "1",
        "--decode-workers",
        "2",
        "--decode-batch",
        "8",
    ]);
    let text = crate::stdout(&planner(&unit));
    assert!(
        text.contains("disaggregated: 1 prefill worker of 1 x h100-sxm (TP1) + 2 decode workers of 1 x h100-sxm (TP1, 8 sequences a rank)"),
        "{text}"
    );
    unit.extend(["--format", "json"]);
    let apart = json(&planner(&unit));
    assert_eq!(apart["planner"]["disaggregated"]["decode"]["workers"], 2);
    assert_eq!(apart["completed"], 200);
    let mut together = base.to_vec();
    together.extend(["--format", "json"]);
    let together = json(&planner(&together));
    // Three replicas against one: the unit's streams run no slower.
    assert!(
        apart["mean_tpot_ms"].as_f64().unwrap() < together["mean_tpot_ms"].as_f64().unwrap(),
        "{} vs {}",
        apart["mean_tpot_ms"],
        together["mean_tpot_ms"]
    );
    // A unit with half its flags, or with the prefix cache, is refused.
    let out = planner(&[
        "predict",
        "--model",
        "llama-3.1-8b",
        "--gpu",
        "h100-sxm",
        "--prefill-workers",
        "1",
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--decode-workers"),
        "{}",
        stderr(&out)
    );
    let mut cached = base.to_vec();
    cached.extend([
        "--prefill-workers",
        "1",
        "--decode-workers",
        "1",
        "--enable-prefix-caching",
    ]);
    let out = planner(&cached);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--enable-prefix-caching is not modelled for a disaggregated unit"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn calibrate_checks_the_disaggregated_runs_without_fitting_to_them() {
    let check = json(&planner(&[
        "calibrate",
        "--runs",
        "data/engine-runs/disaggregated.csv",
        "--format",
        "json",
        "--quiet",
    ]));
    assert_eq!(check["fitted"], false);
    // Of the 295 rows, those that state neither their workers nor their
    // client's concurrency are set aside with why.
    let aside: u64 = check["set_aside"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    let runs = check["all"]["before"]["runs"].as_u64().unwrap();
    assert_eq!(runs + aside, 295);
    assert!(runs >= 200, "{runs} runs read");
    let dsv3 = check["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["group"] == "deepseek-v3")
        .unwrap();
    // The figures docs/model.md §4.3 quotes, within a point.
    let tpot = dsv3["before"]["tpot_abs_error"].as_f64().unwrap();
    let ttft = dsv3["before"]["ttft_abs_error"].as_f64().unwrap();
    assert!(
        (tpot - 0.160).abs() < 0.01 && (ttft - 0.589).abs() < 0.01,
        "{dsv3}"
    );
}
