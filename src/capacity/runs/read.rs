//! Reading measured benchmark runs: rows in the columns of the shared
//! `engine-runs/runs.csv` (AIConfigurator's silicon sample), and the JSON a
//! `vllm bench serve --save-result` writes (its engine, GPU, TP and
//! precision given on the command line). A row the planner cannot model
//! (pipeline-parallel, a model without a profile, a GPU
//! without one, a weight format it has no units for) is set aside with its
//! reason, counted; a row that cannot be read is an error naming its row
//! and column.

use super::{MeasuredRun, RunLengths};
use crate::base::error::{PlannerError, Problem};
use crate::base::text::excerpt;
use crate::perf::Layout;
use crate::profiles::precision::Precision;
use crate::profiles::{known_ids, EngineFamily};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The runs of some files, and the rows set aside by reason.
#[derive(Debug, Default)]
pub(crate) struct Runs {
    pub runs: Vec<MeasuredRun>,
    pub set_aside: BTreeMap<String, usize>,
    /// Every row set aside, in file order.
    pub set_aside_rows: Vec<SetAside>,
}

/// A row the planner does not model, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct SetAside {
    /// The row's id (or `line N` in a file without ids).
    pub label: String,
    /// `file:line`.
    pub location: String,
    pub reason: String,
}

/// The columns a runs file must have.
const COLUMNS: &[&str] = &[
    "backend",
    "backend_version",
    "model_path",
    "system",
    "precision",
    "mode",
    "isl",
    "osl",
    "batch_size",
    "tp_size",
    "pp_size",
    "attention_dp_size",
    "silicon_ttft_ms",
    "silicon_tpot_ms",
];

/// The GPU profile each `system` of the shared file runs on.
const SYSTEMS: &[(&str, &str)] = &[
    ("h100_sxm", "h100-sxm"),
    ("h200_sxm", "h200"),
    ("b200_sxm", "b200"),
    ("b300_sxm", "b300"),
    ("gb200", "gb200"),
    ("gb300", "gb300"),
];

/// A model profile that measured runs name: its id, and whether it is a
/// mixture of experts (its runs' layouts are read, §6.5 of docs/model.md).
#[derive(Debug, Clone)]
pub(crate) struct NamedModel {
    pub id: String,
    pub moe: bool,
}

/// Model profiles by published name (`hf_id` and `checkpoints`), from
/// `profiles/models`, each read once.
pub(crate) fn models_by_name(profiles_dir: &Path) -> BTreeMap<String, NamedModel> {
    let dir = profiles_dir.join("models");
    let mut out = BTreeMap::new();
    for id in known_ids(&dir) {
        if let Ok(m) = crate::profiles::load_model(profiles_dir, &id) {
            let moe = m.moe.is_some();
            for name in m.hf_id.into_iter().chain(m.checkpoints) {
                out.insert(
                    name,
                    NamedModel {
                        id: id.clone(),
                        moe,
                    },
                );
            }
        }
    }
    out
}

