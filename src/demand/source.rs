//! One `[[demand]]` source read into the figures demand is built from —
//! per-minute arrivals, within-minute burstiness, length distributions and a
//! length sample — whether it is a per-request trace or a tier of an
//! aggregate; and what the replay keeps of it.

use crate::base::error::{PlannerError, Problem};
use crate::base::progress::Progress;
use crate::scenario::{DemandSource, OverContext, Scenario};
use crate::traces::aggregate::{read_aggregate, Aggregate, TierAggregate};
use crate::traces::block_chains::{kept_chains, shared_prefix, BlockChains, SHARED_PREFIX_LATER};
use crate::traces::prefix_reuse::PrefixReuse;
use crate::traces::quantised::FALLBACK_WITHIN_MINUTE_CV;
use crate::traces::sessions::session_chains;
use crate::traces::stats::{accumulate_keeping, LengthStats};
use crate::traces::{Dropped, ReaderOptions, Request, TraceFormat};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

/// What the replay needs of a source.
#[derive(Debug, Clone)]
pub(crate) enum KeptSource {
    /// Nothing kept (demand only).
    Nothing,
    /// A trace's requests, with their prompt blocks (one chain per
    /// request) when the replicas cache prefixes and the trace names them.
    Requests(Vec<Request>, Option<Arc<BlockChains>>),
    /// An aggregate's tier, from which requests are sampled.
    Aggregate(Arc<TierAggregate>),
}

/// The figures of one source.
#[derive(Debug, Clone)]
pub(crate) struct SourceFigures {
    /// `azure`, `mooncake`, … or `aggregate`.
    pub format: String,
    /// The tier read from an aggregate (`None` for a trace).
    pub aggregate_tier: Option<String>,
    pub requests: u64,
    pub span_s: f64,
    /// Start (seconds on the source's clock) of the first minute.
    pub first_minute_s: i64,
    /// Arrivals per clock minute from the first minute on.
    pub minute_counts: Vec<u64>,
    pub within_minute_cv: f64,
    /// `None` when the source cannot tell (an aggregate).
    pub interarrival_cv: Option<f64>,
    /// Set when the trace's timestamps are rounded to a coarse step, so its
    /// within-minute CV was replaced by the fallback (or the scenario's).
    pub quantised_step_s: Option<f64>,
    pub input_tokens: LengthStats,
    pub output_tokens: LengthStats,
    /// The (input, output) pairs the capacity search runs on.
    pub lengths: Vec<(u32, u32)>,
    /// The prompt blocks of the trace's requests, in order, when the
    /// replicas cache prefixes and the trace names them.
    pub chains: Option<Arc<BlockChains>>,
    /// Beside each of `lengths`, its request's index in `chains`
    /// (`NO_CHAIN` when not found); empty without `chains`.
    pub sample_chains: Vec<u32>,
    /// An aggregate's sampled requests' prefix reuse (its `prefixes`
    /// table), when the replicas cache prefixes: beside each of `lengths`
    /// its row here (`sample_chains` then numbers them 0, 1, …).
    pub reuse: Option<Arc<PrefixReuse>>,
    /// Where `lengths` come from.
    pub capacity_lengths: CapacityLengths,
    /// The requests over the model's context that `over_context = "drop"`
    /// left out (`None`: none dropped, or refusing).
    pub dropped_over_context: Option<DroppedOverContext>,
}

/// The requests of a trace left out for being longer than the model's
/// context, against the whole trace.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DroppedOverContext {
    /// The context they exceed, in tokens.
    pub context_tokens: u32,
    pub requests: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Their share of the trace's requests.
    pub share_of_requests: f64,
    /// Their share of the trace's prompt tokens.
    pub share_of_input_tokens: f64,
}

/// Where a source's capacity lengths come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapacityLengths {
    /// The trace's length sample: its requests of smallest sample key.
    TraceSample,
    /// The aggregate's recorded length sample: the same requests.
    AggregateSample,
    /// Drawn from the aggregate's bins (format versions 1 and 2 record no
    /// sample).
    AggregateBins,
}

