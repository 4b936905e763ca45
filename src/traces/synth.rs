//! Seeded synthetic traces in the Azure 2024 format: arrivals from a rate
//! curve with gamma-distributed interarrival times (burstiness set by their
//! coefficient of variation), lengths resampled as (input, output) pairs from a
//! real trace.

use super::timestamp::format_utc;
use crate::traces::shape::RateCurve;
use rand::distributions::Distribution;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use statrs::distribution::Gamma;
use std::io::{self, Write};

/// What to generate.
#[derive(Debug, Clone)]
pub struct SynthSpec {
    /// RNG seed: the same seed gives the same file.
    pub seed: u64,
    /// First second of the trace, seconds since 1970-01-01 UTC.
    pub start_epoch_s: i64,
    /// Requests/s in each window of the curve.
    pub curve: RateCurve,
    /// Interarrival coefficient of variation (1 = Poisson, above 1 = bursty).
    pub interarrival_cv: f64,
    /// (input, output) token pairs to resample from.
    pub lengths: Vec<(u32, u32)>,
}

/// A week-shaped curve with a diurnal cycle and quiet weekends, scaled to a mean
/// of `mean_rps`: weekday rate ∝ 1 + 0.6 sin(2π (h − 7)/24), weekends at 35%.
pub fn weekly_curve(days: u32, mean_rps: f64) -> RateCurve {
    let window_s = 600u32;
    let windows = days as usize * 144;
    let raw: Vec<f64> = (0..windows)
        .map(|w| {
            let hour = (w % 144) as f64 / 6.0;
            let weekend = matches!((w / 144) % 7, 1 | 2);
            let diurnal = 1.0 + 0.6 * (2.0 * std::f64::consts::PI * (hour - 7.0) / 24.0).sin();
            diurnal * if weekend { 0.35 } else { 1.0 }
        })
        .collect();
    let mean = raw.iter().sum::<f64>() / windows.max(1) as f64;
    RateCurve {
        window_s,
        rate_rps: raw.iter().map(|r| r / mean * mean_rps).collect(),
        cv: vec![0.0; windows],
        clients: 0,
    }
}

