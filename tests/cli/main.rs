//! The `cli` integration tests: they drive the real `planner` executable
//! (every shipped scenario, one bad-input fixture per error class with its
//! message snapshotted, the trace tools, determinism), one module per command
//! or topic. This file holds the helpers the modules share.

mod aggregate;
mod bench;
mod calibrate;
mod capacity;
mod disaggregated;
mod docs;
mod engines;
mod errors;
mod goodput;
mod hardened;
mod help;
mod html;
mod layout;
mod moe;
mod mutation;
mod outputs;
mod perf;
mod pool;
mod predict;
mod sessions;
mod set;
mod simulate;
mod solve;
mod solve_commitment;
mod speculative;
mod sweep;
mod trace;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn planner(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_planner"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        // Simulated capacities are deterministic: every test may share them.
        .env(
            "PLANNER_CACHE_DIR",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/capacity-cache"),
        )
        .output()
        .expect("the planner binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "planner failed: {}", stderr(o));
    serde_json::from_slice(&o.stdout).expect("stdout is JSON")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("planner-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The names in `dir`, sorted (temporary files included).
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Solves a shipped scenario and checks the plan against its own inputs.
fn check_shipped(scenario: &str) -> serde_json::Value {
    check_shipped_with(scenario, &[])
}

/// [`check_shipped`] with extra arguments (`--set` overrides).
fn check_shipped_with(scenario: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["solve", scenario, "--format", "json", "--quiet"];
    args.extend_from_slice(extra);
    let plan = json(&planner(&args));
    for key in [
        "total_cost_usd",
        "horizon_hours",
        "reserved",
        "on_demand",
        "tiers",
        "api_share",
        "baselines",
        "cost_per_1k_output_tokens_usd",
        "demand",
        "capacity",
        "prices",
    ] {
        assert!(plan.get(key).is_some(), "{scenario}: missing key `{key}`");
    }
    // Tiers' costs add up to the total; the commitment is a year of the
    // reserved GPUs at their reserved price (the list price of the offer
    // bought, when several are listed).
    let total = plan["total_cost_usd"].as_f64().unwrap();
    let tier_sum: f64 = plan["unit_costs"]["tiers"]
        .as_object()
        .unwrap()
        .values()
        .map(|t| t["cost_usd"].as_f64().unwrap())
        .sum();
    assert!(
        (tier_sum - total).abs() <= 1e-6 * total.max(1.0),
        "{scenario}: {tier_sum} vs {total}"
    );
    let yearly: f64 = plan["reserved"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(gpu, n)| {
            let price = &plan["prices"]["gpus"][gpu];
            let list = price["reserved_offer"]["usd_per_gpu_hour"]
                .as_f64()
                .or(price["reserved_usd_per_gpu_hour"].as_f64());
            n.as_f64().unwrap() * list.unwrap_or(0.0) * 8760.0
        })
        .sum();
    let committed = plan["commitment"]["usd_per_year"].as_f64().unwrap();
    assert!(
        (yearly - committed).abs() <= 1e-6 * yearly.max(1.0),
        "{scenario}"
    );
    // A gap the report claims is a gap the plan's bound proves.
    let solver = &plan["solver"];
    if matches!(solver["status"].as_str(), Some("optimal" | "gap-limit")) {
        let (gap, tolerance) = (
            solver["proven_gap"].as_f64().unwrap(),
            solver["mip_gap_tolerance"].as_f64().unwrap(),
        );
        assert!(
            gap <= tolerance + 1e-9,
            "{scenario}: status {} but proven gap {gap} over {tolerance}",
            solver["status"]
        );
    }
    // The plan was replayed; a tier below its target only after the last
    // allowed round.
    let rounds = plan["rounds"].as_array().unwrap();
    assert!(!rounds.is_empty(), "{scenario}: no replay round");
    for (tier, v) in plan["verification"]["tiers"].as_object().unwrap() {
        for key in [
            "attainment",
            "ttft_p99_ms",
            "tpot_p99_ms",
            "goodput_output_tokens",
            "cost_per_1k_goodput_tokens_usd",
        ] {
            assert!(v.get(key).is_some(), "{scenario}: {tier} lacks `{key}`");
        }
        let met = v["attainment"].as_f64().unwrap() >= v["target"].as_f64().unwrap();
        assert_eq!(v["meets_target"].as_bool(), Some(met));
        assert!(
            met || rounds.len() == 4,
            "{scenario}: {tier} misses its target after {} rounds",
            rounds.len()
        );
        assert!(
            v["goodput_output_tokens"].as_u64() <= v["output_tokens"].as_u64(),
            "{scenario}: {tier} goodput above output"
        );
        // A tier of four or more replicas lands within a point of its
        // target, unless its fleets are as large as stability requires
        // (offered work at `max_utilisation` of their throughput), where
        // the latency limits do not bind.
        let configs = plan["tiers"][tier]["configurations"].as_array().unwrap();
        let slots = plan["on_demand"].as_array().unwrap().len();
        let largest = (0..slots)
            .map(|s| {
                configs
                    .iter()
                    .map(|c| c["replicas_by_slot"][s].as_u64().unwrap())
                    .sum::<u64>()
            })
            .max()
            .unwrap_or(0);
        let over = v["attainment"].as_f64().unwrap() > v["target"].as_f64().unwrap() + 0.01;
        if largest >= 4 && over {
            for c in configs {
                let entry = plan["capacity"][tier]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|e| {
                        [
                            "gpu_type",
                            "tensor_parallel",
                            "max_batch",
                            "max_batched_tokens",
                            "precision",
                        ]
                        .iter()
                        .all(|k| e["config"][k] == c[k])
                    })
                    .expect("the configuration's capacity entry");
                let n = c["replicas_by_slot"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap())
                    .max()
                    .unwrap() as usize;
                let points = entry["fleet"]["points"].as_array().unwrap();
                let point = &points[(n - 1).min(points.len() - 1)];
                assert_eq!(
                    point["binding"], "stability",
                    "{scenario}: {tier} at {} is over its band: {point}",
                    v["attainment"]
                );
            }
        }
    }
    let total = plan["total_cost_usd"].as_f64().unwrap();
    assert!(total > 0.0);
    // The optimum is never dearer than the simple alternatives it could also
    // choose (up to the solver's gap tolerance).
    let gap = plan["solver"]["mip_gap_tolerance"].as_f64().unwrap();
    for name in [
        "all-on-demand",
        "all-reserved-for-peak",
        "best-single-gpu-type",
    ] {
        let b = &plan["baselines"][name];
        if let Some(cost) = b["total_cost_usd"].as_f64() {
            assert!(
                total <= cost * (1.0 + gap) + 1e-6,
                "{scenario}: plan {total} dearer than {name} {cost}"
            );
        }
    }
    // Every slot's peak demand is covered by replicas (at their SLO capacity)
    // plus the API share; a deadline tier's mean volume is covered by the
    // end of its deadline.
    let slots = plan["on_demand"].as_array().unwrap().len();
    for (tier, t) in plan["tiers"].as_object().unwrap() {
        let peak = plan["demand"][tier]["peak_rps"].as_array().unwrap();
        let mean = plan["demand"][tier]["mean_rps"].as_array().unwrap();
        let replicas = |s: usize| -> f64 {
            t["configurations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    // A requested spot replica counts for its expected yield.
                    let spot = c["spot_replicas_by_slot"][s].as_f64().unwrap_or(0.0)
                        * c["spot_yield_share"].as_f64().unwrap_or(0.0);
                    c["rps_per_replica_by_slot"][s].as_f64().unwrap()
                        * (c["replicas_by_slot"][s].as_f64().unwrap() + spot)
                })
                .sum()
        };
        let api = |s: usize| t["api_share_by_slot"][s].as_f64().unwrap();
        if let Some(hours) = plan["slo"][tier]["deadline_hours"].as_f64() {
            let wait = ((hours / plan["slot_hours"].as_f64().unwrap()).floor() as usize).max(1) - 1;
            let (mut arrived, mut capacity) = (0.0, 0.0);
            let mut counted = 0;
            for (s, m) in mean.iter().enumerate().take(slots) {
                arrived += m.as_f64().unwrap() * (1.0 - api(s));
                while counted <= (s + wait).min(slots - 1) {
                    capacity += replicas(counted);
                    counted += 1;
                }
                assert!(
                    capacity >= arrived * (1.0 - 1e-6),
                    "{scenario}: {tier}'s volume up to slot {s} is not served by its deadline"
                );
            }
            continue;
        }
        for (s, p) in peak.iter().enumerate().take(slots) {
            let p = p.as_f64().unwrap();
            let covered = replicas(s) + api(s) * p;
            assert!(
                covered >= p * (1.0 - 1e-6),
                "{scenario}: {tier} slot {s} uncovered"
            );
        }
    }
    // GPUs on hand (reserved + on demand) hold every replica in every slot.
    for s in 0..slots {
        let mut used: std::collections::BTreeMap<String, f64> = std::collections::BTreeMap::new();
        for t in plan["tiers"].as_object().unwrap().values() {
            for c in t["configurations"].as_array().unwrap() {
                *used
                    .entry(c["gpu_type"].as_str().unwrap().into())
                    .or_default() += c["gpus_per_replica"].as_f64().unwrap()
                    * c["replicas_by_slot"][s].as_f64().unwrap();
            }
        }
        for (gpu, n) in used {
            let owned = plan["reserved"][&gpu].as_f64().unwrap()
                + plan["on_demand"][s][&gpu].as_f64().unwrap_or(0.0);
            assert!(
                owned >= n,
                "{scenario}: slot {s} uses {n} {gpu} GPUs but holds {owned}"
            );
        }
    }
    plan
}

/// Solves `scenario` (JSON) with extra `--set` changes.
/// GPUs a plan's JSON reserves, of every type.
fn reserved_gpus(plan: &serde_json::Value) -> u64 {
    plan["reserved"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum()
}

/// Every launch command of a plan's `how_to_run`, in its order.
fn launch_commands(plan: &serde_json::Value) -> Vec<String> {
    plan["how_to_run"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["launch_command"].as_str().unwrap().to_string())
        .collect()
}

fn solve_json(scenario: &str, sets: &[&str]) -> serde_json::Value {
    let mut args = vec!["solve", scenario, "--format", "json", "--quiet"];
    for s in sets {
        args.extend(["--set", s]);
    }
    json(&planner(&args))
}

/// [`solve_json`] with both seeds (`simulation.seed`, `simulation.capacity_seed`)
/// at `seed` and `sets` after them; the plan must meet every target.
fn solve_met_on_seed(scenario: &str, seed: u64, sets: &[&str]) -> serde_json::Value {
    let seeds = [
        format!("simulation.seed={seed}"),
        format!("simulation.capacity_seed={seed}"),
    ];
    let mut all: Vec<&str> = seeds.iter().map(String::as_str).collect();
    all.extend_from_slice(sets);
    let plan = solve_json(scenario, &all);
    assert!(
        plan["missed_targets"].as_array().unwrap().is_empty(),
        "{scenario} {all:?}"
    );
    plan
}
