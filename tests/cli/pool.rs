//! Several models on one pool of GPUs (`[[models]]`): the plan by model,
//! each model planned alone beside it, the one-model form unchanged, and
//! the pool's own mistakes located.

use crate::{check_shipped, planner, solve_json, stderr, stdout};

const POOL: &str = "tests/fixtures/ok/pool.toml";

/// The pooled plan's cost and the sum of each model planned alone.
fn pooled_and_alone(plan: &serde_json::Value) -> (f64, f64) {
    let alone = &plan["baselines"]["each-model-alone"];
    (
        plan["total_cost_usd"].as_f64().unwrap(),
        alone["total_cost_usd"].as_f64().unwrap(),
    )
}

#[test]
fn a_pooled_fleet_is_planned_by_model_beside_each_model_alone() {
    let plan = solve_json(POOL, &[]);
    assert_eq!(plan["tiers"]["assistant"]["model"], "small");
    assert_eq!(plan["tiers"]["chat"]["model"], "large");
    assert_eq!(plan["model"]["id"], "pool");
    assert_eq!(plan["models"]["large"]["id"], "llama-3.1-70b");
    let pool = &plan["purchase"]["pool"];
    let models = pool["models"].as_object().unwrap();
    assert_eq!(models.keys().collect::<Vec<_>>(), ["large", "small"]);
    // The models' costs are their tiers' and add up to the plan's.
    let sum: f64 = models
        .values()
        .map(|m| m["cost_usd"].as_f64().unwrap())
        .sum();
    let total = plan["total_cost_usd"].as_f64().unwrap();
    assert!((sum - total).abs() < 1e-6 * total, "{sum} vs {total}");
    assert_eq!(models["small"]["tiers"][0], "assistant");
    // Each model alone, with its own cost, adds up to the alternative.
    let alone = &plan["baselines"]["each-model-alone"];
    let parts: f64 = ["small", "large"]
        .iter()
        .map(|m| alone["parts"][m].as_f64().unwrap())
        .sum();
    assert!((parts - alone["total_cost_usd"].as_f64().unwrap()).abs() < 1e-9);
    assert_eq!(
        models["large"]["alone_usd"].as_f64(),
        alone["parts"]["large"].as_f64()
    );
    // Per GPU type: each model's GPUs slot by slot, never more than held.
    let h100 = &pool["gpu_types"]["h100-sxm"];
    let slots = plan["on_demand"].as_array().unwrap().len();
    let reserved = plan["reserved"]["h100-sxm"].as_u64().unwrap();
    for t in 0..slots {
        let held: u64 = h100["gpus_by_model"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v[t].as_u64().unwrap())
            .sum();
        let rented = plan["on_demand"][t]["h100-sxm"].as_u64().unwrap_or(0);
        assert!(held <= reserved + rented, "slot {t}: {held} GPUs held");
    }
    // The CSV schedule names each model's GPUs; the text and HTML the pool.
    let csv = stdout(&planner(&["solve", POOL, "--format", "csv", "--quiet"]));
    let header = csv.lines().next().unwrap();
    assert!(
        header.contains("model_small_gpus,model_large_gpus")
            || header.contains("model_large_gpus,model_small_gpus"),
        "{header}"
    );
    let text = stdout(&planner(&["solve", POOL, "--quiet"]));
    assert!(text.contains("  pool       large (chat): "), "{text}");
    assert!(text.contains("each model planned alone costs"), "{text}");
    let html = stdout(&planner(&["solve", POOL, "--format", "html", "--quiet"]));
    assert!(html.contains("The pool by model"));
    // A model's keys take `--set` like any other.
    let cheaper = solve_json(POOL, &["models[0].api.usd_per_million_input_tokens=0.05"]);
    let api = &cheaper["prices"]["model_api"]["small"];
    assert_eq!(api["usd_per_million_input_tokens"].as_f64(), Some(0.05));
    assert!(cheaper["prices"]["model_api"].get("large").is_none());
}

/// One model listed as `[[models]]` is the `[model]` table: the same plan,
/// byte for byte.
#[test]
fn one_model_listed_plans_as_the_model_table_does() {
    let table = planner(&["solve", "tests/fixtures/ok/tiny.toml", "--format", "json"]);
    let listed = planner(&[
        "solve",
        "tests/fixtures/ok/tiny-models.toml",
        "--format",
        "json",
    ]);
    assert!(table.status.success() && listed.status.success());
    assert_eq!(stdout(&table), stdout(&listed));
}

/// The pooled plan never costs more than each model planned alone and
/// added up, beyond the alternatives' solver gap, on seeds 1-3 (the price
/// for complexity set to zero: the alternatives leave it out).
#[test]
fn pooling_never_costs_more_than_each_model_alone_on_any_seed() {
    for seed in 1..=3 {
        let s = format!("simulation.seed={seed}");
        let c = format!("simulation.capacity_seed={seed}");
        let plan = solve_json(
            POOL,
            &[
                &s,
                &c,
                "planning.usd_per_deployment_month=0",
                "planning.usd_per_gpu_vendor_month=0",
            ],
        );
        let (pooled, alone) = pooled_and_alone(&plan);
        assert!(
            pooled <= alone * 1.03,
            "seed {seed}: pooled {pooled} vs alone {alone}"
        );
    }
}

