//! The fit of an engine profile's free figures to measured runs: least
//! squares on the relative error, Σ over runs of ln(predicted TTFT /
//! measured)² + ln(predicted TPOT / measured)² (or least absolute
//! deviations, |ln …| + |ln …|, [`Loss`]), minimised by Nelder–Mead
//! over the figures mapped onto their physical ranges (a logistic map, so
//! the search never leaves them: no negative time, a bandwidth fraction at
//! most 1, efficiency scales at most 1 / the GPU profile's efficiency on
//! every GPU of the runs).

use super::{predict, MeasuredRun};
use crate::profiles::{EngineProfile, GpuProfile, ModelProfile, FITTABLE};
use indicatif::ProgressBar;
use serde::Serialize;
use std::collections::BTreeMap;

/// The GPU and model profiles the runs name, loaded once.
#[derive(Debug, Default)]
pub(crate) struct Profiles {
    pub gpus: BTreeMap<String, GpuProfile>,
    pub models: BTreeMap<String, ModelProfile>,
}

/// The predicted (mean TTFT, mean TPOT) in ms of each run, in order; `None`
/// where the replica cannot serve the run.
pub(crate) fn evaluate(
    runs: &[&MeasuredRun],
    engine: &EngineProfile,
    profiles: &Profiles,
) -> Vec<Option<(f64, f64)>> {
    evaluate_with(runs, engine, profiles, predict)
}

/// [`evaluate`] with the roofline model (the GPU profile's eager fixed
/// costs) under `engine`'s scheduler and budget.
pub(crate) fn evaluate_roofline(
    runs: &[&MeasuredRun],
    engine: &EngineProfile,
    profiles: &Profiles,
) -> Vec<Option<(f64, f64)>> {
    evaluate_with(runs, engine, profiles, super::predict_roofline)
}

/// Each run predicted by `predict`, on all cores, in order.
fn evaluate_with(
    runs: &[&MeasuredRun],
    engine: &EngineProfile,
    profiles: &Profiles,
    predict: impl Fn(&MeasuredRun, &EngineProfile, &GpuProfile, &ModelProfile) -> Option<(f64, f64)>
        + Sync,
) -> Vec<Option<(f64, f64)>> {
    crate::base::parallel::map_in_order(runs, |run| {
        let gpu = profiles.gpus.get(&run.gpu)?;
        let model = profiles.models.get(&run.model)?;
        predict(run, engine, gpu, model)
    })
    .into_iter()
    .map(Option::flatten)
    .collect()
}

/// The squared log error a run that cannot be served counts for, per
/// figure: as if off by a factor of 10.
const UNSERVED_PENALTY: f64 = 5.3;

/// What a fit minimises over the runs, per run the TTFT term plus the TPOT
/// term of the log error e = ln(predicted / measured).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Loss {
    /// The mean of e²: a least-squares fit, pulled by the runs it misses
    /// most.
    Squared,
    /// The mean of |e|: a least-absolute-deviations fit, aimed at the
    /// median error (what the targets measure), which a few runs far off
    /// every model (a harness artefact, a kernel path no figure describes)
    /// do not drag.
    Absolute,
    /// The mean of min(|e|, ln 3), the TTFT and the TPOT term of each run
    /// capped apart: least absolute deviations, with a prediction more than
    /// 3 times off (either way) counting the same however far off it is, so
    /// the runs no figure reaches (first tokens many times later than the
    /// same model's other campaigns measure, a kernel path no figure
    /// describes) pull no figure, while every one within a factor of 3
    /// weighs as under `absolute`.
    Capped,
}

/// How far off (a factor, either way) a run's mean TTFT or TPOT may be
/// before the capped loss stops counting how much further it is.
pub(crate) const CAPPED_FACTOR: f64 = 3.0;

impl Loss {
    /// `e`'s term.
    fn of(self, e: f64) -> f64 {
        match self {
            Loss::Squared => e * e,
            Loss::Absolute => e.abs(),
            Loss::Capped => e.abs().min(CAPPED_FACTOR.ln()),
        }
    }

