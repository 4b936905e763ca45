//! The optimiser: a MILP over planning slots (good_lp + HiGHS).
//!
//! Sets: GPU types `g`, tiers `k`, configuration options `c ∈ C[k]` (each on one
//! GPU type with `p[c]` GPUs per replica and, per slot, `mu[c,t]` requests/s
//! per replica: the slot's peak rate over the replicas that the fleet step
//! function of (k, c) says that rate needs), slots `t`.
//!
//! Variables: `reserved[g]` (integer GPUs, the same in every slot),
//! `on_demand[g,t]` (GPUs rented in slot `t`), `replicas[k,c,t]` (integer),
//! `api[k,t]` ∈ [0, 1] (share of the tier's slot traffic sent to the API).
//!
//! Constraints: `coverage[k,t]`: Σ_c mu[c,t] replicas[k,c,t] + peak[k,t] api[k,t]
//! ≥ peak[k,t]; `gpus[g,t]`: Σ_{k, c on g} p[c] replicas[k,c,t] ≤ reserved[g] +
//! on_demand[g,t]; `quota[g,t]`: reserved[g] + on_demand[g,t] ≤ max_gpus[g];
//! `api_rate[t]`: Σ_k api[k,t] peak[k,t] tokens[k] × 60 ≤ api tokens/min.
//!
//! Objective: Σ_g reserved[g] × reserved price × horizon hours + Σ_{g,t}
//! on_demand[g,t] × on-demand price × slot hours + Σ_{k,t} api[k,t] ×
//! mean[k,t] × slot seconds × API price per request.

pub(crate) mod decomposed;
mod heuristic;
mod lagrangian;
mod links;
pub(crate) mod method;
mod model;
mod monolithic;
mod outer_search;
mod relaxation;
mod settings;
mod slot_rules;
pub(crate) mod slot_search;
mod vars;

pub(crate) use method::SolveMethod;
pub(crate) use settings::{Method, Settings};

/// One GPU type as the MILP sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuType {
    pub id: String,
    pub reserved_usd_per_gpu_hour: Option<f64>,
    pub on_demand_usd_per_gpu_hour: Option<f64>,
    pub max_gpus: Option<u32>,
    /// How the type is bought: unit size and on-demand minimum rental.
    pub purchase: Purchase,
    /// Spot capacity, if offered.
    pub spot: Option<SpotTerms>,
}

/// Spot capacity of a GPU type as the MILP sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpotTerms {
    /// Price of a granted GPU, per hour.
    pub usd_per_gpu_hour: f64,
    /// `grant[g]`: share of requested spot GPUs granted.
    pub availability: f64,
    /// `yield[g]`: expected share of a requested spot replica's capacity
    /// over a slot (granted, then up until an interruption or the slot's
    /// end).
    pub yield_share: f64,
}

/// How a GPU type is bought.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Purchase {
    /// `unit[g]`: GPUs per purchase unit (a whole node, or 1 for single
    /// GPUs); reserved and on-demand counts are whole units.
    pub unit_gpus: u32,
    /// `min_rental[g]`: slots an on-demand unit stays rented once started
    /// (1: no link between slots).
    pub min_rental_slots: u32,
}

impl Default for Purchase {
    fn default() -> Self {
        Purchase {
            unit_gpus: 1,
            min_rental_slots: 1,
        }
    }
}

/// Per-tier rules beyond covering demand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TierRules {
    /// `max_configs[k]`: most configurations the tier may use over the
    /// horizon.
    pub max_configurations: Option<u32>,
    /// `headroom[k]`: replicas of any one configuration the tier may lose in
    /// a slot and still cover its peak (1 = N+1).
    pub headroom_replicas: u32,
    /// `deadline[k]`: later slots a slot's volume may be served in (a batch
    /// tier); its coverage is then by mean rate, not the busiest minute.
    pub deadline_slots: Option<usize>,
    /// Whether the tier may run replicas on spot GPUs.
    pub spot_allowed: bool,
}

/// One way to serve a tier: a configuration and, per slot, the requests/s
/// each of its replicas covers there, `mu[c,t]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigOption {
    /// Index into [`Problem::gpus`].
    pub gpu: usize,
    pub gpus_per_replica: u32,
    /// `mu[c,t]`: the slot's peak rate over the replicas the fleet step
    /// function says that rate needs, so the fleet the step function sizes
    /// covers the slot exactly; one figure per slot.
    pub rps_by_slot: Vec<f64>,
    /// The caller's name for the configuration behind the option (`solve`:
    /// its index in the tier's capacity table); the MILP does not read it.
    pub entry: usize,
}

