//! `planner capacity` and the capacity figures a plan is sized on: the
//! roofline ceiling, each configuration's own simulation, and fleets that pool
//! a bursty tier.

use crate::{json, planner, stderr, stdout, temp_dir};

#[test]
fn no_capacity_figure_exceeds_the_roofline_ceiling() {
    // Includes a batch tier whose TTFT limit is hours: stability, not
    // latency, must bound it.
    let plan = json(&planner(&[
        "solve",
        "scenarios/overnight-batch.toml",
        "--format",
        "json",
        "--quiet",
    ]));
    let mut checked = 0;
    for (tier, entries) in plan["capacity"].as_object().unwrap() {
        for e in entries.as_array().unwrap() {
            let Some(fleet) = e.get("fleet") else {
                continue;
            };
            let roofline = fleet["roofline_rps_per_replica"].as_f64().unwrap();
            let saturated = fleet["saturated_rps_per_replica"].as_f64().unwrap();
            assert!(saturated > 0.0 && saturated <= roofline, "{tier}: {fleet}");
            let mut last = 0.0;
            for p in fleet["points"].as_array().unwrap() {
                let n = p["replicas"].as_f64().unwrap();
                let rps = p["max_rps"].as_f64().unwrap();
                assert!(rps <= n * roofline * (1.0 + 1e-9), "{tier}: {p}");
                assert!(rps <= n * saturated, "{tier}: {p}");
                assert!(rps >= last, "{tier}: step function decreases at {p}");
                let (lo, hi) = (
                    p["attainment_low"].as_f64().unwrap(),
                    p["attainment_high"].as_f64().unwrap(),
                );
                assert!(lo <= p["attainment"].as_f64().unwrap() && hi >= lo);
                last = rps;
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "no fleet step function in the plan");
}

#[test]
fn capacity_pairs_each_configuration_with_its_own_simulation() {
    let report = json(&planner(&[
        "capacity",
        "scenarios/overnight-batch.toml",
        "--format",
        "json",
        "--quiet",
    ]));
    let mut fleets = 0;
    for (tier, rows) in report.as_object().unwrap() {
        for r in rows.as_array().unwrap() {
            // A configuration whose weights or batch do not fit in memory
            // cannot be simulated either.
            let memory_bound =
                r["analytic"]["status"] == "cannot" && r["analytic"]["best_ttft_ms"].is_null();
            if memory_bound {
                assert!(
                    r["simulated"].is_null() || r["simulated"]["status"] == "cannot",
                    "{tier}: {r}"
                );
            }
            if let Some(fleet) = r.get("fleet") {
                // A fleet either starts at what one replica serves, or at
                // zero when only a fleet pools the tier's bursts.
                let first = fleet["points"][0]["max_rps"].as_f64().unwrap();
                match r["simulated"]["status"].as_str() {
                    Some("serves") => assert!(first > 0.0, "{tier}: {r}"),
                    _ => assert_eq!(first, 0.0, "{tier}: {r}"),
                }
                fleets += 1;
            }
        }
    }
    assert!(fleets > 0);
}

/// Per-replica capacity of the largest fleet of `scenario`'s only
/// configuration on its only tier, with `seed`; none when it has no fleet.
fn pooled_rps_per_replica(scenario: &str, seed: u32) -> Option<f64> {
    let seed = format!("simulation.capacity_seed={seed}");
    let report = json(&planner(&[
        "capacity", scenario, "--set", &seed, "--format", "json", "--quiet",
    ]));
    let (_, rows) = report.as_object().unwrap().iter().next().unwrap();
    let points = rows[0].get("fleet")?["points"].as_array()?.clone();
    let last = points.last()?;
    Some(last["max_rps"].as_f64()? / last["replicas"].as_f64()?)
}

#[test]
fn a_bursty_tier_gets_a_fleet_of_similar_capacity_on_every_seed() {
    // One MI300X TP2 replica on the Azure code trace sits at the 99% target
    // even at a trickle: the bursts' long prompts wait for each other, and
    // the share they take is about 1%. A fleet pools them, on every seed (it
    // once had no fleet at all on seed 5, so the plan's choice between
    // configurations turned on the seed). The four-replica fleet's capacity
    // still moves with the capacity seed at the default run length: 0.86-1.16 req/s
    // per replica over seeds 1-5 (docs/simulator.md, "Seed sensitivity").
    let scenario = "tests/fixtures/ok/burst-pooling.toml";
    let rates: Vec<f64> = (1..=5)
        .map(|seed| {
            pooled_rps_per_replica(scenario, seed)
                .unwrap_or_else(|| panic!("a fleet on seed {seed}"))
        })
        .collect();
    let (lo, hi) = rates.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &r| {
        (lo.min(r), hi.max(r))
    });
    assert!(lo > 0.5, "{rates:?} req/s per replica");
    assert!(hi / lo < 1.5, "{rates:?} req/s per replica");
}

#[test]
fn a_bursty_tier_meets_its_target_and_three_quarters_of_its_fleet_misses_it() {
    // The Azure code trace: bursts of hundreds of requests a minute between
    // empty minutes.
    let dir = temp_dir("bursty-three-quarters");
    let plan_path = dir.join("plan.json");
    let plan = json(&planner(&[
        "solve",
        "tests/fixtures/ok/code-burst.toml",
        "--format",
        "json",
        "--quiet",
        "--plan-out",
        plan_path.to_str().unwrap(),
    ]));
    let solved = &plan["verification"]["tiers"]["code"];
    assert_eq!(solved["meets_target"], true, "{solved}");
    let mut file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan_path).unwrap()).unwrap();
    let mut largest = 0;
    for c in file["tiers"]["code"]["configurations"]
        .as_array_mut()
        .unwrap()
    {
        for n in c["replicas_by_slot"].as_array_mut().unwrap() {
            let full = n.as_u64().unwrap();
            largest = largest.max(full);
            *n = serde_json::json!(full * 3 / 4);
        }
    }
    assert!(largest >= 4, "a fleet of {largest} replicas");
    let scaled = dir.join("three-quarters.json");
    std::fs::write(&scaled, file.to_string()).unwrap();
    let replay = json(&planner(&[
        "simulate",
        "tests/fixtures/ok/code-burst.toml",
        "--plan",
        scaled.to_str().unwrap(),
        "--slots",
        "sample",
        "--format",
        "json",
        "--quiet",
        // It misses (what this checks): exit 0 with the report.
        "--accept-miss",
    ]));
    let smaller = &replay["verification"]["tiers"]["code"];
    assert_eq!(smaller["meets_target"], false, "{smaller}");
    assert!(
        smaller["attainment"].as_f64().unwrap() < solved["attainment"].as_f64().unwrap(),
        "{smaller} vs {solved}"
    );
}

