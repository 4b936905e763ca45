//! Goodput accounting from per-request results: how many requests met both
//! the TTFT and the TPOT limit, their output tokens, and the cost per 1,000
//! output tokens over all output and over SLO-met output only.
//!
//! Logs: CSV with header `arrival_s,ttft_ms,e2e_ms,output_tokens` (any
//! order, optional `tier`), or vLLM benchmark-serving JSON (`ttfts` and
//! `itls` in seconds, `output_lens`, optional `duration`; a request with a
//! non-empty `errors` entry counts as failed: no output, neither limit met). TPOT of a request
//! is (e2e − TTFT) / (output tokens − 1); a one-token answer has no gap
//! between tokens and counts as meeting the TPOT limit.

use crate::base::error::{PlannerError, Problem};
use crate::base::stats::percentile_sorted;
use crate::base::text::excerpt;
use crate::sim::Latency;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// One request's result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RequestResult {
    /// Seconds; `None` in logs without arrival times.
    pub arrival_s: Option<f64>,
    pub ttft_ms: f64,
    pub e2e_ms: f64,
    pub output_tokens: u32,
    pub tier: Option<String>,
    /// The request failed (vLLM's `errors`): it counts as a request that met
    /// neither limit and produced no output.
    pub failed: bool,
}

/// A whole log.
#[derive(Debug, Clone)]
pub(crate) struct ResultLog {
    pub requests: Vec<RequestResult>,
    /// The benchmark's own duration, when the log states it.
    pub duration_s: Option<f64>,
    /// Where each request's `tier` sits in a CSV log: (line, column), both
    /// from 1; empty for a vLLM JSON log.
    pub tier_at: Vec<(usize, usize)>,
}

/// The limits requests are judged against.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SloLimits {
    pub ttft_ms: f64,
    pub tpot_ms: f64,
}

/// Where each request's limits come from.
#[derive(Debug, Clone)]
pub(crate) enum LimitSource {
    /// One pair of limits for every request.
    Fixed(SloLimits),
    /// Each request's `tier` names a scenario tier.
    Tiers(Vec<crate::scenario::Tier>),
}

impl LimitSource {
    /// The limits of a request of `tier` (or of the whole log).
    pub(crate) fn limits_of(&self, tier: Option<&str>) -> SloLimits {
        match self {
            LimitSource::Fixed(l) => *l,
            LimitSource::Tiers(tiers) => tier
                .and_then(|n| tiers.iter().find(|t| t.name == n))
                .map_or(
                    SloLimits {
                        ttft_ms: f64::INFINITY,
                        tpot_ms: f64::INFINITY,
                    },
                    |t| SloLimits {
                        ttft_ms: t.ttft_ms,
                        tpot_ms: t.tpot_ms,
                    },
                ),
        }
    }

