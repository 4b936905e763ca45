//! Trace statistics in one streaming pass: arrival counts per clock-aligned
//! second, minute and hour (empty windows count as zero), interarrival
//! variability, token-length distributions, and the length sample of
//! (input, output) pairs for the capacity model ([`super::length_sample`]).

use super::length_sample::{BottomK, SampledRequest};
pub use super::length_stats::LengthStats;
use super::micros::{arrival_us, span_s};
use super::quantised::{QuantisationDetector, Quantised};
use super::timestamp::format_utc;
use super::{read_trace, ReadSummary, ReaderOptions, Request, TraceFormat};
use crate::base::located::Problem;
use crate::base::progress::Progress;
use crate::base::stats::RunningMoments;
use serde::Serialize;
use std::path::Path;

/// Longest span a trace may cover (400 days), so a stray timestamp cannot
/// exhaust memory.
pub const MAX_SPAN_S: f64 = 400.0 * 86_400.0;

/// Whether arrival times are wall-clock UTC or relative to the trace start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Clock {
    Utc,
    Relative,
}

/// Reads the whole trace at `path` into an accumulator, with a byte progress
/// bar. Mooncake traces get relative window labels. Fails on traces spanning
/// more than [`MAX_SPAN_S`].
pub fn accumulate(
    path: &Path,
    options: ReaderOptions,
    progress: Progress,
) -> Result<(TraceFormat, ReadSummary, TraceAccumulator), Problem> {
    accumulate_keeping(path, options, progress, None)
}

/// [`accumulate`], also appending every request to `keep` when given (for a
/// replay that needs them, so the file is read once).
pub fn accumulate_keeping(
    path: &Path,
    options: ReaderOptions,
    progress: Progress,
    mut keep: Option<&mut Vec<Request>>,
) -> Result<(TraceFormat, ReadSummary, TraceAccumulator), Problem> {
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    let bar = progress.bytes(&format!("reading {}", path.display()), size);
    let mut acc = TraceAccumulator::new(Clock::Utc);
    let on_request = |r: Request| {
        if let Some(k) = keep.as_deref_mut() {
            k.push(r);
        }
        acc.push(r);
    };
    let (format, summary) = read_trace(path, options, on_request, |b| bar.set_position(b))?;
    bar.finish_and_clear();
    if acc.too_long() {
        return Err(Problem::new(
            path,
            "",
            "the trace spans more than 400 days; check its timestamps",
        ));
    }
    if matches!(format, TraceFormat::Mooncake | TraceFormat::Burstgpt) {
        acc.clock = Clock::Relative;
    }
    Ok((format, summary, acc))
}

/// The within-minute arrival CV of minutes given as (arrivals n, Σ over the
/// minute's 60 seconds of squared arrivals S): the square root of the
/// count-weighted mean index of dispersion, Σ n·D / Σ n with D = S/n − n/60,
/// that is sqrt(Σ (60·S − n²) / (60·Σ n)), summed in exact integers so that
/// a trace and its aggregate give the same double; 1 (Poisson) when no
/// minute holds an arrival.
pub fn within_minute_cv_of(minutes: impl IntoIterator<Item = (u64, u64)>) -> f64 {
    let (excess, total) = minutes
        .into_iter()
        .fold((0u128, 0u128), |(excess, total), (n, sq)| {
            let (n, sq) = (u128::from(n), u128::from(sq));
            (excess + (60 * sq).saturating_sub(n * n), total + n)
        });
    if total == 0 {
        1.0
    } else {
        (excess as f64 / (60 * total) as f64).sqrt()
    }
}

/// Accumulates statistics one request at a time.
#[derive(Debug, Clone)]
pub struct TraceAccumulator {
    clock: Clock,
    first_s: Option<f64>,
    last_s: f64,
    base_second: i64,
    /// (second since the epoch or trace start, arrivals in it) for every
    /// second holding an arrival, in time order: memory in proportion to the
    /// requests, not to the span.
    per_second: Vec<(i64, u32)>,
    per_minute_input: Vec<u64>,
    per_minute_output: Vec<u64>,
    interarrival: RunningMoments,
    input_hist: LengthHistogram,
    output_hist: LengthHistogram,
    input_sum: u128,
    output_sum: u128,
    sample: BottomK,
    seen: u64,
    too_long: bool,
    quantisation: QuantisationDetector,
}

