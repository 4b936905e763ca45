//! Unit tests of the fleet's replay.

use super::*;
use crate::perf::step::tests::{h100, llama8b};
use crate::perf::{PerfModel, StepModel, StepTime};
use crate::profiles::Scheduler;
use crate::sim::renewal::renewal;
use crate::sim::request::Arrival;
use crate::sim::router::Router;

fn spec(decode_runs: bool, max_batch: u32, kv_capacity_tokens: u64) -> ReplicaSpec {
    ReplicaSpec {
        perf: StepModel::Roofline(PerfModel::new(
            &h100(),
            &llama8b(),
            1,
            crate::profiles::precision::Precision::Bf16,
        )),
        max_batch,
        max_batched_tokens: 2048,
        rank_tokens: 2048,
        kv_capacity_tokens,
        scheduler: Scheduler::DecodeFirstChunked,
        reserve_output_kv: false,
        decode_runs,
        recv_interval_steps: 1,
        split: None,
    }
}

fn fleet(spec: ReplicaSpec, replicas: u32, api_share: f64) -> Fleet {
    let tier = FleetTier {
        name: "t".into(),
        limits: Limits {
            ttft_ms: 500.0,
            tpot_ms: 50.0,
        },
        api_share_by_slot: vec![api_share],
        mean_output_tokens: 200.0,
        deadline_s: None,
    };
    Fleet::single(3600.0, tier, spec, replicas, Router::LeastWork)
}

#[test]
fn a_lone_request_takes_one_prefill_and_its_decode_steps() {
    let f = fleet(spec(true, 8, 100_000), 1, 0.0);
    let a = Arrival {
        time_s: 1.0,
        tier: 0,
        input_tokens: 1000,
        output_tokens: 101,
        chain: crate::traces::block_chains::NO_CHAIN,
    };
    let r = simulate(&f, 0..1, [a], 1, |_| {});
    let perf = &f.groups[0].spec.perf;
    let prefill_ms = perf.prefill_s(1000.0) * 1e3;
    let t = &r.tiers[0];
    assert_eq!((t.requests, t.served_requests, t.met_both), (1, 1, 1));
    let ttft = t.ttft.quantile_ms(1.0);
    assert!((ttft - prefill_ms).abs() < 1e-9, "{ttft} vs {prefill_ms}");
    // 100 decode steps; context 1001 at the first, growing by one.
    let decode_ms: f64 = (0..100)
        .map(|j| perf.decode_step_s(1.0, 1001.0 + f64::from(j)) * 1e3)
        .sum();
    let e2e = t.e2e.quantile_ms(1.0);
    assert!((e2e - prefill_ms - decode_ms).abs() < 1e-6, "{e2e}");
    // One arrival, one slot start, the prefill step and one decode run.
    assert_eq!(r.events, 4);
}

/// Ten requests of 500 prompt and 50 output tokens, one a second from 1 s.
fn ten_short_arrivals() -> Vec<Arrival> {
    (0..10)
        .map(|i| Arrival {
            time_s: 1.0 + f64::from(i),
            tier: 0,
            input_tokens: 500,
            output_tokens: 50,
            chain: crate::traces::block_chains::NO_CHAIN,
        })
        .collect()
}

#[test]
fn a_deadline_tier_waits_for_the_slot_that_serves_it_and_misses_past_its_deadline() {
    // Ten requests in the first (10-minute) slot, which has no replica;
    // the next slot has one, with room for all of them.
    let mut f = fleet(spec(true, 16, 1_000_000), 0, 0.0);
    f.slot_s = 600.0;
    f.tiers[0].limits.ttft_ms = 60_000.0;
    f.tiers[0].api_share_by_slot = vec![0.0, 0.0];
    f.groups[0].replicas_by_slot = vec![0, 1];
    let arrivals = ten_short_arrivals();
    // Without a deadline they find no replica and are lost.
    let routed = simulate(&f, 0..2, arrivals.clone(), 1, |_| {});
    assert_eq!(routed.tiers[0].unserved_requests, 10);
    // With an hour's deadline they wait for slot 1 and all meet it.
    f.tiers[0].deadline_s = Some(3600.0);
    let held = simulate(&f, 0..2, arrivals.clone(), 1, |_| {});
    let t = &held.tiers[0];
    assert_eq!((t.served_requests, t.met_both, t.late), (10, 10, 0));
    assert_eq!(
        held.slots[0][0].met_both, 10,
        "counted in their arrival slot"
    );
    // With five minutes they are served ten minutes late: all miss.
    f.tiers[0].deadline_s = Some(300.0);
    let late = simulate(&f, 0..2, arrivals.clone(), 1, |_| {});
    let t = &late.tiers[0];
    assert_eq!((t.served_requests, t.met_both, t.late), (10, 0, 10));
    // Replayed alone, the first slot never gets a replica: unserved.
    let alone = simulate(&f, 0..1, arrivals, 1, |_| {});
    assert_eq!(alone.tiers[0].unserved_requests, 10);
}