    /// The limits in words.
    pub(crate) fn describe(&self) -> String {
        match self {
            LimitSource::Fixed(l) => format!(
                "TTFT ≤ {} ms and TPOT ≤ {} ms for every request",
                l.ttft_ms, l.tpot_ms
            ),
            LimitSource::Tiers(tiers) => tiers
                .iter()
                .map(|t| {
                    format!(
                        "{}: TTFT ≤ {} ms, TPOT ≤ {} ms",
                        t.name, t.ttft_ms, t.tpot_ms
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
        }
    }

    /// Problems with the log's tiers: with scenario tiers, every request must
    /// name one of them.
    pub(crate) fn check(&self, log: &ResultLog, log_path: &Path) -> Result<(), String> {
        let LimitSource::Tiers(tiers) = self else {
            return Ok(());
        };
        let unknown: std::collections::BTreeSet<&str> = log
            .requests
            .iter()
            .filter_map(|r| r.tier.as_deref())
            .filter(|t| !tiers.iter().any(|k| k.name == *t))
            .collect();
        if log.requests.iter().all(|r| r.tier.is_some()) && unknown.is_empty() {
            return Ok(());
        }
        // The first request whose tier is not the scenario's, where the log
        // says where it is.
        let first = log
            .requests
            .iter()
            .position(|r| r.tier.as_deref().is_some_and(|t| unknown.contains(t)))
            .and_then(|i| log.tier_at.get(i))
            .map_or_else(String::new, |(line, column)| {
                format!(" (the first at {}:{line}:{column})", log_path.display())
            });
        Err(format!(
            "with --scenario every request needs a `tier` column naming one of the scenario's tiers ({}){}",
            tiers.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", "),
            if unknown.is_empty() {
                String::new()
            } else {
                format!("; unknown: {}{first}", unknown.into_iter().collect::<Vec<_>>().join(", "))
            }
        ))
    }
}

/// How the money is counted.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CostBasis {
    /// Cost of the serving fleet per hour (any currency).
    pub cost_per_hour: f64,
    /// Seconds the cost is paid for.
    pub duration_s: f64,
}

/// Goodput of a set of requests.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Goodput {
    pub requests: u64,
    /// Requests that failed (counted in `requests`, meeting neither limit).
    pub failed: u64,
    pub met_ttft: u64,
    pub met_tpot: u64,
    pub met_both: u64,
    pub output_tokens: u64,
    /// Output tokens of the requests meeting both limits, summed directly.
    pub goodput_output_tokens: u64,
    /// met_both / requests.
    pub attainment: f64,
    pub ttft_p50_ms: f64,
    pub ttft_p99_ms: f64,
    pub tpot_p50_ms: f64,
    pub tpot_p99_ms: f64,
    pub duration_s: f64,
    pub goodput_requests_per_s: f64,
    pub goodput_output_tokens_per_s: f64,
    pub output_tokens_per_s: f64,
    /// Cost attributed (whole log: all of it; a tier: in proportion to its
    /// output tokens); absent without a cost per hour.
    pub cost: Option<f64>,
    pub cost_per_1k_output_tokens: Option<f64>,
    pub cost_per_1k_goodput_tokens: Option<f64>,
}

/// The report of `planner goodput`.
#[derive(Debug, Clone, Serialize)]
pub struct GoodputReport {
    pub log: String,
    /// Where the limits came from, in words.
    pub limits: String,
    pub currency: String,
    pub cost_per_hour: Option<f64>,
    /// How the duration was set, in words.
    pub duration: String,
    pub total: Goodput,
    /// Per tier, when the log has a `tier` column.
    pub tiers: BTreeMap<String, Goodput>,
}

/// Reads a CSV or vLLM JSON results log, collecting every bad row.
pub(crate) fn read_log(path: &Path) -> Result<ResultLog, PlannerError> {
    let text = crate::base::text::read_text(path).map_err(|e| PlannerError::Log(vec![e]))?;
    if text.trim_start().starts_with('{') {
        read_vllm_json(path, &text)
    } else {
        read_csv(path, &text)
    }
}