impl TraceAccumulator {
    /// A fresh accumulator; `clock` decides how window starts are printed.
    pub fn new(clock: Clock) -> Self {
        TraceAccumulator {
            clock,
            first_s: None,
            last_s: 0.0,
            base_second: 0,
            per_second: Vec::new(),
            per_minute_input: Vec::new(),
            per_minute_output: Vec::new(),
            interarrival: RunningMoments::default(),
            input_hist: LengthHistogram::default(),
            output_hist: LengthHistogram::default(),
            input_sum: 0,
            output_sum: 0,
            sample: BottomK::new(),
            seen: 0,
            too_long: false,
            quantisation: QuantisationDetector::default(),
        }
    }

    /// Adds one request (requests must come in time order).
    pub fn push(&mut self, r: Request) {
        let first = *self.first_s.get_or_insert_with(|| {
            self.base_second = r.arrival_s.floor() as i64;
            r.arrival_s
        });
        if r.arrival_s - first > MAX_SPAN_S {
            self.too_long = true;
            return;
        }
        self.quantisation.push(r.arrival_s);
        if self.seen > 0 {
            self.interarrival.push(r.arrival_s - self.last_s);
        }
        self.last_s = r.arrival_s;
        let second = r.arrival_s.floor() as i64;
        match self.per_second.last_mut() {
            Some((s, count)) if *s == second => *count += 1,
            _ => self.per_second.push((second, 1)),
        }
        let minute = (r.arrival_s.floor() as i64).div_euclid(60) - self.base_second.div_euclid(60);
        bump(
            &mut self.per_minute_input,
            minute as usize,
            u64::from(r.input_tokens),
        );
        bump(
            &mut self.per_minute_output,
            minute as usize,
            u64::from(r.output_tokens),
        );
        self.input_hist.add(r.input_tokens);
        self.output_hist.add(r.output_tokens);
        self.input_sum += u128::from(r.input_tokens);
        self.output_sum += u128::from(r.output_tokens);
        self.seen += 1;
        self.sample
            .push(arrival_us(r.arrival_s), r.input_tokens, r.output_tokens);
    }

    /// Requests added.
    pub fn requests(&self) -> u64 {
        self.seen
    }

    /// Whether a request lay more than [`MAX_SPAN_S`] after the first.
    pub fn too_long(&self) -> bool {
        self.too_long
    }

    /// Arrivals per clock-aligned window of `window_s` seconds, from the
    /// window holding the first request to the one holding the last, and the
    /// start (seconds on the trace's clock) of the first window.
    pub fn window_counts(&self, window_s: i64) -> (i64, Vec<u64>) {
        let first_window = self.base_second.div_euclid(window_s);
        let mut counts: Vec<u64> = Vec::new();
        for &(second, c) in &self.per_second {
            let w = second.div_euclid(window_s) - first_window;
            bump(&mut counts, w as usize, u64::from(c));
        }
        (first_window * window_s, counts)
    }

    /// The windows of `window_s` seconds holding arrivals, as (index from the
    /// first window, arrivals), in order, and the number of windows from the
    /// first to the last (empty ones included).
    fn sparse_windows(&self, window_s: i64) -> (Vec<(i64, u64)>, u64) {
        let first_window = self.base_second.div_euclid(window_s);
        let mut out: Vec<(i64, u64)> = Vec::new();
        for &(second, c) in &self.per_second {
            let w = second.div_euclid(window_s) - first_window;
            match out.last_mut() {
                Some((last, n)) if *last == w => *n += u64::from(c),
                _ => out.push((w, u64::from(c))),
            }
        }
        let windows = out.last().map_or(0, |&(w, _)| w as u64 + 1);
        (out, windows)
    }

    /// The length sample's (input tokens, output tokens) pairs in rank
    /// order: the requests of smallest sample key, as an aggregate of the
    /// trace records them.
    pub fn length_sample(&self) -> Vec<(u32, u32)> {
        self.sample.pairs()
    }

    /// The length sample's requests, in the order of [`Self::length_sample`].
    pub fn length_sample_requests(&self) -> Vec<SampledRequest> {
        self.sample.sorted()
    }

    /// Mean input tokens per request.
    pub fn mean_input_tokens(&self) -> f64 {
        if self.seen == 0 {
            0.0
        } else {
            self.input_sum as f64 / self.seen as f64
        }
    }

