//! Disaggregated units offered and deployed: the scenario solved again
//! with none offered, and the cheaper of the two plans that meet every
//! target returned, so that offering units never returns a dearer plan than
//! offering none. A unit's capacity figure is its simulated search's, and
//! the replay may ask more of it than of an aggregated replica (its decode
//! side takes a burst's prompts as fast as its prefill side computes them,
//! where an aggregated replica's own prefill paces them): the rounds' factor
//! is per tier, so only a solve without units prices the aggregated
//! replicas at their own factor.

use super::rounds::Finished;
use crate::scenario::Scenario;
use serde::Serialize;

/// The plans with and without the units the scenario offers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WithoutUnits {
    /// The units offered (`xPyD`, every offer's together).
    pub offered: Vec<String>,
    /// The plan with them: its cost over the horizon and whether its replay
    /// met every target.
    pub with_units_usd: f64,
    pub with_units_meets_targets: bool,
    /// The plan with aggregated replicas alone (`None`: none could be
    /// made, `without_units_error` says why).
    pub without_units_usd: Option<f64>,
    pub without_units_meets_targets: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub without_units_error: Option<String>,
    /// Per tier, the capacity factor its fleets were sized with in each
    /// plan (demand ÷ factor: below 1, the replay asked more of the
    /// capacity figures than they claimed).
    pub factors_with_units: std::collections::BTreeMap<String, f64>,
    pub factors_without_units: std::collections::BTreeMap<String, f64>,
    /// Whether the plan returned is the one with aggregated replicas
    /// alone.
    pub aggregated_chosen: bool,
}

/// `scenario` with no disaggregated unit offered, when it offers one.
pub(super) fn aggregated_only(scenario: &Scenario) -> Option<Scenario> {
    let offers = || scenario.models.iter().flat_map(|m| &m.gpus);
    if offers().all(|g| g.disaggregated.is_empty()) {
        return None;
    }
    let mut plain = scenario.clone();
    for g in plain.models.iter_mut().flat_map(|m| &mut m.gpus) {
        g.disaggregated.clear();
    }
    for g in &mut plain.gpus {
        g.disaggregated.clear();
    }
    Some(plain)
}

/// Whether `f`'s plan runs a disaggregated unit in some slot.
pub(super) fn deploys_units(f: &Finished) -> bool {
    f.trial.plan.tiers.values().any(|t| {
        t.configurations.iter().any(|c| {
            c.config.disaggregated.is_some()
                && c.replicas_by_slot
                    .iter()
                    .chain(&c.spot_replicas_by_slot)
                    .any(|&n| n > 0)
        })
    })
}

/// Which of `with` (units offered) and `without` (none, or why no plan
/// could be made without them) is returned: the one without units when it
/// meets every target and the other does not or costs more.
pub(super) fn choose(
    scenario: &Scenario,
    with: &Finished,
    without: Result<&Finished, String>,
) -> WithoutUnits {
    let meets = |f: &Finished| f.trial.meets_targets();
    let cost = |f: &Finished| f.trial.plan.total_cost_usd;
    let mut offered: Vec<String> = scenario
        .models
        .iter()
        .flat_map(|m| &m.gpus)
        .flat_map(|g| g.disaggregated.iter().map(|r| r.label()))
        .collect();
    offered.sort();
    offered.dedup();
    let factors = |f: &Finished| {
        f.scenario
            .tiers
            .iter()
            .zip(&f.trial.factors)
            .map(|(t, &x)| (t.name.clone(), x))
            .collect()
    };
    let (without_usd, without_meets, error, without_factors, replaces) = match without {
        Ok(w) => (Some(cost(w)), meets(w), None, factors(w), w.replaces(with)),
        Err(e) => (
            None,
            false,
            Some(e),
            std::collections::BTreeMap::new(),
            false,
        ),
    };
    WithoutUnits {
        offered,
        with_units_usd: cost(with),
        with_units_meets_targets: meets(with),
        without_units_usd: without_usd,
        without_units_meets_targets: without_meets,
        without_units_error: error,
        factors_with_units: factors(with),
        factors_without_units: without_factors,
        aggregated_chosen: replaces,
    }
}

impl Finished {
    /// Whether this plan replaces `first` as the one returned: it meets
    /// every target, and `first` does not or costs more (the rule of the
    /// candidate kept off the API and of the plan without units).
    pub(super) fn replaces(&self, first: &Finished) -> bool {
        self.trial.meets_targets()
            && (!first.trial.meets_targets()
                || self.trial.plan.total_cost_usd < first.trial.plan.total_cost_usd)
    }
}