impl ConfigOption {
    /// `mu[c,t]`.
    pub fn rps(&self, t: usize) -> f64 {
        self.rps_by_slot.get(t).copied().unwrap_or(0.0)
    }

    /// An option whose replicas cover `rps` in each of `slots` slots.
    pub fn uniform(gpu: usize, gpus_per_replica: u32, rps: f64, slots: usize) -> Self {
        ConfigOption {
            gpu,
            gpus_per_replica,
            rps_by_slot: vec![rps; slots],
            entry: 0,
        }
    }
}

/// API terms for one tier.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ApiTerms {
    /// USD per request of the tier's mean lengths.
    pub usd_per_request: f64,
    /// Input plus output tokens per request (for the rate limit).
    pub tokens_per_request: f64,
}

/// One tier's demand and options.
#[derive(Debug, Clone, PartialEq)]
pub struct TierInput {
    pub name: String,
    /// Requests/s to cover in each slot.
    pub peak_rps: Vec<f64>,
    /// Mean requests/s in each slot (for API cost).
    pub mean_rps: Vec<f64>,
    pub options: Vec<ConfigOption>,
    /// `None` when the tier may not use the API.
    pub api: Option<ApiTerms>,
    pub rules: TierRules,
}

/// The problem the MILP solves: its sets, prices and coverage, apart from
/// how it is solved ([`Settings`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub slot_hours: f64,
    pub gpus: Vec<GpuType>,
    pub tiers: Vec<TierInput>,
    pub api_max_tokens_per_minute: Option<f64>,
    /// `block[t]`: the slots are consecutive blocks of this many slots
    /// (the periods of a term, [`crate::money::growth`]) that no minimum rental or
    /// deadline crosses; `None`: one block, the horizon.
    pub block_slots: Option<usize>,
}

impl Problem {
    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.tiers
            .iter()
            .map(|t| t.peak_rps.len())
            .max()
            .unwrap_or(0)
    }

    /// Hours in the horizon.
    pub fn horizon_hours(&self) -> f64 {
        self.slots() as f64 * self.slot_hours
    }

    /// Whether a purchase unit, a minimum rental or a tier rule is in force:
    /// the rounding heuristic knows none of them, so the MILP then runs
    /// without its warm start.
    pub fn has_purchase_rules(&self) -> bool {
        self.gpus.iter().any(|g| g.purchase != Purchase::default())
            || self.tiers.iter().any(|t| t.rules != TierRules::default())
    }

    /// Whether constraints link slots beyond the reserved counts (minimum
    /// rentals, deadlines, configuration limits): then only the whole model
    /// over every slot at once is exact.
    pub fn links_slots(&self) -> bool {
        self.gpus.iter().any(|g| g.purchase.min_rental_slots > 1)
            || self
                .tiers
                .iter()
                .any(|t| t.rules.deadline_slots.is_some() || t.rules.max_configurations.is_some())
    }

    /// The slots `range` alone (slots past the input's are empty).
    pub fn slots_in(&self, range: std::ops::Range<usize>) -> Problem {
        let at = |v: &[f64]| -> Vec<f64> {
            range
                .clone()
                .map(|t| v.get(t).copied().unwrap_or(0.0))
                .collect()
        };
        Problem {
            slot_hours: self.slot_hours,
            gpus: self.gpus.clone(),
            tiers: self
                .tiers
                .iter()
                .map(|tier| TierInput {
                    name: tier.name.clone(),
                    peak_rps: at(&tier.peak_rps),
                    mean_rps: at(&tier.mean_rps),
                    options: tier
                        .options
                        .iter()
                        .map(|o| ConfigOption {
                            rps_by_slot: at(&o.rps_by_slot),
                            ..o.clone()
                        })
                        .collect(),
                    api: tier.api,
                    rules: tier.rules,
                })
                .collect(),
            api_max_tokens_per_minute: self.api_max_tokens_per_minute,
            block_slots: None,
        }
    }

    /// The slots of the block holding slot `t`, as a range.
    pub fn block_of(&self, t: usize) -> std::ops::Range<usize> {
        let slots = self.slots();
        match self.block_slots {
            Some(b) if b > 0 => {
                let start = t / b * b;
                start..(start + b).min(slots)
            }
            _ => 0..slots,
        }
    }

    /// Whether the decomposed method applies: nothing links the slots but
    /// the reserved counts ([`Self::links_slots`]), and no purchase unit or
    /// tier rule is in force (the slot search models neither).
    pub fn decomposable(&self) -> bool {
        !self.links_slots() && !self.has_purchase_rules()
    }
}

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

