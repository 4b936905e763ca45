//! What GPUs cost in one slot of the decomposed method: per GPU type a
//! convex curve ([`GpuCurve`]), `cheap_usd` per GPU for the first
//! `cheap_gpus` and `usd_beyond` per GPU after them, up to the type's cap;
//! and the curves a slot reads under its [`Pricing`] (reserved counts held,
//! or a reservation priced per slot by the Lagrangian multipliers).

use super::Problem;

/// What using GPUs of one type costs in the slot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct GpuCurve {
    /// USD per GPU for the first `cheap_gpus` GPUs.
    pub cheap_usd: f64,
    pub cheap_gpus: u32,
    /// USD per GPU beyond `cheap_gpus`; `None`: no more GPUs than that.
    pub usd_beyond: Option<f64>,
    /// Most GPUs of this type in the slot (`max_gpus`).
    pub cap: Option<u32>,
    /// GPUs beyond `cheap_gpus` are bought in whole units of this many
    /// (a node's GPUs; 1: one at a time): `usd` charges the unit's GPUs
    /// whether the replicas fill it or not.
    pub unit: u32,
    /// Under a priced reservation whose price per GPU (`Some`, this) is
    /// above renting: GPUs come in whole rented units at `cheap_usd` a GPU,
    /// and the GPUs that do not fill a unit at this price each (or a whole
    /// unit more, whichever is less; `f64::INFINITY` when the type cannot
    /// be reserved). `None`: `cheap_usd` a GPU, one at a time.
    pub partial_unit_usd: Option<f64>,
}

impl GpuCurve {
    /// USD for `used` GPUs (`None` beyond what may be held), the GPUs
    /// beyond `cheap_gpus` rounded up to whole units.
    pub(crate) fn usd(&self, used: u32) -> Option<f64> {
        if used > self.limit() {
            return None;
        }
        if let Some(partial) = self.partial_unit_usd {
            let unit = self.unit.max(1);
            let (whole, rest) = (used / unit, used % unit);
            let unit_usd = self.cheap_usd * f64::from(unit);
            let rest_usd = if rest == 0 {
                0.0
            } else {
                (partial * f64::from(rest)).min(unit_usd)
            };
            return Some(f64::from(whole) * unit_usd + rest_usd);
        }
        let cheap = used.min(self.cheap_gpus);
        let beyond = (used - cheap).div_ceil(self.unit.max(1)) * self.unit.max(1);
        self.priced(cheap, beyond)
    }

    /// USD for `used` GPUs as if they came one at a time: a lower bound of
    /// [`Self::usd`], which the search prunes with (a unit part-filled so
    /// far may take more replicas at no cost).
    pub(crate) fn usd_at_least(&self, used: u32) -> Option<f64> {
        if self.cap.is_some_and(|c| used > c) {
            return None;
        }
        let cheap = used.min(self.cheap_gpus);
        self.priced(cheap, used - cheap)
    }

    /// What `used` GPUs commit any plan that holds them to: a lower bound
    /// of what it pays for this type, and how many more GPUs it may then
    /// use at no further cost (the rest of a rented unit it part-fills).
    /// With GPUs one at a time, or under a priced reservation whose
    /// part-filled units cost by the GPU ([`Self::partial_unit_usd`]),
    /// that is [`Self::usd_at_least`] and none; else [`Self::usd`], whole
    /// units charged, and the unit's GPUs left. `None` beyond what may be
    /// held.
    pub(crate) fn committed(&self, used: u32) -> Option<(f64, u32)> {
        if self.unit <= 1 || self.partial_unit_usd.is_some() {
            return self.usd_at_least(used).map(|usd| (usd, 0));
        }
        let usd = self.usd(used)?;
        let beyond = used.saturating_sub(self.cheap_gpus);
        let free = beyond.div_ceil(self.unit) * self.unit - beyond;
        Some((usd, free.min(self.limit().saturating_sub(used))))
    }

