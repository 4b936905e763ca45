//! `planner calibrate --runs`: every run predicted with the starting engine
//! profiles, each engine's free figures fitted to its runs, every run
//! predicted again, each (model, GPU, engine, precision) group predicted
//! by a fit that did not see it (leave one group out; an engine with no
//! other group borrows the other engines' fitted figures there), and each
//! model's runs predicted by fits that saw no run of that model (leave one
//! model out: how the figures carry to a model they were not fitted on).

use super::fit::{evaluate, fit, FitBudget, FitReport, Loss, Profiles};
use super::read::SetAside;
use super::MeasuredRun;
use crate::base::progress::Progress;
use crate::profiles::{EngineFamily, EngineProfile};
use serde::Serialize;
use std::collections::BTreeMap;

/// The relative errors of one run, (predicted − measured) / measured.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RunErrors {
    pub run: MeasuredRun,
    pub group: String,
    /// Predicted mean TTFT and TPOT (ms) by the roofline model (the GPU
    /// profile's eager fixed costs), under the engine's scheduler.
    pub roofline_ms: Option<(f64, f64)>,
    /// Predicted mean TTFT and TPOT (ms) before and after the fit, and by the
    /// fit that left the run's group out; `None` when the replica cannot
    /// serve the run.
    pub before_ms: Option<(f64, f64)>,
    pub after_ms: Option<(f64, f64)>,
    pub held_out_ms: Option<(f64, f64)>,
    /// Predicted by the fit of the run's engine on the other models' runs
    /// alone (`None` also when no such fit was made).
    pub model_out_ms: Option<(f64, f64)>,
}

use super::medians::median;
pub(crate) use super::medians::Medians;

impl Medians {
    /// The medians of `pick`'s predictions over `runs`.
    #[cfg(test)]
    pub(crate) fn of<'a>(
        runs: impl Iterator<Item = &'a RunErrors>,
        pick: impl Fn(&RunErrors) -> Option<(f64, f64)>,
    ) -> Medians {
        Medians::of_predictions(runs.map(|r| (&r.run, pick(r))))
    }
}

/// One group's medians before, after, and held out.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct GroupErrors {
    pub group: String,
    pub roofline: Medians,
    pub before: Medians,
    pub after: Medians,
    pub held_out: Medians,
    /// Predicted by fits that saw no run of the group's model.
    pub model_out: Medians,
    /// The fitted predictions with each group's median log error divided
    /// out ([`centred_by_group`]): the scatter within the groups.
    pub centred: Medians,
    /// Whether the held-out figure came from the engine's starting profile
    /// (no other group of the engine to fit on).
    pub held_out_from_start: bool,
}

/// One engine's fit.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct EngineFit {
    pub engine: EngineFamily,
    pub runs: usize,
    pub loss_before: f64,
    pub loss_after: f64,
    pub evaluations: usize,
    /// (figure, before, after).
    pub figures: Vec<(String, f64, f64)>,
    /// Under the capped loss, the runs the fitted profile predicts more than
    /// 3 times off (which the fit counted at the cap); `None` otherwise.
    pub beyond_cap: Option<super::fit::BeyondCap>,
    #[serde(skip)]
    pub profile: EngineProfile,
    /// The starting profile's own `fitted` list (a fit of some figures
    /// only writes the union).
    #[serde(skip)]
    pub start_fitted: Vec<String>,
}

/// What `calibrate --runs` found.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Calibration {
    pub runs: Vec<RunErrors>,
    pub groups: Vec<GroupErrors>,
    /// The medians of each model's runs, over every group of it.
    pub models: Vec<GroupErrors>,
    pub all: GroupErrors,
    /// Whether each group was also predicted by a fit that left it out.
    pub held_out: bool,
    /// Whether each model was also predicted by fits that left it out (the
    /// held-out fits, with runs of more than one model).
    pub model_out: bool,
    /// Why the model-out figures may have seen the model after all (some
    /// figures kept from starting profiles that were fitted to these runs),
    /// when they may.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_out_caution: Option<String>,
    /// What the fits minimised.
    pub loss: Loss,
    pub engines: Vec<EngineFit>,
    pub set_aside: BTreeMap<String, usize>,
    /// Every row not predicted, with why: the rows set aside when read,
    /// then the runs whose replica cannot serve them.
    pub refused: Vec<SetAside>,
    /// The runs replayed with more of the GPU's memory than the engine's
    /// default fraction (which could not hold them), and the fraction given.
    pub memory_raised: Vec<(String, f64)>,
    /// The disaggregated runs, checked with the starting and the fitted
    /// profiles (not fitted to).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disaggregated: Option<super::disaggregated_check::DisaggregatedCheck>,
}

