//! The shipped engine profiles against the shared runs: the error targets,
//! the physical bounds of their figures, and the roofline ceiling.

use super::calibration::Medians;
use super::fit::{evaluate, Profiles};
use super::read::{read_csv, Runs};
use super::MeasuredRun;
use crate::perf::roofline::RooflineBound;
use crate::profiles::{load_engine, load_gpu, load_model, EngineFamily, EngineProfile};
use std::collections::BTreeMap;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The shared Qwen3-32B runs, their profiles, and the shipped engines.
fn shared() -> (Runs, Profiles, BTreeMap<EngineFamily, EngineProfile>) {
    shared_from("data/engine-runs/qwen3-32b.csv")
}

/// The runs of `file`, their profiles, and the shipped engines.
fn shared_from(file: &str) -> (Runs, Profiles, BTreeMap<EngineFamily, EngineProfile>) {
    let profiles_dir = root().join("profiles");
    let mut runs = Runs::default();
    read_csv(&root().join(file), &profiles_dir, &mut runs).unwrap();
    let mut profiles = Profiles::default();
    let mut engines = BTreeMap::new();
    for r in &runs.runs {
        profiles
            .gpus
            .entry(r.gpu.clone())
            .or_insert_with(|| load_gpu(&profiles_dir, &r.gpu).unwrap());
        profiles
            .models
            .entry(r.model.clone())
            .or_insert_with(|| load_model(&profiles_dir, &r.model).unwrap());
        engines.entry(r.engine).or_insert_with(|| {
            load_engine(&profiles_dir.join(format!("engines/{}.toml", r.engine.as_str()))).unwrap()
        });
    }
    (runs, profiles, engines)
}

/// Every run's prediction with its engine's shipped profile.
fn predicted(
    runs: &[MeasuredRun],
    profiles: &Profiles,
    engines: &BTreeMap<EngineFamily, EngineProfile>,
) -> Vec<super::calibration::RunErrors> {
    let mut out = Vec::new();
    for (engine, profile) in engines {
        let mine: Vec<&MeasuredRun> = runs.iter().filter(|r| r.engine == *engine).collect();
        for (r, p) in mine.iter().zip(evaluate(&mine, profile, profiles)) {
            out.push(super::calibration::RunErrors {
                run: (*r).clone(),
                group: r.group(),
                roofline_ms: None,
                before_ms: p,
                after_ms: p,
                held_out_ms: p,
                model_out_ms: p,
            });
        }
    }
    out
}

#[test]
fn the_shipped_engine_profiles_meet_their_targets_on_the_dense_runs() {
    let (runs, profiles, engines) = shared();
    // 357 H100 rows, 2 GB200 BF16 rows and 3 NVFP4 rows; 13 set aside
    // (ambiguous concurrency).
    assert_eq!(runs.runs.len(), 362, "{:?}", runs.set_aside);
    let errors = predicted(&runs.runs, &profiles, &engines);
    let all = Medians::of(errors.iter(), |r| r.after_ms);
    assert_eq!(all.unserved, 0);
    assert!(
        all.tpot_abs_error <= 0.10,
        "median |TPOT error| {:.3}",
        all.tpot_abs_error
    );
    assert!(
        all.ttft_abs_error <= 0.20,
        "median |TTFT error| {:.3}",
        all.ttft_abs_error
    );
    // Every group of at least ten runs within 20% on TPOT (the two small
    // groups, 3 vLLM FP8 runs and 2 GB200 runs, are in docs/model.md).
    let mut groups: BTreeMap<String, Vec<&super::calibration::RunErrors>> = BTreeMap::new();
    for e in &errors {
        groups.entry(e.group.clone()).or_default().push(e);
    }
    for (group, members) in groups.iter().filter(|(_, m)| m.len() >= 10) {
        let m = Medians::of(members.iter().copied(), |r| r.after_ms);
        assert!(
            m.tpot_error.abs() <= 0.20,
            "{group}: median TPOT error {:.3}",
            m.tpot_error
        );
    }
}

