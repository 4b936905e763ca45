//! `planner goodput`: goodput and cost of SLO-met output in a measured log.

use super::{emit, finite};
use crate::base::bounds::Bound;
use crate::base::error::PlannerError;
use crate::replay::goodput::{CostBasis, LimitSource, SloLimits};
use crate::report::{self, Format};
use clap::Args;
use std::path::PathBuf;

/// The accepted range of `goodput`'s numeric options.
pub(super) const GOODPUT_BOUNDS: &[Bound] = &[
    Bound::positive("--ttft-ms", 600_000.0, "ms"),
    Bound::positive("--tpot-ms", 60_000.0, "ms"),
    Bound::positive("--cost-per-hour", 1e12, "per hour"),
    Bound::positive("--duration-s", crate::replay::goodput::MAX_DURATION_S, "s"),
];

#[derive(Debug, Args)]
pub(crate) struct GoodputArgs {
    /// Per-request results: CSV `arrival_s,ttft_ms,e2e_ms,output_tokens[,tier]`
    /// or vLLM benchmark-serving JSON (`ttfts`, `itls`, `output_lens`).
    pub log: PathBuf,
    /// TTFT limit in ms (with --tpot-ms; or take the limits from --scenario).
    #[arg(long, allow_negative_numbers = true)]
    pub ttft_ms: Option<f64>,
    /// TPOT limit in ms.
    #[arg(long, allow_negative_numbers = true)]
    pub tpot_ms: Option<f64>,
    /// Take each tier's limits from this scenario (the log's `tier` column
    /// names the tiers).
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// Cost of the serving fleet per hour, in --currency.
    #[arg(long, allow_negative_numbers = true)]
    pub cost_per_hour: Option<f64>,
    /// Seconds the cost is paid for (default: first arrival to last
    /// completion; for vLLM JSON its `duration`).
    #[arg(long, allow_negative_numbers = true)]
    pub duration_s: Option<f64>,
    /// Label of the cost's currency.
    #[arg(long, default_value = "USD")]
    pub currency: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub(super) fn goodput(args: &GoodputArgs) -> Result<(), PlannerError> {
    let usage = |m: &str| PlannerError::Usage(m.to_string());
    let log = crate::replay::goodput::read_log(&args.log)?;
    let tiers = match (&args.scenario, args.ttft_ms, args.tpot_ms) {
        (Some(path), None, None) => Some(crate::scenario::load(path)?.tiers),
        (None, Some(_), Some(_)) => None,
        (Some(_), _, _) => return Err(usage("give either --scenario or --ttft-ms with --tpot-ms, not both")),
        _ => return Err(usage("give the limits: --ttft-ms and --tpot-ms, or --scenario with tiers named in the log's `tier` column")),
    };
    for (name, value) in [
        ("--ttft-ms", args.ttft_ms),
        ("--tpot-ms", args.tpot_ms),
        ("--cost-per-hour", args.cost_per_hour),
        ("--duration-s", args.duration_s),
    ] {
        if let Some(message) =
            value.and_then(|v| crate::base::bounds::find(GOODPUT_BOUNDS, name).check(name, v))
        {
            return Err(PlannerError::Usage(message));
        }
    }
    let limits = match tiers {
        None => LimitSource::Fixed(SloLimits {
            ttft_ms: args.ttft_ms.unwrap_or(0.0),
            tpot_ms: args.tpot_ms.unwrap_or(0.0),
        }),
        Some(tiers) => LimitSource::Tiers(tiers),
    };
    limits.check(&log, &args.log).map_err(|m| {
        PlannerError::Usage(match &args.scenario {
            Some(path) => format!("{}: {m}", path.display()),
            None => m,
        })
    })?;
    let (duration_s, duration_text) = match (
        args.duration_s,
        crate::replay::goodput::span_s(&log),
        log.duration_s,
    ) {
        (Some(d), _, _) => (d, format!("{d} s (--duration-s)")),
        (None, Some(d), _) => (d, format!("{d:.3} s, first arrival to last completion")),
        (None, None, Some(d)) => (d, format!("{d:.3} s, the benchmark's `duration`")),
        (None, None, None) => (
            0.0,
            "unknown: the log has no arrival times; give --duration-s".into(),
        ),
    };
    let cost = match args.cost_per_hour {
        Some(cost_per_hour) if duration_s > 0.0 => Some(CostBasis {
            cost_per_hour,
            duration_s,
        }),
        Some(_) => return Err(usage(
            "--cost-per-hour needs a duration: this log has no arrival times, so give --duration-s",
        )),
        None => None,
    };
    let r = crate::replay::goodput::report(
        &log,
        &args.log.display().to_string(),
        &limits,
        crate::replay::goodput::Span {
            duration_s,
            source: duration_text,
        },
        cost,
        &args.currency,
    );
    finite(&r)?;
    let text = match args.format {
        Format::Text => report::goodput_text::render(&r),
        Format::Json => report::json::render(&r),
    };
    emit(&text)
}