#[test]
fn capacity_filters_by_tier_and_gpu_and_sums_up_each_tier() {
    let all = stdout(&planner(&[
        "capacity",
        "tests/fixtures/ok/tiny.toml",
        "--quiet",
    ]));
    let out = planner(&[
        "capacity",
        "tests/fixtures/ok/tiny.toml",
        "--quiet",
        "--tier",
        "chat",
        "--gpu",
        "l40s",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.lines().count() < all.lines().count(), "{text}");
    for line in text
        .lines()
        .filter(|l| l.contains(" tp") && !l.contains("configurations:") && !l.contains("saturated"))
    {
        assert!(line.trim_start().starts_with("l40s "), "{line}");
    }
    assert!(
        text.contains("configurations:") && text.contains(" by simulation"),
        "{text}"
    );
    let bad = planner(&[
        "capacity",
        "tests/fixtures/ok/tiny.toml",
        "--quiet",
        "--gpu",
        "tpu",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("its types: "), "{}", stderr(&bad));
}

#[test]
fn the_replay_seed_leaves_the_capacity_figures_and_the_purchase_alone() {
    // overnight-batch: seeds 1-5 once cost 115.06-119.90 USD (4.2%) because
    // each seed drew its own capacity figures (an L4 chat replica 3.34 or
    // 3.08 req/s) and sized its plan on its own replays. The figures and
    // the rounds' replays are now drawn from `capacity_seed`: another replay
    // seed checks the same plan on its own draw of the traffic.
    let solve = |set: &str| {
        json(&planner(&[
            "solve",
            "scenarios/overnight-batch.toml",
            "--format",
            "json",
            "--quiet",
            "--set",
            set,
        ]))
    };
    let one = solve("simulation.seed=1");
    let other = solve("simulation.seed=4");
    assert!(
        one.get("design_check").is_none(),
        "one seed sizes and checks"
    );
    let check = &other["design_check"];
    assert_eq!(check["design_seed"], 1);
    assert_eq!(check["seed"], 4);
    assert_eq!(check["met"], true, "{check}");
    assert_eq!(check["missed"], serde_json::json!([]));
    for key in [
        "capacity",
        "reserved",
        "on_demand",
        "total_cost_usd",
        "rounds",
    ] {
        assert_eq!(
            one[key], other[key],
            "{key}: the same plan, sized the same way"
        );
    }
    assert!(other["missed_targets"].as_array().unwrap().is_empty());
    assert_eq!(other["purchase"]["seed"], 4);
    assert_eq!(other["purchase"]["capacity_seed"], 1);
    assert_eq!(other["verification"]["seed"], 4);
    assert_ne!(
        one["verification"], other["verification"],
        "seed 4 is replayed on its own draw"
    );
    // The report says which draw sized the plan and which checked it.
    let text = stdout(&planner(&[
        "solve",
        "scenarios/overnight-batch.toml",
        "--quiet",
        "--set",
        "simulation.seed=4",
    ]));
    for line in [
        "  checked    the plan sized on capacity seed 1's replays meets every target, in every window, on seed 4's replay",
        "REPLAY (trace replay against the plan, seed 4)",
        "  rounds (on the replays of capacity seed 1, which sized the plan; per tier:",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
    // The capacity seed draws the figures anew.
    let drawn = json(&planner(&[
        "capacity",
        "scenarios/overnight-batch.toml",
        "--format",
        "json",
        "--quiet",
        "--set",
        "simulation.capacity_seed=2",
    ]));
    let first = json(&planner(&[
        "capacity",
        "scenarios/overnight-batch.toml",
        "--format",
        "json",
        "--quiet",
    ]));
    assert_ne!(first, drawn);
}