    /// The |log error| beyond which a run's term stops growing, if this
    /// loss has one.
    fn cap(self) -> Option<f64> {
        (self == Loss::Capped).then(|| CAPPED_FACTOR.ln())
    }

    /// The command-line flag that asks for this loss (none for the default).
    pub(crate) fn flag(self) -> &'static str {
        match self {
            Loss::Squared => "",
            Loss::Absolute => " --loss absolute",
            Loss::Capped => " --loss capped",
        }
    }

    /// How the loss reads in a profile's header and the text report.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Loss::Squared => "mean squared log error of mean TTFT + mean TPOT",
            Loss::Absolute => "mean absolute log error of mean TTFT + mean TPOT",
            Loss::Capped => "mean absolute log error of mean TTFT + mean TPOT, each capped at ln 3",
        }
    }
}

/// Runs the capped loss counts at its cap: how many of `runs` have a
/// predicted mean TTFT, and how many a mean TPOT, more than
/// [`CAPPED_FACTOR`] times off the measured one, either way (a run the
/// replica cannot serve counts in both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct BeyondCap {
    pub ttft: usize,
    pub tpot: usize,
}

impl BeyondCap {
    /// The count under `kind`, `None` for a loss without a cap.
    pub(crate) fn of(
        kind: Loss,
        runs: &[&MeasuredRun],
        predicted: &[Option<(f64, f64)>],
    ) -> Option<Self> {
        let cap = kind.cap()?;
        let beyond = |e: f64| usize::from(e.abs() > cap);
        Some(
            log_errors(runs, predicted).fold(BeyondCap { ttft: 0, tpot: 0 }, |acc, e| {
                let (ttft, tpot) = e.map_or((1, 1), |(t, p)| (beyond(t), beyond(p)));
                BeyondCap {
                    ttft: acc.ttft + ttft,
                    tpot: acc.tpot + tpot,
                }
            }),
        )
    }
}

/// Each run's ln(predicted / measured) of mean TTFT and of mean TPOT;
/// `None` for a run the replica cannot serve.
fn log_errors<'a>(
    runs: &'a [&MeasuredRun],
    predicted: &'a [Option<(f64, f64)>],
) -> impl Iterator<Item = Option<(f64, f64)>> + 'a {
    runs.iter()
        .zip(predicted)
        .map(|(r, p)| p.map(|(ttft, tpot)| ((ttft / r.ttft_ms).ln(), (tpot / r.tpot_ms).ln())))
}

/// The mean over runs of `kind`'s term of ln(pred/meas) of TTFT plus that of
/// TPOT; a run the replica cannot serve counts as off by a factor of 10 in
/// both (at the cap under `capped`).
pub(crate) fn loss(kind: Loss, runs: &[&MeasuredRun], predicted: &[Option<(f64, f64)>]) -> f64 {
    let n = runs.len().max(1) as f64;
    let unserved = kind.of(UNSERVED_PENALTY.sqrt());
    log_errors(runs, predicted)
        .map(|e| e.map_or(2.0 * unserved, |(ttft, tpot)| kind.of(ttft) + kind.of(tpot)))
        .sum::<f64>()
        / n
}

/// The range a fitted figure is searched in for `runs`: its physical range,
/// and for an efficiency scale at most 1 / the efficiency of the GPU
/// profiles of the runs (the product stays at most 1 on each).
pub(crate) fn range(key: &str, runs: &[&MeasuredRun], profiles: &Profiles) -> (f64, f64) {
    let (_, lo, hi) = FITTABLE
        .iter()
        .copied()
        .find(|f| f.0 == key)
        .unwrap_or((key, 0.0, 1.0));
    let gpus = || runs.iter().filter_map(|r| profiles.gpus.get(&r.gpu));
    let cap = match key {
        "gemm_efficiency_scale" => gpus()
            .map(|g| 1.0 / g.compute_efficiency)
            .fold(hi, f64::min),
        "attention_efficiency_scale" => gpus()
            .map(|g| 1.0 / g.attention_efficiency())
            .fold(hi, f64::min),
        "expert_gemm_efficiency_scale" => gpus()
            .map(|g| 1.0 / g.compute_efficiency)
            .fold(hi, f64::min),
        "expert_bandwidth_efficiency_scale" => gpus()
            .map(|g| 1.0 / g.bandwidth_efficiency)
            .fold(hi, f64::min),
        _ => hi,
    };
    (lo, cap.max(lo))
}

