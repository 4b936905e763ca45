//! The optimiser: a MILP over planning slots (good_lp + HiGHS).
//!
//! Sets: GPU types `g`, tiers `k`, configuration options `c ∈ C[k]` (each on one
//! GPU type with `p[c]` GPUs per replica and, per slot, `mu[c,t]` requests/s
//! per replica: the slot's peak rate over the replicas that the fleet step
//! function of (k, c) says that rate needs), slots `t`.
//!
//! Variables: `reserved[g]` (integer GPUs, the same in every slot),
//! `on_demand[g,t]` (GPUs rented in slot `t`), `replicas[k,c,t]` (integer),
//! `api[k,t]` ∈ [0, 1] (share of the tier's slot traffic sent to the API).
//!
//! Constraints: `coverage[k,t]`: Σ_c mu[c,t] replicas[k,c,t] + peak[k,t] api[k,t]
//! ≥ peak[k,t]; `gpus[g,t]`: Σ_{k, c on g} p[c] replicas[k,c,t] ≤ reserved[g] +
//! on_demand[g,t]; `quota[g,t]`: reserved[g] + on_demand[g,t] ≤ max_gpus[g];
//! `api_rate[t]`: Σ_k api[k,t] peak[k,t] tokens[k] × 60 ≤ api tokens/min.
//!
//! Objective: Σ_g reserved[g] × reserved price × horizon hours + Σ_{g,t}
//! on_demand[g,t] × on-demand price × slot hours + Σ_{k,t} api[k,t] ×
//! mean[k,t] × slot seconds × API price per request.

pub(crate) mod decomposed;
pub(crate) mod deployments;
mod fewest_reserved;
mod heuristic;
mod lagrangian;
mod links;
pub(crate) mod method;
mod model;
mod monolithic;
mod outer_search;
mod problem;
mod relaxation;
mod reserved_bound;
mod settings;
mod slot_milp;
mod slot_pricing;
mod slot_rules;
pub(crate) mod slot_search;
mod slot_search_tree;
mod solution;
mod vars;

pub(crate) use fewest_reserved::fewest_reserved_if;
pub(crate) use settings::{Method, Settings};

pub(crate) use problem::{ApiTerms, ConfigOption, Problem, TierInput, TierRules};
pub(crate) use problem::{GpuType, Purchase, SpotTerms};
pub(crate) use solution::{cost_usd, spot_usd, total};
pub(crate) use solution::{MilpError, Solution, SolveStatus};
pub(crate) use vars::arrivals_in;

/// The cheapest plan of `input` with the reserved counts fixed to
/// `reserved` (chosen for something larger, such as a whole term), by the
/// method the settings choose for it: each slot solved exactly when the
/// slots are decomposable, else the whole model in HiGHS with those counts.
pub(crate) fn solve_with_reserved(
    input: &Problem,
    settings: &Settings,
    reserved: &[u32],
) -> Result<Solution, MilpError> {
    method::chosen(input, settings.method).with_reserved(input, settings, reserved)
}