/// The mixture-of-experts runs against the shipped profiles: each model's
/// median errors where the MoE fit left them (docs/model.md §6.5 has the
/// table and the targets, 15% on TPOT and 25% on TTFT, of which only
/// DeepSeek-V3's TTFT misses), so that a change that makes them worse shows.
/// The server's time per request (docs/model.md §2.1), fitted on every
/// model's runs, took gpt-oss-120b's TTFT from 19.0% to 20.9% while it took
/// Qwen3-32B's from 15.8% to 14.2% and all runs' from 18.5% to 18.0%.
/// SGLang's scheduler receiving new requests every 10 or 30 decode steps in
/// InferenceX's Blackwell launches (docs/model.md §6.5), and its MoE
/// figures fitted again with it, took DeepSeek-V3's TTFT from 37.6% to
/// 34.1% and its TPOT from 14.3% to 12.1%, and Qwen3-235B-A22B's TPOT from
/// 11.9% to 12.0% (its 24 SGLang runs 10.1% to 12.6%).
#[test]
fn the_shipped_engine_profiles_hold_their_errors_on_the_moe_runs() {
    let (runs, profiles, engines) = shared_from("data/engine-runs/moe.csv");
    assert_eq!(runs.runs.len(), 845, "{:?}", runs.set_aside);
    let errors = predicted(&runs.runs, &profiles, &engines);
    for (model, tpot, ttft) in [
        ("deepseek-v3", 0.13, 0.35),
        ("gpt-oss-120b", 0.14, 0.21),
        ("qwen3-235b-a22b", 0.125, 0.12),
    ] {
        let m = Medians::of(errors.iter().filter(|e| e.run.model == model), |r| {
            r.after_ms
        });
        assert!(
            m.tpot_abs_error <= tpot && m.ttft_abs_error <= ttft,
            "{model}: median |TPOT error| {:.3}, |TTFT error| {:.3}",
            m.tpot_abs_error,
            m.ttft_abs_error
        );
    }
}

/// InferenceX's rows are replayed with its client's lengths, AIConfigurator's
/// with the lengths they state.
#[test]
fn each_run_is_replayed_with_its_clients_lengths() {
    use super::RunLengths;
    let (runs, _, _) = shared_from("data/engine-runs/moe.csv");
    let count = |l: RunLengths| runs.runs.iter().filter(|r| r.lengths == l).count();
    // 255 DeepSeek-V3 rows of InferenceX's database and 430 gpt-oss-120b
    // rows of its exports, less the rows set aside.
    assert_eq!(count(RunLengths::InferenceX), 662, "{:?}", runs.set_aside);
    assert_eq!(count(RunLengths::Fixed), 183);
    assert!(runs
        .runs
        .iter()
        .filter(|r| r.model == "qwen3-235b-a22b")
        .all(|r| r.lengths == RunLengths::Fixed));
    let (dense, _, _) = shared();
    assert!(dense.runs.iter().all(|r| r.lengths == RunLengths::Fixed));
}

/// InferenceX's SGLang runs on B200 and B300 are replayed with the receive
/// interval its scripts launched them with (10 below 16 concurrent
/// requests, 30 from it); its H200 runs, and every other engine's, with the
/// scheduler receiving at every step.
#[test]
fn inferencex_blackwell_sglang_runs_receive_requests_as_their_launch_said() {
    let (runs, _, _) = shared_from("data/engine-runs/moe.csv");
    let interval = |gpu: &str, engine: &str, c: u32| {
        let mut set: Vec<u32> = runs
            .runs
            .iter()
            .filter(|r| r.gpu == gpu && r.engine.as_str() == engine && r.concurrency == c)
            .map(|r| r.recv_interval_steps)
            .collect();
        set.dedup();
        set
    };
    assert_eq!(interval("b200", "sglang", 4), [10]);
    assert_eq!(interval("b200", "sglang", 8), [10]);
    assert_eq!(interval("b200", "sglang", 16), [30]);
    assert_eq!(interval("b300", "sglang", 64), [30]);
    assert_eq!(interval("h200", "sglang", 16), [1]);
    assert_eq!(interval("b200", "trtllm", 4), [1]);
    let set = runs
        .runs
        .iter()
        .filter(|r| r.recv_interval_steps > 1)
        .count();
    assert_eq!(set, 128, "DeepSeek-V3's SGLang runs on B200 and B300");
    let (dense, _, _) = shared();
    assert!(dense.runs.iter().all(|r| r.recv_interval_steps == 1));
}

