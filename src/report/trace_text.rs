//! Text rendering of `planner trace stats`.

use super::group_thousands;
use crate::traces::stats::{LengthStats, TraceSummary, WindowStats};
use std::fmt::Write as _;

/// The statistics of one trace as aligned text.
pub fn render(path: &str, s: &TraceSummary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "trace      {path}");
    let _ = writeln!(
        out,
        "requests   {}{}",
        group_thousands(s.requests as i64),
        if s.skipped_rows > 0 {
            format!(" ({} bad rows skipped)", s.skipped_rows)
        } else {
            String::new()
        }
    );
    let _ = writeln!(out, "start      {}", s.start);
    let _ = writeln!(
        out,
        "span       {:.1} s ({:.2} h)",
        s.span_s,
        s.span_s / 3600.0
    );
    if s.requests < 2 || s.span_s <= 0.0 {
        // No time between arrivals: a rate and the CVs would be made up.
        let _ = writeln!(
            out,
            "mean rate  not measured: {} request(s) over {:.1} s; the rate and the arrival CVs need two arrivals at different times",
            s.requests, s.span_s
        );
    } else {
        let _ = writeln!(out, "mean rate  {:.3} requests/s", s.mean_rps);
        let _ = writeln!(
            out,
            "interarrival  mean {:.4} s, CV {:.3}; within-minute arrival CV {:.3}",
            s.interarrival_mean_s, s.interarrival_cv, s.within_minute_cv
        );
    }
    if let Some(q) = &s.quantised_timestamps {
        let _ = writeln!(
            out,
            "timestamps quantised: distinct times {:.1} s apart on average, {:.1} requests each, {} sub-second offsets; the per-second counts and the within-minute CV above are artefacts of the rounding (planning assumes a within-minute CV of {:.1}, Poisson, unless the scenario's [[demand]] sets within_minute_cv)",
            q.step_s,
            q.requests_per_time,
            q.sub_second_offsets,
            crate::traces::quantised::FALLBACK_WITHIN_MINUTE_CV
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "arrivals per window    windows      mean       p50       p99       max  peak/mean  busiest window starts");
    for (name, w) in [
        ("second", &s.per_second),
        ("minute", &s.per_minute),
        ("hour", &s.per_hour),
    ] {
        window_row(&mut out, name, w);
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "tokens per request        mean     p50     p90     p99     max"
    );
    length_row(&mut out, "input (prompt)", &s.input_tokens);
    length_row(&mut out, "output (generated)", &s.output_tokens);
    let _ = writeln!(out);
    let _ = writeln!(out, "tokens per minute         mean          max");
    let _ = writeln!(
        out,
        "  input               {:>9} {:>12}",
        group_thousands(s.input_tokens_per_minute.mean.round() as i64),
        group_thousands(s.input_tokens_per_minute.max as i64)
    );
    let _ = writeln!(
        out,
        "  output              {:>9} {:>12}",
        group_thousands(s.output_tokens_per_minute.mean.round() as i64),
        group_thousands(s.output_tokens_per_minute.max as i64)
    );
    if let Some(p) = &s.prefix {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "prefix share (an unbounded cache, requests in arrival order, {}-token blocks)",
            p.block_tokens
        );
        let missing = p.requests_with_hashes - p.requests_with_hit;
        let finding = match missing {
            0 => "all find some".to_string(),
            1..=9 => format!("all but {missing} find some"),
            _ => format!(
                "{} ({:.1}%) find some",
                group_thousands(p.requests_with_hit as i64),
                p.requests_with_hit_share * 100.0
            ),
        };
        let _ = writeln!(
            out,
            "  {:.1}% of all prompt tokens ({:.1}% of the hashed 512-token blocks) were computed by an earlier request; of the {} requests with block hashes, {finding}",
            p.token_hit_share * 100.0,
            p.block_hit_share * 100.0,
            group_thousands(p.requests_with_hashes as i64)
        );
        if p.next_turns > 0 {
            let _ = writeln!(
                out,
                "  {} requests continue a conversation whose previous turn's output fills {} blocks they name (counted as computed: cached when that turn finished)",
                group_thousands(p.next_turns as i64),
                group_thousands(p.generated_blocks as i64)
            );
        }
        let _ = writeln!(
            out,
            "tokens per request        mean     p50     p90     p99     max"
        );
        length_row(&mut out, "shared prefix", &p.shared_prefix_tokens);
    }
    out
}

fn window_row(out: &mut String, name: &str, w: &WindowStats) {
    let _ = writeln!(
        out,
        "  {name:<20} {:>8} {:>9.3} {:>9.0} {:>9.0} {:>9.0} {:>10.2}  {}",
        w.windows, w.mean, w.p50, w.p99, w.max, w.peak_to_mean, w.busiest_start
    );
}

fn length_row(out: &mut String, name: &str, l: &LengthStats) {
    let _ = writeln!(
        out,
        "  {name:<20} {:>8.1} {:>7} {:>7} {:>7} {:>7}",
        l.mean, l.p50, l.p90, l.p99, l.max
    );
}