#[test]
fn spot_replicas_are_granted_and_interrupted_and_drop_what_they_hold() {
    let mut f = fleet(spec(true, 64, 1_000_000), 2, 0.0);
    f.slot_s = 600.0;
    f.tiers[0].limits.ttft_ms = 60_000.0;
    f.tiers[0].limits.tpot_ms = 1_000.0;
    let arrivals: Vec<Arrival> = (0..600)
        .map(|i| Arrival {
            time_s: f64::from(i),
            tier: 0,
            input_tokens: 500,
            output_tokens: 400,
            chain: crate::traces::block_chains::NO_CHAIN,
        })
        .collect();
    let run = |f: &Fleet| simulate(f, 0..1, arrivals.clone(), 7, |_| {});
    // Always granted, never interrupted: like on-demand replicas.
    f.groups[0].spot = Some(Spot {
        availability: 1.0,
        interruptions_per_hour: 0.0,
    });
    let calm = run(&f);
    assert_eq!(calm.tiers[0].interrupted, 0);
    assert_eq!(calm.tiers[0].served_requests, 600);
    // Interrupted about every six minutes: both replicas go down within
    // the slot, dropping what they hold; later arrivals find none.
    f.groups[0].spot = Some(Spot {
        availability: 1.0,
        interruptions_per_hour: 10.0,
    });
    let stormy = run(&f);
    let t = &stormy.tiers[0];
    assert!(t.interrupted > 0, "{t:?}");
    assert!(t.unserved_requests > t.interrupted, "{t:?}");
    assert_eq!(t.served_requests + t.unserved_requests, 600);
    assert!(t.attainment() < 0.9);
    // Hardly ever granted: nothing is served.
    f.groups[0].spot = Some(Spot {
        availability: 1e-6,
        interruptions_per_hour: 0.0,
    });
    let none = run(&f);
    assert_eq!(none.tiers[0].served_requests, 0);
    assert_eq!(none.groups[0].up_s, 0.0);
}

fn prefill_first(mut spec: ReplicaSpec) -> ReplicaSpec {
    spec.scheduler = Scheduler::PrefillFirst;
    spec
}

/// Requests completed, in arrival order.
fn completed(f: &Fleet, arrivals: &[Arrival]) -> Vec<Completed> {
    let mut done = Vec::new();
    simulate_observed(f, 0..1, arrivals.to_vec(), 1, |_| {}, |c| done.push(*c));
    done.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
    done
}

#[test]
fn prefill_first_prefills_a_prompt_longer_than_the_budget_in_one_step() {
    let a = Arrival {
        time_s: 1.0,
        tier: 0,
        input_tokens: 5000,
        output_tokens: 1,
        chain: crate::traces::block_chains::NO_CHAIN,
    };
    let whole = fleet(prefill_first(spec(true, 8, 100_000)), 1, 0.0);
    let r = simulate(&whole, 0..1, [a], 1, |_| {});
    let prefill_ms = whole.groups[0].spec.perf.prefill_s(5000.0) * 1e3;
    let ttft = r.tiers[0].ttft.quantile_ms(1.0);
    assert!((ttft - prefill_ms).abs() < 1e-9, "{ttft} vs {prefill_ms}");
    // Arrival, slot start, one step.
    assert_eq!(r.events, 3);
    // Chunked, it takes three steps of at most 2048 tokens.
    let chunked = simulate(&fleet(spec(true, 8, 100_000), 1, 0.0), 0..1, [a], 1, |_| {});
    assert_eq!(chunked.events, 5);
}

