//! What every part of the model reads: the core variables and the bounds of
//! one tier in one slot. The names follow `docs/model.md`.

use super::TierInput;
use good_lp::Variable;

/// The variables every model has: `reserved[g]` and `on_demand[g,t]` (in
/// purchase units), `replicas[k,c,t]`, `api[k,t]`.
pub(super) struct Vars {
    pub reserved: Vec<Option<Variable>>,
    /// `[t][g]`
    pub on_demand: Vec<Vec<Option<Variable>>>,
    /// `[k][c][t]`
    pub replicas: Vec<Vec<Vec<Option<Variable>>>>,
    /// `[k][t]`
    pub api: Vec<Vec<Option<Variable>>>,
    /// `[k][c][t]`: spot replicas requested.
    pub spot: Vec<Vec<Vec<Option<Variable>>>>,
}

/// Whether tier `tier` may run replicas in slot `t`: a slot with demand, or
/// any slot of a deadline tier (its volume may arrive from earlier slots).
pub(super) fn serves_in(tier: &TierInput, t: usize) -> bool {
    tier.rules.deadline_slots.is_some() || tier.peak_rps.get(t).copied().unwrap_or(0.0) > 0.0
}

/// What arrives in slot `t`: the busiest-minute rate that sizes an ordinary
/// tier, the mean rate (the volume) of a deadline tier.
pub(crate) fn arrivals_in(tier: &TierInput, t: usize) -> f64 {
    let rates = if tier.rules.deadline_slots.is_some() {
        &tier.mean_rps
    } else {
        &tier.peak_rps
    };
    rates.get(t).copied().unwrap_or(0.0)
}

/// `M[k,c,t]`: more replicas of option `c` than tier `k` could ever use in
/// slot `t` (alone they would cover all it may have to serve there, plus its
/// headroom).
pub(super) fn replica_bound(tier: &TierInput, c: usize, t: usize) -> f64 {
    let demand = match tier.rules.deadline_slots {
        // Everything that arrives in slot t or the `d` slots before it.
        Some(d) => (t.saturating_sub(d)..=t)
            .map(|u| tier.mean_rps.get(u).copied().unwrap_or(0.0))
            .sum(),
        None => tier.peak_rps.get(t).copied().unwrap_or(0.0),
    };
    let mu = tier.options[c].rps(t);
    if mu <= 0.0 {
        return 0.0;
    }
    (demand / mu - 1e-9).ceil().max(0.0) + f64::from(tier.rules.headroom_replicas)
}
