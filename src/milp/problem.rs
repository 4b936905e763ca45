//! The problem the MILP solves: GPU types and how they are bought, tiers
//! with their demand, options and rules, and the slots they span.

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
/// how it is solved ([`Settings`](super::Settings)).
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
    /// the reserved counts ([`Self::links_slots`]), no minimum rental and
    /// no tier rule is in force (the slot search models neither); purchase
    /// units it does.
    pub fn decomposable(&self) -> bool {
        // Purchase units are whole numbers of GPUs per slot and in the
        // reserved counts, which the slot search and the outer search
        // price; minimum rentals link slots, and the tier rules are the
        // whole model's.
        !self.links_slots()
            && self.gpus.iter().all(|g| g.purchase.min_rental_slots <= 1)
            && self.tiers.iter().all(|t| t.rules == TierRules::default())
    }
}
