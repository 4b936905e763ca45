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
}

impl GpuCurve {
    /// USD for `used` GPUs (`None` beyond what may be held).
    pub(crate) fn usd(&self, used: u32) -> Option<f64> {
        if self.cap.is_some_and(|c| used > c) {
            return None;
        }
        let cheap = used.min(self.cheap_gpus);
        let beyond = used - cheap;
        let beyond_usd = match (beyond, self.usd_beyond) {
            (0, _) => 0.0,
            (_, Some(price)) => f64::from(beyond) * price,
            (_, None) => return None,
        };
        Some(f64::from(cheap) * self.cheap_usd + beyond_usd)
    }

    /// Most GPUs that may be held.
    pub(super) fn limit(&self) -> u32 {
        let by_price = if self.usd_beyond.is_some() {
            u32::MAX
        } else {
            self.cheap_gpus
        };
        self.cap.map_or(by_price, |c| c.min(by_price))
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
}

/// The cost curve of every GPU type in a slot under `pricing`.
pub(crate) fn curves(input: &Problem, pricing: Pricing<'_>) -> Vec<GpuCurve> {
    input
        .gpus
        .iter()
        .enumerate()
        .map(|(g, gpu)| {
            let rent = gpu.on_demand_usd_per_gpu_hour.map(|p| p * input.slot_hours);
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
                },
                Pricing::Priced(usd) => {
                    let reserve = gpu.reserved_usd_per_gpu_hour.map(|_| usd[g]);
                    let price = match (reserve, rent) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    GpuCurve {
                        cheap_usd: price.unwrap_or(0.0),
                        cheap_gpus: if price.is_some() { u32::MAX } else { 0 },
                        usd_beyond: None,
                        cap: gpu.max_gpus,
                    }
                }
            }
        })
        .collect()
}
