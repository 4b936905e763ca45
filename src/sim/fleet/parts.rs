//! The replicas a group stands for: a group of aggregated replicas is one
//! part; a group of disaggregated units is two, its prefill replicas and
//! its decode replicas (docs/simulator.md, disaggregated units).

use super::Fleet;
use crate::sim::replica::ReplicaSpec;

/// What a part's replicas do with a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// Prefill and decode (aggregated): a request's whole life.
    Serve,
    /// A request's prompt to its first token; its KV cache then moves to
    /// a replica of part `decode`.
    Prefill { decode: usize },
    /// The rest of a request whose KV cache a prefill replica sent.
    Decode,
}

/// Identical replicas of one group in one role.
#[derive(Debug)]
pub(super) struct Part<'a> {
    /// The fleet's group the part belongs to.
    pub group: usize,
    pub tier: usize,
    pub role: Role,
    pub spec: &'a ReplicaSpec,
    /// The part's replicas per replica (unit) of the group.
    pub per_unit: u32,
    /// The router's capacity weight of one of the part's replicas: the
    /// group's requests/s per unit over the part's replicas per unit.
    pub rps_per_replica: f64,
}

impl Part<'_> {
    /// Whether requests arrive at the part (not through a handoff).
    pub(super) fn takes_arrivals(&self) -> bool {
        self.role != Role::Decode
    }
}

/// Every group's parts, in the groups' order (a unit's prefill part before
/// its decode part).
pub(super) fn parts(fleet: &Fleet) -> Vec<Part<'_>> {
    let mut out = Vec::new();
    for (g, group) in fleet.groups.iter().enumerate() {
        let part = |role, spec, per_unit: u32| Part {
            group: g,
            tier: group.tier,
            role,
            spec,
            per_unit,
            rps_per_replica: group.rps_per_replica / f64::from(per_unit.max(1)),
        };
        match &group.spec.split {
            None => out.push(part(Role::Serve, &group.spec, 1)),
            Some(split) => {
                let decode = out.len() + 1;
                out.push(part(
                    Role::Prefill { decode },
                    &split.prefill,
                    split.prefill_replicas,
                ));
                out.push(part(Role::Decode, &group.spec, split.decode_replicas));
            }
        }
    }
    out
}
