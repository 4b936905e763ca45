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
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
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