fn read_csv(path: &Path, text: &str) -> Result<ResultLog, PlannerError> {
    let mut problems = Vec::new();
    let at =
        |line: usize, message: String| Problem::new(path.to_path_buf(), format!("{line}"), message);
    let mut lines = text.lines().enumerate();
    let header: Vec<String> = lines
        .next()
        .map(|(_, h)| {
            h.split(',')
                .map(|c| c.trim().to_ascii_lowercase())
                .collect()
        })
        .unwrap_or_default();
    let column = |name: &str| header.iter().position(|c| c == name);
    let required = ["arrival_s", "ttft_ms", "e2e_ms", "output_tokens"];
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|c| column(c).is_none())
        .collect();
    if !missing.is_empty() {
        problems.push(at(
            1,
            format!(
                "the header lacks {}; a results log starts with `arrival_s,ttft_ms,e2e_ms,output_tokens` (optionally `,tier`), or is vLLM benchmark-serving JSON",
                missing.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")
            ),
        ));
        return Err(PlannerError::Log(problems));
    }
    let [arrival, ttft, e2e, out] = required.map(|c| column(c).unwrap_or(0));
    let tier_col = column("tier");
    let mut requests = Vec::new();
    let mut tier_at = Vec::new();
    for (i, line) in lines {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != header.len() {
            problems.push(at(
                n,
                format!("{} fields, the header has {}", fields.len(), header.len()),
            ));
            continue;
        }
        let number = |c: usize, name: &str| -> Result<f64, String> {
            fields[c]
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| {
                    format!(
                        "`{name}` is `{}`, not a number",
                        excerpt(fields[c].as_bytes())
                    )
                })
        };
        let parsed = (|| {
            let arrival_s = number(arrival, "arrival_s")?;
            let ttft_ms = number(ttft, "ttft_ms")?;
            let e2e_ms = number(e2e, "e2e_ms")?;
            let tokens = fields[out].parse::<u32>().map_err(|_| {
                format!(
                    "`output_tokens` is `{}`, not a whole number",
                    excerpt(fields[out].as_bytes())
                )
            })?;
            Ok::<_, String>(RequestResult {
                arrival_s: Some(arrival_s),
                ttft_ms,
                e2e_ms,
                output_tokens: tokens,
                tier: tier_col.map(|c| fields[c].to_string()),
                failed: false,
            })
        })();
        match parsed.and_then(|r| check(&r).map(|()| r)) {
            Ok(r) => {
                if let Some(c) = tier_col {
                    let before: usize =
                        line.split(',').take(c).map(|f| f.chars().count() + 1).sum();
                    let column = before + 1;
                    tier_at.push((n, column));
                }
                requests.push(r);
            }
            Err(message) => problems.push(at(n, message)),
        }
    }
    if requests.is_empty() && problems.is_empty() {
        problems.push(at(2, "the log has a header but no requests".into()));
    }
    finish(
        problems,
        ResultLog {
            requests,
            duration_s: None,
            tier_at,
        },
    )
}

/// Longest latency a log may hold, in ms (about 11.6 days).
pub(crate) const MAX_LATENCY_MS: f64 = 1e9;

/// Latest arrival a log may hold, in seconds (about 3,170 years after its clock's zero).
pub(crate) const MAX_ARRIVAL_S: f64 = 1e11;

/// Longest duration a log or `--duration-s` may state, in seconds (10 years).
pub(crate) const MAX_DURATION_S: f64 = 315_360_000.0;

/// The checks every request must pass.
fn check(r: &RequestResult) -> Result<(), String> {
    let finite =
        r.ttft_ms.is_finite() && r.e2e_ms.is_finite() && r.arrival_s.is_none_or(f64::is_finite);
    if !finite || r.ttft_ms < 0.0 || r.e2e_ms < 0.0 || r.arrival_s.is_some_and(|a| a < 0.0) {
        return Err("negative time: arrival_s, ttft_ms and e2e_ms must be ≥ 0".into());
    }
    if r.e2e_ms > MAX_LATENCY_MS || r.arrival_s.is_some_and(|a| a > MAX_ARRIVAL_S) {
        return Err(format!(
            "a time out of range: ttft_ms and e2e_ms must be at most {MAX_LATENCY_MS:e} ms and arrival_s at most {MAX_ARRIVAL_S:e} s"
        ));
    }
    if r.output_tokens == 0 {
        return Err("zero output tokens: a completed request has at least one; drop failed requests or count them separately".into());
    }
    if r.e2e_ms < r.ttft_ms {
        return Err(format!(
            "e2e_ms {} is below ttft_ms {}: the end-to-end latency includes the first token",
            r.e2e_ms, r.ttft_ms
        ));
    }
    Ok(())
}

fn finish(problems: Vec<Problem>, log: ResultLog) -> Result<ResultLog, PlannerError> {
    if problems.is_empty() {
        return Ok(log);
    }
    let file = problems[0].file.clone();
    Err(PlannerError::Log(crate::base::located::listed(
        problems, &file,
    )))
}

#[derive(serde::Deserialize)]
struct VllmResult {
    ttfts: Vec<f64>,
    itls: Vec<Vec<f64>>,
    output_lens: Vec<u32>,
    #[serde(default)]
    duration: Option<f64>,
    /// Per request: empty when it succeeded, else the error.
    #[serde(default)]
    errors: Vec<String>,
}

