//! The sessions prefix model: a hash-less trace's requests as turns of
//! conversations, each turn's prompt beginning with the previous one's.

use crate::{planner, solve_met_on_seed, stderr};

fn chat_hit(plan: &serde_json::Value) -> Option<f64> {
    plan["verification"]["tiers"]["chat"]["prefix_cache"]["hit_rate"].as_f64()
}

/// On overnight-batch's Azure conversation trace (no block hashes), turns
/// 20 s apart give the chat tier hits, and never a dearer plan than no
/// cache, on three seeds; the bulk tier, with no model stated, finds
/// nothing; a cache that is not on counts nothing.
#[test]
fn sessions_give_a_hashless_trace_hits_and_never_a_dearer_plan() {
    let sessions = ["demand[0].session_turns=8", "demand[0].session_gap_s=20"];
    for seed in 1..=3 {
        let solve =
            |extra: &[&str]| solve_met_on_seed("scenarios/overnight-batch.toml", seed, extra);
        let cached = solve(&[&["simulation.prefix_caching=true"][..], &sessions].concat());
        let hit = chat_hit(&cached).unwrap();
        assert!(hit > 0.2, "seed {seed}: {hit}");
        // The report says the hits are a stated model's.
        let source = cached["verification"]["tiers"]["chat"]["prefix_source"].as_str();
        assert!(
            source.unwrap().contains("stated sessions of up to 8 turns"),
            "{source:?}"
        );
        assert_eq!(
            cached["verification"]["tiers"]["bulk"]["prefix_cache"]["hit_rate"],
            0.0
        );
        let plain = solve(&sessions);
        assert_eq!(chat_hit(&plain), None);
        let cost = |p: &serde_json::Value| p["total_cost_usd"].as_f64().unwrap();
        assert!(
            cost(&cached) <= cost(&plain) * 1.01 + 1e-9,
            "seed {seed}: {} with sessions cached, {} without",
            cost(&cached),
            cost(&plain)
        );
    }
}

#[test]
fn a_sessions_model_out_of_its_bounds_or_beside_another_is_located() {
    let out = planner(&[
        "solve",
        "scenarios/overnight-batch.toml",
        "--set",
        "demand[0].session_turns=1",
        "--set",
        "demand[1].session_gap_s=30",
        "--set",
        "demand[1].shared_prefix_tokens=600",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("demand[0].session_turns"), "{err}");
    assert!(
        err.contains("demand[1].session_gap_s") && err.contains("give `session_turns` too"),
        "{err}"
    );
    let out = planner(&[
        "solve",
        "scenarios/overnight-batch.toml",
        "--set",
        "demand[0].session_turns=4",
        "--set",
        "demand[0].shared_prefix_tokens=600",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("give one prefix model"), "{err}");
    // Stated without the cache: planned on, with a warning that it counts
    // nothing.
    let out = planner(&[
        "solve",
        "scenarios/overnight-batch.toml",
        "-q",
        "--format",
        "json",
        "--set",
        "demand[0].session_turns=4",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(
        err.contains("demand[0].session_turns states a prefix model")
            && err.contains("prefix_caching = true"),
        "{err}"
    );
    // An aggregate keeps neither the requests' order nor their times.
    let out = planner(&[
        "solve",
        "tests/fixtures/ok/tiny-aggregate.toml",
        "--set",
        "demand[0].session_turns=3",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("demand[0].session_turns") && err.contains("an aggregate does not keep"),
        "{err}"
    );
}
