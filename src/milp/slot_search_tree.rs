//! The depth-first branch and bound over one slot ([`search`]): tier by
//! tier and option by option, from the most whole replicas an option can
//! take down to none, the rest of a tier to the API; a branch is cut when a
//! lower bound on covering the rest (each tier's fractional cover, or every
//! GPU at its price beyond the cheap ones) cannot beat the best plan so far,
//! which a plan made greedily bounds from the first node; the search stops
//! at [`NODE_LIMIT`] nodes.

use super::slot_pricing::GpuCurve;
use super::{Problem, TierInput};
use std::cell::RefCell;

/// One slot's answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SlotPlan {
    /// `replicas[k][c]`.
    pub replicas: Vec<Vec<u32>>,
    /// `api[k]`: share of the tier's slot traffic sent to the API.
    pub api: Vec<f64>,
    /// GPUs of each type the replicas occupy.
    pub gpus_used: Vec<u32>,
    /// The slot's cost under the curves, in USD.
    pub cost_usd: f64,
    /// A proven lower bound on the slot's optimum: `cost_usd` when the
    /// search finished, the fractional bound when it stopped at its node
    /// limit.
    pub lower_usd: f64,
}

/// Why the search gave no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SlotOutcome {
    /// No plan covers the slot (caps, no API).
    Infeasible,
    /// The search visited [`NODE_LIMIT`] nodes without proving its answer.
    NodeLimit,
}

/// Nodes one slot's search may visit before it gives up (the caller then
/// solves the slot as a MILP).
pub(crate) const NODE_LIMIT: u64 = 200_000;

/// Relative slack on a coverage row, as the MILP solver's feasibility
/// tolerance allows.
const COVER_TOLERANCE: f64 = 1e-9;

/// How far above the first plan's cost `f` ([`Search::first_plan`]) the
/// search still takes a plan: it takes one that costs less than `f + 1e-9 +
/// FIRST_PLAN_MARGIN × (1 + |f|)` USD (a plan must beat the best before it
/// by 1e-9), so a plan that costs what the first plan costs is still found.
const FIRST_PLAN_MARGIN: f64 = 2e-9;

/// The depth-first search over `tiers` together.
pub(super) fn search(
    input: &Problem,
    curves: &[GpuCurve],
    tiers: &[TierSlot],
    first_plan: bool,
) -> Result<SlotPlan, SlotOutcome> {
    let mut search = Search {
        input,
        curves,
        tiers,
        used: vec![0; curves.len()],
        counts: tiers.iter().map(|k| vec![0; k.order.len()]).collect(),
        api: vec![0.0; tiers.len()],
        best: None,
        first: None,
        nodes: 0,
        segments: RefCell::new(Vec::with_capacity(2 * curves.len() + 1)),
        relevant: RefCell::new(vec![false; curves.len()]),
        free: RefCell::new(vec![0; curves.len()]),
        units: curves.iter().any(|c| c.unit > 1),
        at_no_cost: RefCell::new(vec![0; curves.len()]),
        next_usd: RefCell::new(vec![f64::INFINITY; curves.len()]),
    };
    if first_plan {
        search.first = search.first_plan();
    }
    // The bounds read what the GPUs used commit to: none at the root.
    search.committed_usd();
    let root_bound = tiers
        .first()
        .map_or(0.0, |k| search.rest_bound(0, 0, k.peak_rps.max(0.0)));
    let proven = match search.tier(0, 0.0) {
        Ok(()) => true,
        Err(SlotOutcome::NodeLimit) => false,
        Err(other) => return Err(other),
    };
    // The search takes every plan up to the first plan's cost: when it
    // found none, the first plan is the best it has (proven when the search
    // finished, else kept with the root's bound, as a plan the search found
    // before its node limit is).
    let Some((cost_usd, replicas, api, gpus_used)) = search.best.or(search.first) else {
        return Err(if proven {
            SlotOutcome::Infeasible
        } else {
            SlotOutcome::NodeLimit
        });
    };
    // Back from search order to option order.
    let replicas = tiers
        .iter()
        .zip(replicas)
        .map(|(k, counts)| {
            let mut by_option = vec![0; k.options_in_tier];
            for (i, &c) in k.order.iter().enumerate() {
                by_option[c] = counts[i];
            }
            by_option
        })
        .collect();
    Ok(SlotPlan {
        replicas,
        api,
        gpus_used,
        cost_usd,
        lower_usd: if proven {
            cost_usd
        } else {
            root_bound.min(cost_usd)
        },
    })
}

