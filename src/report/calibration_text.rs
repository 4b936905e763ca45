//! Text rendering of `planner calibrate`.

use crate::capacity::published::{Comparison, RatioComparison, ServerComparison};
use std::fmt::Write as _;

/// The published points and MLPerf ratios with the model's predictions.
pub fn render(
    points: &[Comparison],
    ratios: &[RatioComparison],
    server: &[ServerComparison],
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<39} {:<15} {:<9} {:>4} {:>2} {:>11} {:>10} {:>10} {:>7} {:>6} {:>10} {:>7}",
        "source",
        "model",
        "gpu",
        "GPUs",
        "TP",
        "ISL/OSL",
        "published",
        "predicted",
        "error",
        "batch",
        "trtllm",
        "error"
    );
    for r in points {
        let _ = writeln!(
            out,
            "{:<39} {:<15} {:<9} {:>4} {:>2} {:>11} {:>10.0} {:>10.0} {:>+6.0}% {:>6} {:>10.0} {:>+6.0}%",
            r.source,
            r.model,
            r.gpu,
            r.gpus,
            r.tensor_parallel,
            format!("{}/{}", r.input_tokens, r.output_tokens),
            r.published_tokens_per_s,
            r.predicted_tokens_per_s,
            r.relative_error * 100.0,
            r.batch,
            r.engine_tokens_per_s,
            r.engine_relative_error * 100.0
        );
    }
    let errors: Vec<f64> = points.iter().map(|r| r.relative_error.abs()).collect();
    let mean = errors.iter().sum::<f64>() / errors.len().max(1) as f64;
    let max = errors.iter().copied().fold(0.0, f64::max);
    let engine: Vec<f64> = points
        .iter()
        .map(|r| r.engine_relative_error.abs())
        .collect();
    let _ = writeln!(
        out,
        "mean |error| {:.0}%, max |error| {:.0}% (roofline); {:.0}%, {:.0}% with the TensorRT-LLM engine profile",
        mean * 100.0,
        max * 100.0,
        engine.iter().sum::<f64>() / engine.len().max(1) as f64 * 100.0,
        engine.iter().copied().fold(0.0, f64::max) * 100.0
    );
    let system_rows: Vec<RatioRow> = ratios
        .iter()
        .map(|r| {
            (
                r.system.as_str(),
                r.input_tokens,
                r.output_tokens,
                r.published_ratio,
                r.predicted_ratio,
                r.relative_error,
            )
        })
        .collect();
    ratio_table(
        &mut out,
        "MLPerf Inference v4.1, Llama 2 70B offline: throughput relative to 8x H100 (FP8; dataset lengths assumed)",
        &system_rows,
    );
    let server_rows: Vec<RatioRow> = server
        .iter()
        .map(|r| {
            (
                r.system.as_str(),
                r.input_tokens,
                r.output_tokens,
                r.published_server_over_offline,
                r.predicted_server_over_offline,
                r.relative_error,
            )
        })
        .collect();
    ratio_table(
        &mut out,
        "MLPerf server over offline throughput (p99 TTFT ≤ 2 s, TPOT ≤ 200 ms, Poisson): what the limits cost",
        &server_rows,
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "MLPerf server throughput, output tokens/s of the whole system: published, queueing model, replay simulator"
    );
    let _ = writeln!(
        out,
        "{:<20} {:>11} {:>10} {:>10} {:>7} {:>10} {:>7}",
        "system", "ISL/OSL", "published", "analytic", "error", "simulated", "error"
    );
    for r in server {
        let _ = writeln!(
            out,
            "{:<20} {:>11} {:>10.0} {:>10.0} {:>+6.0}% {:>10.0} {:>+6.0}%",
            r.system,
            format!("{}/{}", r.input_tokens, r.output_tokens),
            r.published_server_tokens_per_s,
            r.analytic_server_tokens_per_s,
            (r.analytic_server_tokens_per_s / r.published_server_tokens_per_s - 1.0) * 100.0,
            r.simulated_server_tokens_per_s,
            r.simulated_relative_error * 100.0
        );
    }
    out
}

/// (system, input tokens, output tokens, published, predicted, relative error)
type RatioRow<'a> = (&'a str, u32, u32, f64, f64, f64);

fn ratio_table(out: &mut String, title: &str, rows: &[RatioRow<'_>]) {
    let _ = writeln!(out);
    let _ = writeln!(out, "{title}");
    let _ = writeln!(
        out,
        "{:<20} {:>11} {:>10} {:>10} {:>7}",
        "system", "ISL/OSL", "published", "predicted", "error"
    );
    for (system, isl, osl, published, predicted, error) in rows {
        let _ = writeln!(
            out,
            "{system:<20} {:>11} {published:>10.3} {predicted:>10.3} {:>+6.0}%",
            format!("{isl}/{osl}"),
            error * 100.0
        );
    }
}
