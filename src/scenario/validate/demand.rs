//! The `[[demand]]` section: each tier's trace or aggregate.

use super::Validator;
use crate::scenario::raw::RawDemand;
use crate::scenario::{DemandSource, OverContext, Sessions, Tier};
use crate::traces::sessions::DEFAULT_SESSION_GAP_S;
use crate::traces::TraceFormat;
use std::collections::BTreeSet;
use std::path::PathBuf;

impl Validator {
    pub(super) fn demand(&mut self, raw: &[RawDemand], tiers: &[Tier]) -> Vec<DemandSource> {
        let mut fed = vec![false; tiers.len()];
        let sources = raw
            .iter()
            .enumerate()
            .filter_map(|(i, d)| {
                let tier = tiers.iter().position(|t| &t.name == d.tier.get_ref());
                if tier.is_none() {
                    let names: Vec<_> = tiers.iter().map(|t| t.name.as_str()).collect();
                    let near = crate::base::nearest::nearest(d.tier.get_ref(), names.iter().copied())
                        .map_or_else(String::new, |n| format!("did you mean `{n}`? "));
                    self.at_span(&d.tier, format!("demand names tier `{}`, which is not defined; {near}{}", d.tier.get_ref(), if names.is_empty() { "the scenario defines no tier: add a [[tiers]] table".to_string() } else { format!("defined tiers: {}", names.join(", ")) }));
                }
                let (trace, aggregate_tier) = match (&d.trace, &d.aggregate) {
                    (Some(t), None) => {
                        let trace = self.dir.join(t.get_ref());
                        if !trace.is_file() {
                            let what = match std::fs::metadata(&trace) {
                                Ok(meta) => format!(
                                    "trace {} {}; a trace is a regular file",
                                    trace.display(),
                                    crate::traces::not_a_file(meta.file_type())
                                ),
                                Err(_) => format!(
                                    "trace file {} does not exist (paths are relative to the scenario file)",
                                    trace.display()
                                ),
                            };
                            self.at_span(t, what);
                        }
                        if let Some(at) = &d.aggregate_tier {
                            self.at_span(at, "`aggregate_tier` goes with `aggregate`, not `trace`".to_string());
                        }
                        (trace, None)
                    }
                    (None, Some(a)) => {
                        let dir = self.dir.join(a.get_ref());
                        if !dir.is_dir() {
                            let what = if dir.is_file() {
                                format!("aggregate {} is a file; `aggregate` names the folder of aggregate tables that `planner trace aggregate --out` or sql/aggregate.sql made (a per-request file goes in `trace`)", dir.display())
                            } else {
                                format!("aggregate folder {} does not exist (paths are relative to the scenario file; make one with `planner trace aggregate` or sql/aggregate.sql)", dir.display())
                            };
                            self.at_span(a, what);
                        }
                        if let Some(f) = &d.format {
                            self.at_span(f, "`format` names a trace format; an aggregate's tables are CSV or Parquet by their file names".to_string());
                        }
                        let name = d.aggregate_tier.as_ref().map_or_else(|| d.tier.get_ref().clone(), |t| t.get_ref().clone());
                        (dir, Some(name))
                    }
                    (Some(t), Some(_)) => {
                        self.at_span(t, format!("demand[{i}] names both a `trace` and an `aggregate`; give one"));
                        (PathBuf::new(), None)
                    }
                    (None, None) => {
                        self.at_span(&d.tier, format!("demand[{i}] needs a `trace` (a per-request file) or an `aggregate` (a folder of aggregate tables)"));
                        (PathBuf::new(), None)
                    }
                };
                let format = match d.format.as_ref() {
                    None => None,
                    Some(f) if f.get_ref() == "auto" => None,
                    Some(f) => if let Some(fmt) = TraceFormat::from_name(f.get_ref()) { Some(fmt) } else {
                        self.at_span(f, format!("unknown trace format `{}`; accepted: \"auto\", \"azure\", \"mooncake\", \"burstgpt\"", f.get_ref()));
                        None
                    },
                };
                let scale = d.scale.unwrap_or(1.0);
                self.bounded(&format!("demand[{i}].scale"), scale);
                let tier = tier?;
                fed[tier] = true;
                if let Some(cv) = d.within_minute_cv {
                    if !(cv.is_finite() && (0.0..=100.0).contains(&cv)) {
                        self.at_key(format!("demand[{i}].within_minute_cv"), format!("`within_minute_cv` must be in [0, 100] (1 = Poisson); got {cv}"));
                    }
                }
                let over_context = match d.over_context.as_ref() {
                    None => OverContext::Refuse,
                    Some(o) => match o.get_ref().as_str() {
                        "refuse" => OverContext::Refuse,
                        "drop" => OverContext::Drop,
                        other => {
                            self.at_span(o, format!("unknown `over_context` choice `{other}`; accepted: \"refuse\" (stop at the first request over the model's context, counting them all), \"drop\" (plan without them; the report says how many)"));
                            OverContext::Refuse
                        }
                    },
                };
                if over_context == OverContext::Drop && aggregate_tier.is_some() {
                    if let Some(o) = &d.over_context {
                        self.at_span(o, "`over_context = \"drop\"` reads a trace's rows; an aggregate's requests are counted in its tables: filter them in the query that made it".to_string());
                    }
                }
                if let Some(n) = d.shared_prefix_tokens {
                    self.bounded(&format!("demand[{i}].shared_prefix_tokens"), f64::from(n));
                }
                let sessions = self.sessions(i, d, aggregate_tier.is_some());
                let shift_hours = d.shift_hours.unwrap_or(0.0);
                if d.shift_hours.is_some() {
                    self.bounded(&format!("demand[{i}].shift_hours"), shift_hours);
                }
                Some(DemandSource { tier, trace, format, scale, aggregate_tier, within_minute_cv: d.within_minute_cv, over_context, shared_prefix_tokens: d.shared_prefix_tokens, sessions, shift_hours })
            })
            .collect();
        // By name: a tier defined twice (its own problem) is fed when either is.
        let fed: BTreeSet<&String> = tiers
            .iter()
            .zip(fed)
            .filter(|(_, fed)| *fed)
            .map(|(t, _)| &t.name)
            .collect();
        let mut reported = BTreeSet::new();
        for tier in tiers {
            if !fed.contains(&tier.name) && !raw.is_empty() && reported.insert(tier.name.clone()) {
                self.at_key(
                    "demand",
                    format!(
                        "tier `{}` has no [[demand]] entry; give it a trace",
                        tier.name
                    ),
                );
            }
        }
        if raw.is_empty() {
            self.at_key(
                "demand",
                "the scenario has no demand: add a [[demand]] table naming a tier and a trace",
            );
        }
        sources
    }

