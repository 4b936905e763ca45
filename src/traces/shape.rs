//! Rate curves: the ServeGen per-client series (`window_start_s, rate_req_per_s,
//! cv_of_interarrival, distribution, param1, param2`, 10-minute windows). A
//! folder of client files is summed into one curve.

use crate::base::error::{PlannerError, Problem};
use crate::base::text::excerpt;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// An arrival-rate curve in fixed windows.
#[derive(Debug, Clone, PartialEq)]
pub struct RateCurve {
    /// Window length in seconds (600 for ServeGen).
    pub window_s: u32,
    /// Requests/s in each window, from time 0.
    pub rate_rps: Vec<f64>,
    /// Interarrival coefficient of variation in each window (rate-weighted
    /// mean over clients; 0 where the window is empty).
    pub cv: Vec<f64>,
    /// How many client files were summed.
    pub clients: usize,
}

impl RateCurve {
    /// The curve moved `shift_s` later, wrapping around its end: each
    /// window takes the rate of the window `shift_s` before it (rounded to
    /// whole windows), so the curve's days keep their totals.
    #[must_use]
    pub fn shifted(&self, shift_s: f64) -> RateCurve {
        let n = self.rate_rps.len();
        if n == 0 {
            return self.clone();
        }
        let by = (shift_s / f64::from(self.window_s.max(1))).round() as usize % n;
        let mut out = self.clone();
        out.rate_rps.rotate_right(by);
        if out.cv.len() == n {
            out.cv.rotate_right(by);
        }
        out
    }

    /// Mean rate over the first `windows` windows.
    pub fn mean_rps(&self) -> f64 {
        if self.rate_rps.is_empty() {
            0.0
        } else {
            self.rate_rps.iter().sum::<f64>() / self.rate_rps.len() as f64
        }
    }

    /// The curve cut to its first `seconds`.
    #[must_use]
    pub fn truncated(&self, seconds: u64) -> RateCurve {
        let n = ((seconds / u64::from(self.window_s)) as usize).min(self.rate_rps.len());
        RateCurve {
            window_s: self.window_s,
            rate_rps: self.rate_rps[..n].to_vec(),
            cv: self.cv[..n].to_vec(),
            clients: self.clients,
        }
    }

    /// Writes the curve in the ServeGen format (distribution columns empty).
    pub fn to_servegen_csv(&self) -> String {
        let mut out = String::new();
        for (i, (rate, cv)) in self.rate_rps.iter().zip(&self.cv).enumerate() {
            let _ = writeln!(
                out,
                "{},{rate},{cv},,0,0",
                i as u64 * u64::from(self.window_s)
            );
        }
        out
    }
}

/// Reads a ServeGen file, or sums every `*.csv` file in a folder.
pub fn read_rate_curve(path: &Path) -> Result<RateCurve, PlannerError> {
    let files: Vec<PathBuf> = if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| PlannerError::Io {
                path: path.to_path_buf(),
                source: e,
            })?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "csv"))
            .collect();
        files.sort();
        files
    } else {
        vec![path.to_path_buf()]
    };
    if files.is_empty() {
        return Err(shape_error(
            path,
            "",
            "the folder holds no .csv rate file".into(),
        ));
    }
    // window start -> (sum of rates, sum of rate x cv)
    let mut windows: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
    for file in &files {
        let text = crate::base::text::read_text(file).map_err(PlannerError::Shape)?;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let (start, rate, cv) =
                parse_row(line).map_err(|m| shape_error(file, &(i + 1).to_string(), m))?;
            let entry = windows.entry(start).or_default();
            entry.0 += rate;
            entry.1 += rate * cv;
        }
    }
    let window_s = infer_window(&windows).map_err(|m| shape_error(path, "", m))?;
    if windows.values().all(|&(rate, _)| rate <= 0.0) {
        return Err(shape_error(
            path,
            "",
            "every window's rate is 0: a curve with no traffic cannot shape demand; give a curve with some traffic, or drop [shape]".into(),
        ));
    }
    let last = *windows.keys().next_back().unwrap_or(&0);
    let n = (last / u64::from(window_s) + 1) as usize;
    let mut rate_rps = vec![0.0; n];
    let mut cv = vec![0.0; n];
    for (start, (rate, rate_cv)) in windows {
        let i = (start / u64::from(window_s)) as usize;
        rate_rps[i] = rate;
        cv[i] = if rate > 0.0 { rate_cv / rate } else { 0.0 };
    }
    Ok(RateCurve {
        window_s,
        rate_rps,
        cv,
        clients: files.len(),
    })
}

fn shape_error(file: &Path, location: &str, message: String) -> PlannerError {
    PlannerError::Shape(Problem::new(file.to_path_buf(), location, message))
}

