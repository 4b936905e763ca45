//! Which up replica of a tier an arriving request goes to: the routing
//! policy in front of the fleet. Semantics in `docs/simulator.md`.

use serde::Serialize;

/// The routing policy of a fleet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Router {
    /// The replica with the least outstanding work per unit of planned
    /// capacity (prompt tokens not yet prefilled + requests in the replica ×
    /// the tier's mean output tokens, over the plan's requests/s per
    /// replica); ties go to the lowest index.
    #[default]
    LeastWork,
    /// Per tier, the next up replica in index order after the last one
    /// chosen, skipping replicas whose KV cache cannot hold the request.
    RoundRobin,
    /// Least work as the request would leave it: the replica whose
    /// outstanding work plus the request's own prompt tokens not already
    /// in its prefix cache, per unit of planned capacity, is least (as
    /// llm-d's precise prefix-cache scorer weighs cached blocks against
    /// load); without prefix caching, least work with the prompt counted
    /// alike on every replica.
    PrefixAware,
}

impl Router {
    /// Every policy, in the order the scenario format lists them.
    pub const ALL: [Router; 3] = [Router::LeastWork, Router::RoundRobin, Router::PrefixAware];

    /// The name a scenario file uses.
    pub fn name(self) -> &'static str {
        match self {
            Router::LeastWork => "least-work",
            Router::RoundRobin => "round-robin",
            Router::PrefixAware => "prefix-aware",
        }
    }

    /// The policy a scenario file names, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for r in Router::ALL {
            assert_eq!(Router::from_name(r.name()), Some(r));
            assert_eq!(
                serde_json::to_string(&r).unwrap(),
                format!("\"{}\"", r.name())
            );
        }
        assert_eq!(Router::from_name("random"), None);
    }
}
