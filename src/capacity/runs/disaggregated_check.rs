//! Disaggregated runs checked, not fitted: each run's unit (its prefill
//! and decode workers, `docs/model.md` §4.3) predicted with the starting
//! engine profiles and with the profiles fitted to the aggregated runs, and
//! the median errors per (model, GPU, engine, precision) group and per
//! model, as for the aggregated runs.

use super::fit::{evaluate, Profiles};
use super::medians::Medians;
use super::MeasuredRun;
use crate::profiles::{EngineFamily, EngineProfile};
use serde::Serialize;
use std::collections::BTreeMap;

/// One disaggregated run's predictions.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CheckedRun {
    pub run: MeasuredRun,
    pub group: String,
    /// Predicted mean TTFT and TPOT (ms) with the starting and the fitted
    /// profiles; `None` when the unit cannot serve the run.
    pub before_ms: Option<(f64, f64)>,
    pub after_ms: Option<(f64, f64)>,
    /// Why the unit cannot serve the run, when it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
}

/// One set of runs' medians with either profile.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CheckedGroup {
    pub group: String,
    pub before: Medians,
    pub after: Medians,
}

/// What the disaggregated runs show.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct DisaggregatedCheck {
    /// Whether `after` is the profiles fitted to this calibration's
    /// aggregated runs (else there were none: the starting profiles).
    pub fitted: bool,
    pub runs: Vec<CheckedRun>,
    pub groups: Vec<CheckedGroup>,
    pub models: Vec<CheckedGroup>,
    pub all: CheckedGroup,
    /// Rows set aside when read, by reason (when the check is the whole
    /// calibration: no aggregated run was given).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub set_aside: BTreeMap<String, usize>,
}

/// `runs` (disaggregated) predicted with `starts` and with `fitted` (the
/// starting profiles where an engine has no fit).
pub(crate) fn check(
    runs: &[MeasuredRun],
    starts: &BTreeMap<EngineFamily, EngineProfile>,
    fitted: &BTreeMap<EngineFamily, EngineProfile>,
    profiles: &Profiles,
) -> DisaggregatedCheck {
    let mut before = vec![None; runs.len()];
    let mut after = vec![None; runs.len()];
    let mut refusals = vec![None; runs.len()];
    for (engine, start) in starts {
        let idx: Vec<usize> = (0..runs.len())
            .filter(|&i| runs[i].engine == *engine)
            .collect();
        let mine: Vec<&MeasuredRun> = idx.iter().map(|&i| &runs[i]).collect();
        let b = evaluate(&mine, start, profiles);
        let a = match fitted.get(engine) {
            Some(f) => evaluate(&mine, f, profiles),
            None => b.clone(),
        };
        for (k, &i) in idx.iter().enumerate() {
            before[i] = b[k];
            after[i] = a[k];
            let r = &runs[i];
            if b[k].is_none() {
                refusals[i] = match (profiles.gpus.get(&r.gpu), profiles.models.get(&r.model)) {
                    (Some(gpu), Some(model)) => super::refusal(r, start, gpu, model)
                        .or_else(|| Some("its replay served no request".to_string())),
                    _ => Some("its GPU or model profile was not loaded".to_string()),
                };
            }
        }
    }
    let checked: Vec<CheckedRun> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| CheckedRun {
            run: r.clone(),
            group: r.group(),
            before_ms: before[i],
            after_ms: after[i],
            refusal: refusals[i].clone(),
        })
        .collect();
    let medians = |name: String, pick: &dyn Fn(&CheckedRun) -> bool| CheckedGroup {
        group: name,
        before: Medians::of_predictions(
            checked
                .iter()
                .filter(|r| pick(r))
                .map(|r| (&r.run, r.before_ms)),
        ),
        after: Medians::of_predictions(
            checked
                .iter()
                .filter(|r| pick(r))
                .map(|r| (&r.run, r.after_ms)),
        ),
    };
    let groups: std::collections::BTreeSet<String> =
        checked.iter().map(|r| r.group.clone()).collect();
    let models: std::collections::BTreeSet<String> =
        checked.iter().map(|r| r.run.model.clone()).collect();
    DisaggregatedCheck {
        fitted: !fitted.is_empty(),
        groups: groups
            .into_iter()
            .map(|g| medians(g.clone(), &|r| r.group == g))
            .collect(),
        models: models
            .into_iter()
            .map(|m| medians(m.clone(), &|r| r.run.model == m))
            .collect(),
        all: medians("all".into(), &|_| true),
        runs: checked,
        set_aside: BTreeMap::new(),
    }
}