/// How the search went.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FitReport {
    pub loss_before: f64,
    pub loss_after: f64,
    pub evaluations: usize,
}

/// The token budgets a fit that frees `max_num_batched_tokens` tries: the
/// budgets the engines document as defaults.
pub(crate) const BUDGET_CHOICES: [u32; 3] = [2048, 4096, 8192];

/// How strongly the fit holds each figure to its starting value: this ×
/// the squared distance on the figure's logistic scale is added to the
/// loss, so a figure the runs say little about keeps its documented value.
pub(crate) const PRIOR_WEIGHT: f64 = 0.002;

/// How long a fit searches and what it minimises.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FitBudget {
    /// Most evaluations of every run per token budget tried.
    pub max_evaluations: usize,
    pub loss: Loss,
}

/// `start` with its fitted figures fitted to `runs`, at most
/// `max_evaluations` evaluations of every run per token budget tried (each
/// of [`BUDGET_CHOICES`] when `fitted` lists `max_num_batched_tokens`).
pub(crate) fn fit(
    runs: &[&MeasuredRun],
    start: &EngineProfile,
    profiles: &Profiles,
    budget: FitBudget,
    bar: &ProgressBar,
) -> (EngineProfile, FitReport) {
    if !start.fitted.iter().any(|k| k == "max_num_batched_tokens") {
        return fit_figures(runs, start, profiles, budget, bar);
    }
    let mut best: Option<(EngineProfile, FitReport)> = None;
    let mut before = None;
    let mut evaluations = 0;
    for tokens in BUDGET_CHOICES {
        let mut p = start.clone();
        p.max_num_batched_tokens = tokens;
        let (fitted, report) = fit_figures(runs, &p, profiles, budget, bar);
        evaluations += report.evaluations;
        if tokens == start.max_num_batched_tokens {
            before = Some(report.loss_before);
        }
        if best
            .as_ref()
            .is_none_or(|b| report.loss_after < b.1.loss_after)
        {
            best = Some((fitted, report));
        }
    }
    let (fitted, mut report) = best.expect("at least one budget");
    report.evaluations = evaluations;
    if let Some(b) = before {
        report.loss_before = b;
    }
    (fitted, report)
}

/// The continuous figures of `start` fitted to `runs`.
fn fit_figures(
    runs: &[&MeasuredRun],
    start: &EngineProfile,
    profiles: &Profiles,
    budget: FitBudget,
    bar: &ProgressBar,
) -> (EngineProfile, FitReport) {
    let kind = budget.loss;
    let keys: Vec<String> = start
        .fitted
        .iter()
        .filter(|k| start.figure(k).is_some())
        .cloned()
        .collect();
    let ranges: Vec<(f64, f64)> = keys.iter().map(|k| range(k, runs, profiles)).collect();
    let to_profile = |z: &[f64]| {
        let mut p = start.clone();
        for ((key, &(lo, hi)), &zi) in keys.iter().zip(&ranges).zip(z) {
            p.set_figure(key, lo + (hi - lo) * logistic(zi));
        }
        p
    };
    let z0: Vec<f64> = keys
        .iter()
        .zip(&ranges)
        .map(|(key, &(lo, hi))| {
            let x = start.figure(key).unwrap_or(lo);
            logit(((x - lo) / (hi - lo).max(1e-300)).clamp(1e-4, 1.0 - 1e-4))
        })
        .collect();
    let mut evaluations = 0;
    let loss_before = loss(kind, runs, &evaluate(runs, start, profiles));
    let prior =
        |z: &[f64]| PRIOR_WEIGHT * z.iter().zip(&z0).map(|(a, b)| (a - b).powi(2)).sum::<f64>();
    let mut objective = |z: &[f64]| {
        evaluations += 1;
        bar.inc(1);
        loss(kind, runs, &evaluate(runs, &to_profile(z), profiles)) + prior(z)
    };
    let f0 = objective(&z0);
    let (z, _) = nelder_mead(&mut objective, &z0, f0, budget.max_evaluations);
    let mut fitted = to_profile(&z);
    for key in &keys {
        if let Some(v) = fitted.figure(key) {
            fitted.set_figure(key, significant(v, 4));
        }
    }
    let loss_after = loss(kind, runs, &evaluate(runs, &fitted, profiles));
    for key in &keys {
        debug_assert!(fitted
            .figure(key)
            .is_some_and(|v| v >= 0.0 && v.is_finite()));
    }
    (
        fitted,
        FitReport {
            loss_before,
            loss_after,
            evaluations,
        },
    )
}

