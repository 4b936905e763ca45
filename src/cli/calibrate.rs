//! `planner calibrate`: the latency model against published and measured figures.

use super::{emit, finite};
use crate::base::error::PlannerError;
use crate::report::{self, Format};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub(crate) struct CalibrateArgs {
    /// Folder holding gpus/ and models/.
    #[arg(long, default_value = "profiles")]
    pub profiles: PathBuf,
    /// Instead, compare the roofline with measured kernel timings (Vidur
    /// profiling data: compute/, network/, legacy/) and fit its efficiency
    /// factors.
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = "data/vidur-profiling")]
    pub kernels: Option<PathBuf>,
    /// Instead, fit the engine profiles to measured benchmark runs: files in
    /// the columns of data/engine-runs/*.csv (data/engine-runs/README.md
    /// lists them), or `vllm bench serve
    /// --save-result` JSON (with --gpu, --tp, --engine and --precision).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub runs: Vec<PathBuf>,
    /// An engine profile to start from (an id in profiles/engines, or a
    /// file), one per engine, repeatable; default: each engine's shipped
    /// profile. With a vLLM JSON file, the first names the engine it ran.
    #[arg(long)]
    pub engine: Vec<String>,
    /// GPU profile id of the runs in vLLM JSON files.
    #[arg(long)]
    pub gpu: Option<String>,
    /// Tensor-parallel degree of the runs in vLLM JSON files.
    #[arg(long)]
    pub tp: Option<u32>,
    /// Weight precision of the runs in vLLM JSON files (bf16, fp8).
    #[arg(long)]
    pub precision: Option<String>,
    /// Model profile id of the runs in vLLM JSON files (default: the
    /// profile whose `hf_id` is the file's `model_id`).
    #[arg(long)]
    pub model: Option<String>,
    /// Most evaluations of every run per fit (Nelder-Mead), its starting
    /// simplex counted: the simplex (one evaluation more than the figures
    /// fitted) is always made whole, and no step starts past the limit. A
    /// profile that fits its token budget makes one fit per budget tried.
    #[arg(long, default_value_t = 1500, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub max_evaluations: u32,
    /// What the fit minimises over the runs: `squared` (least squares on
    /// ln(predicted / measured) of mean TTFT and mean TPOT), `absolute`
    /// (least absolute deviations: aimed at the median error, not pulled by
    /// a few runs far off every model) or `capped` (least absolute
    /// deviations with each run's TTFT and TPOT term capped at ln 3, a
    /// factor of 3 off: runs no figure reaches pull no figure; how the MoE
    /// figures are fitted).
    #[arg(long, value_enum, default_value_t = crate::capacity::runs::fit::Loss::Squared)]
    pub loss: crate::capacity::runs::fit::Loss,
    /// Fit only these figures (comma-separated), keeping the rest of each
    /// starting profile: e.g. the mixture-of-experts figures
    /// `expert_imbalance,expert_gemm_efficiency_scale,expert_bandwidth_efficiency_scale,expert_weight_only_scale,moe_layer_us,moe_eager_expert_us,expert_gemm_min_tokens`
    /// on MoE runs, leaving the dense figures as fitted on dense runs.
    /// Default: each profile's `fitted` list.
    #[arg(long, value_delimiter = ',', value_name = "KEY,...")]
    pub fit: Vec<String>,
    /// Skip the held-out fits (one more fit per group, and one per model
    /// and engine): faster, without the held-out errors.
    #[arg(long, conflicts_with = "held_out")]
    pub no_held_out: bool,
    /// Which held-out fits to make: `group` (each (model, GPU, engine,
    /// precision) group predicted by a fit on the engine's other groups),
    /// `model` (each model's runs predicted by fits on the other models'
    /// runs alone: how the figures carry to a model they never saw, the
    /// headline figure) or `both`.
    #[arg(long, value_enum, default_value_t = HeldOut::Both)]
    pub held_out: HeldOut,
    /// Write each fitted engine profile to DIR/<engine>.toml, for a scenario
    /// (`engine = "DIR/vllm.toml"`) or `planner predict --engine`.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// List every run's errors, not only the groups'.
    #[arg(long)]
    pub per_run: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

/// Every mode of `calibrate` reads the GPU and model profiles: without them
/// each run or point would be refused one by one for a profile it cannot
/// find.
pub(super) fn profiles_present(args: &CalibrateArgs) -> Result<(), PlannerError> {
    if args.profiles.join("models").is_dir() && args.profiles.join("gpus").is_dir() {
        return Ok(());
    }
    Err(PlannerError::Usage(format!(
        "no profiles in {} (it needs its gpus/ and models/ folders): run from the repository root or pass --profiles DIR",
        args.profiles.display()
    )))
}

pub(super) fn calibrate(args: &CalibrateArgs) -> Result<(), PlannerError> {
    if let Some(dir) = &args.kernels {
        let c = crate::perf::kernels::calibrate(dir, &args.profiles)?;
        finite(&c)?;
        let text = match args.format {
            Format::Json => report::json::render(&c),
            Format::Text => report::kernels_text::render(&c),
        };
        return emit(&text);
    }
    let points = crate::capacity::published::compare(&args.profiles)?;
    let cache = crate::capacity::simulated::default_cache_dir();
    let (ratios, server) =
        crate::capacity::published::compare_mlperf(&args.profiles, cache.as_deref())?;
    finite(&(&points, &ratios, &server))?;
    let text = match args.format {
        Format::Json => report::json::render(&serde_json::json!({
            "published_points": points,
            "mlperf_ratios": ratios,
            "mlperf_server_over_offline": server,
        })),
        Format::Text => report::calibration_text::render(&points, &ratios, &server),
    };
    emit(&text)
}

/// Which held-out fits `calibrate --runs` makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum HeldOut {
    Group,
    Model,
    Both,
}