/// Latest window start of a rate curve (400 days, as for traces).
pub const MAX_CURVE_S: f64 = 400.0 * 86_400.0;

/// Shortest window of a rate curve: with the 400-day limit, at most 576,000 windows.
pub const MIN_WINDOW_S: u64 = 60;

/// Highest rate one row may state, in requests/s.
pub const MAX_RATE_RPS: f64 = 1e7;

/// Highest interarrival CV one row may state.
pub const MAX_CV: f64 = 1e6;

fn parse_row(line: &str) -> Result<(u64, f64, f64), String> {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    if fields.len() != 6 {
        return Err(format!(
            "expected 6 columns (window_start_s, rate_req_per_s, cv, distribution, param1, param2), found {}",
            fields.len()
        ));
    }
    let start: f64 = fields[0]
        .parse()
        .map_err(|_| format!("bad window start `{}`", excerpt(fields[0].as_bytes())))?;
    let rate: f64 = fields[1]
        .parse()
        .map_err(|_| format!("bad rate `{}`", excerpt(fields[1].as_bytes())))?;
    let cv: f64 = fields[2]
        .parse()
        .map_err(|_| format!("bad cv `{}`", excerpt(fields[2].as_bytes())))?;
    if !(start >= 0.0 && start.fract() == 0.0) {
        return Err(format!(
            "window start must be whole non-negative seconds, got `{}`",
            fields[0]
        ));
    }
    if start > MAX_CURVE_S {
        return Err(format!(
            "window start {} s is more than 400 days after the curve's start; a rate curve covers at most {MAX_CURVE_S} s",
            fields[0]
        ));
    }
    if !((0.0..=MAX_RATE_RPS).contains(&rate) && (0.0..=MAX_CV).contains(&cv)) {
        return Err(format!(
            "rate must be in [0, {MAX_RATE_RPS:e}] requests/s and cv in [0, {MAX_CV:e}], got {rate} and {cv}"
        ));
    }
    Ok((start as u64, rate, cv))
}

fn infer_window(windows: &BTreeMap<u64, (f64, f64)>) -> Result<u32, String> {
    let starts: Vec<u64> = windows.keys().copied().collect();
    let step = starts.windows(2).map(|w| w[1] - w[0]).min().unwrap_or(600);
    if step == 0 || starts.iter().any(|s| s % step != 0) {
        return Err("window starts are not multiples of one window length".into());
    }
    if step < MIN_WINDOW_S {
        return Err(format!(
            "windows of {step} s are shorter than the {MIN_WINDOW_S} s a rate curve may use"
        ));
    }
    u32::try_from(step).map_err(|_| "window length too large".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_clients_and_weights_cv_by_rate() {
        let dir = std::env::temp_dir().join(format!("planner-shape-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("a.csv"),
            "0,1.0,2.0,Gamma,1,1\n600,0,0,,0,0\n1200,3.0,1.0,Weibull,1,1\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("b.csv"),
            "0,3.0,1.0,Gamma,1,1\n1200,1.0,1.0,Gamma,1,1\n",
        )
        .unwrap();
        let curve = read_rate_curve(&dir).unwrap();
        assert_eq!(curve.window_s, 600);
        assert_eq!(curve.rate_rps, vec![4.0, 0.0, 4.0]);
        assert_eq!(curve.cv, vec![1.25, 0.0, 1.0]);
        assert_eq!(curve.clients, 2);
        let round_trip_file = dir.join("sum.out");
        std::fs::write(&round_trip_file, curve.to_servegen_csv()).unwrap();
        let again = read_rate_curve(&round_trip_file).unwrap();
        assert_eq!(again.rate_rps, curve.rate_rps);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_rows_name_their_line() {
        let file =
            std::env::temp_dir().join(format!("planner-shape-bad-{}.csv", std::process::id()));
        std::fs::write(&file, "0,1.0,2.0,Gamma,1,1\n600,fast,0,,0,0\n").unwrap();
        let err = read_rate_curve(&file).unwrap_err().to_string();
        assert!(err.contains(":2: bad rate `fast`"), "{err}");
        std::fs::remove_file(&file).unwrap();
    }

    /// Issue: a curve of all zeros came out as an unlocated infinite figure.
    #[test]
    fn a_curve_of_zeros_is_refused_naming_the_file() {
        let file =
            std::env::temp_dir().join(format!("planner-shape-zero-{}.csv", std::process::id()));
        std::fs::write(
            &file,
            "0,0,0,Gamma,1,1
600,0,0,Gamma,1,1
",
        )
        .unwrap();
        let err = read_rate_curve(&file).unwrap_err().to_string();
        assert!(err.contains("planner-shape-zero-"), "{err}");
        assert!(err.contains("every window's rate is 0"), "{err}");
        std::fs::remove_file(&file).unwrap();
    }
}
