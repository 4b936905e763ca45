//! The purchase a buyer signs for, in one block: what to reserve (type,
//! count, term, commitment per year), what to rent (the most in one slot and
//! the GPU-hours), what goes to the API, the cost per year (and over the
//! term when one is stated), and how each tier is deployed. Every figure is
//! read from the plan, its commitment and its prices; the year repeats the
//! horizon's pattern.

use crate::money::commitment::Commitment;
use crate::plan::Plan;
use crate::profiles::Calibration;
use serde::Serialize;
use std::collections::BTreeMap;

/// Hours in a year (365 days), as the commitment counts them.
pub(crate) const HOURS_PER_YEAR: f64 = 8_760.0;

/// GPUs reserved of one type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reserve {
    pub gpu_type: String,
    pub gpus: u32,
    /// The reservation's terms, as the scenario states them.
    pub term: String,
    pub usd_per_year: f64,
    /// What the GPU profile's figures were fitted to.
    pub calibration: Calibration,
}

/// GPUs rented on demand of one type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rent {
    pub gpu_type: String,
    /// The most rented in any one slot.
    pub peak_gpus: u32,
    /// GPU-hours rented over the horizon, and per 730-hour month at the
    /// horizon's pattern.
    pub gpu_hours: f64,
    pub gpu_hours_per_month: f64,
    /// What the GPU profile's figures were fitted to.
    pub calibration: Calibration,
}

/// How one configuration of a tier is deployed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Deployment {
    pub config: String,
    pub gpu_type: String,
    pub tensor_parallel: u32,
    /// Expert parallelism and data-parallel attention (1 when unused).
    #[serde(skip_serializing_if = "crate::capacity::config::is_one")]
    pub expert_parallel: u32,
    #[serde(skip_serializing_if = "crate::capacity::config::is_one")]
    pub attention_dp: u32,
    pub max_batch: u32,
    pub max_batched_tokens: u32,
    pub precision: String,
    pub engine: String,
    /// Speculative decoding's method, when the configuration runs it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speculative: Option<String>,
    /// A disaggregated unit's shape (`xPyD`), when it is one: then
    /// `max_replicas` counts units.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disaggregated: Option<crate::scenario::pd_ratio::PdRatio>,
    /// Share of the tier's requests it serves, and the most replicas it
    /// runs in one slot.
    pub share: f64,
    pub max_replicas: u32,
}

/// The plan's cost with another count of one reserved GPU type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Level {
    pub gpus: u32,
    /// The MILP's objective on the basis (with growth, the term's MILP:
    /// one horizon per month, not the term's total).
    pub milp_usd: f64,
    /// `usd` over the chosen level's, less 1.
    pub vs_chosen: f64,
}

/// How the cost moves with one reserved GPU type's count, everything else
/// re-planned (`solve::levels`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReservationLevels {
    pub gpu_type: String,
    /// What `usd` covers: the horizon, or the term with growth.
    pub basis: String,
    pub chosen_gpus: u32,
    /// GPUs between levels (the smallest replica on the type, or its
    /// purchase unit if larger).
    pub step_gpus: u32,
    pub levels: Vec<Level>,
    /// Whether another level costs within 1% of the chosen one.
    pub near_tie: bool,
    /// The fewest and most GPUs among the levels within 1%.
    pub fewest_within: u32,
    pub most_within: u32,
}

/// The purchase the whole solve returns with one seed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeedRun {
    /// The replay's seed (`simulation.seed`).
    pub seed: u64,
    /// The capacity searches' seed (`simulation.capacity_seed`).
    pub capacity_seed: u64,
    pub reserved: BTreeMap<String, u32>,
    /// Over the horizon, and over the term when one is stated.
    pub usd: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub term_usd: Option<f64>,
    pub meets_targets: bool,
}

/// The purchase over several seeds (`simulation.seed_band`): each seed's,
/// the spread of the cost, and whether they reserve the same.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeedBand {
    pub runs: Vec<SeedRun>,
    pub usd_min: f64,
    pub usd_max: f64,
    /// `usd_max / usd_min - 1`.
    pub spread: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub term_spread: Option<f64>,
    pub same_reservation: bool,
    /// The reservation cheapest over every seed's plan, and each seed's
    /// cost with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub common: Option<CommonReservation>,
}

