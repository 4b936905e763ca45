//! Property tests of the fleet's replay: decode runs are exact.

use super::*;
use crate::perf::step::tests::{h100, llama8b};
use crate::perf::{PerfModel, StepModel};
use crate::profiles::Scheduler;
use crate::sim::renewal::renewal;
use proptest::prelude::*;

fn fleet(
    scheduler: Scheduler,
    decode_runs: bool,
    (max_batch, kv, budget, recv_interval_steps): (u32, u64, u32, u32),
    replicas: u32,
) -> Fleet {
    Fleet {
        slot_s: 1e9,
        tiers: vec![FleetTier {
            name: "t".into(),
            limits: Limits {
                ttft_ms: 800.0,
                tpot_ms: 40.0,
            },
            api_share_by_slot: vec![0.0],
            mean_output_tokens: 100.0,
            deadline_s: None,
        }],
        groups: vec![Group {
            tier: 0,
            label: "g".into(),
            spec: ReplicaSpec {
                perf: StepModel::Roofline(PerfModel::new(
                    &h100(),
                    &llama8b(),
                    1,
                    crate::profiles::precision::Precision::Bf16,
                )),
                max_batch,
                max_batched_tokens: budget,
                rank_tokens: budget,
                kv_capacity_tokens: kv,
                scheduler,
                reserve_output_kv: false,
                decode_runs,
                recv_interval_steps,
                split: None,
            },
            replicas_by_slot: vec![replicas],
            rps_per_replica: 1.0,
            spot: None,
            loading_by_slot: Vec::new(),
            load_s: 0.0,
        }],
        router: Router::LeastWork,
        prefixes: None,
    }
}

proptest! {
    #![proptest_config(crate::base::testing::proptest_config(24))]

    /// Under either scheduler, advancing decode steps in runs changes
    /// nothing a request sees: the same requests meet the same limits,
    /// with the same preemptions, as a simulation that steps one token at
    /// a time; and every request is accounted for. So too when the
    /// scheduler receives new requests only every few decode steps.
    #[test]
    fn decode_runs_are_exact(
        seed in 0u64..1000,
        rate in 2.0f64..40.0,
        cv in 0.5f64..4.0,
        max_batch in 1u32..64,
        kv in 6_000u64..400_000,
        budget in 512u32..8192,
        replicas in 1u32..4,
        recv in prop_oneof![Just(1u32), 2u32..40],
    ) {
        let lengths: Vec<(u32, u32)> = (0..32).map(|i| (50 + 173 * i, 1 + 37 * (i % 9))).collect();
        let arrivals = renewal(rate, cv, &lengths, 600, seed);
        let replica = (max_batch, kv, budget, recv);
        for scheduler in Scheduler::ALL {
            let a = simulate(&fleet(scheduler, true, replica, replicas), 0..1, arrivals.clone(), seed, |_| {});
            let b = simulate(&fleet(scheduler, false, replica, replicas), 0..1, arrivals.clone(), seed, |_| {});
            let (x, y) = (&a.tiers[0], &b.tiers[0]);
            prop_assert_eq!(x.served_requests + x.unserved_requests, 600);
            prop_assert_eq!((x.served_requests, x.met_ttft, x.met_tpot, x.met_both), (y.served_requests, y.met_ttft, y.met_tpot, y.met_both));
            prop_assert_eq!(a.groups[0].preemptions, b.groups[0].preemptions);
            prop_assert!((x.decode_s - y.decode_s).abs() <= 1e-6 * y.decode_s.max(1.0));
        }
    }
}