    /// Mean output tokens per request.
    pub fn mean_output_tokens(&self) -> f64 {
        if self.seen == 0 {
            0.0
        } else {
            self.output_sum as f64 / self.seen as f64
        }
    }

    /// Coefficient of variation of interarrival times.
    pub fn interarrival_cv(&self) -> f64 {
        self.interarrival.cv()
    }

    /// Burstiness at the scale of seconds within each minute: the square root
    /// of the count-weighted mean index of dispersion (variance over mean) of
    /// the per-second arrival counts of each minute holding arrivals. A Poisson
    /// stream gives 1; the minute-to-minute variation is left out, since the
    /// per-minute peak rate already carries it. Used as the arrival CV of the
    /// queueing model.
    pub fn within_minute_cv(&self) -> f64 {
        // Per busy minute, its arrivals and their per-second squares (the
        // seconds come in order, so a minute's are consecutive).
        let mut minutes: Vec<(u64, u64)> = Vec::new();
        let mut current = None;
        for &(second, c) in &self.per_second {
            let m = second.div_euclid(60);
            if current != Some(m) {
                current = Some(m);
                minutes.push((0, 0));
            }
            if let Some((n, sq)) = minutes.last_mut() {
                *n += u64::from(c);
                *sq += u64::from(c) * u64::from(c);
            }
        }
        within_minute_cv_of(minutes)
    }

    /// Seconds from the first to the last arrival, measured in whole
    /// microseconds ([`super::micros`]) as an aggregate records it.
    pub fn span_s(&self) -> f64 {
        self.first_s
            .map_or(0.0, |f| span_s(arrival_us(f), arrival_us(self.last_s)))
    }

    /// Input-token distribution.
    pub fn input_tokens(&self) -> LengthStats {
        LengthStats::from_histogram(&self.input_hist, self.mean_input_tokens())
    }

    /// Output-token distribution.
    pub fn output_tokens(&self) -> LengthStats {
        LengthStats::from_histogram(&self.output_hist, self.mean_output_tokens())
    }

    /// Whether the arrival times are rounded to a coarse step.
    pub fn quantised(&self) -> Option<Quantised> {
        self.quantisation.verdict()
    }

    /// All statistics.
    pub fn summary(&self, skipped_rows: u64) -> TraceSummary {
        let span_s = self.span_s();
        let requests = self.seen;
        TraceSummary {
            quantised_timestamps: self.quantised(),
            requests,
            skipped_rows,
            clock: self.clock,
            start: self.label(self.first_s.unwrap_or(0.0).floor() as i64),
            span_s,
            mean_rps: if span_s > 0.0 {
                requests as f64 / span_s
            } else {
                requests as f64
            },
            interarrival_mean_s: self.interarrival.mean(),
            interarrival_cv: self.interarrival.cv(),
            within_minute_cv: self.within_minute_cv(),
            per_second: self.windows(1),
            per_minute: self.windows(60),
            per_hour: self.windows(3600),
            input_tokens: self.input_tokens(),
            output_tokens: self.output_tokens(),
            input_tokens_per_minute: TokenRate::of(&self.per_minute_input),
            output_tokens_per_minute: TokenRate::of(&self.per_minute_output),
            prefix: None,
        }
    }

    fn label(&self, t: i64) -> String {
        match self.clock {
            Clock::Utc => format!("{} UTC", format_utc(t)),
            Clock::Relative => format!("t+{t} s"),
        }
    }

    fn windows(&self, window_s: i64) -> WindowStats {
        let start = self.base_second.div_euclid(window_s) * window_s;
        let (held, windows) = self.sparse_windows(window_s);
        let mut sorted: Vec<f64> = held.iter().map(|&(_, c)| c as f64).collect();
        sorted.sort_by(f64::total_cmp);
        let empty = windows - held.len() as u64;
        let n = windows.max(1) as f64;
        let mean = held.iter().map(|&(_, c)| c).sum::<u64>() as f64 / n;
        let (busiest, max) = held.iter().fold(
            (0, 0),
            |best, &(i, c)| if c > best.1 { (i, c) } else { best },
        );
        WindowStats {
            window_s: window_s as u64,
            windows,
            mean,
            p50: percentile_with_zeros(&sorted, empty, 0.5),
            p99: percentile_with_zeros(&sorted, empty, 0.99),
            max: max as f64,
            peak_to_mean: if mean > 0.0 { max as f64 / mean } else { 0.0 },
            busiest_start: self.label(start + busiest * window_s),
        }
    }
}