#[test]
fn prefill_first_stalls_decodes_while_it_prefills() {
    let arrivals = [
        Arrival {
            time_s: 0.5,
            tier: 0,
            input_tokens: 1000,
            output_tokens: 201,
            chain: crate::traces::block_chains::NO_CHAIN,
        },
        Arrival {
            time_s: 1.0,
            tier: 0,
            input_tokens: 4000,
            output_tokens: 1,
            chain: crate::traces::block_chains::NO_CHAIN,
        },
    ];
    let f = fleet(prefill_first(spec(true, 8, 100_000)), 1, 0.0);
    let perf = &f.groups[0].spec.perf;
    let done = completed(&f, &arrivals);
    // The first request's 200 decode steps run at its own batch of one;
    // the second prompt's prefill step sits between two of them.
    let decode_ms: f64 = (0..200)
        .map(|j| perf.decode_step_s(1.0, 1001.0 + f64::from(j)) * 1e3)
        .sum();
    let expected = (perf.prefill_s(1000.0) + perf.prefill_s(4000.0)) * 1e3 + decode_ms;
    assert!(
        (done[0].e2e_ms - expected).abs() < 1e-6,
        "{} vs {expected}",
        done[0].e2e_ms
    );
    // The second waits at most one decode step before its whole prefill.
    let prefill_ms = perf.prefill_s(4000.0) * 1e3;
    let ttft = done[1].ttft_ms;
    assert!(ttft >= prefill_ms && ttft < prefill_ms + 20.0, "{ttft}");
    // Decode-first, the first request's decode rides along with the
    // chunks: it finishes sooner.
    let chunked = completed(&fleet(spec(true, 8, 100_000), 1, 0.0), &arrivals);
    assert!(chunked[0].e2e_ms < done[0].e2e_ms, "{}", chunked[0].e2e_ms);
}

/// `n` requests 10 s apart, each `input` prompt tokens and 10 output.
fn spaced(n: u32, input: u32) -> Vec<Arrival> {
    (0..n)
        .map(|i| Arrival {
            time_s: 10.0 * f64::from(i),
            tier: 0,
            input_tokens: input,
            output_tokens: 10,
            chain: crate::traces::block_chains::NO_CHAIN,
        })
        .collect()
}

#[test]
fn round_robin_takes_turns_where_least_work_takes_the_first_idle_replica() {
    // Requests far apart: every replica is idle when each arrives.
    let arrivals = spaced(6, 100);
    let mut f = fleet(spec(true, 8, 100_000), 3, 0.0);
    let busy = |f: &Fleet| -> Vec<bool> {
        let r = simulate(f, 0..1, arrivals.clone(), 1, |_| {});
        r.groups[0].replicas.iter().map(|&(_, b)| b > 0.0).collect()
    };
    assert_eq!(busy(&f), [true, false, false]);
    f.router = Router::RoundRobin;
    assert_eq!(busy(&f), [true, true, true]);
}

#[test]
fn round_robin_skips_replicas_too_small_for_the_request() {
    let mut f = fleet(spec(true, 8, 1_000), 2, 0.0);
    let mut big = f.groups[0].clone();
    big.spec.kv_capacity_tokens = 100_000;
    f.groups.push(big);
    f.router = Router::RoundRobin;
    let arrivals = spaced(4, 5_000);
    let r = simulate(&f, 0..1, arrivals, 1, |_| {});
    assert_eq!(r.tiers[0].served_requests, 4);
    assert_eq!(r.groups[0].busy_s, 0.0);
    let big: Vec<bool> = r.groups[1].replicas.iter().map(|&(_, b)| b > 0.0).collect();
    assert_eq!(big, [true, true]);
}

#[test]
fn decode_runs_match_step_by_step_simulation() {
    let lengths: Vec<(u32, u32)> = (0..64).map(|i| (200 + 97 * i, 20 + 13 * i)).collect();
    let arrivals = renewal(6.0, 2.0, &lengths, 3000, 11);
    // A small KV cache forces preemptions as well.
    for kv in [1_000_000, 12_000] {
        let by_runs = simulate(
            &fleet(spec(true, 32, kv), 2, 0.0),
            0..1,
            arrivals.clone(),
            5,
            |_| {},
        );
        let by_steps = simulate(
            &fleet(spec(false, 32, kv), 2, 0.0),
            0..1,
            arrivals.clone(),
            5,
            |_| {},
        );
        let (a, b) = (&by_runs.tiers[0], &by_steps.tiers[0]);
        assert_eq!(a.served_requests, 3000);
        assert_eq!(
            (a.met_ttft, a.met_tpot, a.met_both),
            (b.met_ttft, b.met_tpot, b.met_both)
        );
        for q in [0.5, 0.9, 0.99] {
            let rel = |x: f64, y: f64| (x - y).abs() / y.max(1e-9);
            assert!(rel(a.ttft.quantile_ms(q), b.ttft.quantile_ms(q)) < 0.011);
            assert!(rel(a.e2e.quantile_ms(q), b.e2e.quantile_ms(q)) < 0.011);
        }
        assert_eq!(
            by_runs.groups[0].preemptions,
            by_steps.groups[0].preemptions
        );
        assert!(
            by_runs.events * 5 < by_steps.events,
            "{} vs {}",
            by_runs.events,
            by_steps.events
        );
        if kv == 12_000 {
            assert!(by_runs.groups[0].preemptions > 0);
        }
    }
}