    /// `demand[i]`'s sessions prefix model, when it states one: turns and a
    /// gap within their bounds, not beside a shared system prompt, not on
    /// an aggregate (which keeps neither the requests' order nor times).
    fn sessions(&mut self, i: usize, d: &RawDemand, aggregate: bool) -> Option<Sessions> {
        let key = |k: &str| format!("demand[{i}].{k}");
        let Some(turns) = d.session_turns else {
            if d.session_gap_s.is_some() {
                self.at_key(key("session_gap_s"), "`session_gap_s` is the gap between a session's turns: give `session_turns` too (2 or more)");
            }
            return None;
        };
        let gap_s = d.session_gap_s.unwrap_or(DEFAULT_SESSION_GAP_S);
        let ok = self.bounded(&key("session_turns"), f64::from(turns))
            & self.bounded(&key("session_gap_s"), gap_s);
        if d.shared_prefix_tokens.is_some() {
            self.at_key(key("session_turns"), "give one prefix model: `shared_prefix_tokens` (a system prompt every request begins with) or `session_turns` (each turn begins with the previous one)");
            return None;
        }
        if aggregate {
            self.at_key(key("session_turns"), "sessions are assigned from a trace's requests in order and time, which an aggregate does not keep; name the trace, or an aggregate whose `prefixes` table carries the log's own reuse");
            return None;
        }
        ok.then_some(Sessions { turns, gap_s })
    }
}
