//! `planner predict` as text (vLLM's benchmark summary) and as JSON (the
//! keys of vLLM's `--save-result` file, per-request arrays included, so
//! `planner goodput` reads it as it reads a real run); along a
//! `--max-concurrency` curve, one row per concurrency and the highest that
//! meets the limits.

use crate::profiles::precision::Precision;
use crate::sim::bench::{BenchRun, BenchSummary, Stats};
use serde_json::{json, Map, Value};
use std::fmt::Write;

/// What was predicted.
#[derive(Debug, Clone)]
pub(crate) struct Predicted {
    pub model: String,
    pub model_id: String,
    pub gpu: String,
    pub engine: String,
    pub engine_name: String,
    pub backend: String,
    pub tp: u32,
    /// Expert parallelism and data-parallel attention (1 when unused).
    pub ep: u32,
    pub attention_dp: u32,
    pub precision: Precision,
    pub max_num_seqs: u32,
    pub max_num_batched_tokens: u32,
    pub request_rate: String,
    pub num_prompts: u32,
    pub dataset: Option<String>,
    /// `--enable-prefix-caching`.
    pub prefix_caching: bool,
    /// Whether the prompts name their blocks (a dataset with block hashes).
    pub prompt_blocks: bool,
    /// Speculative decoding (`--speculative-method`).
    pub speculation: Option<crate::perf::Speculation>,
    /// A disaggregated unit's workers (`--prefill-workers`, ...).
    pub disaggregated: Option<crate::capacity::runs::DisaggregatedRun>,
    /// The link a unit's KV cache moves over, in words (empty without a
    /// unit).
    pub kv_link: String,
}

/// Latency limits and the percentile at which they must hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Slo {
    pub ttft_ms: f64,
    pub tpot_ms: f64,
    pub percentile: f64,
}

/// One run of the curve.
#[derive(Debug, Clone)]
pub(crate) struct Point {
    pub max_concurrency: Option<u32>,
    pub run: BenchRun,
    pub summary: BenchSummary,
    /// Share of the requests that met both limits (a refused one met
    /// neither), and those per second of the run.
    pub attainment: Option<f64>,
    pub goodput_rps: Option<f64>,
    /// TTFT and TPOT at the SLO's percentile, ms.
    pub ttft_at_percentile_ms: f64,
    pub tpot_at_percentile_ms: f64,
}

impl Point {
    pub(crate) fn new(
        max_concurrency: Option<u32>,
        run: BenchRun,
        summary: BenchSummary,
        slo: Option<Slo>,
    ) -> Point {
        let served = || run.requests.iter().filter(|r| r.error.is_none());
        let q = slo.map_or(99.0, |s| s.percentile);
        let ttft_at = Stats::percentile(served().map(|r| r.ttft_s * 1e3).collect(), q);
        let tpot_at = Stats::percentile(
            served()
                .filter(|r| r.output_tokens > 1)
                .map(|r| (r.e2e_s - r.ttft_s) / f64::from(r.output_tokens - 1) * 1e3)
                .collect(),
            q,
        );
        let (attainment, goodput_rps) = match slo {
            Some(s) => {
                let met = served()
                    .filter(|r| {
                        let tpot_ms = if r.output_tokens > 1 {
                            (r.e2e_s - r.ttft_s) / f64::from(r.output_tokens - 1) * 1e3
                        } else {
                            0.0
                        };
                        r.ttft_s * 1e3 <= s.ttft_ms && tpot_ms <= s.tpot_ms
                    })
                    .count();
                let all = run.requests.len().max(1);
                let per_s = if run.duration_s > 0.0 {
                    met as f64 / run.duration_s
                } else {
                    0.0
                };
                (Some(met as f64 / all as f64), Some(per_s))
            }
            None => (None, None),
        };
        Point {
            max_concurrency,
            run,
            summary,
            attainment,
            goodput_rps,
            ttft_at_percentile_ms: ttft_at,
            tpot_at_percentile_ms: tpot_at,
        }
    }

