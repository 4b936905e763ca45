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

    /// Every tier, with the index of the model it serves among `models`
    /// (each model's id and whether it has an API offer): with `[[models]]`
    /// a tier names its model unless only one is listed; with `[model]` a
    /// named model must be that one. A tier of a model without an API offer
    /// may use the API only if it says so (a problem then, at its demand).
    pub(super) fn tiers(
        &mut self,
        raw: &[RawTier],
        slot_minutes: u32,
        models: &[(String, bool)],
        pooled: bool,
    ) -> Vec<Tier> {
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
                let model = self.tier_model(i, t, models, pooled);
                Tier {
                    name: t.name.get_ref().clone(),
                    ttft_ms: t.ttft_ms,
                    tpot_ms: t.tpot_ms,
                    percentile: t.percentile,
                    api_allowed: t.api_allowed.unwrap_or(true),
                    model,
                    rules: self.serving_rules(i, t, slot_minutes),
                }
            })
            .collect()
    }

    /// The index of tier `i`'s model (0 when the models could not be read:
    /// their own problems are reported).
    fn tier_model(
        &mut self,
        i: usize,
        t: &RawTier,
        models: &[(String, bool)],
        pooled: bool,
    ) -> usize {
        if models.is_empty() {
            return 0;
        }
        let mut ids: Vec<&str> = Vec::new();
        for (id, _) in models {
            if !ids.contains(&id.as_str()) {
                ids.push(id);
            }
        }
        let Some(name) = &t.model else {
            if pooled && models.len() > 1 {
                self.at_key(
                    format!("tiers[{i}].model"),
                    format!("tier `{}` names no model; with several `[[models]]` each tier says which it serves: `model = \"{}\"` (listed: {})", t.name.get_ref(), ids[0], ids.join(", ")),
                );
            }
            return 0;
        };
        if let Some(m) = models.iter().position(|(id, _)| id == name.get_ref()) {
            return m;
        }
        let near = crate::base::nearest::nearest(name.get_ref(), ids.iter().copied())
            .map_or_else(String::new, |n| format!("did you mean `{n}`? "));
        let listed = if pooled {
            "listed models"
        } else {
            "the scenario's `[model]`"
        };
        self.at_span(
            name,
            format!(
                "tier `{}` serves model `{}`, which is not listed; {near}{listed}: {}",
                t.name.get_ref(),
                name.get_ref(),
                ids.join(", ")
            ),
        );
        0
    }

    /// With `[[models]]`: every demand entry whose tier explicitly allows
    /// the API while its model has no API offer is a problem at the entry.
    pub(super) fn api_for_every_tier(
        &mut self,
        demand: &[crate::scenario::raw::RawDemand],
        raw_tiers: &[RawTier],
        tiers: &[Tier],
        models: &[(String, bool)],
    ) {
        for (i, d) in demand.iter().enumerate() {
            let Some(k) = tiers.iter().position(|t| &t.name == d.tier.get_ref()) else {
                continue;
            };
            let tier = &tiers[k];
            let Some((id, has_api)) = models.get(tier.model) else {
                continue;
            };
            if raw_tiers[k].api_allowed == Some(true) && !has_api {
                self.at_span(
                    &d.tier,
                    format!("demand[{i}] feeds tier `{}`, which allows the API (`tiers[{k}].api_allowed = true`), but its model `{id}` has no API offer: add `[models.api]` to that model's entry, or set `api_allowed = false`", tier.name),
                );
            }
        }
    }

    /// With `[[models]]`: a listed model that no tier serves is a problem
    /// at its entry (it would be planned for nothing).
    pub(super) fn every_model_served(&mut self, tiers: &[Tier], models: &[(String, bool)]) {
        for (j, (id, _)) in models.iter().enumerate() {
            let duplicate = models[..j].iter().any(|(other, _)| other == id);
            if !duplicate && !tiers.is_empty() && !tiers.iter().any(|t| t.model == j) {
                self.at_key(
                    format!("models[{j}]"),
                    format!("model `{id}` serves no tier: name it in a tier (`model = \"{id}\"`), or remove its `[[models]]` entry"),
                );
            }
        }
    }
}
