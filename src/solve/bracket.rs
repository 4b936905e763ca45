//! The rules that move one tier's capacity factor between replay rounds:
//! tighten below the target, loosen far over it, bisect once a factor that
//! met and one that missed are known, and settle when they are within 1%.

use super::record::Rule;

/// One tier's search for its capacity factor over the replay rounds: the
/// largest factor whose replay met the target and the smallest that missed.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Bracket {
    met: Option<f64>,
    missed: Option<f64>,
}

/// A replay's verdict on one tier, as the bracket reads it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Reading {
    /// The factor the replayed plan was sized with.
    pub factor: f64,
    /// The tier's replayed attainment (0-1).
    pub attainment: f64,
    /// The tier's target (0-1) and the band over it that is close enough.
    pub target: f64,
    pub margin: f64,
    /// Whether loosening may remove a replica (more than one, no headroom rule).
    pub loosenable: bool,
}

impl Bracket {
    /// The factor for the next round and the rule that chose it: tighten
    /// below `target` (by [`tightening`]), loosen by 1 / `tighten_factor`
    /// above `target + margin` when `loosenable`, hold inside the band;
    /// between a factor that met and one that missed, their geometric mean
    /// (bisect), until they are within 1% of each other (then the factor
    /// that met: settle).
    pub(super) fn next(&mut self, r: Reading, tighten_factor: f64) -> (f64, Rule) {
        let factor = r.factor;
        if r.attainment < r.target {
            self.missed = Some(self.missed.map_or(factor, |m| m.min(factor)));
            // A factor that met in another round's context is no guide
            // when this one, no larger, missed.
            if self.met.is_some_and(|m| m >= factor) {
                self.met = None;
            }
        } else {
            self.met = Some(self.met.map_or(factor, |m| m.max(factor)));
            if self.missed.is_some_and(|m| m <= factor) {
                self.missed = None;
            }
            if r.attainment <= r.target + r.margin || !r.loosenable {
                return (factor, Rule::Hold);
            }
        }
        match (self.met, self.missed) {
            (Some(met), Some(missed)) if missed / met <= SETTLE_RATIO => (met, Rule::Settle),
            (Some(met), Some(missed)) => ((met * missed).sqrt(), Rule::Bisect),
            _ if r.attainment < r.target => (
                factor * tightening(r.attainment, r.target, tighten_factor),
                Rule::Tighten,
            ),
            _ => (
                factor / loosening(r.attainment, r.target, tighten_factor),
                Rule::Loosen,
            ),
        }
    }

    /// Settles the bracket on `factor`: a factor 1% over it is recorded as
    /// one that missed, so that reading `factor` again settles there
    /// instead of loosening past it.
    pub(super) fn settle_on(&mut self, factor: f64) {
        self.met = Some(factor);
        self.missed = Some(factor * SETTLE_RATIO);
    }

    /// Whether moving to `candidate` crosses a factor whose outcome this
    /// bracket already knows (a met factor when tightening, a missed one
    /// when loosening).
    pub(super) fn crosses(&self, candidate: f64, tightening: bool) -> bool {
        if tightening {
            self.met.is_some_and(|m| candidate <= m)
        } else {
            self.missed.is_some_and(|m| candidate >= m)
        }
    }
}

/// A bracket whose missed factor is within this ratio of its met one
/// settles on the met one.
const SETTLE_RATIO: f64 = 1.01;

/// Most `tighten_factor` steps one loosening takes.
const MAX_LOOSEN_STEPS: f64 = 4.0;

/// The factor a tier far over its target is loosened by (its figures
/// divided by it): `tighten_factor` once, and once more for every doubling
/// of the allowed miss rate over the tier's ((1 − target) / (1 − attainment))
/// beyond the second, at most [`MAX_LOOSEN_STEPS`]: a tier missing a
/// hundredth of what it may moves about 50% in one round, one missing a
/// quarter of it 11%, and an overshoot is bisected back.
pub(super) fn loosening(attainment: f64, target: f64, tighten_factor: f64) -> f64 {
    let allowed = (1.0 - target).max(1e-6);
    let missing = (1.0 - attainment).max(allowed * 1e-3);
    let headroom = (allowed / missing).max(1.0);
    let steps = (headroom.log2().floor() - 1.0).clamp(1.0, MAX_LOOSEN_STEPS);
    tighten_factor.powf(steps)
}

/// The factor a failing tier's capacity figures are multiplied by:
/// `tighten_factor` once, and once more for every further doubling of the
/// miss rate over the allowed one ((1 − attainment) / (1 − target)), so a
/// tier far from its target moves faster.
pub(super) fn tightening(attainment: f64, target: f64, tighten_factor: f64) -> f64 {
    let allowed = (1.0 - target).max(1e-6);
    let excess = ((1.0 - attainment) / allowed).max(1.0);
    let steps = excess.log2().ceil().max(1.0);
    tighten_factor.powf(steps)
}

