//! How the MILP is solved, apart from what it is ([`super::Problem`]): the
//! method, the gap and time limit, the threads, the log and the warm start.

use std::path::PathBuf;

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
    /// Most passes over the slots the decomposed method's branching on the
    /// reserved counts may make when its bound stalls
    /// ([`super::reserved_bound`]); 0: none, the stalled search's plan is
    /// reported with the bound it reached.
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