#[test]
fn the_shipped_engine_figures_are_physical() {
    let (runs, profiles, engines) = shared();
    for (engine, p) in &engines {
        for key in &p.fitted {
            let v = p.fitted_value(key).unwrap();
            assert!(v.is_finite() && v >= 0.0, "{engine:?} {key} = {v}");
        }
        assert!(p.allreduce_bandwidth_fraction <= 1.0);
        // On every GPU the engine's runs came from, its efficiencies stay
        // at most 1 (the fit's range guarantees it; no clamp needed).
        for r in runs.runs.iter().filter(|r| r.engine == *engine) {
            let gpu = &profiles.gpus[&r.gpu];
            assert!(
                p.gemm_efficiency_scale * gpu.compute_efficiency <= 1.0 + 1e-9,
                "{engine:?} on {}",
                r.gpu
            );
            assert!(
                p.attention_efficiency_scale * gpu.attention_efficiency() <= 1.0 + 1e-9,
                "{engine:?} on {}",
                r.gpu
            );
        }
    }
}

#[test]
fn no_predicted_run_beats_the_roofline_ceiling() {
    for file in ["data/engine-runs/qwen3-32b.csv", "data/engine-runs/moe.csv"] {
        no_predicted_run_of_beats_the_roofline_ceiling(file);
    }
}

fn no_predicted_run_of_beats_the_roofline_ceiling(file: &str) {
    let (runs, profiles, engines) = shared_from(file);
    for r in &runs.runs {
        let engine = &engines[&r.engine];
        let gpu = &profiles.gpus[&r.gpu];
        let model = &profiles.models[&r.model];
        let Some(client) = super::predict_requests(r, engine, gpu, model) else {
            continue;
        };
        if client.requests.iter().any(|q| q.error.is_some()) {
            continue;
        }
        // The run's throughput, against the replica's ceiling at peak
        // FLOPs and bandwidth with no overhead for the lengths its client
        // drew: `concurrency` requests in flight cannot finish faster than
        // the ceiling allows.
        let lengths: Vec<(u32, u32)> = client
            .requests
            .iter()
            .map(|q| (q.input_tokens, q.output_tokens))
            .collect();
        let shape = crate::perf::engine::engine_model_shape(model, engine, r.precision);
        let bound = RooflineBound::new(
            gpu,
            &shape,
            r.layout().gpus(),
            r.precision,
            r.concurrency,
            &lengths,
            crate::perf::roofline::Savings::default(),
        );
        let rps = client.requests.len() as f64 / client.duration_s;
        assert!(
            rps <= bound.max_rps() * 1.000_001,
            "{}: {rps:.3} req/s above the ceiling {:.3}",
            r.label,
            bound.max_rps()
        );
    }
}