/// The cheapest plan of `input` with the reserved counts fixed to
/// `reserved` (chosen for something larger, such as a whole term), by the
/// method the settings choose for it: each slot solved exactly when the
/// slots are decomposable, else the whole model in HiGHS with those counts.
pub(crate) fn solve_with_reserved(
    input: &Problem,
    settings: &Settings,
    reserved: &[u32],
) -> Result<Solution, MilpError> {
    method::chosen(input, settings.method).with_reserved(input, settings, reserved)
}

/// Solves the MILP by the method `settings.method` names ([`Method`]); with
/// `auto`, decomposed when [`Problem::decomposable`], monolithic
/// otherwise (and so for `decomposed` on such a model). When the decomposed
/// search of `auto` stalls with time left, HiGHS on the whole model,
/// without a starting plan (its bound is then a proof, docs/model.md §4),
/// gets the rest of it; the cheaper plan is kept, with the higher of the
/// two valid bounds.
pub(crate) fn solve(input: &Problem, settings: &Settings) -> Result<Solution, MilpError> {
    let chosen = method::chosen(input, settings.method);
    let clock = std::time::Instant::now();
    let first = chosen.solve(input, settings)?;
    let left_s = settings.time_limit_s - clock.elapsed().as_secs_f64();
    let stalled = chosen.name() == Method::Decomposed && first.status == SolveStatus::Unproven;
    if !stalled || settings.method != Method::Auto || left_s < 1.0 {
        return Ok(first);
    }
    let whole = Settings {
        time_limit_s: left_s,
        warm_start: false,
        ..settings.clone()
    };
    let monolithic = method::Monolithic.solve(input, &whole)?;
    let lower_bound_usd = first.lower_bound_usd.max(monolithic.lower_bound_usd);
    let mut best = if total(input, &monolithic) < total(input, &first) {
        monolithic
    } else {
        first
    };
    best.lower_bound_usd = lower_bound_usd.min(total(input, &best));
    let gap_usd = total(input, &best) - best.lower_bound_usd;
    best.status = if gap_usd <= settings.mip_gap * total(input, &best).abs() + 1e-6 {
        SolveStatus::GapLimit
    } else if best.status == SolveStatus::TimeLimit
        || clock.elapsed().as_secs_f64() >= settings.time_limit_s
    {
        SolveStatus::TimeLimit
    } else {
        SolveStatus::Unproven
    };
    Ok(best)
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// One GPU type, rented at 1 USD/GPU-hour or reserved at
    /// `reserved_usd`, one option of 1 GPU covering 1 request/s, slots of an
    /// hour.
    pub(super) fn one_type(peaks: Vec<f64>, reserved_usd: Option<f64>) -> Problem {
        let mut input = tiny(peaks);
        input.gpus.truncate(1);
        input.gpus[0].reserved_usd_per_gpu_hour = reserved_usd;
        input.gpus[0].on_demand_usd_per_gpu_hour = Some(1.0);
        input.tiers[0].options = vec![ConfigOption::uniform(0, 1, 1.0, input.slots())];
        input
    }

    pub(super) fn tiny(peaks: Vec<f64>) -> Problem {
        let slots = peaks.len();
        Problem {
            slot_hours: 1.0,
            gpus: vec![
                GpuType {
                    id: "big".into(),
                    reserved_usd_per_gpu_hour: Some(2.0),
                    on_demand_usd_per_gpu_hour: Some(4.0),
                    max_gpus: None,
                    purchase: Purchase::default(),
                    spot: None,
                },
                GpuType {
                    id: "small".into(),
                    reserved_usd_per_gpu_hour: Some(0.6),
                    on_demand_usd_per_gpu_hour: Some(1.0),
                    max_gpus: Some(6),
                    purchase: Purchase::default(),
                    spot: None,
                },
            ],
            tiers: vec![TierInput {
                name: "t".into(),
                mean_rps: peaks.clone(),
                peak_rps: peaks,
                options: vec![
                    ConfigOption::uniform(0, 2, 5.0, slots),
                    ConfigOption::uniform(1, 1, 1.2, slots),
                ],
                api: None,
                rules: TierRules::default(),
            }],
            api_max_tokens_per_minute: None,
            block_slots: None,
        }
    }

    /// Exact (no gap), one thread, warm start, the method chosen by `auto`.
    pub(super) fn settings() -> Settings {
        with_method(Method::Auto, 0.0)
    }

    /// Brute force over reserved counts and per-slot replica counts.
    fn brute_force(input: &Problem) -> f64 {
        let tier = &input.tiers[0];
        let horizon = tier.peak_rps.len() as f64 * input.slot_hours;
        let mut best = f64::INFINITY;
        for r0 in 0..=8u32 {
            for r1 in 0..=6u32 {
                let mut total = f64::from(r0) * 2.0 * horizon + f64::from(r1) * 0.6 * horizon;
                for &peak in &tier.peak_rps {
                    let mut slot_best = f64::INFINITY;
                    for n0 in 0..=6u32 {
                        for n1 in 0..=6u32 {
                            if f64::from(n0) * 5.0 + f64::from(n1) * 1.2 < peak - 1e-9
                                || r1 + (n1.saturating_sub(r1)) > 6
                            {
                                continue;
                            }
                            let od = f64::from((2 * n0).saturating_sub(r0)) * 4.0
                                + f64::from(n1.saturating_sub(r1)) * 1.0;
                            slot_best = slot_best.min(od);
                        }
                    }
                    total += slot_best * input.slot_hours;
                }
                best = best.min(total);
            }
        }
        best
    }

    #[test]
    fn optimum_equals_brute_force() {
        for peaks in [
            vec![3.0, 11.0, 6.5],
            vec![0.5, 0.5, 9.0, 2.0],
            vec![14.0, 13.0, 1.0],
        ] {
            let input = tiny(peaks.clone());
            let s = solve(&input, &with_method(Method::Monolithic, 0.0)).unwrap();
            let (r, o, a) = cost_usd(&input, &s);
            let expected = brute_force(&input);
            assert!(
                (r + o + a - expected).abs() < 1e-6,
                "peaks {peaks:?}: milp {} vs brute force {expected}",
                r + o + a
            );
        }
    }

    #[test]
    fn api_takes_traffic_when_cheaper_and_respects_the_rate_limit() {
        let mut input = tiny(vec![1.0, 1.0]);
        input.tiers[0].api = Some(ApiTerms {
            usd_per_request: 0.0001,
            tokens_per_request: 1000.0,
        });
        let s = solve(&input, &settings()).unwrap();
        assert!(
            s.api[0].iter().all(|&a| (a - 1.0).abs() < 1e-6),
            "{:?}",
            s.api
        );
        // At most 30,000 tokens/min = 0.5 requests/s may go to the API.
        input.api_max_tokens_per_minute = Some(30_000.0);
        let s = solve(&input, &settings()).unwrap();
        assert!(s.api[0].iter().all(|&a| a <= 0.5 + 1e-6), "{:?}", s.api);
    }

    pub(super) fn covered(input: &Problem, s: &Solution) -> bool {
        input.tiers.iter().enumerate().all(|(k, tier)| {
            tier.peak_rps.iter().enumerate().all(|(t, &peak)| {
                let by_replicas: f64 = tier
                    .options
                    .iter()
                    .enumerate()
                    .map(|(c, o)| f64::from(s.replicas[k][c][t]) * o.rps(t))
                    .sum();
                by_replicas + s.api[k][t] * peak >= peak * (1.0 - 1e-6)
            })
        }) && (0..input.slots()).all(|t| {
            input.gpus.iter().enumerate().all(|(g, gpu)| {
                let used = s.gpus_used(input, g, t);
                let owned = s.reserved[g] + s.on_demand[t][g];
                used <= owned && gpu.max_gpus.is_none_or(|m| owned <= m)
            })
        })
    }

    proptest::proptest! {
        #![proptest_config(crate::base::testing::proptest_config(24))]

        #[test]
        fn more_demand_never_costs_less(
            peaks in proptest::collection::vec(0.1f64..16.0, 1..5),
            factor in 1.0f64..1.8,
            with_api in proptest::bool::ANY,
        ) {
            // HiGHS on the bare model, to optimality: started from the
            // heuristic's plan it has stopped as "optimal" above a cheaper
            // plan (docs/model.md §4).
            let mut small = tiny(peaks.clone());
            let mut large = tiny(peaks.iter().map(|p| p * factor).collect());
            let bare = Settings { warm_start: false, ..with_method(Method::Monolithic, 0.0) };
            if with_api {
                for input in [&mut small, &mut large] {
                    input.tiers[0].api = Some(ApiTerms { usd_per_request: 0.001, tokens_per_request: 1000.0 });
                }
            }
            let a = solve(&small, &bare).unwrap();
            let b = solve(&large, &bare).unwrap();
            proptest::prop_assert!(total(&large, &b) >= total(&small, &a) - 1e-6);
        }

        #[test]
        fn the_plan_covers_demand_in_every_slot(
            peaks in proptest::collection::vec(0.0f64..20.0, 1..6),
            with_api in proptest::bool::ANY,
        ) {
            let mut input = tiny(peaks);
            if with_api {
                input.tiers[0].api = Some(ApiTerms { usd_per_request: 0.0005, tokens_per_request: 1000.0 });
                input.api_max_tokens_per_minute = Some(120_000.0);
            }
            let s = solve(&input, &settings()).unwrap();
            proptest::prop_assert!(covered(&input, &s));
        }
    }

    fn with_method(method: Method, mip_gap: f64) -> Settings {
        Settings {
            mip_gap,
            time_limit_s: 30.0,
            threads: 1,
            log_file: None,
            warm_start: true,
            method,
        }
    }

    #[test]
    fn the_decomposed_bound_and_plan_bracket_the_brute_force_optimum() {
        for peaks in [
            vec![3.0, 11.0, 6.5],
            vec![0.5, 0.5, 9.0, 2.0],
            vec![14.0, 13.0, 1.0],
            vec![7.0; 6],
        ] {
            let input = tiny(peaks.clone());
            let s = solve(&input, &with_method(Method::Decomposed, 0.0)).unwrap();
            assert_eq!(s.method, Method::Decomposed);
            let optimum = brute_force(&input);
            let cost = total(&input, &s);
            assert!(
                s.lower_bound_usd <= optimum + 1e-6 && optimum <= cost + 1e-6,
                "peaks {peaks:?}: bound {} ≤ optimum {optimum} ≤ cost {cost}",
                s.lower_bound_usd
            );
            if s.status != SolveStatus::TimeLimit {
                assert!(
                    (cost - optimum).abs() < 1e-6,
                    "{peaks:?}: {cost} vs {optimum}"
                );
            }
        }
    }

    #[test]
    fn fixed_reserved_counts_are_kept_and_priced_exactly_by_either_method() {
        let peaks = [(30.0, 12.0), (80.0, 40.0), (20.0, 5.0), (60.0, 22.0)];
        for method in [Method::Decomposed, Method::Monolithic] {
            let input = two_tiers(&peaks, true, false);
            let set = with_method(method, 0.0);
            let best = solve(&input, &set).expect("feasible");
            let more: Vec<u32> = best.reserved.iter().map(|r| r + 4).collect();
            let fixed = solve_with_reserved(&input, &set, &more).expect("feasible");
            assert_eq!(fixed.reserved, more);
            assert!(total(&input, &fixed) >= total(&input, &best) - 1e-6);
            // The same counts as the optimum give the optimum's cost.
            let same = solve_with_reserved(&input, &set, &best.reserved).expect("feasible");
            assert!((total(&input, &same) - total(&input, &best)).abs() < 1e-6);
            // Slices put back together cost what the whole does, once the
            // reservation is counted per slice.
            let halves: f64 = [0..2, 2..4]
                .into_iter()
                .map(|r| total(&input.slots_in(r.clone()), &fixed.slots_in(r)))
                .sum();
            assert!((halves - total(&input, &fixed)).abs() < 1e-6);
        }
    }

    fn two_tiers(peaks: &[(f64, f64)], with_api: bool, quota: bool) -> Problem {
        let mut input = tiny(peaks.iter().map(|p| p.0).collect());
        let slots = peaks.len();
        let second = peaks.iter().map(|p| p.1).collect::<Vec<f64>>();
        input.tiers.push(TierInput {
            name: "u".into(),
            mean_rps: second.iter().map(|p| p * 0.6).collect(),
            peak_rps: second,
            options: vec![
                ConfigOption {
                    gpu: 0,
                    gpus_per_replica: 4,
                    rps_by_slot: (0..slots).map(|t| 9.0 + t as f64).collect(),
                    entry: 1,
                },
                ConfigOption::uniform(1, 2, 2.1, slots),
            ],
            api: None,
            rules: TierRules::default(),
        });
        if with_api {
            input.tiers[0].api = Some(ApiTerms {
                usd_per_request: 0.0008,
                tokens_per_request: 1000.0,
            });
            input.api_max_tokens_per_minute = Some(300_000.0);
        }
        if !quota {
            input.gpus[1].max_gpus = None;
        }
        input
    }

    proptest::proptest! {
        #![proptest_config(crate::base::testing::proptest_config(24))]

        /// Each method's proven bound is below the other's plan, and both
        /// plans are within the gap of each other.
        #[test]
        fn decomposed_and_monolithic_agree_within_the_gap(
            peaks in proptest::collection::vec((0.0f64..18.0, 0.0f64..30.0), 1..6),
            with_api in proptest::bool::ANY,
            quota in proptest::bool::ANY,
            small_prices in 0u8..3,
        ) {
            let mut base = two_tiers(&peaks, with_api, quota);
            // The small type bought both ways, only reserved, or only rented.
            match small_prices {
                1 => base.gpus[1].on_demand_usd_per_gpu_hour = None,
                2 => base.gpus[1].reserved_usd_per_gpu_hour = None,
                _ => {}
            }
            let gap = 0.01;
            // HiGHS on the bare model: its stopping rule is then a proof.
            let bare = Settings { warm_start: false, ..with_method(Method::Monolithic, gap) };
            let m = solve(&base, &bare);
            let d = solve(&base, &with_method(Method::Decomposed, gap));
            match (m, d) {
                (Ok(m), Ok(d)) => {
                    let (cm, cd) = (total(&base, &m), total(&base, &d));
                    proptest::prop_assert!(m.lower_bound_usd <= cm + 1e-6 && d.lower_bound_usd <= cd + 1e-6);
                    proptest::prop_assert!(m.lower_bound_usd <= cd + 1e-6, "monolithic bound {} over decomposed plan {cd}", m.lower_bound_usd);
                    proptest::prop_assert!(d.lower_bound_usd <= cm + 1e-6, "decomposed bound {} over monolithic plan {cm}", d.lower_bound_usd);
                    if d.status != SolveStatus::TimeLimit && m.status != SolveStatus::TimeLimit {
                        proptest::prop_assert!(cd <= cm * (1.0 + gap) + 1e-6 && cm <= cd * (1.0 + gap) + 1e-6, "{cd} vs {cm}");
                    }
                    proptest::prop_assert!(covered(&base, &d));
                }
                (Err(MilpError::Infeasible), Err(MilpError::Infeasible)) => {}
                (m, d) => proptest::prop_assert!(false, "monolithic {m:?}, decomposed {d:?}"),
            }
        }

        /// More demand never costs less: the larger scenario's plan costs at
        /// least the smaller one's proven bound.
        #[test]
        fn more_demand_never_costs_less_than_the_bound(
            peaks in proptest::collection::vec((0.0f64..18.0, 0.0f64..30.0), 1..6),
            factor in 1.0f64..1.8,
            with_api in proptest::bool::ANY,
        ) {
            let small = two_tiers(&peaks, with_api, false);
            let grown: Vec<(f64, f64)> = peaks.iter().map(|p| (p.0 * factor, p.1 * factor)).collect();
            let large = two_tiers(&grown, with_api, false);
            let set = with_method(Method::Decomposed, 0.01);
            let a = solve(&small, &set).unwrap();
            let b = solve(&large, &set).unwrap();
            proptest::prop_assert!(total(&large, &b) >= a.lower_bound_usd - 1e-6);
            proptest::prop_assert!(b.lower_bound_usd <= total(&large, &b) + 1e-6);
        }
    }

    #[test]
    fn quota_can_make_it_infeasible() {
        for method in [Method::Monolithic, Method::Decomposed] {
            let mut input = tiny(vec![100.0]);
            input.gpus[0].max_gpus = Some(2);
            assert_eq!(
                solve(&input, &with_method(method, 0.01)),
                Err(MilpError::Infeasible)
            );
        }
    }
}