/// One tier in the slot.
pub(super) struct TierSlot {
    peak_rps: f64,
    /// Options the tier has (some may cover nothing in this slot).
    options_in_tier: usize,
    /// Options in search order (most requests/s per GPU first).
    order: Vec<usize>,
    /// Per option in search order: GPU type, GPUs per replica, requests/s.
    options: Vec<(usize, u32, f64)>,
    /// USD for sending the whole slot's traffic to the API, and API tokens
    /// per minute it takes then; `None` when the tier may not use the API.
    api: Option<(f64, f64)>,
    /// What the bounds read of the options from `i` on, for every `i` up to
    /// `options.len()` (computed once, read at every node).
    from: Vec<Suffix>,
}

/// The options of a tier from one position in search order on, as the
/// bounds read them.
#[derive(Clone)]
struct Suffix {
    /// Per GPU type, the most requests/s per GPU of those options on it (0
    /// when none is).
    density: Vec<f64>,
    /// The GPU types those options use, each once.
    gpus: Vec<usize>,
    /// The least USD per request/s of those options with every GPU at its
    /// price beyond the cheap ones (infinite when there are none).
    full_price_unit: f64,
}

impl Suffix {
    /// The suffixes of `options` under `curves`, in search order: from the
    /// first option on, …, from the last, then the empty one.
    fn all(options: &[(usize, u32, f64)], curves: &[GpuCurve]) -> Vec<Suffix> {
        let mut s = Suffix {
            density: vec![0.0; curves.len()],
            gpus: Vec::new(),
            full_price_unit: f64::INFINITY,
        };
        let mut from = Vec::with_capacity(options.len() + 1);
        from.push(s.clone());
        for &(g, p, rps) in options.iter().rev() {
            s.density[g] = s.density[g].max(rps / f64::from(p));
            if !s.gpus.contains(&g) {
                s.gpus.push(g);
            }
            let curve = &curves[g];
            let beyond = curve.usd_beyond.unwrap_or(curve.cheap_usd);
            s.full_price_unit = s.full_price_unit.min(beyond * f64::from(p) / rps);
            from.push(s.clone());
        }
        from.reverse();
        from
    }
}

impl TierSlot {
    /// The tier's options in slot `t`, without those another option on the
    /// same GPU type beats (no more GPUs per replica, at least as many
    /// requests/s; of equals, the first), cheapest per request/s first under
    /// `curves` for a first GPU, then most requests/s per GPU.
    pub(super) fn new(tier: &TierInput, t: usize, slot_hours: f64, curves: &[GpuCurve]) -> Self {
        let peak_rps = tier.peak_rps.get(t).copied().unwrap_or(0.0);
        let o = &tier.options;
        let beats = |a: usize, b: usize| {
            o[a].gpu == o[b].gpu
                && o[a].gpus_per_replica <= o[b].gpus_per_replica
                && o[a].rps(t) >= o[b].rps(t)
                && (o[a].gpus_per_replica < o[b].gpus_per_replica
                    || o[a].rps(t) > o[b].rps(t)
                    || a < b)
        };
        let mut order: Vec<usize> = (0..o.len())
            .filter(|&c| o[c].rps(t) > 0.0 && !(0..o.len()).any(|d| d != c && beats(d, c)))
            .collect();
        let density = |c: usize| o[c].rps(t) / f64::from(o[c].gpus_per_replica);
        let first_gpu_usd = |c: usize| {
            let curve = &curves[o[c].gpu];
            if curve.cheap_gpus > 0 {
                curve.cheap_usd
            } else {
                curve.usd_beyond.unwrap_or(f64::INFINITY)
            }
        };
        let per_rps = |c: usize| first_gpu_usd(c) / density(c);
        order.sort_by(|&a, &b| {
            per_rps(a)
                .total_cmp(&per_rps(b))
                .then(density(b).total_cmp(&density(a)))
                .then(a.cmp(&b))
        });
        let options: Vec<(usize, u32, f64)> = order
            .iter()
            .map(|&c| {
                let o = &tier.options[c];
                (o.gpu, o.gpus_per_replica, o.rps(t))
            })
            .collect();
        let api = tier.api.map(|terms| {
            let mean = tier.mean_rps.get(t).copied().unwrap_or(0.0);
            (
                mean * slot_hours * 3600.0 * terms.usd_per_request,
                peak_rps * terms.tokens_per_request * 60.0,
            )
        });
        let from = Suffix::all(&options, curves);
        TierSlot {
            peak_rps,
            options_in_tier: tier.options.len(),
            order,
            options,
            api,
            from,
        }
    }
}