/// Nearest-rank percentile of `sorted` values together with `zeros` more
/// values of 0 (the empty windows), without building them.
fn percentile_with_zeros(sorted: &[f64], zeros: u64, q: f64) -> f64 {
    let total = sorted.len() as u64 + zeros;
    if total == 0 {
        return 0.0;
    }
    let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
    if rank <= zeros {
        0.0
    } else {
        sorted[(rank - zeros - 1) as usize]
    }
}

/// Counts of token lengths: dense below [`DENSE_LENGTHS`], sparse above, so
/// one very long request costs one entry, not memory in proportion to its length.
#[derive(Debug, Clone, Default)]
struct LengthHistogram {
    dense: Vec<u64>,
    sparse: std::collections::BTreeMap<u32, u64>,
}

/// Lengths counted in the dense part of a [`LengthHistogram`].
const DENSE_LENGTHS: u32 = 1 << 16;

impl LengthHistogram {
    fn add(&mut self, tokens: u32) {
        if tokens < DENSE_LENGTHS {
            bump(&mut self.dense, tokens as usize, 1);
        } else {
            *self.sparse.entry(tokens).or_insert(0) += 1;
        }
    }

    /// (value, count) in increasing value.
    fn counts(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.dense
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(v, &c)| (v as u64, c))
            .chain(self.sparse.iter().map(|(&v, &c)| (u64::from(v), c)))
    }

    fn percentile(&self, q: f64) -> u64 {
        let total: u64 = self.counts().map(|(_, c)| c).sum();
        if total == 0 {
            return 0;
        }
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (value, count) in self.counts() {
            seen += count;
            if seen >= rank {
                return value;
            }
        }
        self.max()
    }

    fn max(&self) -> u64 {
        self.counts().last().map_or(0, |(v, _)| v)
    }
}

fn bump<T: Copy + Default + std::ops::AddAssign>(v: &mut Vec<T>, i: usize, by: T) {
    if i >= v.len() {
        v.resize(i + 1, T::default());
    }
    v[i] += by;
}

/// Everything `planner trace stats` prints.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TraceSummary {
    /// Set when the timestamps are rounded to a coarse step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantised_timestamps: Option<Quantised>,
    pub requests: u64,
    pub skipped_rows: u64,
    pub clock: Clock,
    /// The first arrival's second.
    pub start: String,
    pub span_s: f64,
    pub mean_rps: f64,
    pub interarrival_mean_s: f64,
    pub interarrival_cv: f64,
    /// Arrival CV at the scale of seconds within minutes (see
    /// [`TraceAccumulator::within_minute_cv`]).
    pub within_minute_cv: f64,
    pub per_second: WindowStats,
    pub per_minute: WindowStats,
    pub per_hour: WindowStats,
    pub input_tokens: LengthStats,
    pub output_tokens: LengthStats,
    pub input_tokens_per_minute: TokenRate,
    pub output_tokens_per_minute: TokenRate,
    /// With block hashes (Mooncake's `hash_ids`), the prompts' prefix share
    /// ([`super::prefix`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prefix: Option<super::prefix::PrefixSummary>,
}

/// Arrival counts per clock-aligned window (empty windows count as zero).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct WindowStats {
    pub window_s: u64,
    pub windows: u64,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub peak_to_mean: f64,
    pub busiest_start: String,
}

impl LengthStats {
    fn from_histogram(hist: &LengthHistogram, mean: f64) -> Self {
        LengthStats {
            mean,
            p50: hist.percentile(0.5),
            p90: hist.percentile(0.9),
            p99: hist.percentile(0.99),
            max: hist.max(),
        }
    }
}

/// Tokens per clock-aligned minute.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TokenRate {
    pub mean: f64,
    pub max: u64,
}

