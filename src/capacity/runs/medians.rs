//! Median errors of a set of measured runs' predictions: signed and
//! absolute, of mean TTFT and mean TPOT, and how many runs could not be
//! predicted.

use super::MeasuredRun;
use serde::Serialize;

/// Median errors of a set of runs.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub(crate) struct Medians {
    pub runs: usize,
    /// Runs the replica could not serve.
    pub unserved: usize,
    /// The medians; not a number (null in JSON) when no run was served.
    #[serde(serialize_with = "nan_as_null")]
    pub ttft_error: f64,
    #[serde(serialize_with = "nan_as_null")]
    pub ttft_abs_error: f64,
    #[serde(serialize_with = "nan_as_null")]
    pub tpot_error: f64,
    #[serde(serialize_with = "nan_as_null")]
    pub tpot_abs_error: f64,
}

/// A median over no served run as null.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn nan_as_null<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_nan() {
        s.serialize_none()
    } else {
        s.serialize_f64(*v)
    }
}

impl Medians {
    /// The medians of predicted mean (TTFT, TPOT) against each run's
    /// measured ones; `None` where the replica cannot serve the run.
    pub(crate) fn of_predictions<'a>(
        predictions: impl Iterator<Item = (&'a MeasuredRun, Option<(f64, f64)>)>,
    ) -> Medians {
        let mut ttft = Vec::new();
        let mut tpot = Vec::new();
        let mut n = 0;
        let mut unserved = 0;
        for (run, predicted) in predictions {
            n += 1;
            match predicted {
                Some((a, b)) => {
                    ttft.push(a / run.ttft_ms - 1.0);
                    tpot.push(b / run.tpot_ms - 1.0);
                }
                None => unserved += 1,
            }
        }
        Medians {
            runs: n,
            unserved,
            ttft_error: median(ttft.clone()),
            ttft_abs_error: median(ttft.iter().map(|e| e.abs()).collect()),
            tpot_error: median(tpot.clone()),
            tpot_abs_error: median(tpot.iter().map(|e| e.abs()).collect()),
        }
    }
}

/// The median of `values` (the mean of the middle two of an even count);
/// not a number when there is none.
pub(super) fn median(values: Vec<f64>) -> f64 {
    if values.is_empty() {
        f64::NAN
    } else {
        crate::sim::bench::Stats::percentile(values, 50.0)
    }
}