type Best = (f64, Vec<Vec<u32>>, Vec<f64>, Vec<u32>);

struct Search<'a> {
    input: &'a Problem,
    curves: &'a [GpuCurve],
    tiers: &'a [TierSlot],
    used: Vec<u32>,
    /// `[k][i]` in search order.
    counts: Vec<Vec<u32>>,
    api: Vec<f64>,
    best: Option<Best>,
    /// A plan made before the search ([`Self::first_plan`]), which bounds
    /// it from the start.
    first: Option<Best>,
    nodes: u64,
    /// Scratch space of [`Self::tier_bound`] (USD per request/s, requests/s).
    segments: RefCell<Vec<(f64, f64)>>,
    /// Scratch space of [`Self::rest_bound`]: the GPU types it discounts.
    relevant: RefCell<Vec<bool>>,
    /// Per GPU type, the GPUs the rest may use at no further cost (the
    /// rest of a rented unit the GPUs used so far part-fill), as
    /// [`Self::committed_usd`] last found them; the bounds read them.
    free: RefCell<Vec<u32>>,
    /// Whether some GPU type comes in units of several GPUs (only then do
    /// the bounds read `free`, `at_no_cost` and `next_usd`).
    units: bool,
    /// Per GPU type, the GPUs beyond those used that the rest may use at
    /// no further cost (the free ones and the cheap ones left at no price),
    /// and the least the rest pays for any GPU beyond them (infinite when
    /// there is none), as [`Self::committed_usd`] last found them.
    at_no_cost: RefCell<Vec<u32>>,
    next_usd: RefCell<Vec<f64>>,
}