/// `pick`'s predictions of `runs` with each group's median log error
/// divided out, TTFT and TPOT apart: every served run's prediction times
/// exp(−m), where m is the median of ln(predicted / measured) over the served
/// runs of its group (with an even count, the mean of the middle two). The
/// errors left are each group's scatter about its own median: how its
/// latency changes with concurrency and lengths beyond the model's shape,
/// which a figure that moves a whole group at once (a GPU's, an engine
/// version's, a layout's offset) does not take away. It is not the least
/// such factors can leave: a factor away from its group's median can lower
/// the median |error| by trading the group's runs far off for runs near the
/// line.
pub(crate) fn centred_by_group(
    runs: &[RunErrors],
    pick: impl Fn(&RunErrors) -> Option<(f64, f64)>,
) -> Vec<Option<(f64, f64)>> {
    let mut logs: BTreeMap<&str, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for r in runs {
        if let Some((ttft, tpot)) = pick(r) {
            let entry = logs.entry(r.group.as_str()).or_default();
            entry.0.push((ttft / r.run.ttft_ms).ln());
            entry.1.push((tpot / r.run.tpot_ms).ln());
        }
    }
    let offsets: BTreeMap<&str, (f64, f64)> = logs
        .into_iter()
        .map(|(g, (ttft, tpot))| (g, (median(ttft), median(tpot))))
        .collect();
    runs.iter()
        .map(|r| {
            let (ttft, tpot) = pick(r)?;
            let (a, b) = offsets[r.group.as_str()];
            Some((ttft * (-a).exp(), tpot * (-b).exp()))
        })
        .collect()
}

/// `start` with each fitted figure at the median of the other engines'
/// fitted values (its own where no other engine was fitted): how an engine
/// without runs of its own would be predicted.
fn borrowed_figures(
    start: &EngineProfile,
    engine: EngineFamily,
    fitted: &BTreeMap<EngineFamily, EngineProfile>,
) -> EngineProfile {
    let mut p = start.clone();
    for key in &start.fitted {
        let values: Vec<f64> = fitted
            .iter()
            .filter(|(e, _)| **e != engine)
            .filter_map(|(_, f)| f.figure(key))
            .collect();
        if values.is_empty() {
            continue;
        }
        p.set_figure(key, median(values));
    }
    p
}

/// Which held-out fits [`calibrate`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeldOutFits {
    /// Each group predicted by a fit on the engine's other groups.
    pub groups: bool,
    /// Each model predicted by fits on the other models' runs alone.
    pub models: bool,
}