fn read_vllm_json(path: &Path, text: &str) -> Result<ResultLog, PlannerError> {
    let problem =
        |location: String, message: String| Problem::new(path.to_path_buf(), location, message);
    let parsed: VllmResult = serde_json::from_str(text).map_err(|e| {
        // `planner predict` of a list of concurrencies writes its runs
        // under `runs`, one result each: say so rather than name a missing
        // field (looked for only when the file is not a result).
        let curve = matches!(
            serde_json::from_str::<serde_json::Value>(text),
            Ok(serde_json::Value::Object(top)) if top.contains_key("planner") && top.contains_key("runs")
        );
        PlannerError::Log(vec![if curve {
            problem(
                String::new(),
                "this is `planner predict`'s curve, one run per concurrency: goodput reads one run; run `planner predict --format json` with one --max-concurrency value (or --request-rate) and read that".into(),
            )
        } else {
            problem(
                format!("{}:{}", e.line(), e.column()),
                format!("{e}; vLLM benchmark-serving JSON needs the per-request `ttfts`, `itls` and `output_lens`, which `vllm bench serve` writes only with --save-result --save-detailed"),
            )
        }])
    })?;
    let n = parsed.ttfts.len();
    if parsed.itls.len() != n || parsed.output_lens.len() != n {
        return Err(PlannerError::Log(vec![problem(
            String::new(),
            format!(
                "`ttfts` has {n} entries, `itls` {}, `output_lens` {}: they must match",
                parsed.itls.len(),
                parsed.output_lens.len()
            ),
        )]));
    }
    let mut problems = Vec::new();
    let mut requests = Vec::new();
    for i in 0..n {
        if parsed.errors.get(i).is_some_and(|e| !e.is_empty()) {
            requests.push(RequestResult {
                arrival_s: None,
                ttft_ms: 0.0,
                e2e_ms: 0.0,
                output_tokens: 0,
                tier: None,
                failed: true,
            });
            continue;
        }
        let ttft_ms = parsed.ttfts[i] * 1e3;
        let (gaps, tokens) = (parsed.itls[i].len(), parsed.output_lens[i]);
        if (gaps as u64) + 1 < u64::from(tokens) {
            problems.push(problem(
                format!("itls[{i}]"),
                format!(
                    "{gaps} inter-token gaps for {tokens} output tokens: a request of n tokens streamed one at a time has n − 1, so its end and its TPOT cannot be read from them; save the run with `vllm bench serve --save-result --save-detailed` against a server that streams every token"
                ),
            ));
            continue;
        }
        if let Some(bad) = parsed.itls[i]
            .iter()
            .position(|g| !(g.is_finite() && *g >= 0.0))
        {
            problems.push(problem(
                format!("itls[{i}][{bad}]"),
                format!(
                    "an inter-token latency must be a non-negative number of seconds, got {}",
                    parsed.itls[i][bad]
                ),
            ));
            continue;
        }
        let r = RequestResult {
            arrival_s: None,
            ttft_ms,
            e2e_ms: ttft_ms + parsed.itls[i].iter().sum::<f64>() * 1e3,
            output_tokens: parsed.output_lens[i],
            tier: None,
            failed: false,
        };
        match check(&r) {
            Ok(()) => requests.push(r),
            Err(m) => problems.push(problem(format!("request {i}"), m)),
        }
    }
    if let Some(d) = parsed.duration {
        if !(d.is_finite() && d > 0.0 && d <= MAX_DURATION_S) {
            problems.push(problem(
                "duration".into(),
                format!("`duration` must be in (0, {MAX_DURATION_S}] seconds, got {d}"),
            ));
        }
    }
    finish(
        problems,
        ResultLog {
            requests,
            duration_s: parsed.duration,
            tier_at: Vec::new(),
        },
    )
}

/// First arrival to last completion, when the log has arrival times.
pub(crate) fn span_s(log: &ResultLog) -> Option<f64> {
    let first = log
        .requests
        .iter()
        .filter_map(|r| r.arrival_s)
        .fold(f64::INFINITY, f64::min);
    let last = log
        .requests
        .iter()
        .filter_map(|r| r.arrival_s.map(|a| a + r.e2e_ms / 1e3))
        .fold(f64::NEG_INFINITY, f64::max);
    (last > first).then_some(last - first)
}