impl Search<'_> {
    /// What a plan must cost less than (by 1e-9) to be taken, and a branch
    /// must be able to cost less than to be searched: the best plan the
    /// search found, or the first plan's cost and its margin.
    fn best_usd(&self) -> f64 {
        let found = self.best.as_ref().map_or(f64::INFINITY, |b| b.0);
        let first = self.first.as_ref().map_or(f64::INFINITY, |b| {
            b.0 + FIRST_PLAN_MARGIN * (1.0 + b.0.abs())
        });
        found.min(first)
    }

    fn gpu_usd(&self) -> Option<f64> {
        self.curves
            .iter()
            .zip(&self.used)
            .map(|(c, &u)| c.usd(u))
            .sum()
    }

    /// A lower bound of what the GPUs used so far cost in any plan that
    /// holds them, and (into `free`) the GPUs the rest may then use at no
    /// further cost ([`GpuCurve::committed`]).
    fn committed_usd(&self) -> Option<f64> {
        if !self.units {
            return self
                .curves
                .iter()
                .zip(&self.used)
                .map(|(c, &u)| c.usd_at_least(u))
                .sum();
        }
        let mut free = self.free.borrow_mut();
        let mut at_no_cost = self.at_no_cost.borrow_mut();
        let mut next_usd = self.next_usd.borrow_mut();
        let mut usd = 0.0;
        for (g, (c, &u)) in self.curves.iter().zip(&self.used).enumerate() {
            let (paid, left) = c.committed(u)?;
            usd += paid;
            free[g] = left;
            let unpriced = if c.cheap_usd == 0.0 {
                c.cheap_gpus.min(c.limit()).saturating_sub(u + left)
            } else {
                0
            };
            at_no_cost[g] = left + unpriced;
            next_usd[g] = (u + at_no_cost[g])
                .checked_add(1)
                .and_then(|more| c.usd(more))
                .map_or(f64::INFINITY, |usd| usd - paid);
        }
        Some(usd)
    }

    /// Starts tier `k` (all earlier tiers are decided); `api_usd` is what
    /// they send to the API.
    fn tier(&mut self, k: usize, api_usd: f64) -> Result<(), SlotOutcome> {
        if k == self.tiers.len() {
            self.leaf(api_usd);
            return Ok(());
        }
        let peak = self.tiers[k].peak_rps;
        if peak <= 0.0 {
            self.api[k] = 0.0;
            return self.tier(k + 1, api_usd);
        }
        self.option(k, 0, peak, api_usd)
    }

    /// Chooses the count of option `i` of tier `k` with `residual` requests/s
    /// of the tier still to cover.
    fn option(
        &mut self,
        k: usize,
        i: usize,
        residual: f64,
        api_usd: f64,
    ) -> Result<(), SlotOutcome> {
        self.nodes += 1;
        if self.nodes > NODE_LIMIT {
            return Err(SlotOutcome::NodeLimit);
        }
        let tier = &self.tiers[k];
        let covered = residual <= tier.peak_rps * COVER_TOLERANCE;
        if covered || i == tier.options.len() {
            // The rest of the tier goes to the API.
            let share = if covered {
                0.0
            } else {
                residual / tier.peak_rps
            };
            let extra = match (share > 0.0, tier.api) {
                (false, _) => 0.0,
                (true, Some((usd, _))) => share * usd,
                (true, None) => return Ok(()),
            };
            self.api[k] = share;
            let result = self.tier(k + 1, api_usd + extra);
            for c in &mut self.counts[k][i..] {
                *c = 0;
            }
            return result;
        }
        let Some(so_far) = self.committed_usd() else {
            return Ok(());
        };
        if so_far + api_usd + self.rest_bound(k, i, residual) >= self.best_usd() - 1e-9 {
            return Ok(());
        }
        let (g, p, rps) = tier.options[i];
        let needed = (residual / rps * (1.0 - COVER_TOLERANCE)).ceil().max(0.0) as u32;
        let room = self.curves[g].limit().saturating_sub(self.used[g]) / p;
        let most = needed.min(room);
        for n in (0..=most).rev() {
            self.counts[k][i] = n;
            self.used[g] += n * p;
            let result = self.option(k, i + 1, residual - f64::from(n) * rps, api_usd);
            self.used[g] -= n * p;
            result?;
        }
        self.counts[k][i] = 0;
        Ok(())
    }

    fn leaf(&mut self, api_usd: f64) {
        let Some(cost) = self.plan_usd(api_usd) else {
            return;
        };
        if cost < self.best_usd() - 1e-9 {
            self.best = Some(self.held(cost));
        }
    }

    /// The plan the search holds, at `cost`.
    fn held(&self, cost: f64) -> Best {
        (
            cost,
            self.counts.clone(),
            self.api.clone(),
            self.used.clone(),
        )
    }

    /// The cost of the plan the search holds (every tier decided), with
    /// `api_usd` sent to the API; `None` when it breaks a cap or the API's
    /// rate limit.
    fn plan_usd(&self, api_usd: f64) -> Option<f64> {
        if let Some(limit) = self.input.api_max_tokens_per_minute {
            let tokens: f64 = self
                .tiers
                .iter()
                .zip(&self.api)
                .map(|(k, &share)| k.api.map_or(0.0, |(_, tok)| share * tok))
                .sum();
            if tokens > limit * (1.0 + 1e-9) {
                return None;
            }
        }
        Some(self.gpu_usd()? + api_usd)
    }

    /// A plan made greedily, before the search, so that it prunes from the
    /// first node: each tier in turn takes the cheapest means per request/s
    /// first (an option's GPUs at their first price while it lasts, then
    /// beyond it, or the API for all that is left), in whole replicas, as
    /// many as the rest of its peak needs and the GPUs left allow. `None`
    /// when that leaves a tier uncovered or breaks a limit. Without it the
    /// depth-first search tries the most replicas of the first option
    /// first, and with many options of a few requests/s each it can reach
    /// its node limit before it tries sending the tier to a cheaper API.
    fn first_plan(&mut self) -> Option<Best> {
        let mut api_usd = 0.0;
        let mut covered = true;
        for k in 0..self.tiers.len() {
            let tier = &self.tiers[k];
            let peak = tier.peak_rps;
            if peak <= 0.0 {
                continue;
            }
            // (USD per request/s, the option or the API, its first price)
            let mut means: Vec<(f64, Option<usize>, bool)> = Vec::new();
            for (i, &(g, p, rps)) in tier.options.iter().enumerate() {
                let curve = &self.curves[g];
                let per_rps = f64::from(p) / rps;
                if curve.cheap_gpus > 0 {
                    means.push((curve.cheap_usd * per_rps, Some(i), true));
                }
                if let Some(usd) = curve.usd_beyond {
                    means.push((usd * per_rps, Some(i), false));
                }
            }
            if let Some((usd, _)) = tier.api {
                means.push((usd / peak, None, false));
            }
            means.sort_by(|a, b| a.0.total_cmp(&b.0));
            let mut residual = peak;
            for (_, option, first_price) in means {
                if residual <= peak * COVER_TOLERANCE {
                    break;
                }
                let Some(i) = option else {
                    self.api[k] = residual / peak;
                    api_usd += self.api[k] * tier.api.map_or(0.0, |(usd, _)| usd);
                    residual = 0.0;
                    break;
                };
                let (g, p, rps) = tier.options[i];
                let curve = &self.curves[g];
                let top = if first_price {
                    curve.cheap_gpus.min(curve.limit())
                } else {
                    curve.limit()
                };
                let needed = (residual / rps * (1.0 - COVER_TOLERANCE)).ceil().max(0.0) as u32;
                let n = needed.min(top.saturating_sub(self.used[g]) / p);
                self.counts[k][i] += n;
                self.used[g] += n * p;
                residual -= f64::from(n) * rps;
            }
            covered &= residual <= peak * COVER_TOLERANCE;
        }
        let plan = covered
            .then(|| self.plan_usd(api_usd))
            .flatten()
            .map(|cost| self.held(cost));
        self.counts.iter_mut().flatten().for_each(|c| *c = 0);
        self.used.iter_mut().for_each(|u| *u = 0);
        self.api.iter_mut().for_each(|a| *a = 0.0);
        plan
    }

    /// A lower bound on what covering the rest costs: tier `k` from option
    /// `i` with `residual` left, and every later tier whole. The larger of
    /// two: (a) each tier as a fractional cover on its own, each free to use
    /// all the cheap GPUs left (so the sum never exceeds the true cost); (b)
    /// every GPU at its price beyond the cheap ones, less what the cheap ones
    /// left could save (`φ(U + Δ) − φ(U) ≥ b Δ − (b − a) × cheap left`) and
    /// what the free GPUs of a part-filled unit save (`b × free`).
    fn rest_bound(&self, k: usize, i: usize, residual: f64) -> f64 {
        let mut separate = self.tier_bound(k, i, residual);
        let mut relevant = self.relevant.borrow_mut();
        relevant.iter_mut().for_each(|r| *r = false);
        let free = self.free.borrow();
        let mut at_full_price = self.full_price_bound(k, i, residual, &mut relevant);
        for j in k + 1..self.tiers.len() {
            let peak = self.tiers[j].peak_rps;
            separate += self.tier_bound(j, 0, peak);
            at_full_price += self.full_price_bound(j, 0, peak, &mut relevant);
        }
        for (g, curve) in self.curves.iter().enumerate() {
            if relevant[g] {
                let beyond = curve.usd_beyond.unwrap_or(curve.cheap_usd);
                let cheap_left = curve
                    .cheap_gpus
                    .min(curve.limit())
                    .saturating_sub(self.used[g]);
                at_full_price -= (beyond - curve.cheap_usd).max(0.0) * f64::from(cheap_left);
                at_full_price -= beyond * f64::from(free[g]);
            }
        }
        let mut bound = separate.max(at_full_price);
        if self.units {
            bound = bound.max(self.step_bound(k, i, residual));
            for j in k + 1..self.tiers.len() {
                bound = bound.max(self.step_bound(j, 0, self.tiers[j].peak_rps));
            }
        }
        bound
    }

    /// At least one step beyond what costs nothing more: when `residual`
    /// of tier `k` is more than the GPUs at no further cost could cover (at
    /// the best requests/s per GPU of its options from `i` on), covering it
    /// costs at least the least step of a GPU type those options use (a
    /// whole rented unit, or one GPU where they come one at a time) or the
    /// API for the excess, whichever is less. One tier's alone (several
    /// tiers may share the step), so the rest's bound takes the largest.
    fn step_bound(&self, k: usize, i: usize, residual: f64) -> f64 {
        let tier = &self.tiers[k];
        let suffix = &tier.from[i];
        let at_no_cost = self.at_no_cost.borrow();
        let next_usd = self.next_usd.borrow();
        let mut covered = 0.0;
        let mut step = f64::INFINITY;
        for &g in &suffix.gpus {
            covered += f64::from(at_no_cost[g]) * suffix.density[g];
            step = step.min(next_usd[g]);
        }
        let excess = residual - covered;
        if excess <= tier.peak_rps * COVER_TOLERANCE {
            return 0.0;
        }
        let api = tier
            .api
            .map_or(f64::INFINITY, |(usd, _)| excess * usd / tier.peak_rps);
        let least = step.min(api);
        if least.is_finite() {
            least
        } else {
            0.0
        }
    }

    /// `residual` of tier `k` covered at the cheapest USD per request/s of
    /// its options from `i` on, every GPU at its price beyond the cheap
    /// ones, or of the API; marks the GPU types those options use.
    fn full_price_bound(&self, k: usize, i: usize, residual: f64, relevant: &mut [bool]) -> f64 {
        let tier = &self.tiers[k];
        if residual <= tier.peak_rps * COVER_TOLERANCE {
            return 0.0;
        }
        let suffix = &tier.from[i];
        for &g in &suffix.gpus {
            relevant[g] = true;
        }
        let unit = tier
            .api
            .map_or(f64::INFINITY, |(usd, _)| usd / tier.peak_rps)
            .min(suffix.full_price_unit);
        if unit.is_finite() {
            residual * unit
        } else {
            0.0
        }
    }

    /// Fractional cover of `residual` by tier `k`'s options from `i` on and
    /// the API: per GPU type, the free GPUs of a part-filled unit, the cheap
    /// GPUs left and those beyond, each at the best requests/s per GPU of
    /// the tier's options on that type.
    fn tier_bound(&self, k: usize, i: usize, residual: f64) -> f64 {
        let tier = &self.tiers[k];
        if residual <= tier.peak_rps * COVER_TOLERANCE {
            return 0.0;
        }
        // (USD per request/s, requests/s available)
        let mut segments = self.segments.borrow_mut();
        segments.clear();
        let free = self.free.borrow();
        for (g, curve) in self.curves.iter().enumerate() {
            let density = tier.from[i].density[g];
            if density <= 0.0 {
                continue;
            }
            let used = self.used[g];
            let limit = curve.limit();
            if free[g] > 0 {
                segments.push((0.0, f64::from(free[g]) * density));
            }
            let cheap_left = curve.cheap_gpus.min(limit).saturating_sub(used);
            if cheap_left > 0 {
                segments.push((curve.cheap_usd / density, f64::from(cheap_left) * density));
            }
            if let Some(price) = curve.usd_beyond {
                let beyond_left = limit.saturating_sub(used.max(curve.cheap_gpus) + free[g]);
                if beyond_left > 0 {
                    segments.push((price / density, f64::from(beyond_left) * density));
                }
            }
        }
        if let Some((usd, _)) = tier.api {
            segments.push((usd / tier.peak_rps, tier.peak_rps));
        }
        segments.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut left = residual;
        let mut usd = 0.0;
        for &(unit, size) in segments.iter() {
            let take = left.min(size);
            usd += take * unit;
            left -= take;
            if left <= tier.peak_rps * COVER_TOLERANCE {
                return usd;
            }
        }
        f64::INFINITY
    }
}