/// Each group's median error divided out: a group off by one factor comes
/// out exact, a group that scatters keeps its scatter about its median, and
/// a run the replica cannot serve stays unserved.
#[test]
fn centring_by_group_divides_out_each_groups_median_error_and_keeps_its_scatter() {
    use super::calibration::{centred_by_group, RunErrors};
    let (runs, _, _) = shared();
    let run = |i: usize, group: &str, ttft_ms: f64, tpot_ms: f64| {
        let mut r = runs.runs[i].clone();
        r.ttft_ms = ttft_ms;
        r.tpot_ms = tpot_ms;
        (r, group.to_string())
    };
    let errors: Vec<RunErrors> = [
        // Group a: every prediction twice the measured TTFT, half its TPOT.
        (run(0, "a", 100.0, 10.0), Some((200.0, 5.0))),
        (run(1, "a", 300.0, 20.0), Some((600.0, 10.0))),
        (run(2, "a", 50.0, 40.0), Some((100.0, 20.0))),
        // Group b: 1.1, 1.5 and 2 times the measured TTFT (median 1.5).
        (run(3, "b", 100.0, 10.0), Some((110.0, 10.0))),
        (run(4, "b", 100.0, 10.0), Some((150.0, 10.0))),
        (run(5, "b", 100.0, 10.0), Some((200.0, 10.0))),
        (run(6, "b", 100.0, 10.0), None),
        // Group c, two runs: 1 and 4 times the measured TTFT, whose median
        // log error is ln 2 (the two middle values' mean).
        (run(7, "c", 100.0, 10.0), Some((100.0, 10.0))),
        (run(8, "c", 100.0, 10.0), Some((400.0, 10.0))),
        // Group d: no run served, nothing to divide.
        (run(9, "d", 100.0, 10.0), None),
    ]
    .into_iter()
    .map(|((run, group), after_ms)| RunErrors {
        run,
        group,
        roofline_ms: None,
        before_ms: after_ms,
        after_ms,
        held_out_ms: None,
        model_out_ms: None,
    })
    .collect();
    let centred = centred_by_group(&errors, |r| r.after_ms);
    for (e, c) in errors.iter().zip(&centred).take(3) {
        let (ttft, tpot) = c.unwrap();
        assert!((ttft - e.run.ttft_ms).abs() < 1e-9 && (tpot - e.run.tpot_ms).abs() < 1e-9);
    }
    let b: Vec<f64> = centred[3..6].iter().map(|c| c.unwrap().0).collect();
    for (got, want) in b.iter().zip([110.0 / 1.5, 100.0, 200.0 / 1.5]) {
        assert!((got - want).abs() < 1e-9, "{got} against {want}");
    }
    assert_eq!(centred[6], None);
    let c: Vec<f64> = centred[7..9].iter().map(|c| c.unwrap().0).collect();
    assert!(
        (c[0] - 50.0).abs() < 1e-9 && (c[1] - 200.0).abs() < 1e-9,
        "{c:?}"
    );
    assert_eq!(centred[9], None);
    let all = Medians::of_predictions(errors.iter().zip(&centred).map(|(e, c)| (&e.run, *c)));
    assert_eq!((all.runs, all.unserved), (10, 2));
    // |errors| 0, 0, 0, 0.267, 0, 0.333, 0.5, 1: median 0.133.
    assert!(
        (all.ttft_abs_error - 0.4 / 3.0).abs() < 1e-9,
        "{}",
        all.ttft_abs_error
    );
}

/// DeepSeek-V3's first tokens scatter within their groups: with each
/// group's median TTFT error divided out the median |error| is still above
/// the 25% target, while the other two models' fall well within it
/// (docs/model.md §6.5).
#[test]
fn deepseek_v3_first_tokens_miss_the_target_even_with_each_groups_median_error_divided_out() {
    use super::calibration::{centred_by_group, RunErrors};
    let (runs, profiles, engines) = shared_from("data/engine-runs/moe.csv");
    let errors: Vec<RunErrors> = predicted(&runs.runs, &profiles, &engines);
    let centred = centred_by_group(&errors, |r| r.after_ms);
    let of_model = |model: &str| {
        Medians::of_predictions(
            errors
                .iter()
                .zip(&centred)
                .filter(|(e, _)| e.run.model == model)
                .map(|(e, c)| (&e.run, *c)),
        )
    };
    let deepseek = of_model("deepseek-v3");
    assert!(
        deepseek.ttft_abs_error > 0.25 && deepseek.ttft_abs_error < 0.35,
        "{}",
        deepseek.ttft_abs_error
    );
    for model in ["gpt-oss-120b", "qwen3-235b-a22b"] {
        let m = of_model(model);
        assert!(m.ttft_abs_error < 0.15, "{model}: {}", m.ttft_abs_error);
    }
}