/// One reservation for every seed of a band: of the seeds' own
/// reservations, the one whose mean cost over the seeds' MILPs (each
/// re-planned with it) is lowest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CommonReservation {
    pub reserved: BTreeMap<String, u32>,
    /// What the comparison covers: the horizon, or the term with growth.
    pub basis: String,
    /// Per seed, in the band's order: its MILP's cost with this
    /// reservation over its cost with its own, less 1.
    pub vs_own: Vec<f64>,
    pub worst_vs_own: f64,
}

impl SeedBand {
    /// The band of `runs` (the solve's own seed first).
    pub fn of(runs: Vec<SeedRun>) -> SeedBand {
        let spread_of = |v: &[f64]| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (lo, hi, if lo > 0.0 { hi / lo - 1.0 } else { 0.0 })
        };
        let usd: Vec<f64> = runs.iter().map(|r| r.usd).collect();
        let (usd_min, usd_max, spread) = spread_of(&usd);
        let terms: Option<Vec<f64>> = runs.iter().map(|r| r.term_usd).collect();
        let same_reservation = runs.windows(2).all(|w| w[0].reserved == w[1].reserved);
        SeedBand {
            term_spread: terms.map(|t| spread_of(&t).2),
            usd_min,
            usd_max,
            spread,
            same_reservation,
            runs,
            common: None,
        }
    }
}

/// The purchase.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Purchase {
    pub reserve: Vec<Reserve>,
    pub rent: Vec<Rent>,
    /// Share of all requests sent to the API, and what it costs over the
    /// horizon.
    pub api_share: f64,
    pub api_usd: f64,
    /// Reserved for the year, plus on demand, spot and API at the horizon's
    /// rate × (8,760 h / horizon hours).
    pub usd_per_year: f64,
    pub reserved_usd_per_year: f64,
    pub rented_usd_per_year: f64,
    /// The part of `rented_usd_per_year` that is spot GPUs.
    pub spot_usd_per_year: f64,
    pub api_usd_per_year: f64,
    /// With `[commitment] term_months`: the months and the whole term's cost
    /// (with growth, the projection's total; else the year's rate over the
    /// term).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub term_months: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub term_usd: Option<f64>,
    /// With growth or renewals, the term's cost year by year (the
    /// projection's, `commitment.growth.years`) and per year on average.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub term_years: Vec<crate::money::growth::YearCost>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub term_usd_per_year: Option<f64>,
    /// Tier → its deployments, by share.
    pub deployment: BTreeMap<String, Vec<Deployment>>,
    /// The seed of the replay that checked the plan (`simulation.seed`).
    pub seed: u64,
    /// The seed of the capacity searches' streams the figures come from
    /// (`simulation.capacity_seed`).
    pub capacity_seed: u64,
    /// GPU types the plan holds whose figures were not measured on them
    /// (published throughput or datasheet only).
    pub unmeasured_gpus: Vec<String>,
    /// Per reserved GPU type, the cost at a few counts around the chosen one.
    pub reservation_levels: Vec<ReservationLevels>,
    /// Why `reservation_levels` is empty when it was not computed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub levels_not_priced: Option<String>,
    /// With `simulation.seed_band`, the purchase with each seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed_band: Option<SeedBand>,
    /// The reservation and cost at the confidence band's pessimistic edge
    /// (the steps slower by the profiles' measured error); `None` when not
    /// computed (a sweep's rows, a seed band's runs, a plan on no GPU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub band_edge: Option<super::band::BandEdge>,
    /// A pooled fleet's purchase by model (`[[models]]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool: Option<super::pool::Pool>,
}

impl Purchase {
    /// ` (spot S of it)` after the rented figure, where spot GPUs are part
    /// of it; nothing otherwise.
    pub(crate) fn spot_part(&self, usd: impl Fn(f64) -> String) -> String {
        if self.spot_usd_per_year > 0.0 {
            format!(" (spot {} of it)", usd(self.spot_usd_per_year))
        } else {
            String::new()
        }
    }