#[cfg(test)]
mod tests {
    use super::{GpuCurve, Suffix};

    fn curve(cheap_usd: f64, cheap_gpus: u32, usd_beyond: Option<f64>) -> GpuCurve {
        GpuCurve {
            cheap_usd,
            cheap_gpus,
            usd_beyond,
            cap: None,
            unit: 1,
            partial_unit_usd: None,
        }
    }

    #[test]
    fn each_suffix_holds_what_a_scan_of_its_options_finds() {
        let curves = [
            curve(1.2, 4, Some(1.85)),
            curve(2.0, u32::MAX, None),
            curve(0.0, 0, Some(3.99)),
        ];
        // (GPU type, GPUs per replica, requests/s), in search order.
        let options = [
            (1, 2, 3.0),
            (0, 1, 1.1),
            (2, 4, 9.5),
            (0, 2, 2.6),
            (1, 1, 1.0),
        ];
        let from = Suffix::all(&options, &curves);
        assert_eq!(from.len(), options.len() + 1);
        for (i, suffix) in from.iter().enumerate() {
            let rest = &options[i..];
            for g in 0..curves.len() {
                let density = rest
                    .iter()
                    .filter(|o| o.0 == g)
                    .map(|o| o.2 / f64::from(o.1))
                    .fold(0.0_f64, f64::max);
                assert_eq!(suffix.density[g], density, "suffix {i}, GPU {g}");
                assert_eq!(
                    suffix.gpus.contains(&g),
                    rest.iter().any(|o| o.0 == g),
                    "suffix {i}, GPU {g}"
                );
            }
            let unit = rest
                .iter()
                .map(|&(g, p, rps)| {
                    let c = &curves[g];
                    c.usd_beyond.unwrap_or(c.cheap_usd) * f64::from(p) / rps
                })
                .fold(f64::INFINITY, f64::min);
            assert_eq!(suffix.full_price_unit, unit, "suffix {i}");
        }
        assert!(from[options.len()].gpus.is_empty());
        assert_eq!(from[options.len()].full_price_unit, f64::INFINITY);
    }
}