impl TokenRate {
    fn of(per_minute: &[u64]) -> Self {
        let n = per_minute.len().max(1) as f64;
        TokenRate {
            mean: per_minute.iter().sum::<u64>() as f64 / n,
            max: per_minute.iter().copied().max().unwrap_or(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(t: f64, i: u32, o: u32) -> Request {
        Request {
            arrival_s: t,
            input_tokens: i,
            output_tokens: o,
        }
    }

    #[test]
    fn windows_are_clock_aligned_and_count_empty_ones() {
        let mut acc = TraceAccumulator::new(Clock::Utc);
        // 59.5 s and 60.2 s fall in different minutes; minute 2 is empty.
        for t in [59.5, 60.2, 60.9, 185.0] {
            acc.push(req(t, 10, 2));
        }
        let (start, minutes) = acc.window_counts(60);
        assert_eq!(start, 0);
        assert_eq!(minutes, vec![1, 2, 0, 1]);
        let s = acc.summary(0);
        assert_eq!(s.per_minute.windows, 4);
        assert_eq!(s.per_minute.max, 2.0);
        assert_eq!(s.per_minute.mean, 1.0);
        assert_eq!(s.per_minute.peak_to_mean, 2.0);
        assert_eq!(s.per_minute.busiest_start, "1970-01-01 00:01:00 UTC");
        assert_eq!(s.input_tokens_per_minute.max, 20);
        assert_eq!(s.requests, 4);
        assert!((s.span_s - 125.5).abs() < 1e-9);
    }

    #[test]
    fn a_burst_within_a_minute_has_high_dispersion() {
        let mut acc = TraceAccumulator::new(Clock::Utc);
        for i in 0..60 {
            acc.push(req(f64::from(i) / 10.0, 1, 1));
        }
        // 60 arrivals in 6 of 60 seconds: counts 10 x 6, mean 1, variance 9.
        assert!((acc.within_minute_cv() - 3.0).abs() < 1e-9);
    }

    #[test]
    fn lengths_are_exact_percentiles() {
        let mut acc = TraceAccumulator::new(Clock::Relative);
        for (k, i) in (1..=100).enumerate() {
            acc.push(req(k as f64, i, 1));
        }
        let s = acc.summary(0);
        assert_eq!(
            (
                s.input_tokens.p50,
                s.input_tokens.p90,
                s.input_tokens.p99,
                s.input_tokens.max
            ),
            (50, 90, 99, 100)
        );
        assert_eq!(s.input_tokens.mean, 50.5);
        // Evenly spaced arrivals: interarrival CV is zero, and one arrival per
        // second is far more regular than Poisson within each minute.
        assert_eq!(s.interarrival_cv, 0.0);
        assert!(s.within_minute_cv < 0.5, "{}", s.within_minute_cv);
        assert_eq!(acc.length_sample().len(), 100);
    }
}

#[cfg(test)]
mod sparse_tests {
    use super::*;

    fn req(t: f64, i: u32) -> Request {
        Request {
            arrival_s: t,
            input_tokens: i,
            output_tokens: 1,
        }
    }

    #[test]
    fn two_rows_a_year_apart_hold_two_seconds_of_memory() {
        let mut acc = TraceAccumulator::new(Clock::Utc);
        acc.push(req(0.0, 10));
        acc.push(req(365.0 * 86_400.0, 4_000_000));
        assert_eq!(acc.per_second.len(), 2);
        let s = acc.summary(0);
        assert_eq!(s.per_second.windows, 365 * 86_400 + 1);
        assert_eq!((s.per_second.p50, s.per_second.max), (0.0, 1.0));
        assert_eq!(s.per_hour.windows, 365 * 24 + 1);
        assert_eq!(s.input_tokens.max, 4_000_000);
        assert_eq!(s.input_tokens.p50, 10);
    }

    #[test]
    fn sparse_windows_match_the_dense_counts() {
        let mut acc = TraceAccumulator::new(Clock::Utc);
        for t in [3.2, 3.9, 7.0, 61.0, 61.5, 200.0, 200.1, 200.2] {
            acc.push(req(t, 1));
        }
        for w in [1, 60, 3600] {
            let (_, dense) = acc.window_counts(w);
            let s = acc.windows(w);
            let mut sorted: Vec<f64> = dense.iter().map(|&c| c as f64).collect();
            sorted.sort_by(f64::total_cmp);
            assert_eq!(s.windows, dense.len() as u64);
            assert_eq!(s.p50, crate::base::stats::percentile_sorted(&sorted, 0.5));
            assert_eq!(s.p99, crate::base::stats::percentile_sorted(&sorted, 0.99));
            assert_eq!(s.max, *dense.iter().max().unwrap() as f64);
        }
    }
}
