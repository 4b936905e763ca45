//! Unit tests of disaggregated units in the fleet's replay.

use super::*;
use crate::perf::StepTime;
use crate::sim::renewal::renewal;
use crate::sim::replica_spec::tests::h100_llama8b as replica;
use crate::sim::request::Arrival;
use crate::sim::router::Router;
use crate::sim::{KvTransfer, SplitSpec};
use crate::traces::block_chains::NO_CHAIN;

/// `x` prefill and `y` decode replicas of [`replica`]'s layout, the KV
/// cache moved by `transfer`.
fn unit(x: u32, y: u32, transfer: KvTransfer) -> ReplicaSpec {
    replica().split(SplitSpec {
        prefill: replica(),
        prefill_replicas: x,
        decode_replicas: y,
        transfer,
    })
}

fn fleet(spec: ReplicaSpec, units: u32) -> Fleet {
    let tier = FleetTier {
        name: "t".into(),
        limits: Limits {
            ttft_ms: 2_000.0,
            tpot_ms: 100.0,
        },
        api_share_by_slot: vec![0.0],
        mean_output_tokens: 200.0,
        deadline_s: None,
    };
    Fleet::single(3600.0, tier, spec, units, Router::LeastWork)
}

fn free_link() -> KvTransfer {
    KvTransfer::new(1.0, 1, f64::INFINITY, 0.0)
}

#[test]
fn a_lone_request_is_prefilled_moved_and_decoded_on_the_other_side() {
    // 128 KiB a token over one 10 GB/s link: 1,000 tokens take 13.1 ms.
    let link = KvTransfer::new(131_072.0, 1, 10.0, 1e-3);
    let f = fleet(unit(1, 1, link), 1);
    let a = Arrival {
        time_s: 1.0,
        tier: 0,
        input_tokens: 1000,
        output_tokens: 101,
        chain: NO_CHAIN,
    };
    let r = simulate(&f, 0..1, [a], 1, |_| {});
    let t = &r.tiers[0];
    assert_eq!((t.requests, t.served_requests, t.met_both), (1, 1, 1));
    let perf = &f.groups[0].spec.perf;
    let prefill_ms = perf.prefill_s(1000.0) * 1e3;
    let transfer_ms = link.seconds(1000) * 1e3;
    // The first token: the prefill, the move, then one step on the decode
    // side that computes the prompt's last token (no longer than a decode
    // step over the whole prompt plus a token's prefill).
    let first_step_ms = perf.decode_step_s(1.0, 1000.0) * 1e3 + perf.prefill_s(1.0) * 1e3;
    let ttft = t.ttft.quantile_ms(1.0);
    assert!(
        ttft > prefill_ms + transfer_ms,
        "{ttft} vs {prefill_ms} + {transfer_ms}"
    );
    assert!(ttft <= prefill_ms + transfer_ms + first_step_ms, "{ttft}");
    // Nothing of the prompt is computed twice: the decode side's busy time
    // is its 101 steps, far less than the prefill.
    let sides = &r.groups[0].sides_busy_s;
    assert_eq!(sides.len(), 2);
    assert!((sides[0] * 1e3 - prefill_ms).abs() < 1e-9, "{sides:?}");
    assert!(sides[1] < 101.0 * first_step_ms / 1e3, "{sides:?}");
    // The unit's replicas are one in the group's utilisation.
    assert_eq!(r.groups[0].replicas.len(), 1);
}

/// `n` requests of `input` prompt and 200 output tokens at `rate` per
/// second (Poisson).
fn load(n: usize, rate: f64, input: u32) -> Vec<Arrival> {
    renewal(rate, 1.0, &[(input, 200)], n, 7)
}

#[test]
fn prefill_apart_never_slows_the_decode_at_the_same_load() {
    // A 1P1D unit over a link of infinite bandwidth, both sides the
    // aggregated replica's layout, against one aggregated replica at the
    // same request rate: the decode replica runs no prefill, so its tokens
    // come no slower.
    for (rate, input) in [(0.5, 2_000), (2.0, 4_000), (4.0, 1_000), (1.0, 8_000)] {
        let arrivals = load(400, rate, input);
        let together = simulate(&fleet(replica(), 1), 0..1, arrivals.clone(), 1, |_| {});
        let apart = simulate(
            &fleet(unit(1, 1, free_link()), 1),
            0..1,
            arrivals,
            1,
            |_| {},
        );
        for q in [0.5, 0.9, 0.99] {
            let (a, t) = (
                apart.tiers[0].tpot.quantile_ms(q),
                together.tiers[0].tpot.quantile_ms(q),
            );
            assert!(
                a <= t * 1.001,
                "rate {rate}, input {input}, q {q}: {a} ms vs {t} ms"
            );
        }
        assert_eq!(apart.tiers[0].served_requests, 400);
    }
}

#[test]
fn every_request_of_a_unit_is_accounted_for_and_a_slow_link_only_delays_first_tokens() {
    let arrivals = load(300, 3.0, 3_000);
    let fast = simulate(
        &fleet(unit(2, 1, free_link()), 1),
        0..1,
        arrivals.clone(),
        1,
        |_| {},
    );
    // 10 ms a request more than the free link, whatever its prompt.
    let slow_link = KvTransfer::new(0.0, 1, 1.0, 0.01);
    let slow = simulate(&fleet(unit(2, 1, slow_link), 1), 0..1, arrivals, 1, |_| {});
    for r in [&fast, &slow] {
        let t = &r.tiers[0];
        assert_eq!(t.requests, 300);
        assert_eq!(t.served_requests + t.unserved_requests, 300);
    }
    let (f, s) = (&fast.tiers[0], &slow.tiers[0]);
    assert!(s.ttft.quantile_ms(0.5) >= f.ttft.quantile_ms(0.5) + 9.0);
    // Two prefill replicas, one decode replica: the decode side is busy
    // about as long as the prefill side's two together, or longer.
    assert!(fast.groups[0].sides_busy_s.iter().all(|&b| b > 0.0));
}

#[test]
fn a_unit_that_cannot_hold_a_request_on_either_side_refuses_it() {
    let mut small_prefill = unit(1, 1, free_link());
    if let Some(split) = small_prefill.split.as_mut() {
        split.prefill.kv_capacity_tokens = 500;
    }
    let arrivals = load(5, 1.0, 1_000);
    let r = simulate(&fleet(small_prefill, 1), 0..1, arrivals, 1, |_| {});
    assert_eq!(r.tiers[0].unserved_requests, 5);
}