/// Writes the trace; returns the number of requests. `on_progress` gets the
/// fraction of the curve done.
pub fn write_trace(
    spec: &SynthSpec,
    out: &mut impl Write,
    mut on_progress: impl FnMut(f64),
) -> io::Result<u64> {
    let mut rng = StdRng::seed_from_u64(spec.seed);
    let shape = 1.0 / (spec.interarrival_cv * spec.interarrival_cv);
    // Gamma(k, 1) scaled by 1/(k r) has mean 1/r and CV 1/sqrt(k).
    let gamma = Gamma::new(shape, 1.0)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
    writeln!(out, "TIMESTAMP,ContextTokens,GeneratedTokens")?;
    let window_us = i64::from(spec.curve.window_s) * 1_000_000;
    let end_us = window_us * spec.curve.rate_rps.len() as i64;
    let mut t_us: f64 = 0.0;
    let mut written = 0u64;
    let mut day_cache: (i64, String) = (i64::MIN, String::new());
    let mut line = Vec::with_capacity(64);
    let mut last_window = usize::MAX;
    loop {
        let window = (t_us as i64 / window_us) as usize;
        if window >= spec.curve.rate_rps.len() {
            break;
        }
        if window != last_window {
            on_progress(window as f64 / spec.curve.rate_rps.len() as f64);
            last_window = window;
        }
        let rate = spec.curve.rate_rps[window];
        if rate <= 0.0 {
            t_us = ((window as i64 + 1) * window_us) as f64;
            continue;
        }
        let gap_s: f64 = gamma.sample(&mut rng) / (shape * rate);
        t_us += gap_s * 1e6;
        if t_us as i64 >= end_us {
            break;
        }
        if (t_us as i64 / window_us) as usize != window {
            // Crossed into the next window: restart there at its own rate.
            continue;
        }
        let (input, output) = spec.lengths[rng.gen_range(0..spec.lengths.len())];
        let abs_us = spec.start_epoch_s * 1_000_000 + t_us as i64;
        let day = abs_us.div_euclid(86_400_000_000);
        if day != day_cache.0 {
            day_cache = (day, format_utc(day * 86_400)[..10].to_string());
        }
        let in_day = abs_us.rem_euclid(86_400_000_000);
        let (secs, micros) = (in_day / 1_000_000, in_day % 1_000_000);
        line.clear();
        line.extend_from_slice(day_cache.1.as_bytes());
        write!(
            line,
            " {:02}:{:02}:{:02}.{:06}+00:00,{input},{output}",
            secs / 3600,
            (secs / 60) % 60,
            secs % 60,
            micros
        )?;
        line.push(b'\n');
        out.write_all(&line)?;
        written += 1;
    }
    on_progress(1.0);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traces::reader::parse_azure_row;
    use crate::traces::stats::{Clock, TraceAccumulator};

    fn spec(seed: u64, cv: f64) -> SynthSpec {
        SynthSpec {
            seed,
            start_epoch_s: 1_715_299_200,
            curve: RateCurve {
                window_s: 600,
                rate_rps: vec![5.0, 0.0, 10.0],
                cv: vec![0.0; 3],
                clients: 0,
            },
            interarrival_cv: cv,
            lengths: vec![(100, 10), (2000, 50)],
        }
    }

    fn stats_of(bytes: &[u8]) -> TraceAccumulator {
        let mut acc = TraceAccumulator::new(Clock::Utc);
        for line in bytes
            .split(|&b| b == b'\n')
            .skip(1)
            .filter(|l| !l.is_empty())
        {
            acc.push(parse_azure_row(line).unwrap());
        }
        acc
    }

    #[test]
    fn same_seed_same_bytes_and_rates_follow_the_curve() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let n = write_trace(&spec(7, 1.0), &mut a, |_| {}).unwrap();
        write_trace(&spec(7, 1.0), &mut b, |_| {}).unwrap();
        assert_eq!(a, b);
        let acc = stats_of(&a);
        assert_eq!(acc.requests(), n);
        let (_, per_window) = acc.window_counts(600);
        // Expected 3000, 0, 6000 arrivals; Poisson noise is about sqrt(n).
        assert!(
            (per_window[0] as f64 - 3000.0).abs() < 250.0,
            "{per_window:?}"
        );
        assert_eq!(per_window[1], 0);
        assert!(
            (per_window[2] as f64 - 6000.0).abs() < 350.0,
            "{per_window:?}"
        );
    }

    #[test]
    fn cv_controls_burstiness() {
        let steady = |cv| SynthSpec {
            curve: RateCurve {
                window_s: 600,
                rate_rps: vec![5.0; 3],
                cv: vec![0.0; 3],
                clients: 0,
            },
            ..spec(1, cv)
        };
        let mut calm = Vec::new();
        let mut bursty = Vec::new();
        write_trace(&steady(1.0), &mut calm, |_| {}).unwrap();
        write_trace(&steady(4.0), &mut bursty, |_| {}).unwrap();
        let (calm_cv, bursty_cv) = (
            stats_of(&calm).interarrival_cv(),
            stats_of(&bursty).interarrival_cv(),
        );
        assert!((calm_cv - 1.0).abs() < 0.1, "{calm_cv}");
        assert!(bursty_cv > 3.0, "{bursty_cv}");
    }

    #[test]
    fn weekly_curve_has_the_requested_mean_and_quiet_weekends() {
        let c = weekly_curve(7, 27.8);
        assert!((c.mean_rps() - 27.8).abs() < 1e-9);
        let day_mean = |d: usize| c.rate_rps[d * 144..(d + 1) * 144].iter().sum::<f64>() / 144.0;
        assert!(day_mean(1) < 0.5 * day_mean(0));
    }
}