    /// Whether the limits hold at their percentile.
    fn holds(&self, slo: &Slo) -> bool {
        self.summary.failed == 0
            && self.ttft_at_percentile_ms <= slo.ttft_ms
            && self.tpot_at_percentile_ms <= slo.tpot_ms
    }
}

/// The runs, and the highest concurrency (in the order given, up to the
/// first that misses) at which the limits hold.
#[derive(Debug, Clone)]
pub(crate) struct Curve {
    pub points: Vec<Point>,
    pub slo: Option<Slo>,
    /// Index into `points`.
    pub highest_holding: Option<usize>,
}

impl Curve {
    pub(crate) fn new(points: Vec<Point>, slo: Option<Slo>) -> Curve {
        let highest_holding = slo.and_then(|s| {
            points
                .iter()
                .position(|p| !p.holds(&s))
                .map_or(Some(points.len()), Some)
                .and_then(|first_miss| first_miss.checked_sub(1))
        });
        Curve {
            points,
            slo,
            highest_holding,
        }
    }

    /// The JSON: one run as vLLM's result file; a curve as its runs.
    pub(crate) fn json(&self, p: &Predicted) -> Value {
        self.json_of(p, true)
    }

    /// [`Curve::json`] without the per-request lists (lengths, TTFTs, ITLs,
    /// errors): every figure the text prints, for the finite check of a
    /// text report (a non-finite latency makes its statistics non-finite).
    pub(crate) fn summary_json(&self, p: &Predicted) -> Value {
        self.json_of(p, false)
    }

    fn json_of(&self, p: &Predicted, per_request: bool) -> Value {
        let mut planner = json!({
            "model": p.model,
            "gpu": p.gpu,
            "engine": p.engine,
            "engine_name": p.engine_name,
            "tensor_parallel": p.tp,
            "precision": p.precision,
            "max_num_seqs": p.max_num_seqs,
            "max_num_batched_tokens": p.max_num_batched_tokens,
            "dataset": p.dataset,
        });
        if let Some(s) = &p.speculation {
            planner["speculative"] = json!({
                "method": s.method,
                "num_speculative_tokens": s.tokens,
                "acceptance_rate": s.acceptance,
                "tokens_per_step": s.tokens_per_step(),
            });
        }
        if let Some(d) = &p.disaggregated {
            planner["disaggregated"] = json!(d);
            planner["kv_link"] = json!(p.kv_link);
        }
        if p.prefix_caching {
            planner["enable_prefix_caching"] = json!(true);
            planner["dataset_has_block_hashes"] = json!(p.prompt_blocks);
        }
        if p.ep > 1 || p.attention_dp > 1 {
            planner["expert_parallel"] = json!(p.ep);
            planner["attention_dp"] = json!(p.attention_dp);
        }
        if self.points.len() == 1 {
            let mut run = run_json(p, &self.points[0], self.slo.as_ref(), per_request);
            if let Value::Object(m) = &mut run {
                m.insert("planner".into(), planner);
            }
            return run;
        }
        let mut out = Map::new();
        out.insert("planner".into(), planner);
        out.insert(
            "runs".into(),
            Value::Array(
                self.points
                    .iter()
                    .map(|pt| run_json(p, pt, self.slo.as_ref(), per_request))
                    .collect(),
            ),
        );
        if let Some(s) = &self.slo {
            let best = self.highest_holding.map(|i| &self.points[i]);
            out.insert(
                "slo".into(),
                json!({
                    "ttft_ms": s.ttft_ms,
                    "tpot_ms": s.tpot_ms,
                    "percentile": s.percentile,
                    "highest_concurrency": best.and_then(|b| b.max_concurrency),
                    "request_goodput": best.and_then(|b| b.goodput_rps),
                }),
            );
        }
        Value::Object(out)
    }
}

