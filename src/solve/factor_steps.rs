//! How the rules move a candidate's factors between rounds: after a
//! replay, each tier's factor for the next round and its slots' window
//! factors, with the move that says why ([`Candidate::next_factors`]); after
//! a round that changed no fleet, the tiers and windows that moved stepped
//! once more the same way ([`Candidate::step_again`]). `docs/model.md` §5
//! lists the rules.

use super::bracket::{far_off, window_tightening, Reading};
use super::record::{Move, Rule};
use super::rounds::Candidate;
use super::slot_loosening;
use crate::plan::Plan;
use crate::replay::verification::{Verification, Window};

/// A tier's windows tightened or loosened in a round: the tier, the
/// windows' slot ranges, the attainment that caused it, and which way.
type WindowStep = (usize, Vec<(usize, usize)>, f64, Rule);

impl Candidate {
    /// Per tier, whether the last round recorded a move of `rule` for it.
    fn last_moved_by(&self, rule: Rule) -> Vec<bool> {
        self.scenario
            .tiers
            .iter()
            .map(|t| {
                self.rounds
                    .last()
                    .is_some_and(|r| r.moves.iter().any(|m| m.tier == t.name && m.rule == rule))
            })
            .collect()
    }

    /// Each tier's factor for the next round, from its bracket and the
    /// replay, with the move that says why. `every_tier_met`: every tier
    /// met its target and every complete window its target plus the guard;
    /// slots are loosened only in such a round (loosened while another
    /// tier is sized up, the tiers go out of step: one misses in every
    /// round and no round's plan is one the candidate can return).
    pub(super) fn next_factors(
        &mut self,
        plan: &Plan,
        v: &Verification,
        resized: &[bool],
        every_tier_met: bool,
    ) -> (Vec<f64>, Vec<Move>) {
        let scenario = &self.scenario;
        let margin = scenario.simulation.attainment_margin_points / 100.0;
        let mut next = Vec::with_capacity(scenario.tiers.len());
        let mut moves = Vec::with_capacity(scenario.tiers.len());
        // Every window tightened or loosened: (tier, its slots, the step).
        let mut window_steps = Vec::new();
        // Per tier, whether the last round loosened some of its slots (a
        // miss now is theirs: they are sized back up, the tier kept).
        let slots_loosened = self.last_moved_by(Rule::LoosenSlots);
        // The window factors of the round replayed before this one: a slot
        // whose factor is larger now was loosened since.
        let before: Option<&Vec<Vec<f64>>> = self.last.as_ref().map(|l| &l.trial.window_factors);
        let guard = slot_loosening::guard(margin);
        for (k, (((tier, &factor), bracket), &resized)) in scenario
            .tiers
            .iter()
            .zip(&self.factors)
            .zip(&mut self.brackets)
            .zip(resized)
            .enumerate()
        {
            let r = &v.tiers[&tier.name];
            let target = r.target;
            let tighten = scenario.simulation.tighten_factor;
            // Windows under the target, or over it by less than the guard
            // against the replay's own noise: both are sized up.
            let missed: Vec<&Window> = r
                .windows
                .iter()
                .filter(|w| w.complete && w.attainment < target + guard)
                .collect();
            let loosenable = plan.max_replicas(&tier.name) > 1 && tier.rules.headroom_replicas == 0;
            // Every replayed slot read once by its bracket, which remembers it.
            let mut reads = Vec::with_capacity(r.slot_attainment.len());
            for &(slot, _, attainment) in &r.slot_attainment {
                let now = factor * self.window_factors[k][slot];
                let b = self.slot_brackets[k].entry(slot).or_default();
                let reading = slot_reading(now, attainment, target, margin, loosenable);
                reads.push(slot_loosening::read(b, reading, tighten));
            }
            let mut spans = Vec::new();
            let (after, mut rule) = if resized && !r.meets_target {
                (factor, Rule::ResizeAfterApiShare)
            } else if !missed.is_empty()
                && (r.attainment >= target
                    || ((factor <= 1.0 || slots_loosened[k]) && !far_off(r.attainment, target)))
            {
                // The days that missed (or met by less than the guard), when
                // the tier met over the horizon or, never loosened (or with
                // only its slots loosened), missed it by little (after a
                // loosening of the tier its bracket answers: the miss is the
                // loosening's; far off, the whole tier is short): their
                // slots under target + guard, each by the step its day's miss
                // calls for, as a whole tier's would be, at most two
                // (`bracket::window_tightening`), or back between the factor
                // the slot last met with and this one.
                let mut undone = false;
                for w in missed {
                    let slots = w.start_slot..w.end_slot;
                    // Slots of the window loosened since the last replay:
                    // the miss is theirs. Each goes back to the factor it
                    // met with and its bracket settles there (a smaller
                    // step would mostly give up the same replica); the
                    // window's other slots stay.
                    let loosened = slot_loosening::loosened_since(
                        before.and_then(|b| b.get(k)).map(Vec::as_slice),
                        &self.window_factors[k],
                        slots.clone(),
                    );
                    if !loosened.is_empty() {
                        for (slot, was) in loosened {
                            self.slot_brackets[k]
                                .entry(slot)
                                .or_default()
                                .settle_on(factor * was);
                            spans.push((slot, slot + 1));
                            window_steps.push((
                                k,
                                slot..slot + 1,
                                was / self.window_factors[k][slot],
                            ));
                        }
                        undone = true;
                        continue;
                    }
                    let step_w = window_tightening(w.attainment, target, tighten);
                    for (&(slot, _, a), read) in r.slot_attainment.iter().zip(&reads) {
                        if !slots.contains(&slot) || a >= target + guard {
                            continue;
                        }
                        let step = read.back.unwrap_or(step_w);
                        if step < 1.0 {
                            spans.push((slot, slot + 1));
                            window_steps.push((k, slot..slot + 1, step));
                        }
                    }
                }
                let rule = if undone {
                    Rule::UndoLoosening
                } else {
                    Rule::TightenWindows
                };
                (factor, rule)
            } else {
                bracket.next(
                    Reading {
                        factor,
                        attainment: r.binding_attainment(),
                        target,
                        margin,
                        loosenable,
                    },
                    tighten,
                )
            };
            // A tier in its band, in a round where every tier met and every
            // window met by the guard: its slots far over the target (more
            // than `margin` over it) are loosened, as many as each window's
            // surplus over target + guard affords
            // (`slot_loosening::affordable`).
            let balance = rule == Rule::Hold && every_tier_met && loosenable;
            let over: Vec<slot_loosening::Over> = r
                .slot_attainment
                .iter()
                .zip(&reads)
                .filter(|(_, read)| balance && read.up > 1.0)
                .map(
                    |(&(slot, requests, attainment), read)| slot_loosening::Over {
                        slot,
                        requests,
                        attainment,
                        step: read.up,
                    },
                )
                .collect();
            for (slot, step) in slot_loosening::affordable(over, &r.windows, target, target + guard)
            {
                spans.push((slot, slot + 1));
                window_steps.push((k, slot..slot + 1, step));
            }
            if !spans.is_empty() && rule == Rule::Hold {
                rule = Rule::LoosenSlots;
            }
            next.push(after);
            moves.push(Move {
                tier: tier.name.clone(),
                rule,
                factor_before: factor,
                factor_after: after,
                attainment: r.binding_attainment(),
                windows: spans,
            });
        }
        for (k, slots, step) in window_steps {
            for f in &mut self.window_factors[k][slots] {
                *f *= step;
            }
        }
        (next, moves)
    }