/// Most `tighten_factor` steps a window is tightened by in one round: a
/// window's attainment rests on fewer requests than its tier's, and a few
/// slow requests of a quiet day must not size it up by half.
const MAX_WINDOW_STEPS: i32 = 2;

/// The factor a day (or other window) that missed is tightened by when its
/// tier meets over the horizon: [`tightening`] of the window's own
/// attainment, at most [`MAX_WINDOW_STEPS`] steps.
pub(super) fn window_tightening(attainment: f64, target: f64, tighten_factor: f64) -> f64 {
    tightening(attainment, target, tighten_factor).max(tighten_factor.powi(MAX_WINDOW_STEPS))
}

/// Whether the sampled replay's `attainment` of a tier that missed already
/// calls for two steps or more of its whole tier (a miss rate over twice the
/// allowed one): its plan is then tightened whole without a replay of every
/// slot, which could not change that move.
pub(super) fn far_off(attainment: f64, target: f64) -> bool {
    (1.0 - attainment) > 2.0 * (1.0 - target).max(1e-6)
}

#[cfg(test)]
mod tests {
    use super::{far_off, loosening, tightening, window_tightening, Bracket, Reading, Rule};

    fn at(factor: f64, attainment: f64, loosenable: bool) -> Reading {
        Reading {
            factor,
            attainment,
            target: 0.99,
            margin: 0.005,
            loosenable,
        }
    }

    #[test]
    fn a_window_is_tightened_by_its_own_miss_at_most_two_steps() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(window_tightening(0.985, 0.99, 0.9), 0.9));
        assert!(close(window_tightening(0.9675, 0.99, 0.9), 0.81));
        assert!(close(window_tightening(0.929, 0.99, 0.9), 0.81));
        assert!(close(window_tightening(0.0, 0.99, 0.9), 0.81));
    }

    #[test]
    fn a_sample_twice_the_allowed_misses_away_is_far_off() {
        assert!(!far_off(0.9885, 0.99));
        assert!(!far_off(0.98, 0.99));
        assert!(far_off(0.979, 0.99));
        assert!(!far_off(0.85, 0.9));
        assert!(far_off(0.75, 0.9));
        assert!(!far_off(0.88784, 0.9));
    }

    #[test]
    fn tightening_grows_with_the_miss_rate() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // Up to twice the allowed misses: one step.
        assert!(close(tightening(0.985, 0.99, 0.9), 0.9));
        // 3.25% missed against 1% allowed: two doublings, two steps.
        assert!(close(tightening(0.9675, 0.99, 0.9), 0.81));
        // 7.1% missed: three steps.
        assert!(close(tightening(0.929, 0.99, 0.9), 0.729));
        assert!(close(tightening(0.0, 0.99, 0.9), 0.9f64.powi(7)));
    }

    #[test]
    fn loosening_grows_with_the_headroom_under_the_allowed_misses() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        // A quarter of the allowed misses, or more: one step.
        assert!(close(loosening(0.9975, 0.99, 0.9), 0.9));
        assert!(close(loosening(0.996, 0.99, 0.9), 0.9));
        // An eighth: two steps; a sixteenth: three.
        assert!(close(loosening(0.99875, 0.99, 0.9), 0.81));
        assert!(close(loosening(0.999_375, 0.99, 0.9), 0.729));
        // Nothing missed: at most four steps.
        assert!(close(loosening(1.0, 0.95, 0.9), 0.9f64.powi(4)));
    }

    #[test]
    fn the_bracket_tightens_loosens_bisects_and_says_which() {
        let mut b = Bracket::default();
        // Far over the band with several replicas (a hundredth of the
        // allowed misses): loosen by the most steps.
        let (f, rule) = b.next(at(1.0, 0.9999, true), 0.9);
        assert!((f - 1.0 / 0.9f64.powi(4)).abs() < 1e-12);
        assert_eq!(rule, Rule::Loosen);
        // Over the band with one replica: hold.
        assert_eq!(
            Bracket::default().next(at(1.0, 0.9999, false), 0.9),
            (1.0, Rule::Hold)
        );
        // Inside the band: hold.
        assert_eq!(
            Bracket::default().next(at(1.0, 0.995, true), 0.9),
            (1.0, Rule::Hold)
        );
        // Below the target with nothing known: tighten.
        assert_eq!(
            Bracket::default().next(at(1.0, 0.985, true), 0.9).1,
            Rule::Tighten
        );
        // The loosened factor misses: bisect between 1 (met) and 1/0.9.
        let (g, rule) = b.next(at(f, 0.97, true), 0.9);
        assert!((g - (1.0f64 * f).sqrt()).abs() < 1e-12);
        assert_eq!(rule, Rule::Bisect);
        // Met again at g, still over the band: bisect upward.
        let (h, _) = b.next(at(g, 0.9995, true), 0.9);
        assert!(h > g && h < f);
        // A bracket narrower than 1% settles on the factor that met.
        let mut narrow = Bracket::default();
        narrow.next(at(1.0, 0.9999, true), 0.9);
        assert_eq!(narrow.next(at(1.005, 0.98, true), 0.9), (1.0, Rule::Settle));
    }
}
