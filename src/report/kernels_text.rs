//! `planner calibrate --kernels` as text.

use crate::perf::kernels::measured::MeasuredCalibration;
use crate::perf::kernels::KernelCalibration;
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
    if let Some(m) = &c.measured {
        measured(&mut o, m);
    }
    if !c.all_reduce.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(o, "All-reduce (ring: hop + 2(n-1)/n x bytes / link)");
    }
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
    if !c.cpu_overhead.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "CPU overhead per step (schedule + sampler + input preparation + output processing)"
        );
    }
    for cpu in &c.cpu_overhead {
        let _ = writeln!(
            o,
            "  {:<26} {} rows: min {:.2} ms, median {:.2} ms, max {:.2} ms",
            cpu.file, cpu.rows, cpu.min_ms, cpu.median_ms, cpu.max_ms
        );
    }
    o
}

/// Attention, whole steps and FP8 of one device's own measurements.
fn measured(o: &mut String, m: &MeasuredCalibration) {
    let a = &m.attention;
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "{} attention alone ({} rows): efficiency {:.3} → {:.3}, fixed {:.1} → {:.1} us per layer (bandwidth {:.3}); mean error {:.1}% → {:.1}%",
        m.device,
        a.rows,
        a.before.compute,
        a.fitted.compute,
        a.before.fixed_us,
        a.fitted.fixed_us,
        a.fitted.bandwidth,
        a.mean_abs_error_before * 100.0,
        a.mean_abs_error_after * 100.0
    );
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "{} whole steps: L x (layer operators + attention) + embedding + final norm + LM head, GPU time",
        m.device
    );
    let _ = writeln!(
        o,
        "  {:<40} {:>5} {:>15} {:>10} {:>13} {:>12} {:>10}",
        "steps", "rows", "single roofline", "pred/meas", "split before", "split after", "pred/meas"
    );
    for s in &m.steps {
        let _ = writeln!(
            o,
            "  {:<40} {:>5} {:>14.1}% {:>10.2} {:>12.1}% {:>11.1}% {:>10.2}",
            s.steps,
            s.rows,
            s.mean_abs_error_single_roofline * 100.0,
            s.mean_ratio_single_roofline,
            s.mean_abs_error_before * 100.0,
            s.mean_abs_error_after * 100.0,
            s.mean_ratio_after
        );
    }
    let p = &m.profile_fit;
    let _ = writeln!(
        o,
        "  profile {}: compute_efficiency {:.3}, bandwidth_efficiency {:.3}, attention_efficiency {:.3}, layer_overhead_us {:.1}",
        m.profile, p.compute_efficiency, p.bandwidth_efficiency, p.attention_efficiency, p.layer_overhead_us
    );
    let f = &m.fp8;
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "{} FP8 GEMMs ({} rows): compute gain g(T) = {:.2} + {:.3} log2 T, capped at the FP8/BF16 peak ratio; mean error {:.1}% (FP8 time), {:.1}% (gain)",
        m.device,
        f.rows,
        f.fitted.at_one_token,
        f.fitted.per_token_doubling,
        f.mean_abs_error_fp8_ms * 100.0,
        f.mean_abs_error_gain * 100.0
    );
    let _ = writeln!(
        o,
        "  {:>8} {:>15} {:>10}",
        "tokens", "measured gain", "g(T)"
    );
    for (t, measured, fitted) in &f.gain_by_tokens {
        let _ = writeln!(o, "  {t:>8.0} {measured:>15.2} {fitted:>10.2}");
    }
}