/// A model's held-out predictions come from fits that read none of its
/// measurements: multiplying its measured latencies changes none of them,
/// while changing the other model's measurements does (so the test can
/// fail).
#[test]
fn a_fit_that_leaves_a_model_out_reads_none_of_its_runs() {
    use super::calibration::without_model;
    use super::fit::{FitBudget, Loss};
    let (dense, mut profiles, mut engines) = shared();
    let (moe, moe_profiles, _) = shared_from("data/engine-runs/moe.csv");
    profiles.models.extend(moe_profiles.models);
    profiles.gpus.extend(moe_profiles.gpus);
    let pick = |runs: &[MeasuredRun], model: &str| -> Vec<MeasuredRun> {
        runs.iter()
            .filter(|r| r.engine == EngineFamily::Vllm && r.model == model && r.concurrency <= 8)
            .take(4)
            .cloned()
            .collect()
    };
    let mut runs = pick(&dense.runs, "qwen3-32b");
    runs.extend(pick(&moe.runs, "gpt-oss-120b"));
    assert_eq!(runs.len(), 8);
    engines.retain(|e, _| *e == EngineFamily::Vllm);
    let mut start = engines[&EngineFamily::Vllm].clone();
    start.fitted = vec!["graph_layer_us".into(), "server_ms_per_request".into()];
    engines.insert(EngineFamily::Vllm, start);
    let budget = FitBudget {
        max_evaluations: 8,
        loss: Loss::Squared,
    };
    let bar = indicatif::ProgressBar::hidden();
    let held =
        |runs: &[MeasuredRun]| without_model(runs, "qwen3-32b", &engines, &profiles, budget, &bar);
    let base = held(&runs);
    assert_eq!(
        base.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
        vec![0, 1, 2, 3],
        "only the held-out model's runs are predicted"
    );
    assert!(base.iter().all(|(_, p)| p.is_some()));
    // The runs with the measured latencies of those `pick` keeps × `factor`.
    let scaled = |pick: &dyn Fn(&MeasuredRun) -> bool, factor: f64| {
        let mut out = runs.clone();
        for r in out.iter_mut().filter(|r| pick(r)) {
            r.ttft_ms *= factor;
            r.tpot_ms *= factor;
        }
        out
    };
    assert_eq!(
        held(&scaled(&|r| r.model == "qwen3-32b", 7.0)),
        base,
        "the held-out model's measurements were read"
    );
    assert_ne!(
        held(&scaled(&|r| r.model != "qwen3-32b", 3.0)),
        base,
        "the fit did not read the other model's runs"
    );
}

/// No fit leaves a figure's documented bound: runs whose first tokens are
/// 50 times what any figure gives pull the server's time to its bound and
/// no further, and every fitted figure of the result is inside `FITTABLE`.
#[test]
fn a_fit_pushed_past_a_figures_bound_stops_at_the_bound() {
    use super::fit::{fit, FitBudget, Loss};
    use crate::profiles::engine::{SERVER_MS_MAX, SERVER_US_PER_TOKEN_MAX};
    let (dense, profiles, engines) = shared();
    let mut runs: Vec<MeasuredRun> = dense
        .runs
        .iter()
        .filter(|r| r.engine == EngineFamily::Vllm)
        .take(4)
        .cloned()
        .collect();
    assert_eq!(runs.len(), 4);
    for r in &mut runs {
        r.ttft_ms *= 50.0;
    }
    let mut start = engines[&EngineFamily::Vllm].clone();
    start.fitted = vec![
        "server_ms_per_request".into(),
        "server_us_per_prompt_token".into(),
    ];
    let refs: Vec<&MeasuredRun> = runs.iter().collect();
    let budget = FitBudget {
        max_evaluations: 60,
        loss: Loss::Squared,
    };
    let (fitted, _) = fit(
        &refs,
        &start,
        &profiles,
        budget,
        &indicatif::ProgressBar::hidden(),
    );
    assert!(fitted.server_ms_per_request <= SERVER_MS_MAX);
    assert!(fitted.server_us_per_prompt_token <= SERVER_US_PER_TOKEN_MAX);
    // Pulled well past their starting values, towards the bounds.
    assert!(
        fitted.server_ms_per_request > 0.9 * SERVER_MS_MAX,
        "{}",
        fitted.server_ms_per_request
    );
    for (key, lo, hi) in crate::profiles::FITTABLE {
        let v = fitted.figure(key).unwrap();
        assert!((*lo..=*hi).contains(&v), "{key} = {v}");
    }
    assert!(fitted.check(std::path::Path::new("fitted")).is_empty());
}