    /// Moves every tier whose factor changed since the last replayed round
    /// one more step (`tighten_factor`, or its inverse) in the same
    /// direction, unless that crosses a factor its bracket already knows the
    /// outcome of (or leaves [1e-3, 1e3]); records each step as a move of
    /// `rule` on the last round; whether any tier moved.
    pub(super) fn step_again(&mut self, rule: Rule) -> bool {
        let Some(last) = &self.last else {
            return false;
        };
        let tighten = self.scenario.simulation.tighten_factor;
        // A tier whose miss was answered by resizing its fleets, when the
        // resize changed no fleet, is tightened instead.
        let resized = self.last_moved_by(Rule::ResizeAfterApiShare);
        let mut moved = false;
        let mut moves = Vec::new();
        for (k, ((f, &r), b)) in self
            .factors
            .iter_mut()
            .zip(&last.factors)
            .zip(&self.brackets)
            .enumerate()
        {
            let step = if *f < r || (*f == r && resized[k]) {
                tighten
            } else if *f > r {
                1.0 / tighten
            } else {
                continue;
            };
            let candidate = *f * step;
            if !b.crosses(candidate, step < 1.0) && (1e-3..=1e3).contains(&candidate) {
                let name = &self.scenario.tiers[k].name;
                moves.push(Move {
                    tier: name.clone(),
                    rule,
                    factor_before: *f,
                    factor_after: candidate,
                    attainment: self
                        .rounds
                        .last()
                        .and_then(|r| r.attainment.get(name).copied())
                        .unwrap_or(0.0),
                    windows: Vec::new(),
                });
                *f = candidate;
                moved = true;
            }
        }
        // Windows tightened (loosened) in the last round whose step changed
        // no fleet are stepped once more the same way, unless that crosses
        // a factor their bracket knows the outcome of.
        let windows: Vec<WindowStep> = self
            .rounds
            .last()
            .map(|r| {
                r.moves
                    .iter()
                    .filter(|m| {
                        matches!(
                            m.rule,
                            Rule::TightenWindows | Rule::UndoLoosening | Rule::LoosenSlots
                        )
                    })
                    .filter_map(|m| {
                        let k = self.scenario.tiers.iter().position(|t| t.name == m.tier)?;
                        Some((k, m.windows.clone(), m.attainment, m.rule))
                    })
                    .collect()
            })
            .unwrap_or_default();
        for (k, spans, attainment, rule_before) in windows {
            let step = if rule_before == Rule::LoosenSlots {
                1.0 / tighten
            } else {
                tighten
            };
            let spans: Vec<(usize, usize)> = spans
                .into_iter()
                .filter(|&(s, _)| {
                    let candidate = self.factors[k] * self.window_factors[k][s] * step;
                    (1e-3..=1e3).contains(&(self.window_factors[k][s] * step))
                        && !self.slot_brackets[k]
                            .get(&s)
                            .is_some_and(|b| b.crosses(candidate, step < 1.0))
                })
                .collect();
            if spans.is_empty() {
                continue;
            }
            for &(s, e) in &spans {
                for f in &mut self.window_factors[k][s..e] {
                    *f *= step;
                }
            }
            moves.push(Move {
                tier: self.scenario.tiers[k].name.clone(),
                rule,
                factor_before: self.factors[k],
                factor_after: self.factors[k],
                attainment,
                windows: spans,
            });
            moved = true;
        }
        if let Some(round) = self.rounds.last_mut() {
            round.moves.extend(moves);
        }
        moved
    }
}

/// A slot's replay as its bracket reads it: `factor` is the tier's factor
/// times the slot's own.
fn slot_reading(
    factor: f64,
    attainment: f64,
    target: f64,
    margin: f64,
    loosenable: bool,
) -> Reading {
    Reading {
        factor,
        attainment,
        target,
        margin,
        loosenable,
    }
}
