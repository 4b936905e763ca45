//! The `[[tiers]]` section: each tier's limits and serving rules.

use super::Validator;
use crate::scenario::raw::RawTier;
use crate::scenario::{ServingRules, SloWindow, Tier};
use std::collections::BTreeMap;

impl Validator {
    /// A tier's configuration limit, headroom and deadline.
    fn serving_rules(&mut self, i: usize, t: &RawTier, slot_minutes: u32) -> ServingRules {
        let key = |k: &str| format!("tiers[{i}].{k}");
        if let Some(n) = t.max_configurations {
            self.bounded(&key("max_configurations"), f64::from(n));
        }
        let headroom_replicas = t.headroom_replicas.unwrap_or(0);
        self.bounded(&key("headroom_replicas"), f64::from(headroom_replicas));
        if let Some(h) = t.deadline_hours {
            let slot_hours = f64::from(slot_minutes) / 60.0;
            if self.bounded(&key("deadline_hours"), h) && h < slot_hours {
                self.at_key(
                    key("deadline_hours"),
                    format!("`deadline_hours` = {h} is shorter than a planning slot ({slot_hours} h): the plan moves volume between whole slots, so give a deadline of at least {slot_hours} h or shorten `planning.slot_minutes`"),
                );
            }
            if headroom_replicas > 0 {
                self.at_key(
                    key("headroom_replicas"),
                    "a tier with `deadline_hours` is sized on its volume, not its peak: remove `headroom_replicas` or the deadline",
                );
            }
        }
        let slo_window = match t.slo_window.as_ref() {
            None => SloWindow::default(),
            Some(w) => match w.get_ref().as_str() {
                "slot" => SloWindow::Slot,
                "day" => SloWindow::Day,
                "horizon" => SloWindow::Horizon,
                other => {
                    self.at_span(
                        w,
                        format!("unknown `slo_window` `{other}`: use \"slot\" (every planning slot meets the target), \"day\" (every day, the default) or \"horizon\" (the whole horizon at once)"),
                    );
                    SloWindow::default()
                }
            },
        };
        ServingRules {
            max_configurations: t.max_configurations,
            headroom_replicas,
            deadline_hours: t.deadline_hours,
            spot_allowed: t.spot_allowed.unwrap_or(false),
            slo_window,
        }
    }

    pub(super) fn tiers(&mut self, raw: &[RawTier], slot_minutes: u32) -> Vec<Tier> {
        if raw.is_empty() {
            self.at_key(
                "tiers",
                "the scenario has no tier: add at least one [[tiers]] table",
            );
        }
        let mut names = BTreeMap::new();
        raw.iter()
            .enumerate()
            .map(|(i, t)| {
                let first = *names.entry(t.name.get_ref().clone()).or_insert(i);
                if first != i {
                    self.at_span(
                        &t.name,
                        format!(
                            "tier `{}` is defined twice (tiers[{first}] and tiers[{i}]); give each tier its own name",
                            t.name.get_ref()
                        ),
                    );
                }
                self.bounded(&format!("tiers[{i}].ttft_ms"), t.ttft_ms);
                self.bounded(&format!("tiers[{i}].tpot_ms"), t.tpot_ms);
                self.bounded(&format!("tiers[{i}].percentile"), t.percentile);
                Tier {
                    name: t.name.get_ref().clone(),
                    ttft_ms: t.ttft_ms,
                    tpot_ms: t.tpot_ms,
                    percentile: t.percentile,
                    api_allowed: t.api_allowed.unwrap_or(true),
                    rules: self.serving_rules(i, t, slot_minutes),
                }
            })
            .collect()
    }
}
