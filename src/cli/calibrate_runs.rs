//! `planner calibrate --runs`: engine profiles fitted to measured runs.

use super::calibrate::CalibrateArgs;
use super::engine_arg::load_engine_arg;
use super::output::{Output, Outputs};
use super::{emit, finite};
use crate::base::error::PlannerError;
use crate::base::progress::Progress;
use crate::capacity::runs::calibration::{calibrate, Calibration, EngineFit};
use crate::capacity::runs::fit::Profiles;
use crate::capacity::runs::read::{read_csv, read_vllm_json, GivenConfig, Runs};
use crate::profiles::precision::Precision;
use crate::profiles::{load_gpu, load_model, EngineFamily, EngineProfile};
use crate::report::{self, Format};
use std::collections::BTreeMap;
use std::fmt::Write;

pub(super) fn calibrate_runs(args: &CalibrateArgs) -> Result<(), PlannerError> {
    let start: Vec<(String, EngineProfile)> = args
        .engine
        .iter()
        .map(|e| load_engine_arg(&args.profiles, e))
        .collect::<Result<_, _>>()?;
    let mut runs = Runs::default();
    for file in &args.runs {
        if file.extension().is_some_and(|e| e == "json") {
            let given = given_config(args, start.first().map(|s| &s.1))?;
            read_vllm_json(file, &given, &args.profiles, &mut runs)?;
        } else {
            read_csv(file, &args.profiles, &mut runs)?;
        }
    }
    // Disaggregated runs are checked with the profiles, not fitted to.
    let (disaggregated, aggregated): (Vec<_>, Vec<_>) = std::mem::take(&mut runs.runs)
        .into_iter()
        .partition(|r| r.disaggregated.is_some());
    runs.runs = aggregated;
    if runs.runs.is_empty() && disaggregated.is_empty() {
        let mut why = String::new();
        for (reason, n) in &runs.set_aside {
            let _ = write!(why, "; {n} {reason}");
        }
        return Err(PlannerError::Usage(format!(
            "no run in {} can be modelled{why}",
            args.runs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let mut profiles = Profiles::default();
    for r in runs.runs.iter().chain(&disaggregated) {
        if !profiles.gpus.contains_key(&r.gpu) {
            let gpu =
                load_gpu(&args.profiles, &r.gpu).map_err(|p| PlannerError::Profile(vec![p]))?;
            profiles.gpus.insert(r.gpu.clone(), gpu);
        }
        if !profiles.models.contains_key(&r.model) {
            let model =
                load_model(&args.profiles, &r.model).map_err(|p| PlannerError::Profile(vec![p]))?;
            profiles.models.insert(r.model.clone(), model);
        }
    }
    // A layout given by the flags is checked as `perf` and `predict` check it.
    let from_flags = |r: &&crate::capacity::runs::MeasuredRun| {
        std::path::Path::new(&r.location)
            .extension()
            .is_some_and(|e| e == "json")
    };
    for r in runs.runs.iter().filter(from_flags) {
        // Every run's GPU and model profiles were loaded above.
        let (gpu, model) = (&profiles.gpus[&r.gpu], &profiles.models[&r.model]);
        if let Some(problem) = crate::perf::engine::tp_problem(gpu, model, r.tp) {
            return Err(PlannerError::Usage(format!(
                "--tp {} cannot run the runs of {}: {problem}",
                r.tp, r.location
            )));
        }
    }
    if let Some(bad) = args.fit.iter().find(|k| {
        *k != "max_num_batched_tokens"
            && !crate::profiles::FITTABLE.iter().any(|f| f.0 == k.as_str())
    }) {
        let known: Vec<&str> = crate::profiles::FITTABLE.iter().map(|f| f.0).collect();
        return Err(PlannerError::Usage(format!(
            "--fit `{bad}` is not a figure a calibration fits; it fits: {}, max_num_batched_tokens",
            known.join(", ")
        )));
    }
    let mut starts: BTreeMap<EngineFamily, EngineProfile> = BTreeMap::new();
    let mut start_fitted: BTreeMap<EngineFamily, Vec<String>> = BTreeMap::new();
    for r in runs.runs.iter().chain(&disaggregated) {
        if starts.contains_key(&r.engine) {
            continue;
        }
        let mut profile = match start.iter().find(|(_, p)| p.family == r.engine) {
            Some((_, p)) => p.clone(),
            None => load_engine_arg(&args.profiles, r.engine.as_str())?.1,
        };
        start_fitted.insert(r.engine, profile.fitted.clone());
        if !args.fit.is_empty() {
            profile.fitted.clone_from(&args.fit);
        }
        starts.insert(r.engine, profile);
    }
    if runs.runs.is_empty() {
        // Nothing to fit: the disaggregated runs against the starting
        // profiles alone.
        let mut check = crate::capacity::runs::disaggregated_check::check(
            &disaggregated,
            &starts,
            &BTreeMap::new(),
            &profiles,
        );
        check.set_aside = runs.set_aside;
        finite(&check)?;
        let text = match args.format {
            Format::Json => report::json::render(&check),
            Format::Text => report::runs_text::render_disaggregated(&check, args.per_run),
        };
        return emit(&text);
    }
    let outputs = Outputs::prepare(starts.keys().map(|e| {
        args.out
            .as_ref()
            .map(|dir| Output::new(engine_option(*e), &dir.join(format!("{}.toml", e.as_str()))))
    }))?;
    let c = calibrate(
        &runs.runs,
        &starts,
        &profiles,
        crate::capacity::runs::fit::FitBudget {
            max_evaluations: args.max_evaluations as usize,
            loss: args.loss,
        },
        crate::capacity::runs::calibration::HeldOutFits {
            groups: !args.no_held_out && args.held_out != super::calibrate::HeldOut::Model,
            models: !args.no_held_out && args.held_out != super::calibrate::HeldOut::Group,
        },
        Progress::new(args.quiet),
        (runs.set_aside, runs.set_aside_rows),
    );
    finite(&c)?;
    let mut c = c;
    for e in &mut c.engines {
        e.start_fitted = start_fitted.get(&e.engine).cloned().unwrap_or_default();
    }
    if !disaggregated.is_empty() {
        let fitted: BTreeMap<EngineFamily, EngineProfile> = c
            .engines
            .iter()
            .map(|e| (e.engine, e.profile.clone()))
            .collect();
        let check = crate::capacity::runs::disaggregated_check::check(
            &disaggregated,
            &starts,
            &fitted,
            &profiles,
        );
        finite(&check)?;
        c.disaggregated = Some(check);
    }
    if c.model_out {
        c.model_out_caution = model_out_caution(&starts);
    }
    let mut outputs = outputs;
    for e in &c.engines {
        let option = engine_option(e.engine);
        if outputs.has(option) {
            outputs.write_text(option, &calibrated_profile(e, &c, args))?;
        }
    }
    outputs.commit()?;
    let text = match args.format {
        Format::Json => report::json::render(&c),
        Format::Text => report::runs_text::render(&c, args.per_run),
    };
    emit(&text)
}

/// Why fits that leave a model out may still carry what its runs taught:
/// a starting profile whose figures a calibration fitted (to runs that may
/// include the held-out model's), kept where `--fit` leaves them, and a
/// weak pull towards them where it does not.
fn model_out_caution(starts: &BTreeMap<EngineFamily, EngineProfile>) -> Option<String> {
    let fitted_before: Vec<String> = starts
        .values()
        .filter(|p| p.sources.values().any(|s| s.starts_with("fitted by")))
        .map(|p| p.family.as_str().to_string())
        .collect();
    (!fitted_before.is_empty()).then(|| {
        format!(
            "the starting profiles of {} were themselves fitted to measured runs (their [sources] say so), maybe to the held-out model's: the figures a fit leaves alone keep what those runs taught, and the ones it fits start there; for model-out figures no run of the model has touched, start from profiles/engines/priors and fit every figure (docs/model.md §6.6)",
            fitted_before.join(", ")
        )
    })
}

/// The output option a fitted engine profile is written under.
fn engine_option(e: EngineFamily) -> &'static str {
    match e {
        EngineFamily::Vllm => "--out (vllm.toml)",
        EngineFamily::Sglang => "--out (sglang.toml)",
        EngineFamily::Trtllm => "--out (trtllm.toml)",
    }
}

/// The configuration of the runs in vLLM JSON files, from the flags.
fn given_config(
    args: &CalibrateArgs,
    engine: Option<&EngineProfile>,
) -> Result<GivenConfig, PlannerError> {
    let given = (
        args.gpu.clone(),
        args.tp.filter(|&t| t >= 1),
        engine,
        args.precision.as_deref(),
    );
    let (Some(gpu), Some(tp), Some(engine), Some(precision)) = given else {
        // Every flag missing, named at once.
        let missing: Vec<&str> = [
            ("--gpu", given.0.is_none()),
            ("--tp", given.1.is_none()),
            ("--engine", given.2.is_none()),
            ("--precision", given.3.is_none()),
        ]
        .into_iter()
        .filter_map(|(flag, missing)| missing.then_some(flag))
        .collect();
        return Err(PlannerError::Usage(format!(
            "a vLLM result file does not say which replica it measured: give --gpu, --tp, --engine and --precision (missing {})",
            missing.join(", ")
        )));
    };
    let precision = Precision::parse(precision).ok_or_else(|| {
        PlannerError::Usage(format!(
            "unknown --precision `{precision}`; accepted: bf16, fp8, fp4"
        ))
    })?;
    Ok(GivenConfig {
        gpu,
        tp,
        engine: engine.family,
        precision,
        model: args.model.clone(),
    })
}

/// What a calibrated profile's `source` says after the engine's own.
const FITTED_NOTE: &str = "; figures in `fitted` calibrated on ";

/// The fitted profile as a file: its figures, each fitted one's source
/// saying what it was fitted to.
fn calibrated_profile(e: &EngineFit, c: &Calibration, args: &CalibrateArgs) -> String {
    let mut p = e.profile.clone();
    let files = args
        .runs
        .iter()
        .map(|f| f.display().to_string())
        .collect::<Vec<_>>()
        .join(" ");
    // The flags that shape the written figures and errors: the loss, and
    // which held-out fits made the `model_out_*` errors.
    let loss_flag = format!(
        "{}{}",
        c.loss.flag(),
        if args.no_held_out {
            " --no-held-out"
        } else {
            match args.held_out {
                super::calibrate::HeldOut::Both => "",
                super::calibrate::HeldOut::Group => " --held-out group",
                super::calibrate::HeldOut::Model => " --held-out model",
            }
        }
    );
    let mine: Vec<_> = c
        .groups
        .iter()
        .filter(|g| {
            c.runs
                .iter()
                .any(|r| r.group == g.group && r.run.engine == e.engine)
        })
        .collect();
    let groups = mine
        .iter()
        .map(|g| g.group.clone())
        .collect::<Vec<_>>()
        .join("; ");
    let before = p.sources.clone();
    let documented = |key: &str| {
        before
            .get(key)
            .map(|s| {
                s.split(" [documented: ")
                    .nth(1)
                    .map_or(s.as_str(), |d| d.trim_end_matches(']'))
                    .to_string()
            })
            .filter(|s| !s.starts_with("fitted by"))
    };
    // The keys fitted: the start's, or --fit's (the start was given them).
    for key in &p.fitted.clone() {
        let mut text = format!(
            "fitted by `planner calibrate --runs {files}` to {} runs ({groups})",
            e.runs
        );
        if key == "max_num_batched_tokens" {
            let _ = write!(
                text,
                ", the best of {:?}",
                crate::capacity::runs::fit::BUDGET_CHOICES
            );
        }
        if let Some(d) = documented(key) {
            let _ = write!(text, " [documented: {d}]");
        }
        p.sources.insert(key.clone(), text);
    }
    let base = e
        .profile
        .source
        .split(FITTED_NOTE)
        .next()
        .unwrap_or_default()
        .to_string();
    if !args.fit.is_empty() {
        // The figures this fit left alone keep their fit and sources.
        let mut fitted = e.start_fitted.clone();
        for key in &args.fit {
            if !fitted.contains(key) {
                fitted.push(key.clone());
            }
        }
        p.fitted = fitted;
    }
    let mut o = if args.fit.is_empty() {
        p.source = format!("{base}{FITTED_NOTE}{} runs of {files}", e.runs);
        format!(
            "# {} {} calibrated by `planner calibrate --runs {files}{loss_flag}` on {} runs.\n# Fit loss ({}): {:.4} -> {:.4}.\n",
            p.name, p.version, e.runs, c.loss.describe(), e.loss_before, e.loss_after
        )
    } else {
        p.source = format!(
            "{}; {} calibrated on {} runs of {files}",
            e.profile
                .source
                .split("; ")
                .take_while(|part| !part.contains(" calibrated on ")
                    || part.starts_with("figures in `fitted`"))
                .collect::<Vec<_>>()
                .join("; "),
            args.fit.join(", "),
            e.runs
        );
        format!(
            "# {} {}: {} fitted by `planner calibrate --runs {files} --fit {}{loss_flag}` on {} runs; the other figures as their sources say.\n# Fit loss ({}): {:.4} -> {:.4}.\n",
            p.name,
            p.version,
            args.fit.join(", "),
            args.fit.join(","),
            e.runs,
            c.loss.describe(),
            e.loss_before,
            e.loss_after
        )
    };
    for g in mine {
        let pct = |x: f64| {
            if x.is_finite() {
                format!("{:+.1}%", 100.0 * x)
            } else {
                "n/a".into()
            }
        };
        let _ = writeln!(
            o,
            "# {}: median TPOT error {} -> {}, TTFT {} -> {}",
            g.group,
            pct(g.before.tpot_error),
            pct(g.after.tpot_error),
            pct(g.before.ttft_error),
            pct(g.after.ttft_error)
        );
    }
    p.errors = crate::capacity::runs::calibration::errors_by_gpu(c, e.engine);
    o.push_str(&toml::to_string(&p).unwrap_or_default());
    o
}