/// Goodput of `requests` over `duration_s`, with `cost` attributed to them.
pub(crate) fn account(
    requests: &[&RequestResult],
    limits: SloLimits,
    duration_s: f64,
    cost: Option<f64>,
) -> Goodput {
    let mut g = Goodput {
        requests: requests.len() as u64,
        failed: 0,
        met_ttft: 0,
        met_tpot: 0,
        met_both: 0,
        output_tokens: 0,
        goodput_output_tokens: 0,
        attainment: 0.0,
        ttft_p50_ms: 0.0,
        ttft_p99_ms: 0.0,
        tpot_p50_ms: 0.0,
        tpot_p99_ms: 0.0,
        duration_s,
        goodput_requests_per_s: 0.0,
        goodput_output_tokens_per_s: 0.0,
        output_tokens_per_s: 0.0,
        cost,
        cost_per_1k_output_tokens: None,
        cost_per_1k_goodput_tokens: None,
    };
    let mut ttfts = Vec::with_capacity(requests.len());
    let mut tpots = Vec::with_capacity(requests.len());
    for r in requests {
        if r.failed {
            g.failed += 1;
            continue;
        }
        let tpot_ms = Latency::tpot_ms(r.e2e_ms, r.ttft_ms, r.output_tokens);
        let ttft_ok = r.ttft_ms <= limits.ttft_ms;
        let tpot_ok = tpot_ms <= limits.tpot_ms;
        g.met_ttft += u64::from(ttft_ok);
        g.met_tpot += u64::from(tpot_ok);
        g.output_tokens += u64::from(r.output_tokens);
        if ttft_ok && tpot_ok {
            g.met_both += 1;
            g.goodput_output_tokens += u64::from(r.output_tokens);
        }
        ttfts.push(r.ttft_ms);
        tpots.push(tpot_ms);
    }
    ttfts.sort_by(f64::total_cmp);
    tpots.sort_by(f64::total_cmp);
    if !requests.is_empty() {
        g.attainment = g.met_both as f64 / g.requests as f64;
        g.ttft_p50_ms = percentile_sorted(&ttfts, 0.5);
        g.ttft_p99_ms = percentile_sorted(&ttfts, 0.99);
        g.tpot_p50_ms = percentile_sorted(&tpots, 0.5);
        g.tpot_p99_ms = percentile_sorted(&tpots, 0.99);
    }
    if duration_s > 0.0 {
        g.goodput_requests_per_s = g.met_both as f64 / duration_s;
        g.goodput_output_tokens_per_s = g.goodput_output_tokens as f64 / duration_s;
        g.output_tokens_per_s = g.output_tokens as f64 / duration_s;
    }
    let per_1k = |c: f64, tokens: u64| (tokens > 0).then(|| c / tokens as f64 * 1e3);
    g.cost_per_1k_output_tokens = cost.and_then(|c| per_1k(c, g.output_tokens));
    g.cost_per_1k_goodput_tokens = cost.and_then(|c| per_1k(c, g.goodput_output_tokens));
    g
}

/// The span a log's rates are over: its seconds, and where they came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Span {
    pub duration_s: f64,
    /// How the duration was found, as the report shows it.
    pub source: String,
}