/// Calibrates `starts` (one profile per engine) on `runs`; `set_aside`:
/// the rows read and not modelled, counted by reason and each with its
/// place.
pub(crate) fn calibrate(
    runs: &[MeasuredRun],
    starts: &BTreeMap<EngineFamily, EngineProfile>,
    profiles: &Profiles,
    budget: FitBudget,
    which: HeldOutFits,
    progress: Progress,
    (set_aside, set_aside_rows): (BTreeMap<String, usize>, Vec<SetAside>),
) -> Calibration {
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, r) in runs.iter().enumerate() {
        groups.entry(r.group()).or_default().push(i);
    }
    let by_engine = |e: EngineFamily, except: Option<&str>| -> Vec<&MeasuredRun> {
        runs.iter()
            .filter(|r| r.engine == e && except.is_none_or(|g| r.group() != g))
            .collect()
    };
    let mut roofline = vec![None; runs.len()];
    let mut before = vec![None; runs.len()];
    let mut after = vec![None; runs.len()];
    let mut held_out = vec![None; runs.len()];
    let mut held_from_start = BTreeMap::new();
    let mut engines = Vec::new();
    let model_names: std::collections::BTreeSet<&str> =
        runs.iter().map(|r| r.model.as_str()).collect();
    let held_out_fits = which.groups;
    let model_out_fits = which.models && model_names.len() > 1;
    let fits = 1
        + if held_out_fits { groups.len() } else { 0 }
        + if model_out_fits {
            model_out_fit_count(runs, starts)
        } else {
            0
        };
    let bar = progress.steps(
        "fitting engine profiles",
        (fits * budget.max_evaluations) as u64,
    );
    let mut fitted_by_engine: BTreeMap<EngineFamily, EngineProfile> = BTreeMap::new();
    for (&engine, start) in starts {
        let mine = by_engine(engine, None);
        if mine.is_empty() {
            continue;
        }
        let index: Vec<usize> = (0..runs.len())
            .filter(|&i| runs[i].engine == engine)
            .collect();
        for (&i, p) in index.iter().zip(evaluate(&mine, start, profiles)) {
            before[i] = p;
        }
        for (&i, p) in index
            .iter()
            .zip(super::fit::evaluate_roofline(&mine, start, profiles))
        {
            roofline[i] = p;
        }
        let (fitted, report): (EngineProfile, FitReport) =
            fit(&mine, start, profiles, budget, &bar);
        let predicted = evaluate(&mine, &fitted, profiles);
        let beyond_cap = super::fit::BeyondCap::of(budget.loss, &mine, &predicted);
        for (&i, p) in index.iter().zip(predicted) {
            after[i] = p;
        }
        engines.push(EngineFit {
            engine,
            runs: mine.len(),
            loss_before: report.loss_before,
            loss_after: report.loss_after,
            evaluations: report.evaluations,
            figures: start
                .fitted
                .iter()
                .map(|k| {
                    (
                        k.clone(),
                        start.fitted_value(k).unwrap_or(0.0),
                        fitted.fitted_value(k).unwrap_or(0.0),
                    )
                })
                .collect(),
            profile: fitted.clone(),
            start_fitted: Vec::new(),
            beyond_cap,
        });
        fitted_by_engine.insert(engine, fitted);
    }
    // Each group predicted by a fit that did not see it: the engine's other
    // groups, or, when it has none, the other engines' fitted figures.
    for (group, members) in groups.iter().filter(|_| held_out_fits) {
        let engine = runs[members[0]].engine;
        let Some(start) = starts.get(&engine) else {
            continue;
        };
        let rest = by_engine(engine, Some(group));
        let held: Vec<&MeasuredRun> = members.iter().map(|&i| &runs[i]).collect();
        let profile = if rest.is_empty() {
            held_from_start.insert(group.clone(), true);
            borrowed_figures(start, engine, &fitted_by_engine)
        } else {
            held_from_start.insert(group.clone(), false);
            fit(&rest, start, profiles, budget, &bar).0
        };
        for (&i, p) in members.iter().zip(evaluate(&held, &profile, profiles)) {
            held_out[i] = p;
        }
    }
    let mut model_out = vec![None; runs.len()];
    for model in model_names.iter().filter(|_| model_out_fits) {
        let predicted = without_model(runs, model, starts, profiles, budget, &bar);
        for (i, p) in predicted {
            model_out[i] = p;
        }
    }
    bar.finish_and_clear();
    let errors: Vec<RunErrors> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| RunErrors {
            run: r.clone(),
            group: r.group(),
            roofline_ms: roofline[i],
            before_ms: before[i],
            after_ms: after[i],
            held_out_ms: held_out[i],
            model_out_ms: model_out[i],
        })
        .collect();
    let centred = centred_by_group(&errors, |r| r.after_ms);
    let summarise = |group: String, members: Vec<usize>| {
        let of = |pick: &dyn Fn(usize) -> Option<(f64, f64)>| {
            Medians::of_predictions(members.iter().map(|&i| (&errors[i].run, pick(i))))
        };
        GroupErrors {
            held_out_from_start: held_from_start.get(&group).copied().unwrap_or(false),
            roofline: of(&|i| errors[i].roofline_ms),
            before: of(&|i| errors[i].before_ms),
            after: of(&|i| errors[i].after_ms),
            held_out: of(&|i| errors[i].held_out_ms),
            model_out: of(&|i| errors[i].model_out_ms),
            centred: of(&|i| centred[i]),
            group,
        }
    };
    let members = |keep: &dyn Fn(&RunErrors) -> bool| -> Vec<usize> {
        (0..errors.len()).filter(|&i| keep(&errors[i])).collect()
    };
    let group_errors = groups
        .keys()
        .map(|g| summarise(g.clone(), members(&|r| &r.group == g)))
        .collect();
    let models = model_names
        .iter()
        .map(|m| summarise((*m).to_string(), members(&|r| r.run.model == *m)))
        .collect();
    let all = summarise("all".into(), members(&|_| true));
    let mut refused = set_aside_rows;
    let mut memory_raised = Vec::new();
    for r in runs {
        let (Some(start), Some(gpu), Some(model)) = (
            starts.get(&r.engine),
            profiles.gpus.get(&r.gpu),
            profiles.models.get(&r.model),
        ) else {
            continue;
        };
        if let Some(reason) = super::refusal(r, start, gpu, model) {
            refused.push(SetAside {
                label: r.label.clone(),
                location: r.location.clone(),
                reason: format!("cannot run: {reason}"),
            });
        } else if let Some(f) = super::run_replica(r, start, gpu, model).1 {
            memory_raised.push((r.label.clone(), f));
        }
    }
    Calibration {
        refused,
        memory_raised,
        disaggregated: None,
        all,
        runs: errors,
        groups: group_errors,
        models,
        held_out: held_out_fits,
        model_out: model_out_fits,
        model_out_caution: None,
        loss: budget.loss,
        engines,
        set_aside,
    }
}