/// One run in the keys of vLLM's `--save-result` file (with its
/// per-request lists when `per_request`).
fn run_json(p: &Predicted, pt: &Point, slo: Option<&Slo>, per_request: bool) -> Value {
    let s = &pt.summary;
    let mut m = Map::new();
    m.insert("backend".into(), json!(p.backend));
    m.insert("model_id".into(), json!(p.model_id));
    m.insert("num_prompts".into(), json!(pt.run.requests.len()));
    m.insert("request_rate".into(), json!(p.request_rate));
    m.insert("max_concurrency".into(), json!(pt.max_concurrency));
    m.insert("duration".into(), json!(s.duration_s));
    m.insert("preemptions".into(), json!(pt.run.preemptions));
    m.insert("completed".into(), json!(s.completed));
    m.insert("total_input_tokens".into(), json!(s.total_input_tokens));
    m.insert("total_output_tokens".into(), json!(s.total_output_tokens));
    m.insert("request_throughput".into(), json!(s.request_throughput));
    if let (Some(g), Some(_)) = (pt.goodput_rps, slo) {
        m.insert("request_goodput".into(), json!(g));
    }
    m.insert("output_throughput".into(), json!(s.output_throughput));
    m.insert(
        "total_token_throughput".into(),
        json!(s.total_token_throughput),
    );
    if p.prefix_caching {
        m.insert("prefix_cache_hit_rate".into(), json!(s.prefix_hit_share()));
        m.insert("prefix_cached_tokens".into(), json!(s.cached_prompt_tokens));
    }
    for (name, stats) in [
        ("ttft", &s.ttft),
        ("tpot", &s.tpot),
        ("itl", &s.itl),
        ("e2el", &s.e2el),
    ] {
        m.insert(format!("mean_{name}_ms"), json!(stats.mean_ms));
        m.insert(format!("median_{name}_ms"), json!(stats.median_ms));
        m.insert(format!("std_{name}_ms"), json!(stats.std_ms));
        m.insert(format!("p90_{name}_ms"), json!(stats.p90_ms));
        m.insert(format!("p99_{name}_ms"), json!(stats.p99_ms));
    }
    if !per_request {
        return Value::Object(m);
    }
    let reqs = &pt.run.requests;
    m.insert(
        "input_lens".into(),
        json!(reqs.iter().map(|r| r.input_tokens).collect::<Vec<_>>()),
    );
    m.insert(
        "output_lens".into(),
        json!(reqs
            .iter()
            .map(|r| if r.error.is_some() {
                0
            } else {
                r.output_tokens
            })
            .collect::<Vec<_>>()),
    );
    m.insert(
        "ttfts".into(),
        json!(reqs.iter().map(|r| r.ttft_s).collect::<Vec<_>>()),
    );
    m.insert(
        "itls".into(),
        json!(reqs.iter().map(|r| &r.itls_s).collect::<Vec<_>>()),
    );
    m.insert(
        "errors".into(),
        json!(reqs
            .iter()
            .map(|r| r.error.clone().unwrap_or_default())
            .collect::<Vec<_>>()),
    );
    Value::Object(m)
}