/// Reads a runs file in the shared file's columns.
pub(crate) fn read_csv(
    path: &Path,
    profiles_dir: &Path,
    into: &mut Runs,
) -> Result<(), PlannerError> {
    let text = crate::base::text::read_text(path).map_err(|p| PlannerError::Runs(vec![p]))?;
    let mut lines = text.lines().enumerate();
    let Some((_, header)) = lines.next() else {
        return Err(PlannerError::Runs(vec![Problem::new(
            path,
            "",
            "the file is empty; a runs file starts with a header row naming its columns (as data/engine-runs/moe.csv does; data/engine-runs/README.md lists them)",
        )]));
    };
    let names: Vec<&str> = header.split(',').map(str::trim).collect();
    let missing: Vec<&str> = COLUMNS
        .iter()
        .copied()
        .filter(|c| !names.contains(c))
        .collect();
    if !missing.is_empty() {
        return Err(PlannerError::Runs(vec![Problem::new(
            path,
            "line 1",
            format!(
                "the header lacks the columns {}; a runs file has the columns of data/engine-runs/*.csv (data/engine-runs/README.md lists them)",
                missing.join(", ")
            ),
        )]));
    }
    let col = |name: &str| names.iter().position(|n| *n == name).unwrap_or(0);
    let at: BTreeMap<&str, usize> = COLUMNS.iter().map(|&c| (c, col(c))).collect();
    let id_col = names.iter().position(|n| *n == "id");
    let source_col = names.iter().position(|n| *n == "silicon_data_source");
    let models = models_by_name(profiles_dir);
    let (moe_tp_col, moe_ep_col) = (
        names.iter().position(|n| *n == "moe_tp_size"),
        names.iter().position(|n| *n == "moe_ep_size"),
    );
    let gpus = known_ids(&profiles_dir.join("gpus"));
    let mut problems = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let row = i + 1;
        if line.contains('"') {
            problems.push(Problem::new(
                path,
                format!("line {row}"),
                "quoted fields are not read: a runs file's fields hold no commas",
            ));
            continue;
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.len() != names.len() {
            problems.push(Problem::new(
                path,
                format!("line {row}"),
                format!(
                    "{} fields where the header names {}",
                    cells.len(),
                    names.len()
                ),
            ));
            continue;
        }
        let cell = |name: &str| cells[at[name]];
        let mut bad = |name: &str, what: &str| {
            problems.push(Problem::new(
                path,
                format!("line {row}, column `{name}`"),
                format!("{what}, got `{}`", excerpt(cell(name).as_bytes())),
            ));
        };
        // Rows the planner does not model, set aside with their reason.
        let stated = id_col.and_then(|c| concurrency_in_id(cells[c]));
        let disaggregated = cell("mode") == "disagg";
        let reason = if !disaggregated
            && stated.is_some_and(|s| Some(s) != number(cell("batch_size")))
        {
            Some("the id's concurrency (`_cN_`) and `batch_size` disagree: which one the client ran is unknown".to_string())
        } else if !disaggregated && cell("mode") != "agg" {
            Some(format!(
                "mode `{}` (agg and disagg are read)",
                excerpt(cell("mode").as_bytes())
            ))
        } else if number(cell("pp_size")).is_some_and(|p| p > 1.0) {
            Some("pipeline-parallel".to_string())
        } else if !models.contains_key(cell("model_path")) {
            Some(format!(
                "model `{}` has no profile (a model profile names it in `hf_id`)",
                excerpt(cell("model_path").as_bytes())
            ))
        } else {
            match SYSTEMS.iter().find(|s| s.0 == cell("system")) {
                Some((_, gpu)) if gpus.iter().any(|g| g == gpu) => None,
                _ => Some(format!(
                    "system `{}` has no GPU profile",
                    excerpt(cell("system").as_bytes())
                )),
            }
        };
        let reason = reason.or_else(|| match precision_of(cell("precision")) {
            Ok(_) => None,
            Err(()) => Some(format!(
                "weight format `{}` is not modelled (bf16, fp8 and fp4 are)",
                excerpt(cell("precision").as_bytes())
            )),
        });
        let moe = models.get(cell("model_path")).is_some_and(|m| m.moe);
        let sides = disaggregated.then(|| {
            let named = |name: &str| names.iter().position(|n| *n == name).map(|c| cells[c]);
            super::read_disaggregated::disaggregated_of(named, moe, stated)
        });
        let layout = match &sides {
            Some(Ok((d, _))) => Ok(d.decode.layout),
            Some(Err(why)) => Err(why.clone()),
            None => layout_of(
                number(cell("tp_size")),
                number(cell("attention_dp_size")),
                moe_tp_col.and_then(|c| number(cells[c])),
                moe_ep_col.and_then(|c| number(cells[c])),
                moe,
            ),
        };
        let sides = sides.and_then(Result::ok);
        let layout = match (reason, layout) {
            (Some(reason), _) | (None, Err(reason)) => {
                into.set_aside_rows.push(SetAside {
                    label: id_col.map_or_else(|| format!("line {row}"), |c| cells[c].to_string()),
                    location: format!("{}:{row}", path.display()),
                    reason: reason.clone(),
                });
                *into.set_aside.entry(reason).or_insert(0) += 1;
                continue;
            }
            (None, Ok(layout)) => layout,
        };
        let Some(engine) = EngineFamily::parse(cell("backend")) else {
            bad("backend", "the engine must be vllm, sglang or trtllm");
            continue;
        };
        let mut count = |name: &str, max: f64| match number(cell(name)) {
            Some(v) if v >= 1.0 && v <= max && v.fract() == 0.0 => Some(v as u32),
            _ => {
                bad(name, &format!("a whole number from 1 to {max}"));
                None
            }
        };
        let (isl, osl) = (count("isl", 1_048_576.0), count("osl", 1_048_576.0));
        let (c, tp) = match sides {
            Some((_, concurrency)) => (Some(concurrency), Some(layout.tp)),
            None => (count("batch_size", 65_536.0), count("tp_size", 64.0)),
        };
        let mut latency = |name: &str| match number(cell(name)) {
            Some(v) if v > 0.0 && v < 1e9 => Some(v),
            _ => {
                bad(name, "a latency in ms above 0");
                None
            }
        };
        let (ttft, tpot) = (latency("silicon_ttft_ms"), latency("silicon_tpot_ms"));
        let (Some(isl), Some(osl), Some(c), Some(_), Some(ttft), Some(tpot)) =
            (isl, osl, c, tp, ttft, tpot)
        else {
            continue;
        };
        let gpu = SYSTEMS
            .iter()
            .find(|s| s.0 == cell("system"))
            .map_or("", |s| s.1);
        let lengths = source_col.map_or(RunLengths::Fixed, |c| lengths_of(cells[c]));
        into.runs.push(MeasuredRun {
            label: id_col.map_or_else(|| format!("line {row}"), |c| cells[c].to_string()),
            location: format!("{}:{row}", path.display()),
            model: models[cell("model_path")].id.clone(),
            gpu: gpu.to_string(),
            engine,
            engine_version: cell("backend_version").to_string(),
            precision: precision_of(cell("precision")).unwrap_or(Precision::Bf16),
            tp: layout.tp,
            ep: layout.ep,
            attention_dp: layout.attention_dp,
            moe,
            input_tokens: isl,
            output_tokens: osl,
            concurrency: c,
            prompts: c.saturating_mul(10),
            lengths,
            recv_interval_steps: recv_interval_of(lengths, engine, gpu, layout.attention_dp, c),
            ttft_ms: ttft,
            tpot_ms: tpot,
            disaggregated: sides.map(|(d, _)| d),
        });
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(PlannerError::Runs(crate::base::located::listed(
            problems,
            &PathBuf::from(path),
        )))
    }
}