/// Aggregates read so far, by folder (a folder named twice is read once).
#[derive(Default)]
pub(crate) struct AggregateCache {
    read: HashMap<PathBuf, Arc<Aggregate>>,
}

impl AggregateCache {
    fn get(&mut self, dir: &PathBuf) -> Result<Arc<Aggregate>, PlannerError> {
        if let Some(a) = self.read.get(dir) {
            return Ok(a.clone());
        }
        let agg = Arc::new(read_aggregate(dir).map_err(PlannerError::Aggregate)?);
        self.read.insert(dir.clone(), agg.clone());
        Ok(agg)
    }
}

/// Reads `source` of `scenario`; keeps what a replay needs when `keep`.
pub(crate) fn read_source(
    scenario: &Scenario,
    index: usize,
    source: &DemandSource,
    cache: &mut AggregateCache,
    progress: Progress,
    keep: bool,
) -> Result<(SourceFigures, KeptSource), PlannerError> {
    let model = scenario.model_of(source.tier);
    if let Some(name) = &source.aggregate_tier {
        let agg = cache.get(&source.trace)?;
        let Some(t) = agg.tier(name) else {
            let names: Vec<&str> = agg.tiers.iter().map(|t| t.tier.as_str()).collect();
            return Err(PlannerError::Scenario(vec![Problem::new(scenario.path.clone(), format!("demand[{index}]"), format!(
                    "the aggregate {} has no tier `{name}`; it holds {}; name one with `aggregate_tier`",
                    source.trace.display(),
                    names.join(", ")
                ))]));
        };
        if t.input_tokens().mean + t.output_tokens().mean <= 0.0 {
            return Err(PlannerError::Aggregate(vec![Problem::new(
                &source.trace,
                "",
                format!(
                    "every request of tier `{name}` has 0 input and 0 output tokens: there is nothing to serve"
                ),
            )]));
        }
        let t = Arc::new(t.clone());
        let quantised = t.quantised();
        let counts = t.minutes.iter().map(|m| m.requests).collect();
        let lengths = t.capacity_lengths();
        let (chains, mut sample_chains) =
            shared_prefix_of(scenario, index, source, t.input_tokens().p50, lengths.len())?;
        let reuse = t
            .prefixes
            .as_ref()
            .filter(|_| scenario.simulation.prefix_caching && chains.is_none())
            .map(|p| Arc::new(PrefixReuse::from_steps(p.block_tokens, &p.steps)));
        if reuse.is_some() {
            sample_chains = (0..lengths.len() as u32).collect();
        }
        let figures = SourceFigures {
            format: "aggregate".into(),
            aggregate_tier: Some(name.clone()),
            requests: t.requests(),
            span_s: t.span_s(),
            first_minute_s: t.minutes.first().map_or(0, |m| m.minute_s),
            minute_counts: counts,
            within_minute_cv: source.within_minute_cv.unwrap_or_else(|| match quantised {
                Some(_) => FALLBACK_WITHIN_MINUTE_CV,
                None => t.within_minute_cv(),
            }),
            interarrival_cv: None,
            quantised_step_s: quantised.map(|q| q.step_s),
            input_tokens: t.input_tokens(),
            output_tokens: t.output_tokens(),
            lengths,
            chains,
            sample_chains,
            reuse,
            capacity_lengths: if t.has_length_sample() {
                CapacityLengths::AggregateSample
            } else {
                CapacityLengths::AggregateBins
            },
            dropped_over_context: None,
        };
        let kept = if keep {
            KeptSource::Aggregate(t)
        } else {
            KeptSource::Nothing
        };
        return Ok((figures, kept));
    }
    let options = ReaderOptions {
        format: source.format,
        skip_bad_rows: false,
        max_context_tokens: Some(model.profile.max_context_tokens),
        drop_over_context: source.over_context == OverContext::Drop,
    };
    let mut requests = Vec::new();
    // Prefix caching reads a Mooncake trace's blocks for the requests kept,
    // unless a prefix model stands in for them.
    let sessions = source
        .sessions
        .filter(|_| scenario.simulation.prefix_caching);
    let blocks = scenario.simulation.prefix_caching
        && source.shared_prefix_tokens.is_none()
        && sessions.is_none()
        && source.format.is_none_or(|f| f == TraceFormat::Mooncake);
    // A problem of the whole file names the scenario's key that reads it.
    let named = |mut e: Problem| {
        if e.location.is_empty() {
            e.message = format!(
                "{} (the trace of `demand[{index}]` in {})",
                e.message,
                scenario.path.display()
            );
        }
        e
    };
    // `solve` has no --skip-bad-rows: the message must not suggest it.
    let (format, summary, acc) = accumulate_keeping(
        &source.trace,
        options,
        progress,
        (keep || blocks || sessions.is_some()).then_some(&mut requests),
    )
    .map_err(|mut e| {
        e.skippable = false;
        let context = model.profile.max_context_tokens;
        if e.message.contains("does not fit the model's context") {
            e.message
                .push_str(&over_context(&source.trace, options, context));
            let longer = match (&model.profile.extended_context, model.context) {
                (Some(x), _) if x.max_context_tokens > context => format!(
                    ", or serve a longer context with [model] max_context_tokens (up to {} for {}, by YaRN)",
                    x.max_context_tokens, model.id
                ),
                _ => ", or plan for a model with a longer context".to_string(),
            };
            let _ = write!(
                e.message,
                ". Set `demand[{index}].over_context = \"drop\"` to plan without them (the report counts what was dropped){longer}"
            );
        }
        if let Some(stated) = source.format.filter(|_| e.location.starts_with("1:")) {
            let _ = write!(e.message, " ({})", format_stated(index, stated, &source.trace));
        }
        PlannerError::Trace(named(e))
    })?;
    if acc.input_tokens().mean + acc.output_tokens().mean <= 0.0 {
        return Err(PlannerError::Trace(named(Problem::new(
            &source.trace,
            "",
            "every request of the trace has 0 input and 0 output tokens: there is nothing to serve; is this the right file?",
        ))));
    }
    let (first_minute_s, minute_counts) = acc.window_counts(60);
    let chains = if let Some(s) = sessions {
        Some(Arc::new(session_chains(index, &requests, s.turns, s.gap_s)))
    } else if blocks && format == TraceFormat::Mooncake {
        let read = kept_chains(
            &source.trace,
            &requests,
            "fix or remove the row's `hash_ids`, or set [simulation] prefix_caching = false",
        );
        Some(Arc::new(read.map_err(|e| PlannerError::Trace(named(e)))?))
    } else {
        None
    };
    let mut sample_chains = match &chains {
        Some(_) => crate::traces::prefix_reuse::rows_of(&requests, &acc.length_sample_requests()),
        None => Vec::new(),
    };
    let lengths = acc.length_sample();
    let (shared, shared_rows) = shared_prefix_of(
        scenario,
        index,
        source,
        acc.input_tokens().p50,
        lengths.len(),
    )?;
    let chains = match shared {
        Some(shared) => {
            sample_chains = shared_rows;
            Some(shared)
        }
        None => chains,
    };
    let figures = SourceFigures {
        format: serde_json::to_value(format)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        aggregate_tier: None,
        requests: summary.requests,
        span_s: acc.span_s(),
        first_minute_s,
        minute_counts,
        within_minute_cv: source
            .within_minute_cv
            .unwrap_or_else(|| match acc.quantised() {
                Some(_) => FALLBACK_WITHIN_MINUTE_CV,
                None => acc.within_minute_cv(),
            }),
        interarrival_cv: Some(acc.interarrival_cv()),
        quantised_step_s: acc.quantised().map(|q| q.step_s),
        input_tokens: acc.input_tokens(),
        output_tokens: acc.output_tokens(),
        lengths,
        chains: chains.clone(),
        sample_chains,
        reuse: None,
        capacity_lengths: CapacityLengths::TraceSample,
        dropped_over_context: dropped_share(
            summary.dropped_over_context,
            summary.requests,
            acc.input_tokens().mean * summary.requests as f64,
            model.profile.max_context_tokens,
        ),
    };
    let kept = if keep {
        // A prefix model's chains are the replay's to number
        // (`replay::traces`): every request of the source has the same.
        KeptSource::Requests(
            requests,
            chains.filter(|_| source.shared_prefix_tokens.is_none()),
        )
    } else {
        KeptSource::Nothing
    };
    Ok((figures, kept))
}