/// vLLM's summary lines for one run.
fn summary_text(o: &mut String, pt: &Point, slo: Option<&Slo>, prefix_caching: bool) {
    let s = &pt.summary;
    let line = |o: &mut String, label: &str, value: String| {
        let _ = writeln!(o, "{label:<40}{value:<10}");
    };
    let _ = writeln!(o, "{:=^50}", " Serving Benchmark Result ");
    line(o, "Successful requests:", s.completed.to_string());
    if s.failed > 0 {
        line(o, "Failed requests:", s.failed.to_string());
    }
    if let Some(c) = pt.max_concurrency {
        line(o, "Maximum request concurrency:", c.to_string());
    }
    line(o, "Benchmark duration (s):", format!("{:.2}", s.duration_s));
    if pt.run.preemptions > 0 {
        line(
            o,
            "Preemptions (recomputed):",
            pt.run.preemptions.to_string(),
        );
    }
    line(o, "Total input tokens:", s.total_input_tokens.to_string());
    line(
        o,
        "Total generated tokens:",
        s.total_output_tokens.to_string(),
    );
    line(
        o,
        "Request throughput (req/s):",
        format!("{:.2}", s.request_throughput),
    );
    if let Some(g) = pt.goodput_rps {
        line(o, "Request goodput (req/s):", format!("{g:.2}"));
    }
    line(
        o,
        "Output token throughput (tok/s):",
        format!("{:.2}", s.output_throughput),
    );
    line(
        o,
        "Total Token throughput (tok/s):",
        format!("{:.2}", s.total_token_throughput),
    );
    if prefix_caching {
        line(
            o,
            "Prefix cache hit rate (prompt tokens):",
            format!("{:.2}%", 100.0 * s.prefix_hit_share()),
        );
    }
    for (title, short, stats) in [
        ("Time to First Token", "TTFT", &s.ttft),
        ("Time per Output Token (excl. 1st token)", "TPOT", &s.tpot),
        ("Inter-token Latency", "ITL", &s.itl),
        ("End-to-end Latency", "E2EL", &s.e2el),
    ] {
        let _ = writeln!(o, "{title:-^50}");
        line(
            o,
            &format!("Mean {short} (ms):"),
            format!("{:.2}", stats.mean_ms),
        );
        line(
            o,
            &format!("Median {short} (ms):"),
            format!("{:.2}", stats.median_ms),
        );
        line(
            o,
            &format!("P90 {short} (ms):"),
            format!("{:.2}", stats.p90_ms),
        );
        line(
            o,
            &format!("P99 {short} (ms):"),
            format!("{:.2}", stats.p99_ms),
        );
    }
    if let (Some(s), Some(a)) = (slo, pt.attainment) {
        let _ = writeln!(o, "{:-^50}", "Service Level Objective");
        line(
            o,
            &format!("Met TTFT <= {} ms and TPOT <= {} ms:", s.ttft_ms, s.tpot_ms),
            format!("{:.2}%", 100.0 * a),
        );
    }
    let _ = writeln!(o, "{}", "=".repeat(50));
}