/// Solves the MILP by the method `settings.method` names ([`Method`]); with
/// `auto`, decomposed when [`Problem::decomposable`], monolithic
/// otherwise (and so for `decomposed` on such a model). A decomposed search
/// whose bound stalls above the gap branches on the reserved counts
/// ([`reserved_bound`]); what it then proves is the plan's bound.
pub(crate) fn solve(input: &Problem, settings: &Settings) -> Result<Solution, MilpError> {
    method::chosen(input, settings.method).solve(input, settings)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// One GPU type, rented at 1 USD/GPU-hour or reserved at
    /// `reserved_usd`, one option of 1 GPU covering 1 request/s, slots of an
    /// hour.
    pub(super) fn one_type(peaks: Vec<f64>, reserved_usd: Option<f64>) -> Problem {
        let mut input = tiny(peaks);
        input.gpus.truncate(1);
        input.gpus[0].reserved_usd_per_gpu_hour = reserved_usd;
        input.gpus[0].on_demand_usd_per_gpu_hour = Some(1.0);
        input.tiers[0].options = vec![ConfigOption::uniform(0, 1, 1.0, input.slots())];
        input
    }

    pub(super) fn tiny(peaks: Vec<f64>) -> Problem {
        let slots = peaks.len();
        Problem {
            slot_hours: 1.0,
            gpus: vec![
                GpuType {
                    id: "big".into(),
                    reserved_usd_per_gpu_hour: Some(2.0),
                    on_demand_usd_per_gpu_hour: Some(4.0),
                    max_gpus: None,
                    purchase: Purchase::default(),
                    spot: None,
                },
                GpuType {
                    id: "small".into(),
                    reserved_usd_per_gpu_hour: Some(0.6),
                    on_demand_usd_per_gpu_hour: Some(1.0),
                    max_gpus: Some(6),
                    purchase: Purchase::default(),
                    spot: None,
                },
            ],
            tiers: vec![TierInput {
                name: "t".into(),
                mean_rps: peaks.clone(),
                peak_rps: peaks,
                options: vec![
                    ConfigOption::uniform(0, 2, 5.0, slots),
                    ConfigOption::uniform(1, 1, 1.2, slots),
                ],
                api: None,
                rules: TierRules::default(),
            }],
            api_max_tokens_per_minute: None,
            block_slots: None,
        }
    }

    /// Exact (no gap), one thread, warm start, the method chosen by `auto`.
    pub(super) fn settings() -> Settings {
        with_method(Method::Auto, 0.0)
    }

    /// Brute force over reserved counts and per-slot replica counts.
    fn brute_force(input: &Problem) -> f64 {
        let tier = &input.tiers[0];
        let horizon = tier.peak_rps.len() as f64 * input.slot_hours;
        let mut best = f64::INFINITY;
        for r0 in 0..=8u32 {
            for r1 in 0..=6u32 {
                let mut total = f64::from(r0) * 2.0 * horizon + f64::from(r1) * 0.6 * horizon;
                for &peak in &tier.peak_rps {
                    let mut slot_best = f64::INFINITY;
                    for n0 in 0..=6u32 {
                        for n1 in 0..=6u32 {
                            if f64::from(n0) * 5.0 + f64::from(n1) * 1.2 < peak - 1e-9
                                || r1 + (n1.saturating_sub(r1)) > 6
                            {
                                continue;
                            }
                            let od = f64::from((2 * n0).saturating_sub(r0)) * 4.0
                                + f64::from(n1.saturating_sub(r1)) * 1.0;
                            slot_best = slot_best.min(od);
                        }
                    }
                    total += slot_best * input.slot_hours;
                }
                best = best.min(total);
            }
        }
        best
    }

    #[test]
    fn optimum_equals_brute_force() {
        for peaks in [
            vec![3.0, 11.0, 6.5],
            vec![0.5, 0.5, 9.0, 2.0],
            vec![14.0, 13.0, 1.0],
        ] {
            let input = tiny(peaks.clone());
            let s = solve(&input, &with_method(Method::Monolithic, 0.0)).unwrap();
            let (r, o, a) = cost_usd(&input, &s);
            let expected = brute_force(&input);
            assert!(
                (r + o + a - expected).abs() < 1e-6,
                "peaks {peaks:?}: milp {} vs brute force {expected}",
                r + o + a
            );
        }
    }

    #[test]
    fn api_takes_traffic_when_cheaper_and_respects_the_rate_limit() {
        let mut input = tiny(vec![1.0, 1.0]);
        input.tiers[0].api = Some(ApiTerms {
            usd_per_request: 0.0001,
            tokens_per_request: 1000.0,
        });
        let s = solve(&input, &settings()).unwrap();
        assert!(
            s.api[0].iter().all(|&a| (a - 1.0).abs() < 1e-6),
            "{:?}",
            s.api
        );
        // At most 30,000 tokens/min = 0.5 requests/s may go to the API.
        input.api_max_tokens_per_minute = Some(30_000.0);
        let s = solve(&input, &settings()).unwrap();
        assert!(s.api[0].iter().all(|&a| a <= 0.5 + 1e-6), "{:?}", s.api);
    }

    pub(super) fn covered(input: &Problem, s: &Solution) -> bool {
        input.tiers.iter().enumerate().all(|(k, tier)| {
            tier.peak_rps.iter().enumerate().all(|(t, &peak)| {
                let by_replicas: f64 = tier
                    .options
                    .iter()
                    .enumerate()
                    .map(|(c, o)| f64::from(s.replicas[k][c][t]) * o.rps(t))
                    .sum();
                by_replicas + s.api[k][t] * peak >= peak * (1.0 - 1e-6)
            })
        }) && (0..input.slots()).all(|t| {
            input.gpus.iter().enumerate().all(|(g, gpu)| {
                let used = s.gpus_used(input, g, t);
                let owned = s.reserved[g] + s.on_demand[t][g];
                used <= owned && gpu.max_gpus.is_none_or(|m| owned <= m)
            })
        })
    }

    proptest::proptest! {
        #![proptest_config(crate::base::testing::proptest_config(24))]

        #[test]
        fn more_demand_never_costs_less(
            peaks in proptest::collection::vec(0.1f64..16.0, 1..5),
            factor in 1.0f64..1.8,
            with_api in proptest::bool::ANY,
        ) {
            // HiGHS on the bare model, to optimality: started from the
            // heuristic's plan it has stopped as "optimal" above a cheaper
            // plan (docs/model.md §4).
            let mut small = tiny(peaks.clone());
            let mut large = tiny(peaks.iter().map(|p| p * factor).collect());
            let bare = Settings { warm_start: false, ..with_method(Method::Monolithic, 0.0) };
            if with_api {
                for input in [&mut small, &mut large] {
                    input.tiers[0].api = Some(ApiTerms { usd_per_request: 0.001, tokens_per_request: 1000.0 });
                }
            }
            let a = solve(&small, &bare).unwrap();
            let b = solve(&large, &bare).unwrap();
            proptest::prop_assert!(total(&large, &b) >= total(&small, &a) - 1e-6);
        }

        #[test]
        fn the_fewest_reserved_within_the_gap_keeps_the_fleets_coverage_and_ceiling(
            peaks in proptest::collection::vec(0.0f64..20.0, 1..6),
            mip_gap in 0.0f64..0.3,
        ) {
            let input = tiny(peaks.clone());
            let s = solve(&input, &settings()).unwrap();
            let fewest = fewest_reserved::fewest_reserved(&input, mip_gap, s.clone());
            proptest::prop_assert!(covered(&input, &fewest));
            proptest::prop_assert_eq!(&fewest.replicas, &s.replicas);
            proptest::prop_assert_eq!(&fewest.api, &s.api);
            for (after, before) in fewest.reserved.iter().zip(&s.reserved) {
                proptest::prop_assert!(after <= before);
            }
            let ceiling = s.lower_bound_usd * (1.0 + mip_gap);
            let cost = total(&input, &fewest);
            proptest::prop_assert!(cost >= total(&input, &s) - 1e-9);
            proptest::prop_assert!(
                cost == total(&input, &s) || cost <= ceiling + 1e-9,
                "{} past the ceiling {}", cost, ceiling
            );
        }

        #[test]
        fn the_plan_covers_demand_in_every_slot(
            peaks in proptest::collection::vec(0.0f64..20.0, 1..6),
            with_api in proptest::bool::ANY,
        ) {
            let mut input = tiny(peaks);
            if with_api {
                input.tiers[0].api = Some(ApiTerms { usd_per_request: 0.0005, tokens_per_request: 1000.0 });
                input.api_max_tokens_per_minute = Some(120_000.0);
            }
            let s = solve(&input, &settings()).unwrap();
            proptest::prop_assert!(covered(&input, &s));
        }
    }

    fn with_method(method: Method, mip_gap: f64) -> Settings {
        Settings {
            mip_gap,
            time_limit_s: 30.0,
            threads: 1,
            log_file: None,
            warm_start: true,
            method,
            node_limit: None,
            branch_prices: decomposed::BRANCH_PRICES,
        }
    }

    #[test]
    fn the_decomposed_bound_and_plan_bracket_the_brute_force_optimum() {
        for peaks in [
            vec![3.0, 11.0, 6.5],
            vec![0.5, 0.5, 9.0, 2.0],
            vec![14.0, 13.0, 1.0],
            vec![7.0; 6],
        ] {
            let input = tiny(peaks.clone());
            let s = solve(&input, &with_method(Method::Decomposed, 0.0)).unwrap();
            assert_eq!(s.method, Method::Decomposed);
            let optimum = brute_force(&input);
            let cost = total(&input, &s);
            assert!(
                s.lower_bound_usd <= optimum + 1e-6 && optimum <= cost + 1e-6,
                "peaks {peaks:?}: bound {} ≤ optimum {optimum} ≤ cost {cost}",
                s.lower_bound_usd
            );
            if s.status != SolveStatus::TimeLimit {
                assert!(
                    (cost - optimum).abs() < 1e-6,
                    "{peaks:?}: {cost} vs {optimum}"
                );
            }
        }
    }

    #[test]
    fn fixed_reserved_counts_are_kept_and_priced_exactly_by_either_method() {
        let peaks = [(30.0, 12.0), (80.0, 40.0), (20.0, 5.0), (60.0, 22.0)];
        for method in [Method::Decomposed, Method::Monolithic] {
            let input = two_tiers(&peaks, true, false);
            let set = with_method(method, 0.0);
            let best = solve(&input, &set).expect("feasible");
            let more: Vec<u32> = best.reserved.iter().map(|r| r + 4).collect();
            let fixed = solve_with_reserved(&input, &set, &more).expect("feasible");
            assert_eq!(fixed.reserved, more);
            assert!(total(&input, &fixed) >= total(&input, &best) - 1e-6);
            // The same counts as the optimum give the optimum's cost.
            let same = solve_with_reserved(&input, &set, &best.reserved).expect("feasible");
            assert!((total(&input, &same) - total(&input, &best)).abs() < 1e-6);
            // Slices put back together cost what the whole does, once the
            // reservation is counted per slice.
            let halves: f64 = [0..2, 2..4]
                .into_iter()
                .map(|r| total(&input.slots_in(r.clone()), &fixed.slots_in(r)))
                .sum();
            assert!((halves - total(&input, &fixed)).abs() < 1e-6);
        }
    }

    /// A decomposed search that stalls above the gap hands the whole model
    /// to HiGHS only while the solve's allowance lasts: with none left, the
    /// decomposed plan and bound come back as they are.
    #[test]
    fn a_stalled_search_is_proven_by_branching_on_the_reserved_counts() {
        let mut stalled = 0;
        for peaks in [
            vec![(30.0, 12.0), (80.0, 40.0), (20.0, 5.0), (60.0, 22.0)],
            vec![(13.0, 27.0), (3.0, 9.0), (17.0, 1.0)],
            vec![
                (7.5, 18.5),
                (16.0, 3.5),
                (9.0, 29.0),
                (1.0, 11.0),
                (12.0, 12.0),
            ],
        ] {
            let input = two_tiers(&peaks, true, false);
            let unbranched = Settings {
                branch_prices: 0,
                ..with_method(Method::Decomposed, 0.0)
            };
            let alone = solve(&input, &unbranched).unwrap();
            if alone.status != SolveStatus::Unproven {
                continue;
            }
            stalled += 1;
            let branched = solve(&input, &with_method(Method::Decomposed, 0.0)).unwrap();
            assert_eq!(branched.method, Method::Decomposed);
            assert!(branched.lower_bound_usd >= alone.lower_bound_usd - 1e-9);
            assert!(total(&input, &branched) <= total(&input, &alone) + 1e-9);
            // Proven: the bound meets the plan, and HiGHS on the whole
            // model finds nothing cheaper.
            assert_eq!(branched.status, SolveStatus::Optimal, "{peaks:?}");
            let exact = solve(&input, &with_method(Method::Monolithic, 0.0)).unwrap();
            assert!(
                (total(&input, &branched) - total(&input, &exact)).abs() < 1e-6,
                "{peaks:?}: {} against {}",
                total(&input, &branched),
                total(&input, &exact)
            );
        }
        assert!(stalled > 0, "no instance stalled: the test checks nothing");
    }

    fn two_tiers(peaks: &[(f64, f64)], with_api: bool, quota: bool) -> Problem {
        let mut input = tiny(peaks.iter().map(|p| p.0).collect());
        let slots = peaks.len();
        let second = peaks.iter().map(|p| p.1).collect::<Vec<f64>>();
        input.tiers.push(TierInput {
            name: "u".into(),
            mean_rps: second.iter().map(|p| p * 0.6).collect(),
            peak_rps: second,
            options: vec![
                ConfigOption {
                    gpu: 0,
                    gpus_per_replica: 4,
                    rps_by_slot: (0..slots).map(|t| 9.0 + t as f64).collect(),
                    entry: 1,
                },
                ConfigOption::uniform(1, 2, 2.1, slots),
            ],
            api: None,
            rules: TierRules::default(),
        });
        if with_api {
            input.tiers[0].api = Some(ApiTerms {
                usd_per_request: 0.0008,
                tokens_per_request: 1000.0,
            });
            input.api_max_tokens_per_minute = Some(300_000.0);
        }
        if !quota {
            input.gpus[1].max_gpus = None;
        }
        input
    }

    proptest::proptest! {
        #![proptest_config(crate::base::testing::proptest_config(24))]

        /// Each method's proven bound is below the other's plan, and both
        /// plans are within the gap of each other.
        #[test]
        fn decomposed_and_monolithic_agree_within_the_gap(
            peaks in proptest::collection::vec((0.0f64..18.0, 0.0f64..30.0), 1..6),
            with_api in proptest::bool::ANY,
            quota in proptest::bool::ANY,
            small_prices in 0u8..3,
            unit in proptest::prop_oneof![2 => proptest::strategy::Just(1u32), 1 => proptest::strategy::Just(2u32), 1 => proptest::strategy::Just(4u32)],
        ) {
            let mut base = two_tiers(&peaks, with_api, quota);
            // Bought in whole units of `unit` GPUs (nodes), both ways.
            for g in &mut base.gpus {
                g.purchase.unit_gpus = unit;
            }
            // The small type bought both ways, only reserved, or only rented.
            match small_prices {
                1 => base.gpus[1].on_demand_usd_per_gpu_hour = None,
                2 => base.gpus[1].reserved_usd_per_gpu_hour = None,
                _ => {}
            }
            let gap = 0.01;
            // HiGHS on the bare model: its stopping rule is then a proof.
            let bare = Settings { warm_start: false, ..with_method(Method::Monolithic, gap) };
            let m = solve(&base, &bare);
            let d = solve(&base, &with_method(Method::Decomposed, gap));
            match (m, d) {
                (Ok(m), Ok(d)) => {
                    let (cm, cd) = (total(&base, &m), total(&base, &d));
                    proptest::prop_assert!(m.lower_bound_usd <= cm + 1e-6 && d.lower_bound_usd <= cd + 1e-6);
                    proptest::prop_assert!(m.lower_bound_usd <= cd + 1e-6, "monolithic bound {} over decomposed plan {cd}", m.lower_bound_usd);
                    proptest::prop_assert!(d.lower_bound_usd <= cm + 1e-6, "decomposed bound {} over monolithic plan {cm}", d.lower_bound_usd);
                    if d.status != SolveStatus::TimeLimit && m.status != SolveStatus::TimeLimit {
                        proptest::prop_assert!(cd <= cm * (1.0 + gap) + 1e-6 && cm <= cd * (1.0 + gap) + 1e-6, "{cd} vs {cm}");
                    }
                    proptest::prop_assert!(covered(&base, &d));
                }
                (Err(MilpError::Infeasible), Err(MilpError::Infeasible)) => {}
                (m, d) => proptest::prop_assert!(false, "monolithic {m:?}, decomposed {d:?}"),
            }
        }

        /// More demand never costs less: the larger scenario's plan costs at
        /// least the smaller one's proven bound.
        #[test]
        fn more_demand_never_costs_less_than_the_bound(
            peaks in proptest::collection::vec((0.0f64..18.0, 0.0f64..30.0), 1..6),
            factor in 1.0f64..1.8,
            with_api in proptest::bool::ANY,
        ) {
            let small = two_tiers(&peaks, with_api, false);
            let grown: Vec<(f64, f64)> = peaks.iter().map(|p| (p.0 * factor, p.1 * factor)).collect();
            let large = two_tiers(&grown, with_api, false);
            let set = with_method(Method::Decomposed, 0.01);
            let a = solve(&small, &set).unwrap();
            let b = solve(&large, &set).unwrap();
            proptest::prop_assert!(total(&large, &b) >= a.lower_bound_usd - 1e-6);
            proptest::prop_assert!(b.lower_bound_usd <= total(&large, &b) + 1e-6);
        }
    }

    #[test]
    fn quota_can_make_it_infeasible() {
        for method in [Method::Monolithic, Method::Decomposed] {
            let mut input = tiny(vec![100.0]);
            input.gpus[0].max_gpus = Some(2);
            assert_eq!(
                solve(&input, &with_method(method, 0.01)),
                Err(MilpError::Infeasible)
            );
        }
    }
}