/// Two copies of one model, each with the demand, never cost less than one
/// model with both demands on one tier: a replica of one model cannot serve
/// the other copy's requests, so pooling them as one model can only help.
#[test]
fn one_model_with_both_demands_never_costs_more_than_two_copies() {
    let zero = [
        "planning.usd_per_deployment_month=0",
        "planning.usd_per_gpu_vendor_month=0",
    ];
    let copies = solve_json(
        POOL,
        &[
            zero[0],
            zero[1],
            "models[1].profile=llama-3.1-8b",
            "demand[1].shift_hours=0",
            "tiers[1].ttft_ms=2000",
        ],
    );
    let one = solve_json("tests/fixtures/ok/pool-doubled.toml", &zero);
    let (copies_usd, _) = pooled_and_alone(&copies);
    let one_usd = one["total_cost_usd"].as_f64().unwrap();
    assert!(one_usd <= copies_usd * 1.01, "{one_usd} vs {copies_usd}");
}

#[test]
fn the_shipped_fleet_pools_three_models() {
    let plan = check_shipped("scenarios/fleet.toml");
    let pool = &plan["purchase"]["pool"];
    assert_eq!(pool["models"].as_object().unwrap().len(), 3);
    let (pooled, alone) = pooled_and_alone(&plan);
    assert!(pooled < alone, "pooled {pooled} vs alone {alone}");
    assert!(plan["missed_targets"].as_array().unwrap().is_empty());
}

fn bad(fixture: &str) -> String {
    let out = planner(&["solve", &format!("tests/fixtures/bad/{fixture}.toml")]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
    stderr(&out)
}

#[test]
fn a_pools_mistakes_are_located_at_once() {
    let err = bad("pool-models");
    for said in [
        "with `[[models]]` each model states its own API offer",
        "two models have the id `small`",
        "did you mean `small`?",
        "tier `bulk` names no model",
        "no offered GPU type can hold `Llama 3.1 405B`",
        "but its model `huge` has no API offer",
    ] {
        assert!(err.contains(said), "{said}: {err}");
    }
    insta::assert_snapshot!("pool_models", err);
    insta::assert_snapshot!("pool_both", bad("pool-both"));
    let unserved = bad("pool-unserved");
    assert!(
        unserved.contains("models[2]: model `unused` serves no tier"),
        "{unserved}"
    );
}

/// Each tier's cost is the GPU spend where it spends it, as docs/model.md's
/// cost-per-token formula reads: every GPU type's spend in every slot
/// (reserved at the reserved price, rented at the on-demand price) split by
/// the tiers' GPUs there; recomputed here from the plan's own JSON.
#[test]
fn each_tiers_cost_is_the_spend_on_the_gpus_it_occupies_slot_by_slot() {
    let plan = solve_json(POOL, &[]);
    assert_eq!(plan["costs"]["api_usd"].as_f64(), Some(0.0));
    let hours = plan["slot_hours"].as_f64().unwrap();
    let price = |gpu: &str, key: &str| plan["prices"]["gpus"][gpu][key].as_f64().unwrap_or(0.0);
    let tiers = plan["tiers"].as_object().unwrap();
    let slots = plan["on_demand"].as_array().unwrap().len();
    // (tier, type) → GPUs per slot.
    let mut gpus: std::collections::BTreeMap<(String, String), Vec<f64>> =
        std::collections::BTreeMap::new();
    for (name, tier) in tiers {
        for c in tier["configurations"].as_array().unwrap() {
            let gpu = c["gpu_type"].as_str().unwrap().to_string();
            let per = c["gpus_per_replica"].as_f64().unwrap();
            let row = gpus.entry((name.clone(), gpu)).or_insert(vec![0.0; slots]);
            for (t, n) in c["replicas_by_slot"].as_array().unwrap().iter().enumerate() {
                row[t] += n.as_f64().unwrap() * per;
            }
        }
    }
    let mut expected: std::collections::BTreeMap<&str, f64> = std::collections::BTreeMap::new();
    for ((name, gpu), row) in &gpus {
        let reserved = plan["reserved"][gpu.as_str()].as_f64().unwrap_or(0.0);
        for (t, &mine) in row.iter().enumerate() {
            let all: f64 = gpus
                .iter()
                .filter(|((_, g), _)| g == gpu)
                .map(|(_, r)| r[t])
                .sum();
            if mine > 0.0 {
                let rented = plan["on_demand"][t][gpu.as_str()].as_f64().unwrap_or(0.0);
                let spend = (reserved * price(gpu, "reserved_usd_per_gpu_hour")
                    + rented * price(gpu, "on_demand_usd_per_gpu_hour"))
                    * hours;
                *expected.entry(name.as_str()).or_default() += spend * mine / all;
            }
        }
    }
    let total = plan["total_cost_usd"].as_f64().unwrap();
    assert!((expected.values().sum::<f64>() - total).abs() < 1e-6 * total);
    for (name, want) in expected {
        let got = plan["unit_costs"]["tiers"][name]["cost_usd"]
            .as_f64()
            .unwrap();
        assert!(
            (got - want).abs() < 1e-6 * total,
            "{name}: {got} against {want}"
        );
    }
}