/// The prefix model of `source` (`shared_prefix_tokens`), when the
/// replicas cache prefixes: its chains ([`shared_prefix`]) and, beside
/// each of its `sampled` requests, chain 1 (a request after the first).
/// Refused, at the key, when the system prompt is longer than half the
/// source's prompts (`median_prompt_tokens`): every request carries it.
fn shared_prefix_of(
    scenario: &Scenario,
    index: usize,
    source: &DemandSource,
    median_prompt_tokens: u64,
    sampled: usize,
) -> Result<(Option<Arc<BlockChains>>, Vec<u32>), PlannerError> {
    let Some(tokens) = source.shared_prefix_tokens else {
        return Ok((None, Vec::new()));
    };
    if u64::from(tokens) > median_prompt_tokens {
        return Err(PlannerError::Scenario(vec![Problem::new(
            scenario.path.clone(),
            format!("demand[{index}].shared_prefix_tokens"),
            format!(
                "a system prompt of {tokens} tokens is longer than half of the source's prompts (median {median_prompt_tokens} tokens), yet every request would begin with it; state at most {median_prompt_tokens}, or leave it out"
            ),
        )]));
    }
    if !scenario.simulation.prefix_caching {
        return Ok((None, Vec::new()));
    }
    Ok((
        Some(Arc::new(shared_prefix(index, tokens))),
        vec![SHARED_PREFIX_LATER; sampled],
    ))
}