/// The whole report: totals, and per tier when the log names tiers, each
/// judged against its limits.
pub(crate) fn report(
    log: &ResultLog,
    log_name: &str,
    limits: &LimitSource,
    span: Span,
    cost: Option<CostBasis>,
    currency: &str,
) -> GoodputReport {
    let Span {
        duration_s,
        source: duration_text,
    } = span;
    let total_cost = cost.map(|c| c.cost_per_hour * c.duration_s / 3600.0);
    let mut by_tier: BTreeMap<String, Vec<&RequestResult>> = BTreeMap::new();
    for r in &log.requests {
        if let Some(t) = &r.tier {
            by_tier.entry(t.clone()).or_default().push(r);
        }
    }
    // The cost is not split between tiers: a log says nothing of which GPUs
    // served which tier (a split by output tokens would give every tier the
    // same price per token by construction).
    let tiers: BTreeMap<String, Goodput> = by_tier
        .iter()
        .map(|(name, reqs)| {
            let g = account(reqs, limits.limits_of(Some(name)), duration_s, None);
            (name.clone(), g)
        })
        .collect();
    // Without tiers every request meets one set of limits; with tiers the
    // total adds up the tiers' own verdicts.
    let all: Vec<&RequestResult> = log.requests.iter().collect();
    let mut total = account(&all, limits.limits_of(None), duration_s, total_cost);
    if !tiers.is_empty() {
        let met = |f: fn(&Goodput) -> u64| tiers.values().map(f).sum::<u64>();
        total.met_ttft = met(|g| g.met_ttft);
        total.met_tpot = met(|g| g.met_tpot);
        total.met_both = met(|g| g.met_both);
        total.goodput_output_tokens = met(|g| g.goodput_output_tokens);
        total.attainment = total.met_both as f64 / total.requests.max(1) as f64;
        if duration_s > 0.0 {
            total.goodput_requests_per_s = total.met_both as f64 / duration_s;
            total.goodput_output_tokens_per_s = total.goodput_output_tokens as f64 / duration_s;
        }
        total.cost_per_1k_goodput_tokens = total_cost.and_then(|c| {
            (total.goodput_output_tokens > 0).then(|| c / total.goodput_output_tokens as f64 * 1e3)
        });
    }
    GoodputReport {
        log: log_name.to_string(),
        limits: limits.describe(),
        currency: currency.to_string(),
        cost_per_hour: cost.map(|c| c.cost_per_hour),
        duration: duration_text,
        total,
        tiers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mission's worked example: `met` of `n` requests meet both limits,
    /// every request outputs 100 tokens, one hour at 60,000 per hour.
    fn example(n: u64, met: u64) -> Goodput {
        let requests: Vec<RequestResult> = (0..n)
            .map(|i| RequestResult {
                arrival_s: Some(i as f64 * 0.1),
                ttft_ms: if i < met { 100.0 } else { 5000.0 },
                e2e_ms: 6000.0,
                output_tokens: 100,
                tier: None,
                failed: false,
            })
            .collect();
        let refs: Vec<&RequestResult> = requests.iter().collect();
        let limits = SloLimits {
            ttft_ms: 1000.0,
            tpot_ms: 100.0,
        };
        account(&refs, limits, 3600.0, Some(60_000.0))
    }

    #[test]
    fn worked_example_of_the_mission() {
        let a = example(6000, 5700);
        let b = example(9000, 4500);
        assert_eq!(
            (a.goodput_output_tokens, b.goodput_output_tokens),
            (570_000, 450_000)
        );
        let r1 = |x: Option<f64>| (x.unwrap() * 10.0).round() / 10.0;
        assert_eq!(r1(a.cost_per_1k_output_tokens), 100.0);
        assert_eq!(r1(b.cost_per_1k_output_tokens), 66.7);
        assert_eq!(r1(a.cost_per_1k_goodput_tokens), 105.3);
        assert_eq!(r1(b.cost_per_1k_goodput_tokens), 133.3);
    }

    #[test]
    fn tpot_excludes_the_first_token_and_one_token_answers_meet_it() {
        let limits = SloLimits {
            ttft_ms: 500.0,
            tpot_ms: 50.0,
        };
        let r = |e2e_ms: f64, out: u32| RequestResult {
            arrival_s: Some(0.0),
            ttft_ms: 200.0,
            e2e_ms,
            output_tokens: out,
            tier: None,
            failed: false,
        };
        // (2200 − 200) / 40 = 50 ms: meets; (2300 − 200) / 40 = 52.5: misses.
        let rs = [r(2200.0, 41), r(2300.0, 41), r(90_000.0, 1)];
        let g = account(&rs.iter().collect::<Vec<_>>(), limits, 10.0, None);
        assert_eq!((g.met_ttft, g.met_tpot, g.met_both), (3, 2, 2));
        assert_eq!(g.goodput_output_tokens, 42);
        assert_eq!(g.cost_per_1k_output_tokens, None);
    }
}
