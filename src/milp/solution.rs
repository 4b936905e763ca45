//! The MILP's answer and its cost: the whole GPU and replica counts, how
//! the solver ended, and the spend they add up to.

use super::{Method, Problem};

/// How the solver ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SolveStatus {
    /// Proven optimal (within HiGHS's tolerances).
    Optimal,
    /// Stopped at the requested relative gap.
    GapLimit,
    /// Stopped at the time limit with a feasible plan.
    TimeLimit,
    /// A plan within the time limit whose proven bound does not reach the
    /// requested gap: the decomposed search ran out of moves, or HiGHS,
    /// started from a plan, stopped on a claim only its LP bound backs.
    Unproven,
}

/// The MILP's answer, rounded to whole GPUs and replicas.
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    /// `reserved[g]`.
    pub reserved: Vec<u32>,
    /// `on_demand[t][g]`: GPUs rented beyond the reserved ones.
    pub on_demand: Vec<Vec<u32>>,
    /// `replicas[k][c][t]`.
    pub replicas: Vec<Vec<Vec<u32>>>,
    /// `api[k][t]`: share of the slot's traffic sent to the API.
    pub api: Vec<Vec<f64>>,
    /// `spot[k][c][t]`: spot replicas requested (all 0 without spot).
    pub spot: Vec<Vec<Vec<u32>>>,
    pub status: SolveStatus,
    /// A proven lower bound on the optimum's cost, in USD.
    pub lower_bound_usd: f64,
    /// The method that solved it (never `auto`).
    pub method: Method,
}

impl Solution {
    /// The slots `range` of this solution (the reserved counts kept).
    pub fn slots_in(&self, range: std::ops::Range<usize>) -> Solution {
        let cut = |v: &[u32]| v[range.clone()].to_vec();
        Solution {
            reserved: self.reserved.clone(),
            on_demand: self.on_demand[range.clone()].to_vec(),
            replicas: self
                .replicas
                .iter()
                .map(|k| k.iter().map(|c| cut(c)).collect())
                .collect(),
            api: self.api.iter().map(|a| a[range.clone()].to_vec()).collect(),
            spot: self
                .spot
                .iter()
                .map(|k| k.iter().map(|c| cut(c)).collect())
                .collect(),
            status: self.status,
            lower_bound_usd: self.lower_bound_usd,
            method: self.method,
        }
    }

    /// GPUs of type `g` that the replicas of slot `t` occupy.
    pub fn gpus_used(&self, input: &Problem, g: usize, t: usize) -> u32 {
        input
            .tiers
            .iter()
            .zip(&self.replicas)
            .flat_map(|(tier, replicas)| {
                tier.options
                    .iter()
                    .zip(replicas)
                    .filter(move |(o, _)| o.gpu == g)
                    .map(move |(o, per_slot)| o.gpus_per_replica * per_slot[t])
            })
            .sum()
    }
}

/// Why no solution came back.
#[derive(Debug, Clone, PartialEq)]
pub enum MilpError {
    Infeasible,
    Solver(String),
}

/// Cost of a solution, in USD, from its whole numbers (not the solver's floats).
pub(crate) fn cost_usd(input: &Problem, s: &Solution) -> (f64, f64, f64) {
    let horizon = input.horizon_hours();
    let reserved: f64 = input
        .gpus
        .iter()
        .zip(&s.reserved)
        .map(|(g, &n)| f64::from(n) * g.reserved_usd_per_gpu_hour.unwrap_or(0.0) * horizon)
        .sum();
    let on_demand: f64 = s
        .on_demand
        .iter()
        .map(|slot| {
            input
                .gpus
                .iter()
                .zip(slot)
                .map(|(g, &n)| {
                    f64::from(n) * g.on_demand_usd_per_gpu_hour.unwrap_or(0.0) * input.slot_hours
                })
                .sum::<f64>()
        })
        .sum();
    let api: f64 = input
        .tiers
        .iter()
        .zip(&s.api)
        .map(|(tier, shares)| match tier.api {
            None => 0.0,
            Some(terms) => shares
                .iter()
                .zip(&tier.mean_rps)
                .map(|(share, mean)| {
                    share * mean * input.slot_hours * 3600.0 * terms.usd_per_request
                })
                .sum(),
        })
        .sum();
    (reserved, on_demand, api)
}

/// Total cost in USD.
pub(crate) fn total(input: &Problem, s: &Solution) -> f64 {
    let (r, o, a) = cost_usd(input, s);
    r + o + a + spot_usd(input, s)
}

/// Spot spend in USD: granted GPUs (requested × availability) × price ×
/// slot hours.
pub(crate) fn spot_usd(input: &Problem, s: &Solution) -> f64 {
    input
        .tiers
        .iter()
        .zip(&s.spot)
        .flat_map(|(tier, per_option)| tier.options.iter().zip(per_option))
        .map(|(o, per_slot)| {
            input.gpus[o.gpu].spot.map_or(0.0, |spot| {
                let requested: u32 = per_slot.iter().sum();
                f64::from(requested * o.gpus_per_replica)
                    * spot.availability
                    * spot.usd_per_gpu_hour
                    * input.slot_hours
            })
        })
        .sum()
}

impl Solution {
    /// No spot replicas, shaped like `replicas`.
    pub fn no_spot(replicas: &[Vec<Vec<u32>>]) -> Vec<Vec<Vec<u32>>> {
        replicas
            .iter()
            .map(|t| t.iter().map(|o| vec![0; o.len()]).collect())
            .collect()
    }
}