#[test]
fn every_request_is_accounted_for_and_the_seed_fixes_the_result() {
    let lengths = [(500, 100), (3000, 20), (50, 400)];
    let arrivals = renewal(20.0, 1.5, &lengths, 5000, 2);
    let f = fleet(spec(true, 16, 60_000), 3, 0.3);
    let r = simulate(&f, 0..1, arrivals.clone(), 9, |_| {});
    let t = &r.tiers[0];
    assert_eq!(t.requests, 5000);
    assert_eq!(
        t.api_requests + t.served_requests + t.unserved_requests,
        5000
    );
    assert!((t.api_requests as f64 / 5000.0 - 0.3).abs() < 0.03);
    let again = simulate(&f, 0..1, arrivals, 9, |_| {});
    assert_eq!(again.tiers[0].met_both, t.met_both);
    assert_eq!(again.events, r.events);
    assert!(r.groups[0].busy_s > 0.0 && r.groups[0].busy_s <= r.groups[0].up_s * 1.01);
}

#[test]
fn overload_misses_the_limits_and_more_replicas_recover() {
    let lengths = [(2000, 200)];
    let arrivals = renewal(30.0, 1.0, &lengths, 4000, 4);
    let one = simulate(
        &fleet(spec(true, 64, 400_000), 1, 0.0),
        0..1,
        arrivals.clone(),
        1,
        |_| {},
    );
    let four = simulate(
        &fleet(spec(true, 64, 400_000), 8, 0.0),
        0..1,
        arrivals,
        1,
        |_| {},
    );
    assert!(
        one.tiers[0].attainment() < 0.5,
        "{}",
        one.tiers[0].attainment()
    );
    assert!(
        four.tiers[0].attainment() > 0.99,
        "{}",
        four.tiers[0].attainment()
    );
}

#[test]
fn no_replica_up_leaves_requests_unserved() {
    let a = Arrival {
        time_s: 0.5,
        tier: 0,
        input_tokens: 10,
        output_tokens: 10,
        chain: crate::traces::block_chains::NO_CHAIN,
    };
    let r = simulate(&fleet(spec(true, 8, 100_000), 0, 0.0), 0..1, [a], 1, |_| {});
    assert_eq!(r.tiers[0].unserved_requests, 1);
    assert_eq!(r.tiers[0].attainment(), 0.0);
}

#[test]
fn a_replay_paused_where_its_tallies_decide_goes_on_to_the_whole_replay() {
    let lengths: Vec<(u32, u32)> = (0..64).map(|i| (200 + 97 * i, 20 + 13 * i)).collect();
    // Fast enough that requests miss their limits.
    let arrivals = renewal(40.0, 2.0, &lengths, 3000, 7);
    let f = fleet(spec(true, 32, 200_000), 1, 0.0);
    let whole = simulate(&f, 0..1, arrivals.clone(), 3, |_| {});
    let missed = |t: &TierTally| t.served_requests + t.unserved_requests - t.met_both;
    assert!(
        missed(&whole.tiers[0]) > 20,
        "{:?}",
        whole.tiers[0].met_both
    );
    let mut paused = Paused::new(&f, 0..1, arrivals, 3);
    let mut at_stop = 0;
    assert!(paused.run_until(
        |_| {},
        |_| {},
        |r| {
            at_stop = r.tiers[0].served_requests;
            missed(&r.tiers[0]) > 20
        }
    ));
    assert!(at_stop < whole.tiers[0].served_requests, "{at_stop}");
    assert!(!paused.run_until(|_| {}, |_| {}, |_| false));
    let resumed = paused.finish();
    assert_eq!(
        serde_json::to_string(&resumed).unwrap(),
        serde_json::to_string(&whole).unwrap()
    );
}

