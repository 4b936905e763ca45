//! Detects timestamps rounded to a coarse step (the Mooncake trace's are
//! rounded to about 3 s): a handful of distinct sub-second offsets, and
//! distinct arrival times a second or more apart with several requests
//! sharing each. Counts per second of such a trace lump several seconds of
//! arrivals into one, so its within-minute burstiness is an artefact.

use serde::Serialize;

/// Distinct sub-second offsets (ms) at most, for timestamps to count as
/// whole seconds.
pub const MAX_OFFSETS: usize = 10;
/// Within-minute arrival CV assumed for a quantised trace unless the scenario
/// gives `within_minute_cv`: 1, a Poisson stream within each minute.
pub const FALLBACK_WITHIN_MINUTE_CV: f64 = 1.0;

/// What was found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Quantised {
    /// Mean gap between consecutive distinct arrival times, seconds.
    pub step_s: f64,
    /// Distinct millisecond offsets within the second.
    pub sub_second_offsets: usize,
    /// Requests per distinct arrival time.
    pub requests_per_time: f64,
}

/// Streams arrival times (in order) and says whether they are quantised.
#[derive(Debug, Clone, Default)]
pub struct QuantisationDetector {
    offsets_ms: Vec<u32>,
    too_many_offsets: bool,
    last: Option<f64>,
    first: f64,
    distinct: u64,
    gaps: u64,
    short_gaps: u64,
    seen: u64,
}

impl QuantisationDetector {
    /// Adds one arrival time, seconds.
    pub fn push(&mut self, t: f64) {
        self.seen += 1;
        if !self.too_many_offsets {
            let ms = ((t - t.floor()) * 1000.0).round() as u32 % 1000;
            if !self.offsets_ms.contains(&ms) {
                self.offsets_ms.push(ms);
                self.too_many_offsets = self.offsets_ms.len() > MAX_OFFSETS;
            }
        }
        match self.last {
            None => {
                self.first = t;
                self.distinct = 1;
            }
            Some(last) if t > last => {
                self.distinct += 1;
                self.gaps += 1;
                if t - last < 0.9 {
                    self.short_gaps += 1;
                }
            }
            Some(_) => {}
        }
        self.last = Some(t);
    }

    /// `Some` when the times are quantised: at most [`MAX_OFFSETS`] distinct
    /// sub-second offsets, at least 2 requests per distinct time on average,
    /// and 90% or more of the gaps between distinct times at least 0.9 s.
    pub fn verdict(&self) -> Option<Quantised> {
        let last = self.last?;
        let per_time = self.seen as f64 / self.distinct.max(1) as f64;
        let fixed_steps = self.gaps >= 10 && (self.short_gaps as f64) <= 0.1 * self.gaps as f64;
        (!self.too_many_offsets && per_time >= 2.0 && fixed_steps).then(|| Quantised {
            step_s: (last - self.first) / self.gaps as f64,
            sub_second_offsets: self.offsets_ms.len(),
            requests_per_time: per_time,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_second_rounding_is_found_and_fine_times_are_not() {
        let mut coarse = QuantisationDetector::default();
        let mut fine = QuantisationDetector::default();
        for i in 0..3000u32 {
            let t = f64::from(i) * 0.37;
            // Rounded to 3 s, with a millisecond of jitter on some steps.
            let step = (t / 3.0).floor();
            coarse.push(step * 3.0 + (step % 3.0) * 0.001);
            fine.push(t);
        }
        let q = coarse.verdict().unwrap();
        assert!((q.step_s - 3.0).abs() < 0.01, "{q:?}");
        assert!(q.requests_per_time > 7.0);
        assert_eq!(fine.verdict(), None);
    }
}
