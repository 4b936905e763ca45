//! Which slots of a tier that meets everywhere are loosened after a round.
//! A tier's figures come from simulations of one seed, and the MILP sizes
//! each slot from them; the replay of every slot measures what each slot's
//! fleet actually attains. A slot more than the margin over the target is
//! sized down (its factor loosened), but only as many slots of a window as
//! the window's surplus over the target and a guard affords, so that the
//! window keeps its target on other seeds too: the plan then settles where
//! the replay, not the seed's figures, says each slot is just enough.

use super::bracket::{Bracket, Reading};
use super::record::Rule;
use crate::replay::verification::Window;

/// The guard over the target (0-1) with a band of `margin` (0-1).
pub(super) fn guard(margin: f64) -> f64 {
    margin * GUARD_SHARE_OF_MARGIN
}

/// Share of the band over the target (`attainment_margin_points`) every
/// window keeps as a guard against the replay's own noise: the replay is
/// of one seed, and the same plan replayed with another seed moves a day's
/// attainment by a few hundredths of a point (`scenarios/peak.toml`: up to
/// 0.07 points). A window under target + guard is sized up like one that
/// missed, loosening stops at it, and the rounds return the cheapest plan
/// that keeps it in every window when one did.
pub(super) const GUARD_SHARE_OF_MARGIN: f64 = 1.0 / 3.0;

/// Most `tighten_factor` steps a slot is loosened by in one round.
const MAX_SLOT_STEPS: i32 = 2;

/// A replayed slot over its band: its requests, attainment, and the step
/// its bracket proposes (over 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Over {
    pub slot: usize,
    pub requests: u64,
    pub attainment: f64,
    pub step: f64,
}

/// A slot's replay as its bracket answered it (read once a round).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Read {
    /// The step up it calls for: the bracket's own loosening (at most
    /// [`MAX_SLOT_STEPS`] steps) for a slot over the band, or back up
    /// towards the factor it last missed with; 1 otherwise.
    pub up: f64,
    /// When the bracket bisects or settles, the step to the factor it
    /// names (back down towards the factor the slot last met with, when the
    /// slot is sized up); `None` otherwise.
    pub back: Option<f64>,
}

/// Reads a slot's replay with its bracket `b`, which remembers it.
pub(super) fn read(b: &mut Bracket, reading: Reading, tighten_factor: f64) -> Read {
    let now = reading.factor;
    let over = reading.attainment > reading.target + reading.margin;
    let (to, why) = b.next(reading, tighten_factor);
    let up = match why {
        Rule::Loosen => (to / now).min(tighten_factor.powi(-MAX_SLOT_STEPS)),
        Rule::Bisect | Rule::Settle if over => to / now,
        _ => 1.0,
    };
    let back = matches!(why, Rule::Bisect | Rule::Settle).then_some(to / now);
    Read {
        up: up.max(1.0),
        back,
    }
}

/// The slots loosened, with their steps: per complete window, the slots
/// over their band taken from the most over down while the misses they
/// would add, each counted as if it fell to the target
/// ((attainment − target) × requests), fit in the window's surplus over
/// `floor` ((attainment − floor) × requests of the window). In slot order.
pub(super) fn affordable(
    mut over: Vec<Over>,
    windows: &[Window],
    target: f64,
    floor: f64,
) -> Vec<(usize, f64)> {
    over.sort_by(|x, y| {
        y.attainment
            .total_cmp(&x.attainment)
            .then(x.slot.cmp(&y.slot))
    });
    let mut left: Vec<f64> = windows
        .iter()
        .map(|w| (w.attainment - floor) * w.requests as f64)
        .collect();
    let mut out = Vec::new();
    for o in over {
        let Some(i) = windows
            .iter()
            .position(|w| w.complete && (w.start_slot..w.end_slot).contains(&o.slot))
        else {
            continue;
        };
        let uses = (o.attainment - target) * o.requests as f64;
        if uses <= left[i] {
            left[i] -= uses;
            out.push((o.slot, o.step));
        }
    }
    out.sort_by_key(|&(slot, _)| slot);
    out
}

