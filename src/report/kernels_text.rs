//! `planner calibrate --kernels` as text.

use crate::kernels::KernelCalibration;
use std::fmt::Write;

pub fn render(c: &KernelCalibration) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "Roofline against measured kernel timings ({})", c.source);
    for g in &c.gpus {
        let _ = writeln!(o);
        let _ = writeln!(o, "{} (profile {})", g.device, g.profile);
        for (what, e, unit) in [
            ("profile", &g.before, "layer"),
            ("fitted on operators", &g.fitted_operators, "kernel"),
            (
                "fitted on layers (the profile's form)",
                &g.fitted_layers,
                "layer",
            ),
        ] {
            let _ = writeln!(
                o,
                "  {what:<38} compute {:.3}, bandwidth {:.3}, fixed {:.1} us per {unit}",
                e.compute, e.bandwidth, e.fixed_us
            );
        }
        let _ = writeln!(o, "  models: {}", g.models.join(", "));
        let _ = writeln!(
            o,
            "  {:<50} {:>6} {:>14} {:>13} {:>14} {:>12}",
            "operator", "rows", "error before", "error after", "median after", "pred/meas"
        );
        for e in &g.operators {
            let _ = writeln!(
                o,
                "  {:<50} {:>6} {:>13.1}% {:>12.1}% {:>13.1}% {:>12.2}",
                e.operator,
                e.rows,
                e.mean_abs_error_before * 100.0,
                e.mean_abs_error_after * 100.0,
                e.median_abs_error_after * 100.0,
                e.mean_ratio_after
            );
        }
        let _ = writeln!(
            o,
            "  operators other than the GEMMs (norms, rotary, activation, add): {:.1}% of measured layer time",
            g.unmodelled_share * 100.0
        );
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "All-reduce (ring: hop + 2(n-1)/n x bytes / link)");
    for a in &c.all_reduce {
        let _ = writeln!(
            o,
            "  {:<10} ({}, {} rows): link {:.0} → {:.0} GB/s, hop {:.1} → {:.1} us; mean error {:.1}% → {:.1}%",
            a.network,
            a.profile,
            a.rows,
            a.link_gb_s_before,
            a.link_gb_s_fitted,
            a.hop_latency_us_before,
            a.hop_latency_us_fitted,
            a.mean_abs_error_before * 100.0,
            a.mean_abs_error_after * 100.0
        );
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "CPU overhead per step (schedule + sampler + input preparation + output processing)"
    );
    for cpu in &c.cpu_overhead {
        let _ = writeln!(
            o,
            "  {:<26} {} rows: min {:.2} ms, median {:.2} ms, max {:.2} ms",
            cpu.file, cpu.rows, cpu.min_ms, cpu.median_ms, cpu.max_ms
        );
    }
    o
}