/// The engine's server time (fixed and per prompt token) is in the replay's
/// first token and last, and nowhere in its steps.
#[test]
fn the_servers_own_time_is_in_the_replays_first_and_last_token() {
    use crate::perf::EngineModel;
    let lone = |server_ms: f64, us_per_token: f64| {
        let mut e = crate::profiles::engine_fixture();
        e.server_ms_per_request = server_ms;
        e.server_us_per_prompt_token = us_per_token;
        let mut s = spec(true, 8, 100_000);
        s.perf = StepModel::Engine(Box::new(EngineModel::new(
            "vllm",
            &e,
            &h100(),
            &llama8b(),
            1,
            crate::profiles::precision::Precision::Bf16,
        )));
        let a = Arrival {
            time_s: 1.0,
            tier: 0,
            input_tokens: 1000,
            output_tokens: 101,
            chain: crate::traces::block_chains::NO_CHAIN,
        };
        let r = simulate(&fleet(s, 1, 0.0), 0..1, [a], 1, |_| {});
        let t = &r.tiers[0];
        (t.ttft.quantile_ms(1.0), t.e2e.quantile_ms(1.0))
    };
    let (bare, served) = (lone(0.0, 0.0), lone(12.0, 3.0));
    // 12 ms + 3 µs × 1,000 tokens.
    assert!(
        (served.0 - bare.0 - 15.0).abs() < 1e-6,
        "{served:?} {bare:?}"
    );
    assert!(
        (served.1 - bare.1 - 15.0).abs() < 1e-6,
        "{served:?} {bare:?}"
    );
}

#[test]
fn the_prefix_aware_router_sends_a_conversations_next_turn_where_its_prefix_is() {
    use crate::sim::kv_cache::PrefixSource;
    use crate::traces::block_chains::BlockChains;
    let mut chains = BlockChains::new(512);
    let other: Vec<u64> = (100..120).collect();
    let turn: Vec<u64> = (1..21).collect();
    let next_turn: Vec<u64> = (1..25).collect();
    let (b, a, a2) = (
        chains.push(&other),
        chains.push(&turn),
        chains.push(&next_turn),
    );
    let arrival = |time_s: f64, chain: u32, input_tokens: u32| Arrival {
        time_s,
        tier: 0,
        input_tokens,
        output_tokens: 10,
        chain,
    };
    // An unrelated prompt takes replica 0, the conversation's first turn
    // replica 1; both are idle again when the next turn comes.
    let arrivals = [
        arrival(0.0, b, 10_240),
        arrival(0.001, a, 10_240),
        arrival(100.0, a2, 12_288),
    ];
    let cached = |router: Router| {
        let mut f = fleet(spec(true, 8, 1_000_000), 2, 0.0);
        f.router = router;
        f.prefixes = Some(PrefixSource::Chains {
            chains: std::sync::Arc::new(chains.clone()),
            reused: None,
        });
        let r = simulate(&f, 0..1, arrivals, 1, |_| {});
        let t = &r.tiers[0];
        assert_eq!(t.served_requests, 3);
        assert_eq!(t.served_input_tokens, 10_240 * 2 + 12_288);
        t.cached_input_tokens
    };
    // Least work takes the lowest index on a tie: replica 0, which never
    // saw the conversation.
    assert_eq!(cached(Router::LeastWork), 0);
    // The prefix-aware router finds its 20 blocks on replica 1.
    assert_eq!(cached(Router::PrefixAware), 20 * 512);
    // Without prefix caching it is least work.
    let mut f = fleet(spec(true, 8, 1_000_000), 2, 0.0);
    f.router = Router::PrefixAware;
    let r = simulate(&f, 0..1, arrivals, 1, |_| {});
    assert_eq!(r.tiers[0].cached_input_tokens, 0);
}

#[test]
fn a_replica_that_switches_model_serves_nothing_while_it_loads() {
    // One replica whose GPUs come from another model at the slot's start:
    // down for its load time (120 s of a 600-s slot), then up.
    let mut f = fleet(spec(true, 16, 1_000_000), 1, 0.0);
    f.slot_s = 600.0;
    f.tiers[0].limits.ttft_ms = 60_000.0;
    let arrivals = ten_short_arrivals();
    let up = simulate(&f, 0..1, arrivals.clone(), 1, |_| {});
    assert_eq!(up.tiers[0].served_requests, 10);
    assert_eq!(up.groups[0].loading_s, 0.0);
    f.groups[0].loading_by_slot = vec![1];
    f.groups[0].load_s = 120.0;
    // Routed on arrival, the requests find no replica up: all lost.
    let loading = simulate(&f, 0..1, arrivals.clone(), 1, |_| {});
    assert_eq!(loading.tiers[0].unserved_requests, 10);
    assert_eq!(loading.groups[0].loading_s, 120.0);
    // A batch tier's requests wait for it: none starts before 120 s.
    f.tiers[0].deadline_s = Some(3600.0);
    let mut done_s = Vec::new();
    let waited = simulate_observed(
        &f,
        0..1,
        arrivals,
        1,
        |_| {},
        |c| done_s.push(c.arrival_s + c.e2e_ms / 1e3),
    );
    assert_eq!(waited.tiers[0].served_requests, 10);
    assert_eq!(done_s.len(), 10);
    assert!(done_s.iter().all(|&s| s > 120.0), "{done_s:?}");
}