/// The text of a prediction.
pub(crate) fn render(p: &Predicted, curve: &Curve) -> String {
    let mut o = String::new();
    let gpus = p.disaggregated.as_ref().map_or(
        p.tp * p.attention_dp,
        crate::capacity::runs::DisaggregatedRun::gpus,
    );
    let _ = writeln!(
        o,
        "Predicted (not measured): {} on {}{} x {}{}, {} ({}), {}, max-num-seqs {}, max-num-batched-tokens {}; {} prompts from {}, request rate {}",
        p.model,
        p.disaggregated.as_ref().map_or(String::new(), |d| format!(
            "a {}P{}D unit of ",
            d.prefill.workers, d.decode.workers
        )),
        gpus,
        p.gpu,
        if p.disaggregated.is_some() {
            String::new()
        } else if p.ep > 1 || p.attention_dp > 1 {
            format!(
                " ({})",
                crate::perf::Layout {
                    tp: p.tp,
                    ep: p.ep,
                    attention_dp: p.attention_dp
                }
                .label()
                .to_uppercase()
            )
        } else {
            String::new()
        },
        p.engine_name,
        p.engine,
        p.precision,
        p.max_num_seqs,
        p.max_num_batched_tokens,
        p.num_prompts,
        p.dataset.as_deref().unwrap_or("the random dataset"),
        p.request_rate
    );
    if let Some(d) = &p.disaggregated {
        let side = |s: &crate::capacity::runs::RunSide, what: &str| {
            format!(
                "{} {what} worker{} of {} x {} ({}{})",
                s.workers,
                if s.workers == 1 { "" } else { "s" },
                s.layout.gpus(),
                p.gpu,
                s.layout.label().to_uppercase(),
                s.batch
                    .map_or(String::new(), |b| format!(", {b} sequences a rank"))
            )
        };
        let _ = writeln!(
            o,
            "disaggregated: {} + {}, each prompt's KV cache moved from its prefill worker to a decode worker over {}; the workers' settings above apply to both sides",
            side(&d.prefill, "prefill"),
            side(&d.decode, "decode"),
            p.kv_link
        );
    }
    if let Some(s) = &p.speculation {
        let _ = writeln!(
            o,
            "speculative decoding: {} drafting {} token{} a step at acceptance {:.2}, {:.2} tokens a sequence per decode step on average; the inter-token latencies are per token (the engine streams a step's accepted tokens together, so `vllm bench serve` sees fewer, longer gaps)",
            s.method.name(),
            s.tokens,
            if s.tokens == 1 { "" } else { "s" },
            s.acceptance,
            s.tokens_per_step()
        );
    }
    if p.prefix_caching {
        let _ = writeln!(
            o,
            "{}",
            if p.prompt_blocks {
                "prefix caching on (--enable-prefix-caching): a prompt's leading 512-token blocks that an earlier request computed, by the dataset's block hashes (its prompt, or its output where this prompt is the conversation's next turn), are not prefilled again"
            } else {
                "prefix caching on (--enable-prefix-caching), but the dataset names no prompt blocks (only a Mooncake trace's `hash_ids` do): no hit is counted"
            }
        );
    }
    if curve.points.len() == 1 {
        summary_text(
            &mut o,
            &curve.points[0],
            curve.slo.as_ref(),
            p.prefix_caching,
        );
        return o;
    }
    let q = curve.slo.map_or(99.0, |s| s.percentile);
    let _ = writeln!(
        o,
        "{:>11} {:>9} {:>12} {:>11} {:>11} {:>11} {:>11}",
        "concurrency",
        "req/s",
        "output tok/s",
        format!("p{q} TTFT"),
        format!("p{q} TPOT"),
        "met both",
        "goodput"
    );
    for pt in &curve.points {
        let _ = writeln!(
            o,
            "{:>11} {:>9.2} {:>12.1} {:>8.1} ms {:>8.2} ms {:>11} {:>11}",
            pt.max_concurrency
                .map_or_else(|| "none".into(), |c| c.to_string()),
            pt.summary.request_throughput,
            pt.summary.output_throughput,
            pt.ttft_at_percentile_ms,
            pt.tpot_at_percentile_ms,
            pt.attainment
                .map_or_else(|| "-".into(), |a| format!("{:.1}%", 100.0 * a)),
            pt.goodput_rps
                .map_or_else(|| "-".into(), |g| format!("{g:.2} req/s")),
        );
    }
    if p.prefix_caching {
        let rates: Vec<String> = curve
            .points
            .iter()
            .map(|pt| format!("{:.1}%", 100.0 * pt.summary.prefix_hit_share()))
            .collect();
        let _ = writeln!(
            o,
            "Prefix cache hit rate (prompt tokens), by concurrency: {}",
            rates.join(", ")
        );
    }
    if let Some(s) = &curve.slo {
        match curve.highest_holding {
            Some(i) => {
                let pt = &curve.points[i];
                let _ = writeln!(
                    o,
                    "Highest concurrency at which p{} TTFT <= {} ms and p{} TPOT <= {} ms still hold: {} (goodput {:.2} req/s, {:.1}% of requests meet both).",
                    s.percentile,
                    s.ttft_ms,
                    s.percentile,
                    s.tpot_ms,
                    pt.max_concurrency.map_or_else(|| "none".into(), |c| c.to_string()),
                    pt.goodput_rps.unwrap_or(0.0),
                    100.0 * pt.attainment.unwrap_or(0.0)
                );
                if let Some(next) = curve.points.get(i + 1) {
                    let _ = writeln!(
                        o,
                        "At {} the limits are missed: p{} TTFT {:.1} ms, p{} TPOT {:.2} ms.",
                        next.max_concurrency
                            .map_or_else(|| "none".into(), |c| c.to_string()),
                        s.percentile,
                        next.ttft_at_percentile_ms,
                        s.percentile,
                        next.tpot_at_percentile_ms
                    );
                }
            }
            None => {
                let _ = writeln!(
                    o,
                    "The limits (p{} TTFT <= {} ms, TPOT <= {} ms) are missed from the first concurrency on.",
                    s.percentile, s.ttft_ms, s.tpot_ms
                );
            }
        }
    }
    o
}