/// The GPUs on which InferenceX's SGLang scripts set the scheduler's
/// receive interval (B200 and B300; its H200 scripts leave the default).
const INFERENCEX_RECV_INTERVAL_GPUS: &[&str] = &["b200", "b300"];

/// The decode steps between the SGLang scheduler's receipts of new requests
/// in a row's launch. InferenceX's single-node SGLang scripts for Blackwell
/// (`benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200.sh`,
/// `dsr1_fp8_b200.sh`, `dsr1_fp4_b300.sh`, `dsr1_fp8_b300.sh`, and the
/// Qwen3.5 ones) pass `--scheduler-recv-interval 10` below concurrency 16
/// and 30 from it, and 1 with data-parallel attention (which the scheduler
/// requires); its H200 scripts pass none. Every other row, and every
/// other engine, receives at every step.
pub(crate) fn recv_interval_of(
    lengths: RunLengths,
    engine: EngineFamily,
    gpu: &str,
    attention_dp: u32,
    concurrency: u32,
) -> u32 {
    let set = lengths == RunLengths::InferenceX
        && engine == EngineFamily::Sglang
        && attention_dp <= 1
        && INFERENCEX_RECV_INTERVAL_GPUS.contains(&gpu);
    match (set, concurrency) {
        (false, _) => 1,
        (true, c) if c < 16 => 10,
        (true, _) => 30,
    }
}

