//! What the solve-and-replay rounds record: each round's figures and the
//! moves its replay caused ([`Round`], [`Move`], [`Rule`]), why a
//! candidate's rounds stopped ([`Stop`]), and the comparison with the
//! candidate kept off the API ([`WithoutApi`]). The rules themselves are
//! in `bracket` and `rounds`.

use serde::Serialize;
use std::collections::BTreeMap;

/// What moved a tier's capacity factor after a round (or kept it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// Met the target within the band, or over it with nothing to loosen
    /// (one replica, or a headroom rule): kept.
    Hold,
    /// Missed the target, nothing bracketed: tightened by `tighten_factor`
    /// once per doubling of the miss rate.
    Tighten,
    /// More than `attainment_margin_points` over the target with several
    /// replicas: loosened by 1 / `tighten_factor`.
    Loosen,
    /// Between the largest factor that met and the smallest that missed:
    /// their geometric mean.
    Bisect,
    /// The factor that met and the one that missed within 1%: the one that
    /// met.
    Settle,
    /// Missed while its plan sent the API a share its fleets were not sized
    /// for: the next round sizes them for that share, the factor kept.
    ResizeAfterApiShare,
    /// The next MILP read the same figures as the last round's, so it was
    /// not solved again: the moved tiers stepped once more the same way.
    RepeatSkipped,
    /// The next MILP chose the same fleets, so they were not replayed again:
    /// the moved tiers stepped once more the same way.
    SameFleets,
    /// Missed in some of its windows (`tiers[].slo_window`) while it met
    /// over the replay, or missed it by little before it was ever loosened
    /// (factor at most 1), or right after some of its slots were loosened:
    /// each slot of such a window below the target is sized by the step the
    /// window's miss calls for (`tighten_factor` once, and once more per
    /// further doubling of the allowed miss rate, at most two), or bisected
    /// back towards the factor it last met with, the tier's factor kept.
    TightenWindows,
    /// A window fell under the target + guard right after some of its
    /// slots were loosened: the miss is theirs, so those slots go back to
    /// the factor they met with before the loosening and their brackets
    /// settle there (they are not loosened again in the candidate's
    /// rounds), the window's other slots and the tier's factor kept.
    UndoLoosening,
    /// Met in its band with every window met, in a round where every tier
    /// met its target and every window its target plus the guard (slots
    /// are never sized down while another tier is sized up), some replayed
    /// slots more than `attainment_margin_points` over the target: each
    /// such slot is loosened (by its own bracket: 1 / `tighten_factor` per
    /// step its surplus calls for, at most two, or bisected back towards
    /// the factor it last missed with), as many as each window's surplus
    /// over the target affords, the tier's factor kept.
    LoosenSlots,
    /// Part of it went to the API at the end of the candidate's rounds: the
    /// scenario is solved again with the tier kept off the API, as another
    /// candidate whose rounds go on from the factors this one reached
    /// (the kept-off tiers' own factor at 1).
    KeptOffApi,
}

/// One tier's move after a round.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Move {
    pub tier: String,
    pub rule: Rule,
    pub factor_before: f64,
    pub factor_after: f64,
    /// The replayed attainment the move answers (0-1).
    pub attainment: f64,
    /// With `tighten-windows`, the windows whose slots were tightened
    /// (first slot, the slot after the last), each by the step its own
    /// attainment calls for (at most two); with `undo-loosening` and
    /// `loosen-slots`, the slots sized back up or down; with `repeat-skipped` or
    /// `same-fleets`, tightened once more by `tighten_factor`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub windows: Vec<(usize, usize)>,
}

/// Why a candidate's rounds stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stop {
    /// Every tier in its band, or no factor left to move with the GPU
    /// shares settled.
    Settled,
    /// `simulation.max_rounds` rounds were replayed (and the rounds past
    /// it that bisections or window tightenings may add).
    RoundLimit,
    /// Steps changed no fleet any more (or the brackets stopped them).
    FleetsUnchanged,
}

/// One solve-and-replay round.
#[derive(Debug, Clone, Serialize)]
pub struct Round {
    pub round: u32,
    pub total_cost_usd: f64,
    /// Per tier: the factor its capacity coefficients were multiplied by.
    pub capacity_factor: BTreeMap<String, f64>,
    /// Per tier: attainment on replay.
    pub attainment: BTreeMap<String, f64>,
    /// What the replay moved, tier by tier, then any further steps taken
    /// before the next replay.
    pub moves: Vec<Move>,
    /// On a candidate's last round: why its rounds stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<Stop>,
}

/// A tier whose plan sends part of its traffic to the API runs smaller
/// fleets, which pool its bursts less than the figures they were sized from
/// assumed; when the replay rounds had to tighten such a tier, the scenario
/// is solved again with it kept off the API (its fleets then carry all of its
/// traffic), and the cheaper of the two plans that meets every target is
/// returned.
#[derive(Debug, Clone, Serialize)]
pub struct WithoutApi {
    /// The tiers kept off the API.
    pub tiers: Vec<String>,
    /// What the plan without the API for them costs over the horizon.
    pub total_cost_usd: f64,
    /// Whether its replay met every tier's target.
    pub meets_targets: bool,
    /// What the plan with the API (as the scenario allows it) costs.
    pub with_api_total_cost_usd: f64,
    /// Whether its replay met every tier's target.
    pub with_api_meets_targets: bool,
    /// The rounds of the plan that is not this one.
    pub other_rounds: Vec<Round>,
    /// Whether this plan is the one without the API.
    pub chosen: bool,
}