/// The slots of `window` whose factor is larger `now` than it was
/// `before` (the factors of the round replayed before: none, nothing was
/// loosened), each with the factor it had then.
pub(super) fn loosened_since(
    before: Option<&[f64]>,
    now: &[f64],
    window: std::ops::Range<usize>,
) -> Vec<(usize, f64)> {
    let Some(before) = before else {
        return Vec::new();
    };
    window
        .filter_map(|slot| {
            let was = *before.get(slot)?;
            (*now.get(slot)? > was).then_some((slot, was))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{affordable, loosened_since, read, Over};
    use crate::replay::verification::Window;
    use crate::solve::bracket::{Bracket, Reading};

    fn window(start: usize, end: usize, requests: u64, attainment: f64) -> Window {
        Window {
            start_slot: start,
            end_slot: end,
            replayed_slots: end - start,
            requests,
            attainment,
            meets_target: attainment >= 0.99,
            complete: true,
        }
    }

    fn over(slot: usize, requests: u64, attainment: f64) -> Over {
        Over {
            slot,
            requests,
            attainment,
            step: 1.0 / 0.9,
        }
    }

    fn reading(factor: f64, attainment: f64) -> Reading {
        Reading {
            factor,
            attainment,
            target: 0.99,
            margin: 0.003,
            loosenable: true,
        }
    }

    /// A window 0.1 points over a p99 target over 100,000 requests has 100
    /// misses to spare: the slot most over comes first, a slot whose
    /// surplus no longer fits is skipped, a smaller one after it is taken;
    /// a floor 0.05 points over the target halves what it spares.
    #[test]
    fn a_window_loosens_only_the_slots_its_surplus_affords() {
        let windows = [
            window(0, 24, 100_000, 0.991),
            window(24, 48, 100_000, 0.990),
        ];
        let slots = vec![
            over(3, 10_000, 0.995),  // uses 50
            over(5, 10_000, 0.9985), // uses 85: first
            over(7, 2_000, 0.997),   // uses 14: fits after slot 5
            over(30, 1_000, 0.999),  // its window has no surplus
        ];
        let taken = |floor: f64| -> Vec<usize> {
            affordable(slots.clone(), &windows, 0.99, floor)
                .iter()
                .map(|&(s, _)| s)
                .collect()
        };
        assert_eq!(taken(0.99), vec![5, 7]);
        // 50 to spare: slot 5 (85) no longer fits, slot 7 (14) does, and
        // slot 3 (50) no longer does after it.
        assert_eq!(taken(0.9905), vec![7]);
    }

    /// A slot far over its band is loosened by at most two steps; one in
    /// its band stays; one that missed before at a larger factor is
    /// bisected back towards it, not past it.
    #[test]
    fn a_slot_steps_up_at_most_twice_and_never_past_a_factor_that_missed() {
        let step = |b: &mut Bracket, r: Reading| read(b, r, 0.9).up;
        let mut b = Bracket::default();
        let s = step(&mut b, reading(1.0, 0.99999));
        assert!((s - 1.0 / 0.81).abs() < 1e-12, "{s}");
        let mut b = Bracket::default();
        assert_eq!(step(&mut b, reading(1.0, 0.992)), 1.0);
        let mut b = Bracket::default();
        assert_eq!(step(&mut b, reading(1.2, 0.985)), 1.0);
        let s = step(&mut b, reading(1.0, 0.996));
        assert!((s - 1.2f64.sqrt()).abs() < 1e-12, "{s}");
    }

    /// A slot that met at one factor and misses at a larger one is sent
    /// back between the two (the geometric mean), not by a whole step.
    #[test]
    fn a_slot_that_misses_after_meeting_is_bisected_back() {
        let mut b = Bracket::default();
        assert_eq!(read(&mut b, reading(1.0, 0.992), 0.9).back, None);
        let r = read(&mut b, reading(1.2, 0.985), 0.9);
        let back = r.back.unwrap();
        assert!((back - 1.2f64.sqrt() / 1.2).abs() < 1e-12, "{back}");
    }

    /// A window that misses right after a loosening blames the slots whose
    /// factor grew since the round before, back to the factors they had;
    /// once settled there, a slot over its band is not loosened again.
    #[test]
    fn a_loosening_that_breaks_its_window_is_undone_and_not_tried_again() {
        let before = [1.0, 1.0, 0.9, 1.0];
        let now = [1.0, 1.2, 0.9, 1.0 / 0.9];
        assert_eq!(
            loosened_since(Some(&before), &now, 0..4),
            vec![(1, 1.0), (3, 1.0)]
        );
        assert_eq!(loosened_since(Some(&before), &now, 2..4), vec![(3, 1.0)]);
        assert!(loosened_since(None, &now, 0..4).is_empty());
        let mut b = Bracket::default();
        assert!(read(&mut b, reading(1.0, 0.9999), 0.9).up > 1.0);
        b.settle_on(1.0);
        let r = read(&mut b, reading(1.0, 0.9999), 0.9);
        assert_eq!(r.up, 1.0);
        assert_eq!(r.back, Some(1.0));
    }
}