/// How a row's client drew its lengths, from its `silicon_data_source`:
/// InferenceX's rows (its database dump, `db-dump/…` with the workflow run,
/// and its dated result exports, `source_file=YYYY-MM-DD.csv`) come from its
/// client's random dataset at range ratio 0.8; the others (AIConfigurator's
/// own collection) state fixed lengths.
fn lengths_of(source: &str) -> RunLengths {
    let export = source
        .strip_prefix("source_file=")
        .and_then(|s| s.split(';').next())
        .and_then(|f| f.strip_suffix(".csv"))
        .is_some_and(|d| {
            d.len() == 10
                && d.bytes().enumerate().all(|(i, b)| match i {
                    4 | 7 => b == b'-',
                    _ => b.is_ascii_digit(),
                })
        });
    if source.starts_with("db-dump/") || export {
        RunLengths::InferenceX
    } else {
        RunLengths::Fixed
    }
}

/// The concurrency an id names as `_cN_`, if it does.
fn concurrency_in_id(id: &str) -> Option<f64> {
    id.split('_').find_map(|part| {
        let digits = part.strip_prefix('c')?;
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| digits.parse().ok())
            .flatten()
    })
}

/// A number, or `None`.
fn number(text: &str) -> Option<f64> {
    text.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// The weight precision a runs row names: empty and `bf16` are BF16,
/// `fp4` (NVFP4 or MXFP4 experts) FP4.
fn precision_of(text: &str) -> Result<Precision, ()> {
    match text {
        "" | "bf16" => Ok(Precision::Bf16),
        "fp8" => Ok(Precision::Fp8),
        "fp4" => Ok(Precision::Fp4),
        _ => Err(()),
    }
}

/// GPUs in one node of every system of the shared file.
const NODE_GPUS: f64 = 8.0;

/// The layout a row records, or why it is set aside. A dense model runs
/// tensor parallelism alone (TP × attention-DP must be TP). A mixture of
/// experts runs TP × attention-DP GPUs with its experts split as moe_tp ×
/// moe_ep of them. Rows whose TP × attention-DP exceeds one node while
/// moe_tp × moe_ep equals it are single-node runs recorded as a product
/// (`tp8 ep8` written as tp 64 = 8 × 8, as the ids and the latencies of
/// the same configurations show): they are read as moe_tp GPUs with EP
/// moe_ep. The rest must multiply out.
fn layout_of(
    tp: Option<f64>,
    dp: Option<f64>,
    moe_tp: Option<f64>,
    moe_ep: Option<f64>,
    moe: bool,
) -> Result<Layout, String> {
    let whole = |v: Option<f64>| match v {
        None | Some(0.0) => Some(1),
        Some(v) if v >= 1.0 && v.fract() == 0.0 && v <= 1024.0 => Some(v as u32),
        Some(_) => None,
    };
    let (Some(tp), Some(dp), Some(moe_tp), Some(moe_ep)) =
        (whole(tp), whole(dp), whole(moe_tp), whole(moe_ep))
    else {
        return Err("the layout columns (`tp_size`, `attention_dp_size`, `moe_tp_size`, `moe_ep_size`) are not whole numbers".into());
    };
    if !moe {
        if dp > 1 {
            return Err("data-parallel attention on a dense model".into());
        }
        return Ok(Layout::tp(tp));
    }
    let recorded = tp * dp;
    if f64::from(recorded) > NODE_GPUS && moe_tp * moe_ep == recorded && moe_ep > 1 {
        let gpus = moe_tp;
        let (tp, dp) = if dp > 1 {
            (tp, dp / moe_ep)
        } else {
            (tp / moe_ep, 1)
        };
        if tp * dp == gpus && gpus.is_multiple_of(moe_ep) {
            return Ok(Layout {
                tp,
                ep: moe_ep,
                attention_dp: dp,
            });
        }
    } else if moe_tp * moe_ep == recorded {
        return Ok(Layout {
            tp,
            ep: moe_ep,
            attention_dp: dp,
        });
    }
    Err("the MoE layout columns do not multiply out (`moe_tp_size` x `moe_ep_size` differs from `tp_size` x `attention_dp_size`)".into())
}

/// What a vLLM result file does not say, from the command line.
#[derive(Debug, Clone)]
pub(crate) struct GivenConfig {
    pub gpu: String,
    pub tp: u32,
    pub engine: EngineFamily,
    pub precision: Precision,
    /// The model profile id, when the file's `model_id` names none.
    pub model: Option<String>,
}

#[derive(serde::Deserialize)]
struct VllmSummary {
    #[serde(default)]
    model_id: Option<String>,
    #[serde(default)]
    max_concurrency: Option<u32>,
    completed: u32,
    total_input_tokens: u64,
    total_output_tokens: u64,
    mean_ttft_ms: f64,
    mean_tpot_ms: f64,
}

/// Reads a `vllm bench serve --save-result` file: one run of `completed`
/// prompts at `max_concurrency`, of the mean lengths it reports.
pub(crate) fn read_vllm_json(
    path: &Path,
    given: &GivenConfig,
    profiles_dir: &Path,
    into: &mut Runs,
) -> Result<(), PlannerError> {
    let text = crate::base::text::read_text(path).map_err(|p| PlannerError::Runs(vec![p]))?;
    let s: VllmSummary = serde_json::from_str(&text).map_err(|e| {
        PlannerError::Runs(vec![Problem::new(
            path,
            format!("{}:{}", e.line(), e.column()),
            format!("{e}; a vLLM result file (--save-result) has `completed`, `total_input_tokens`, `total_output_tokens`, `mean_ttft_ms`, `mean_tpot_ms` and `max_concurrency`"),
        )])
    })?;
    let problem =
        |key: &str, message: String| PlannerError::Runs(vec![Problem::new(path, key, message)]);
    let Some(c) = s.max_concurrency.filter(|&c| c >= 1) else {
        return Err(problem("max_concurrency", "the run has no `max_concurrency`: calibration reads closed-loop runs (vllm bench serve --max-concurrency N)".into()));
    };
    if s.completed == 0 {
        return Err(problem("completed", "the run completed no request".into()));
    }
    for (key, v) in [
        ("mean_ttft_ms", s.mean_ttft_ms),
        ("mean_tpot_ms", s.mean_tpot_ms),
    ] {
        if !(v.is_finite() && v > 0.0) {
            return Err(problem(key, format!("a latency in ms above 0, got {v}")));
        }
    }
    let models = models_by_name(profiles_dir);
    let model = match (&given.model, &s.model_id) {
        (Some(m), _) => m.clone(),
        (None, Some(name)) => match models.get(name) {
            Some(m) => m.id.clone(),
            None => {
                return Err(problem(
                    "model_id",
                    format!(
                        "no model profile names `{}` in `hf_id`; pass --model with a profile id",
                        excerpt(name.as_bytes())
                    ),
                ))
            }
        },
        (None, None) => {
            return Err(problem(
                "model_id",
                "the file names no model; pass --model with a profile id".into(),
            ))
        }
    };
    let n = u64::from(s.completed);
    into.runs.push(MeasuredRun {
        label: path
            .file_name()
            .map_or_else(String::new, |f| f.to_string_lossy().into_owned()),
        location: path.display().to_string(),
        model,
        gpu: given.gpu.clone(),
        engine: given.engine,
        engine_version: String::new(),
        precision: given.precision,
        tp: given.tp,
        ep: 1,
        attention_dp: 1,
        moe: false,
        input_tokens: (s.total_input_tokens / n).max(1) as u32,
        output_tokens: (s.total_output_tokens / n).max(1) as u32,
        concurrency: c,
        prompts: s.completed,
        lengths: RunLengths::Fixed,
        recv_interval_steps: 1,
        ttft_ms: s.mean_ttft_ms,
        tpot_ms: s.mean_tpot_ms,
        disaggregated: None,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(tp: u32, ep: u32, attention_dp: u32) -> Layout {
        Layout {
            tp,
            ep,
            attention_dp,
        }
    }

    #[test]
    fn inferencex_rows_are_told_by_their_source() {
        for source in [
            "db-dump/2026-04-27; config_id=81; silicon_concurrency=4",
            "source_file=2026-04-06.csv; model=GPT-OSS-120B; silicon_concurrency=4",
        ] {
            assert_eq!(lengths_of(source), RunLengths::InferenceX, "{source}");
        }
        for source in [
            "source_file=/Users/x/aic-auto-gap-analysis/data/h100_sxm/trtllm/1.0.0rc3/Qwen_Qwen3-32B.csv; silicon_concurrency=4",
            "source_file=2026-4-06.csv",
            "",
        ] {
            assert_eq!(lengths_of(source), RunLengths::Fixed, "{source}");
        }
    }

    #[test]
    fn inferencex_lengths_are_drawn_from_four_fifths_to_the_whole() {
        let l = RunLengths::InferenceX.draw(4_000, 1024, 8192);
        assert!(l
            .iter()
            .all(|&(i, o)| (819..=1024).contains(&i) && (6553..=8192).contains(&o)));
        let mean = l.iter().map(|&(i, _)| f64::from(i)).sum::<f64>() / 4_000.0;
        assert!((mean / 1024.0 - 0.9).abs() < 0.005, "{mean}");
        assert_eq!(l, RunLengths::InferenceX.draw(4_000, 1024, 8192));
        assert_eq!(RunLengths::Fixed.draw(3, 7, 5), vec![(7, 5); 3]);
        assert_eq!(RunLengths::InferenceX.draw(2, 1, 1), vec![(1, 1); 2]);
    }

    #[test]
    fn the_recorded_layouts_are_read_as_the_runs_ran() {
        let n = Some;
        // Dense: tensor parallelism alone; the MoE columns mean nothing.
        assert_eq!(
            layout_of(n(4.0), None, n(0.0), n(0.0), false),
            Ok(l(4, 1, 1))
        );
        assert!(layout_of(n(1.0), n(4.0), None, None, false).is_err());
        // MoE, multiplied out: TP 4 with experts 1 x 4 is EP 4 on 4 GPUs.
        assert_eq!(
            layout_of(n(4.0), None, n(1.0), n(4.0), true),
            Ok(l(4, 4, 1))
        );
        assert_eq!(
            layout_of(n(4.0), n(1.0), n(2.0), n(2.0), true),
            Ok(l(4, 2, 1))
        );
        assert_eq!(
            layout_of(n(8.0), n(1.0), n(8.0), n(1.0), true),
            Ok(l(8, 1, 1))
        );
        // Recorded as a product past one node: `tp8 ep8` is TP 8 on 8 GPUs.
        assert_eq!(
            layout_of(n(64.0), n(1.0), n(8.0), n(8.0), true),
            Ok(l(8, 8, 1))
        );
        assert_eq!(
            layout_of(n(16.0), n(1.0), n(4.0), n(4.0), true),
            Ok(l(4, 4, 1))
        );
        // ... and with data-parallel attention: 8 ranks of TP 1.
        assert_eq!(
            layout_of(n(1.0), n(64.0), n(8.0), n(8.0), true),
            Ok(l(1, 8, 8))
        );
        // Columns that do not multiply out are set aside.
        assert!(layout_of(n(1.0), None, n(2.0), n(1.0), true).is_err());
        assert!(layout_of(n(2.5), None, None, None, true).is_err());
    }
}