    /// The purchase of `plan`; `calibration` names each GPU type's basis.
    pub fn of(
        plan: &Plan,
        commitment: &Commitment,
        (seed, capacity_seed): (u64, u64),
        calibration: &BTreeMap<String, Calibration>,
    ) -> Purchase {
        let basis = |gpu: &str| calibration.get(gpu).copied().unwrap_or_default();
        let reserve = commitment
            .gpu_types
            .iter()
            .map(|(gpu, line)| Reserve {
                gpu_type: gpu.clone(),
                gpus: line.gpus,
                term: line.term.clone(),
                usd_per_year: line.usd_per_year,
                calibration: basis(gpu),
            })
            .collect();
        let mut rent: Vec<Rent> = Vec::new();
        let mut types: Vec<&String> = plan.on_demand.iter().flat_map(|s| s.keys()).collect();
        types.sort();
        types.dedup();
        for gpu in types {
            let counts: Vec<u32> = plan
                .on_demand
                .iter()
                .map(|s| s.get(gpu).copied().unwrap_or(0))
                .collect();
            let peak = counts.iter().copied().max().unwrap_or(0);
            if peak == 0 {
                continue;
            }
            let hours = counts.iter().map(|&n| f64::from(n)).sum::<f64>() * plan.slot_hours;
            rent.push(Rent {
                gpu_type: gpu.clone(),
                peak_gpus: peak,
                gpu_hours: hours,
                gpu_hours_per_month: hours / plan.horizon_hours * 730.0,
                calibration: basis(gpu),
            });
        }
        let per_year = HOURS_PER_YEAR / plan.horizon_hours.max(1e-9);
        let c = &plan.costs;
        let rented_usd_per_year = (c.on_demand_usd + c.spot_usd) * per_year;
        let api_usd_per_year = c.api_usd * per_year;
        let reserved_usd_per_year = commitment.usd_per_year;
        let term_months = commitment.term_months;
        let term_usd = match (&commitment.growth, term_months) {
            (Some(g), _) => Some(g.total_usd),
            (None, Some(m)) => Some(
                (reserved_usd_per_year + rented_usd_per_year + api_usd_per_year) * f64::from(m)
                    / 12.0,
            ),
            (None, None) => None,
        };
        let deployment = plan
            .tiers
            .iter()
            .map(|(name, t)| {
                let mut d: Vec<Deployment> = t
                    .configurations
                    .iter()
                    .filter(|u| u.share > 0.0)
                    .map(|u| Deployment {
                        config: u.label.clone(),
                        gpu_type: u.config.gpu_type.clone(),
                        tensor_parallel: u.config.tensor_parallel,
                        expert_parallel: u.config.expert_parallel,
                        attention_dp: u.config.attention_dp,
                        max_batch: u.config.max_batch,
                        max_batched_tokens: u.config.max_batched_tokens,
                        precision: u.config.precision.as_str().to_string(),
                        engine: u.config.engine.clone(),
                        speculative: u.config.speculative.clone(),
                        disaggregated: u.config.disaggregated,
                        share: u.share,
                        max_replicas: u.replicas_by_slot.iter().copied().max().unwrap_or(0),
                    })
                    .collect();
                d.sort_by(|a, b| b.share.total_cmp(&a.share).then(a.config.cmp(&b.config)));
                (name.clone(), d)
            })
            .collect();
        let reserve: Vec<Reserve> = reserve;
        let mut unmeasured: Vec<String> = reserve
            .iter()
            .map(|r| (&r.gpu_type, r.calibration))
            .chain(rent.iter().map(|r| (&r.gpu_type, r.calibration)))
            .filter(|(_, c)| !c.measured())
            .map(|(g, _)| g.clone())
            .collect();
        unmeasured.sort();
        unmeasured.dedup();
        Purchase {
            unmeasured_gpus: unmeasured,
            reserve,
            rent,
            api_share: plan.api_share,
            api_usd: c.api_usd,
            usd_per_year: reserved_usd_per_year + rented_usd_per_year + api_usd_per_year,
            reserved_usd_per_year,
            rented_usd_per_year,
            spot_usd_per_year: c.spot_usd * per_year,
            api_usd_per_year,
            term_months,
            term_usd,
            term_years: commitment
                .growth
                .as_ref()
                .map_or_else(Vec::new, |g| g.years.clone()),
            term_usd_per_year: commitment.growth.as_ref().map(|g| g.average_usd_per_year),
            deployment,
            seed,
            capacity_seed,
            reservation_levels: Vec::new(),
            levels_not_priced: None,
            seed_band: None,
            band_edge: None,
            pool: None,
        }
    }
}
