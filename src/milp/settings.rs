//! How the MILP is solved, apart from what it is ([`super::Problem`]): the
//! method, the gap and time limit, the threads, the log and the warm start.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// The solver's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Relative gap at which the solver stops (0.01 = 1%).
    pub mip_gap: f64,
    /// Seconds the solve may take.
    pub time_limit_s: f64,
    /// HiGHS threads (1 gives reproducible output).
    pub threads: u32,
    /// Where HiGHS writes its log (`None`: no log).
    pub log_file: Option<PathBuf>,
    /// Start the MILP from the rounding heuristic's plan (steps 1-2 of the
    /// monolithic method); `false` hands HiGHS the bare model.
    pub warm_start: bool,
    /// How to solve it.
    pub method: Method,
    /// Most branch-and-bound nodes HiGHS may explore (`None`: no limit). A
    /// node limit, unlike the time limit, stops the same run at the same
    /// plan on any machine.
    pub node_limit: Option<u32>,
    /// The time HiGHS may still take on the whole model after a decomposed
    /// search stalls ([`super::solve`]), shared by every MILP of one solve.
    pub hand_over: HandOverAllowance,
    /// Most passes over the slots the decomposed method's branching on the
    /// reserved counts may make when its bound stalls
    /// ([`super::reserved_bound`]); 0 leaves a stalled search to the
    /// hand-over instead.
    pub branch_prices: usize,
}

impl Settings {
    /// One slot solved exactly on one thread, within the same time limit:
    /// no gap, no log, no warm start, the whole model in HiGHS.
    pub fn one_slot(&self) -> Settings {
        Settings::exact(self.time_limit_s)
    }

    /// A small problem solved exactly on one thread in `time_limit_s`.
    pub fn exact(time_limit_s: f64) -> Settings {
        Settings {
            mip_gap: 0.0,
            time_limit_s,
            threads: 1,
            log_file: None,
            warm_start: false,
            method: Method::Monolithic,
            node_limit: None,
            hand_over: HandOverAllowance::unlimited(),
            branch_prices: super::decomposed::BRANCH_PRICES,
        }
    }

    /// These settings with at most `time_limit_s` seconds (at least 1).
    pub fn within(&self, time_limit_s: f64) -> Settings {
        Settings {
            time_limit_s: time_limit_s.max(1.0),
            ..self.clone()
        }
    }
}

/// Seconds of HiGHS on the whole model left to the hand-overs of one solve
/// (`milp::solve`: a decomposed search that stalls above the gap hands the
/// whole model to HiGHS for the rest of its time limit). Clones share it, so
/// every round of a solve, its re-solve kept off the API and its what-ifs
/// draw from one allowance: a scenario whose decomposed searches keep
/// stalling just above the gap spends `time_limit_s` on hand-overs once,
/// not once per MILP.
#[derive(Debug, Clone)]
pub struct HandOverAllowance(Option<Arc<Mutex<f64>>>);

impl HandOverAllowance {
    /// No limit beyond each MILP's own time limit.
    pub fn unlimited() -> Self {
        HandOverAllowance(None)
    }

    /// `seconds` in all.
    pub fn of(seconds: f64) -> Self {
        HandOverAllowance(Some(Arc::new(Mutex::new(seconds.max(0.0)))))
    }

    /// Up to `wanted_s` seconds, taken from what is left.
    pub(crate) fn take(&self, wanted_s: f64) -> f64 {
        let wanted_s = wanted_s.max(0.0);
        match &self.0 {
            None => wanted_s,
            Some(left) => {
                let mut left = left
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let granted = wanted_s.min(*left);
                *left -= granted;
                granted
            }
        }
    }

    /// Returns seconds taken and not spent.
    pub(crate) fn give_back(&self, unused_s: f64) {
        if let Some(left) = &self.0 {
            *left
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) += unused_s.max(0.0);
        }
    }
}

/// The allowance is the solve's, not part of what a MILP is solved with:
/// settings that differ only in it are equal.
impl PartialEq for HandOverAllowance {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// How the MILP is solved (`planning.milp_method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Decomposed when the slots are linked only by the reserved counts,
    /// monolithic otherwise.
    #[default]
    Auto,
    /// The whole model in HiGHS.
    Monolithic,
    /// Reserved counts by an outer search, each slot solved exactly, and a
    /// Lagrangian lower bound ([`super::decomposed`]).
    Decomposed,
}

#[cfg(test)]
mod tests {
    use super::HandOverAllowance;

    #[test]
    fn clones_draw_from_one_allowance() {
        let solve = HandOverAllowance::of(5.0);
        let round = solve.clone();
        assert_eq!(round.take(3.0), 3.0);
        assert_eq!(solve.take(10.0), 2.0);
        assert_eq!(round.take(1.0), 0.0);
        round.give_back(1.5);
        assert_eq!(solve.take(10.0), 1.5);
        assert_eq!(HandOverAllowance::unlimited().take(42.0), 42.0);
    }
}