/// The fits a leave-one-model-out pass makes: one per (model, engine) with
/// runs of that engine on another model.
fn model_out_fit_count(
    runs: &[MeasuredRun],
    starts: &BTreeMap<EngineFamily, EngineProfile>,
) -> usize {
    let pairs: std::collections::BTreeSet<(&str, EngineFamily)> = runs
        .iter()
        .filter(|r| starts.contains_key(&r.engine))
        .map(|r| (r.model.as_str(), r.engine))
        .collect();
    pairs
        .iter()
        .filter(|(m, e)| runs.iter().any(|r| r.engine == *e && r.model != *m))
        .count()
}

/// The runs of `model` (by index into `runs`) predicted by fits that saw
/// none of its runs: each engine's figures fitted to its runs of the other
/// models alone; an engine with no run of another model borrows the median
/// of the other engines' figures so fitted (and keeps its starting figures
/// when no engine has such runs). Nothing of `model`'s runs but their
/// lengths, concurrency and layout (what the prediction replays) is read.
pub(crate) fn without_model(
    runs: &[MeasuredRun],
    model: &str,
    starts: &BTreeMap<EngineFamily, EngineProfile>,
    profiles: &Profiles,
    budget: FitBudget,
    bar: &indicatif::ProgressBar,
) -> Vec<(usize, Option<(f64, f64)>)> {
    let mut fitted: BTreeMap<EngineFamily, EngineProfile> = BTreeMap::new();
    for (&engine, start) in starts {
        let others: Vec<&MeasuredRun> = runs
            .iter()
            .filter(|r| r.engine == engine && r.model != model)
            .collect();
        let serves_model = runs.iter().any(|r| r.engine == engine && r.model == model);
        if serves_model && !others.is_empty() {
            fitted.insert(engine, fit(&others, start, profiles, budget, bar).0);
        }
    }
    let mut out = Vec::new();
    for (&engine, start) in starts {
        let index: Vec<usize> = (0..runs.len())
            .filter(|&i| runs[i].engine == engine && runs[i].model == model)
            .collect();
        if index.is_empty() {
            continue;
        }
        let profile = fitted
            .get(&engine)
            .cloned()
            .unwrap_or_else(|| borrowed_figures(start, engine, &fitted));
        let held: Vec<&MeasuredRun> = index.iter().map(|&i| &runs[i]).collect();
        out.extend(index.into_iter().zip(evaluate(&held, &profile, profiles)));
    }
    out
}

/// The measured errors of `engine`'s runs by `<GPU id> <precision>`, and
/// over all of them (`all`): the
/// median |error| of mean TTFT and mean TPOT with the fitted figures, and
/// by the fits that left the run's model out where they were made (runs
/// the replica cannot serve are left out of both).
pub(crate) fn errors_by_gpu(
    c: &Calibration,
    engine: EngineFamily,
) -> BTreeMap<String, crate::profiles::engine::MeasuredError> {
    let mut by: BTreeMap<String, Vec<&RunErrors>> = BTreeMap::new();
    for r in c.runs.iter().filter(|r| r.run.engine == engine) {
        by.entry(format!("{} {}", r.run.gpu, r.run.precision))
            .or_default()
            .push(r);
        by.entry("all".into()).or_default().push(r);
    }
    by.into_iter()
        .filter_map(|(key, runs)| {
            let after = Medians::of_predictions(runs.iter().map(|r| (&r.run, r.after_ms)));
            if after.runs == after.unserved {
                return None;
            }
            let out = Medians::of_predictions(runs.iter().map(|r| (&r.run, r.model_out_ms)));
            let measured = |m: f64| m.is_finite().then_some(m);
            Some((
                key,
                crate::profiles::engine::MeasuredError {
                    runs: (after.runs - after.unserved) as u32,
                    ttft: round4(after.ttft_abs_error),
                    tpot: round4(after.tpot_abs_error),
                    model_out_ttft: measured(out.ttft_abs_error).map(round4),
                    model_out_tpot: measured(out.tpot_abs_error).map(round4),
                },
            ))
        })
        .collect()
}

/// `x` to four decimals (an error written as a profile states it).
fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}