/// `v` rounded to `digits` significant digits (a fitted figure written as
/// the fit evaluated it).
fn significant(v: f64, digits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(digits - 1 - v.abs().log10().floor() as i32);
    (v * scale).round() / scale
}

fn logistic(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

fn logit(p: f64) -> f64 {
    (p / (1.0 - p)).ln()
}

/// Nelder–Mead from `x0` (whose value is `f0`), at most `max_evaluations`
/// evaluations of `f`: the best point and its value.
pub(crate) fn nelder_mead(
    f: &mut impl FnMut(&[f64]) -> f64,
    x0: &[f64],
    f0: f64,
    max_evaluations: usize,
) -> (Vec<f64>, f64) {
    let n = x0.len();
    if n == 0 {
        return (Vec::new(), f0);
    }
    let mut simplex: Vec<(Vec<f64>, f64)> = vec![(x0.to_vec(), f0)];
    let mut used = 1;
    for i in 0..n {
        let mut x = x0.to_vec();
        x[i] += 0.7;
        let fx = f(&x);
        used += 1;
        simplex.push((x, fx));
    }
    let combine = |a: &[f64], b: &[f64], t: f64| -> Vec<f64> {
        a.iter().zip(b).map(|(ai, bi)| ai + t * (bi - ai)).collect()
    };
    while used < max_evaluations {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        let (best, worst) = (simplex[0].1, simplex[n].1);
        if (worst - best).abs() <= 1e-7 * (1.0 + best.abs()) {
            break;
        }
        let centroid: Vec<f64> = (0..n)
            .map(|j| simplex[..n].iter().map(|p| p.0[j]).sum::<f64>() / n as f64)
            .collect();
        let reflected = combine(&centroid, &simplex[n].0, -1.0);
        let fr = f(&reflected);
        used += 1;
        if fr < simplex[0].1 {
            let expanded = combine(&centroid, &simplex[n].0, -2.0);
            let fe = f(&expanded);
            used += 1;
            simplex[n] = if fe < fr {
                (expanded, fe)
            } else {
                (reflected, fr)
            };
        } else if fr < simplex[n - 1].1 {
            simplex[n] = (reflected, fr);
        } else {
            let (toward, ft) = if fr < simplex[n].1 {
                (reflected, fr)
            } else {
                (simplex[n].0.clone(), simplex[n].1)
            };
            let contracted = combine(&centroid, &toward, 0.5);
            let fc = f(&contracted);
            used += 1;
            if fc < ft {
                simplex[n] = (contracted, fc);
            } else {
                let best = simplex[0].0.clone();
                for p in simplex.iter_mut().skip(1) {
                    p.0 = combine(&best, &p.0, 0.5);
                    p.1 = f(&p.0);
                    used += 1;
                }
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    let (x, fx) = simplex.swap_remove(0);
    (x, fx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_absolute_loss_weighs_a_run_far_off_less_than_the_squared_one() {
        // Errors of a factor e and e^3 on TTFT, none on TPOT.
        let e = std::f64::consts::E;
        assert!((Loss::Squared.of(1.0) + Loss::Squared.of(3.0) - 10.0).abs() < 1e-12);
        assert!((Loss::Absolute.of(1.0) + Loss::Absolute.of(-3.0) - 4.0).abs() < 1e-12);
        assert!((Loss::Absolute.of(e.ln()) - 1.0).abs() < 1e-12);
        // An unserved run counts as off by a factor of about 10 either way.
        assert!((Loss::Absolute.of(UNSERVED_PENALTY.sqrt()) - 2.302).abs() < 0.01);
    }

    #[test]
    fn the_capped_loss_is_the_absolute_one_within_a_factor_of_3_and_flat_beyond() {
        for e in [-1.0, -0.3, 0.0, 0.5, 1.09] {
            assert_eq!(Loss::Capped.of(e), Loss::Absolute.of(e));
        }
        let cap = CAPPED_FACTOR.ln();
        for e in [1.2, -2.0, 5.0, -40.0] {
            assert_eq!(Loss::Capped.of(e), cap);
        }
        // A run 10 times off and one 100 times off weigh the same: moving a
        // figure toward either gains nothing while both stay beyond 3 times.
        assert_eq!(Loss::Capped.of(10f64.ln()), Loss::Capped.of(-(100f64.ln())));
        assert_eq!(Loss::Capped.of(UNSERVED_PENALTY.sqrt()), cap);
    }

    #[test]
    fn runs_beyond_the_cap_are_counted_either_way_and_unserved_ones_in_both() {
        let run = |ttft_ms: f64, tpot_ms: f64| MeasuredRun {
            label: String::new(),
            location: String::new(),
            model: "m".into(),
            gpu: "g".into(),
            engine: crate::profiles::EngineFamily::Vllm,
            engine_version: String::new(),
            precision: crate::profiles::precision::Precision::Fp8,
            tp: 1,
            ep: 1,
            attention_dp: 1,
            moe: true,
            input_tokens: 1,
            output_tokens: 1,
            concurrency: 1,
            prompts: 1,
            lengths: crate::capacity::runs::RunLengths::Fixed,
            recv_interval_steps: 1,
            ttft_ms,
            tpot_ms,
            disaggregated: None,
        };
        let runs = [
            run(100.0, 10.0),
            run(100.0, 10.0),
            run(100.0, 10.0),
            run(100.0, 10.0),
        ];
        let refs: Vec<&MeasuredRun> = runs.iter().collect();
        let predicted = [
            // 2.9 times slow and 2.9 times fast: within the cap.
            Some((290.0, 10.0 / 2.9)),
            // 3.1 times fast on TTFT, 4 times slow on TPOT.
            Some((100.0 / 3.1, 40.0)),
            // 10 times slow on TTFT.
            Some((1000.0, 10.0)),
            None,
        ];
        assert_eq!(
            BeyondCap::of(Loss::Capped, &refs, &predicted),
            Some(BeyondCap { ttft: 3, tpot: 2 })
        );
        assert_eq!(BeyondCap::of(Loss::Absolute, &refs, &predicted), None);
    }

    #[test]
    fn nelder_mead_finds_the_minimum_of_a_bowl() {
        let mut f = |x: &[f64]| (x[0] - 1.5).powi(2) + 3.0 * (x[1] + 0.5).powi(2) + 0.25;
        let x0 = [0.0, 0.0];
        let f0 = f(&x0);
        let (x, fx) = nelder_mead(&mut f, &x0, f0, 2_000);
        assert!(
            (x[0] - 1.5).abs() < 1e-3 && (x[1] + 0.5).abs() < 1e-3,
            "{x:?}"
        );
        assert!((fx - 0.25).abs() < 1e-6);
    }
}