/// The requests dropped against the whole trace: `kept` requests holding
/// `kept_input_tokens` prompt tokens were read besides them.
fn dropped_share(
    dropped: Dropped,
    kept: u64,
    kept_input_tokens: f64,
    context_tokens: u32,
) -> Option<DroppedOverContext> {
    (dropped.requests > 0).then(|| DroppedOverContext {
        context_tokens,
        requests: dropped.requests,
        input_tokens: dropped.input_tokens,
        output_tokens: dropped.output_tokens,
        share_of_requests: dropped.requests as f64 / (kept + dropped.requests) as f64,
        share_of_input_tokens: dropped.input_tokens as f64
            / (kept_input_tokens + dropped.input_tokens as f64).max(1.0),
    })
}

/// How much of the trace at `path` does not fit a context of `context`
/// tokens, in words for the refusal that named its first such row: the
/// rows and their share of the prompt tokens, read in a second pass that
/// skips nothing it can read (the first pass stopped at that row).
fn over_context(path: &std::path::Path, options: ReaderOptions, context: u32) -> String {
    let options = ReaderOptions {
        max_context_tokens: None,
        skip_bad_rows: true,
        drop_over_context: false,
        ..options
    };
    let (mut rows, mut over, mut tokens, mut over_tokens) = (0u64, 0u64, 0u64, 0u64);
    let counted = crate::traces::read_trace(
        path,
        options,
        |r: Request| {
            let input = u64::from(r.input_tokens);
            rows += 1;
            tokens += input;
            if input + u64::from(r.output_tokens) > u64::from(context) {
                over += 1;
                over_tokens += input;
            }
        },
        |_| {},
    );
    if counted.is_err() || rows == 0 {
        return String::new();
    }
    format!(
        "; in all, {over} of its {rows} requests ({:.1}% of its prompt tokens) do not fit",
        100.0 * over_tokens as f64 / tokens.max(1) as f64
    )
}

/// What to say of a trace whose first row its stated format cannot read:
/// the key that stated it, and the format the file's first bytes show.
fn format_stated(index: usize, stated: TraceFormat, path: &std::path::Path) -> String {
    let seen = match TraceFormat::of_file(path) {
        Some(f) if f != stated => format!("; the file reads as {}", f.name()),
        _ => String::new(),
    };
    format!(
        "`demand[{index}].format = \"{}\"` reads it as that format{seen}: name the file's format, or remove the key to detect it",
        stated.name()
    )
}