    /// `cheap` GPUs at the first price and `beyond` at the second.
    fn priced(&self, cheap: u32, beyond: u32) -> Option<f64> {
        let beyond_usd = match (beyond, self.usd_beyond) {
            (0, _) => 0.0,
            (_, Some(price)) => f64::from(beyond) * price,
            (_, None) => return None,
        };
        Some(f64::from(cheap) * self.cheap_usd + beyond_usd)
    }

    /// Most GPUs the replicas may use: the cap (`max_gpus` counts every
    /// GPU held, so beyond `cheap_gpus` only whole units under it), and
    /// without a price beyond `cheap_gpus`, those.
    pub(super) fn limit(&self) -> u32 {
        let by_price = if self.usd_beyond.is_some() {
            u32::MAX
        } else {
            self.cheap_gpus
        };
        let unit = self.unit.max(1);
        let cap = self.cap.map(|c| {
            if c > self.cheap_gpus && unit > 1 {
                self.cheap_gpus + (c - self.cheap_gpus) / unit * unit
            } else {
                c
            }
        });
        cap.map_or(by_price, |c| c.min(by_price))
    }
}

/// What a slot pays for GPUs in the decomposed method.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Pricing<'a> {
    /// `reserved[g]` GPUs are held already (their cost is the horizon's);
    /// GPUs beyond them are rented on demand.
    Reserved(&'a [u32]),
    /// A reserved GPU of type `g` costs `usd[g]` in this slot (the
    /// Lagrangian multipliers); GPUs may also be rented on demand.
    Priced(&'a [f64]),
    /// As `Priced`, but no more than `most[g]` reserved GPUs of type `g`
    /// (a box of reserved counts, `milp::reserved_bound`); beyond them the
    /// slot rents.
    PricedUpTo(&'a [f64], &'a [u32]),
}

/// USD to rent one GPU of `gpu` for a slot of `input` (`None`: not
/// offered on demand).
pub(crate) fn rent_usd(input: &Problem, gpu: &super::GpuType) -> Option<f64> {
    gpu.on_demand_usd_per_gpu_hour.map(|p| p * input.slot_hours)
}

/// Whether a slot holds a GPU of `gpu` cheaper by reserving it at `usd`
/// (a multiplier) than by renting it, or can only reserve it.
pub(crate) fn reserving_is_cheaper(input: &Problem, gpu: &super::GpuType, usd: f64) -> bool {
    gpu.reserved_usd_per_gpu_hour.is_some() && rent_usd(input, gpu).is_none_or(|q| usd < q)
}

/// The cost curve of every GPU type in a slot under `pricing`.
pub(crate) fn curves(input: &Problem, pricing: Pricing<'_>) -> Vec<GpuCurve> {
    input
        .gpus
        .iter()
        .enumerate()
        .map(|(g, gpu)| {
            let rent = rent_usd(input, gpu);
            match pricing {
                Pricing::Reserved(reserved) => GpuCurve {
                    cheap_usd: 0.0,
                    cheap_gpus: if gpu.reserved_usd_per_gpu_hour.is_some() {
                        reserved[g]
                    } else {
                        0
                    },
                    usd_beyond: rent,
                    cap: gpu.max_gpus,
                    unit: gpu.purchase.unit_gpus,
                    partial_unit_usd: None,
                },
                Pricing::PricedUpTo(usd, most) => {
                    if reserving_is_cheaper(input, gpu, usd[g]) {
                        // Reserved up to `most[g]` (a whole number of
                        // units); rented beyond, in whole units. With the
                        // slot's reserved copy a whole number of units too,
                        // this is the slot's least cost: a copy a unit
                        // smaller rents a unit more, at `rent` a GPU
                        // instead of `usd[g]`.
                        GpuCurve {
                            cheap_usd: usd[g],
                            cheap_gpus: most[g],
                            usd_beyond: rent,
                            cap: gpu.max_gpus,
                            unit: gpu.purchase.unit_gpus,
                            partial_unit_usd: None,
                        }
                    } else {
                        // As `Priced`: fewer constraints, a lower curve.
                        priced_curve(input, gpu, usd[g])
                    }
                }
                Pricing::Priced(usd) => priced_curve(input, gpu, usd[g]),
            }
        })
        .collect()
}

/// The curve of `gpu` in a slot whose reserved GPU costs `usd` (a
/// multiplier): the cheaper of reserving and renting a GPU, one at a time,
/// or, where renting in whole units is the cheaper, whole rented units and
/// the GPUs that do not fill one at the reservation's price.
fn priced_curve(input: &Problem, gpu: &super::GpuType, usd: f64) -> GpuCurve {
    let rent = rent_usd(input, gpu);
    let reserve = gpu.reserved_usd_per_gpu_hour.map(|_| usd);
    let price = match (reserve, rent) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    // Rented GPUs come in whole units: where renting is the
    // cheaper way, a part-filled unit costs the whole unit
    // or the reservation's price for its GPUs.
    let unit = gpu.purchase.unit_gpus.max(1);
    let partial_unit_usd = match (reserve, rent) {
        (r, Some(q)) if unit > 1 && r.is_none_or(|p| q < p) => Some(r.unwrap_or(f64::INFINITY)),
        _ => None,
    };
    GpuCurve {
        cheap_usd: price.unwrap_or(0.0),
        cheap_gpus: if price.is_some() { u32::MAX } else { 0 },
        usd_beyond: None,
        cap: gpu.max_gpus,
        unit,
        partial_unit_usd,
    }
}

#[cfg(test)]
mod tests {
    use super::GpuCurve;

    proptest::proptest! {
        #![proptest_config(crate::base::testing::proptest_config(200))]

        /// What the search's bounds read of a curve: GPUs used commit a plan
        /// to at least `committed`'s USD, and any more GPUs cost at least
        /// nothing for the free ones, then the cheap price for the cheap ones
        /// left, then the price beyond, one GPU at a time.
        #[test]
        fn more_gpus_never_cost_less_than_what_the_used_ones_commit_to(
            cheap_usd in 0.0f64..3.0,
            cheap_units in 0u32..4,
            beyond_extra in proptest::option::of(0.0f64..3.0),
            unit in proptest::prop_oneof![proptest::strategy::Just(1u32), proptest::strategy::Just(2u32), proptest::strategy::Just(8u32)],
            cap in proptest::option::of(0u32..40),
            used in 0u32..40,
            more in 0u32..40,
        ) {
            let curve = GpuCurve {
                cheap_usd,
                cheap_gpus: cheap_units * unit,
                usd_beyond: beyond_extra.map(|e| cheap_usd + e),
                cap,
                unit,
                partial_unit_usd: None,
            };
            let Some((paid, free)) = curve.committed(used) else {
                proptest::prop_assert!(curve.usd(used).is_none());
                return Ok(());
            };
            proptest::prop_assert!(paid >= curve.usd_at_least(used).unwrap() - 1e-12);
            proptest::prop_assert!(used + free <= curve.limit());
            let Some(total) = curve.usd(used + more) else {
                return Ok(());
            };
            let held = used + free;
            let cheap_left = curve.cheap_gpus.min(curve.limit()).saturating_sub(held);
            let extra = more.saturating_sub(free);
            let at_cheap = extra.min(cheap_left);
            let beyond = extra - at_cheap;
            let beyond_usd = match (beyond, curve.usd_beyond) {
                (0, _) => 0.0,
                (n, Some(price)) => f64::from(n) * price,
                (_, None) => f64::INFINITY,
            };
            let lower = paid + f64::from(at_cheap) * cheap_usd + beyond_usd;
            proptest::prop_assert!(total >= lower - 1e-9, "{curve:?}: {used} + {more}: {total} < {lower}");
        }
    }
}
