//! A price for complexity: each deployment a tier runs (a configuration,
//! whatever its batch cap) and each GPU vendor the plan runs on carries an
//! operating cost, so that a deployment serving a sliver of a tier stays
//! only when it saves more than it costs to run. The MILP itself stays
//! slot by slot (a binary per deployment would link every slot); the
//! solution is then pruned: a tier's options that differ only in batch cap
//! keep one cap (the cheapest such plan), and while dropping one of a
//! tier's deployments (or a vendor's last) lowers the cost plus the
//! operating prices, the best such drop is taken and the problem solved
//! again without it.

use super::{solve, total, MilpError, Problem, Settings, Solution};

/// Which deployment each option is, which vendor each GPU type is, and
/// the operating prices over the horizon.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Deployments {
    /// `group[k][c]`: tier `k`'s option `c`'s deployment (options of one
    /// deployment differ only in batch cap).
    pub group: Vec<Vec<usize>>,
    /// `vendor[g]`: GPU type `g`'s vendor.
    pub vendor: Vec<usize>,
    /// USD over the horizon per deployment a tier runs.
    pub usd_per_deployment: f64,
    /// USD over the horizon per vendor the plan runs on.
    pub usd_per_vendor: f64,
}

/// One deployment the pruned plan runs: tier, deployment, and what running
/// without it would cost more (GPUs and API) where it can be done without.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Kept {
    pub tier: usize,
    pub group: usize,
    /// GPU and API cost without it minus with it (`None`: the tier has no
    /// other way to be served).
    pub saving_usd: Option<f64>,
}

/// What pruning did.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Pruned {
    /// Each deployment the plan runs, with the saving it buys.
    pub kept: Vec<Kept>,
    /// `(tier, group)` of each deployment dropped, in order.
    pub dropped: Vec<(usize, usize)>,
    /// `(tier, option)` of each batch cap given up for another of its
    /// deployment.
    pub caps_merged: Vec<(usize, usize)>,
    /// `allowed[k][c]`: whether the pruned plan may use tier `k`'s option
    /// `c` (the next round starts from it).
    pub allowed: Vec<Vec<bool>>,
}

impl Deployments {
    /// The deployments `s` runs, per tier.
    fn used(&self, input: &Problem, s: &Solution) -> Vec<Vec<usize>> {
        input
            .tiers
            .iter()
            .enumerate()
            .map(|(k, tier)| {
                let mut groups: Vec<usize> = (0..tier.options.len())
                    .filter(|&c| option_used(s, k, c))
                    .map(|c| self.group[k][c])
                    .collect();
                groups.sort_unstable();
                groups.dedup();
                groups
            })
            .collect()
    }

    /// The operating cost of `s`: its deployments and vendors.
    pub(crate) fn operating_usd(&self, input: &Problem, s: &Solution) -> f64 {
        let used = self.used(input, s);
        let deployments: usize = used.iter().map(Vec::len).sum();
        let mut vendors: Vec<usize> = input
            .tiers
            .iter()
            .enumerate()
            .flat_map(|(k, tier)| {
                tier.options
                    .iter()
                    .enumerate()
                    .filter(move |&(c, _)| option_used(s, k, c))
                    .map(|(_, o)| self.vendor[o.gpu])
            })
            .collect();
        vendors.sort_unstable();
        vendors.dedup();
        deployments as f64 * self.usd_per_deployment + vendors.len() as f64 * self.usd_per_vendor
    }
}

/// Whether option `c` of tier `k` runs replicas (or asks for spot ones) in
/// any slot.
fn option_used(s: &Solution, k: usize, c: usize) -> bool {
    let any = |v: Option<&Vec<Vec<u32>>>| {
        v.and_then(|t| t.get(c))
            .is_some_and(|slots| slots.iter().any(|&n| n > 0))
    };
    any(s.replicas.get(k)) || any(s.spot.get(k))
}

/// `input` without the options `allowed` rules out, and the solution of
/// that problem mapped back onto `input`'s options (the removed ones at 0).
fn solve_without(
    input: &Problem,
    settings: &Settings,
    allowed: &[Vec<bool>],
) -> Result<Solution, MilpError> {
    let mut restricted = input.clone();
    let mut kept: Vec<Vec<usize>> = Vec::with_capacity(input.tiers.len());
    for (k, tier) in restricted.tiers.iter_mut().enumerate() {
        let keep: Vec<usize> = (0..tier.options.len()).filter(|&c| allowed[k][c]).collect();
        tier.options = keep.iter().map(|&c| tier.options[c].clone()).collect();
        kept.push(keep);
    }
    let s = solve(&restricted, settings)?;
    let widen = |per_option: &Vec<Vec<Vec<u32>>>| -> Vec<Vec<Vec<u32>>> {
        input
            .tiers
            .iter()
            .enumerate()
            .map(|(k, tier)| {
                let mut full = vec![vec![0; input.slots()]; tier.options.len()];
                for (i, &c) in kept[k].iter().enumerate() {
                    if let Some(v) = per_option.get(k).and_then(|t| t.get(i)) {
                        full[c].clone_from(v);
                    }
                }
                full
            })
            .collect()
    };
    Ok(Solution {
        replicas: widen(&s.replicas),
        spot: widen(&s.spot),
        ..s
    })
}

/// One change tried: the options it rules out, and what it is.
struct Move {
    allowed: Vec<Vec<bool>>,
    drop: Option<(usize, usize)>,
    merged: Vec<(usize, usize)>,
}

/// `solution` of `input` pruned by the operating prices of `d`, starting
/// from the options `start` allows (what an earlier round left; all of
/// them at first): first every tier keeps one batch cap per deployment (the
/// cheapest of its caps' plans), then the best drop of a deployment while
/// one lowers cost plus operating prices. `solution` comes back unchanged
/// when `start` rules nothing out, nothing runs twice and no drop pays.
pub(crate) fn prune(
    input: &Problem,
    settings: &Settings,
    solution: Solution,
    d: &Deployments,
    start: &[Vec<bool>],
) -> Result<(Solution, Pruned), MilpError> {
    let everything: Vec<Vec<bool>> = input
        .tiers
        .iter()
        .map(|t| vec![true; t.options.len()])
        .collect();
    let free = d.usd_per_deployment <= 0.0 && d.usd_per_vendor <= 0.0;
    if free && !runs_two_caps(input, &solution, d) {
        let pruned = Pruned {
            kept: kept_unpriced(input, &solution, d),
            allowed: everything,
            ..Pruned::default()
        };
        return Ok((solution, pruned));
    }
    // What an earlier round ruled out stays out, unless the problem cannot
    // be served without it.
    let (mut allowed, mut best) = if start == everything.as_slice() {
        (everything, solution)
    } else {
        match solve_without(input, settings, start) {
            Ok(s) => (start.to_vec(), s),
            Err(MilpError::Infeasible) => (everything, solution),
            Err(e) => return Err(e),
        }
    };
    let mut pruned = Pruned::default();
    let score = |s: &Solution| total(input, s) + d.operating_usd(input, s);
    // One cap per deployment: among the caps a deployment runs at, the plan
    // with that cap alone that costs least.
    loop {
        let mut merges: Vec<Move> = Vec::new();
        let used = d.used(input, &best);
        for (k, tier) in input.tiers.iter().enumerate() {
            for g in used[k].iter().copied() {
                let caps: Vec<usize> = (0..tier.options.len())
                    .filter(|&c| d.group[k][c] == g && option_used(&best, k, c))
                    .collect();
                if caps.len() < 2 {
                    continue;
                }
                for &keep in &caps {
                    let mut a = allowed.clone();
                    for (c, ok) in a[k].iter_mut().enumerate() {
                        if d.group[k][c] == g && c != keep {
                            *ok = false;
                        }
                    }
                    let merged = caps
                        .iter()
                        .copied()
                        .filter(|&c| c != keep)
                        .map(|c| (k, c))
                        .collect();
                    merges.push(Move {
                        allowed: a,
                        drop: None,
                        merged,
                    });
                }
                break;
            }
            if !merges.is_empty() {
                break;
            }
        }
        if merges.is_empty() {
            break;
        }
        let tried = try_moves(input, settings, merges, &score)?;
        let Some((m, s, _)) = tried.into_iter().min_by(|a, b| a.2.total_cmp(&b.2)) else {
            break;
        };
        allowed = m.allowed;
        pruned.caps_merged.extend(m.merged);
        best = s;
    }
    // Drops that pay for themselves.
    loop {
        let used = d.used(input, &best);
        let mut drops: Vec<Move> = Vec::new();
        for (k, groups) in used.iter().enumerate() {
            if groups.len() < 2 && input.tiers[k].api.is_none() {
                continue;
            }
            for &g in groups {
                let mut a = allowed.clone();
                for (c, &gc) in d.group[k].iter().enumerate() {
                    if gc == g {
                        a[k][c] = false;
                    }
                }
                drops.push(Move {
                    allowed: a,
                    drop: Some((k, g)),
                    merged: Vec::new(),
                });
            }
        }
        let now = score(&best);
        let now_gpu_api = total(input, &best);
        let tried = try_moves(input, settings, drops, &score)?;
        let improving = tried
            .iter()
            .enumerate()
            .filter(|(_, (_, _, sc))| *sc < now - 1e-6 * now.abs().max(1.0))
            .min_by(|a, b| a.1 .2.total_cmp(&b.1 .2))
            .map(|(i, _)| i);
        if let Some(i) = improving {
            let (m, s, _) = tried.into_iter().nth(i).expect("an index of `tried`");
            allowed = m.allowed;
            pruned.dropped.extend(m.drop);
            best = s;
            continue;
        }
        // What each deployment still run saves: the plan without it.
        let savings: Vec<((usize, usize), f64)> = tried
            .iter()
            .filter_map(|(m, s, _)| Some((m.drop?, total(input, s) - now_gpu_api)))
            .collect();
        for (k, groups) in used.iter().enumerate() {
            for &g in groups {
                pruned.kept.push(Kept {
                    tier: k,
                    group: g,
                    saving_usd: savings
                        .iter()
                        .find(|(at, _)| *at == (k, g))
                        .map(|(_, usd)| *usd),
                });
            }
        }
        break;
    }
    pruned.allowed = allowed;
    // A re-solve's status and bound are those of the problem without the
    // options ruled out (the plan the price chose among); the report says so.
    Ok((best, pruned))
}

/// Whether some tier runs one deployment at two batch caps in `s`.
fn runs_two_caps(input: &Problem, s: &Solution, d: &Deployments) -> bool {
    input.tiers.iter().enumerate().any(|(k, tier)| {
        let mut groups: Vec<usize> = (0..tier.options.len())
            .filter(|&c| option_used(s, k, c))
            .map(|c| d.group[k][c])
            .collect();
        let n = groups.len();
        groups.sort_unstable();
        groups.dedup();
        groups.len() < n
    })
}

/// The deployments `s` runs, their savings not priced.
fn kept_unpriced(input: &Problem, s: &Solution, d: &Deployments) -> Vec<Kept> {
    d.used(input, s)
        .iter()
        .enumerate()
        .flat_map(|(k, groups)| {
            groups.iter().map(move |&g| Kept {
                tier: k,
                group: g,
                saving_usd: None,
            })
        })
        .collect()
}

/// Each move solved (an infeasible one left out), with its score, in the
/// moves' order (solved side by side).
fn try_moves(
    input: &Problem,
    settings: &Settings,
    moves: Vec<Move>,
    score: &(impl Fn(&Solution) -> f64 + Sync),
) -> Result<Vec<(Move, Solution, f64)>, MilpError> {
    let solved =
        crate::base::parallel::map_in_order(&moves, |m| solve_without(input, settings, &m.allowed));
    let mut out = Vec::new();
    for (m, s) in moves.into_iter().zip(solved) {
        match s {
            Some(Ok(s)) => {
                let sc = score(&s);
                out.push((m, s, sc));
            }
            Some(Err(MilpError::Infeasible)) => {}
            Some(Err(e)) => return Err(e),
            None => return Err(MilpError::Solver("a deployment's re-solve panicked".into())),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::milp::{ConfigOption, GpuType, Purchase, TierInput, TierRules};

    /// Two GPU types of two vendors, `a` (1 USD an hour, 4 req/s a GPU) and
    /// `b` (0.5 USD, 1 req/s); one tier of 8 req/s, 9 in the last of four
    /// one-hour slots: there one GPU of `b` (0.5 USD) covers the extra
    /// request/s for less than a third GPU of `a`.
    fn problem() -> Problem {
        let gpu = |id: &str, usd: f64| GpuType {
            id: id.into(),
            reserved_usd_per_gpu_hour: None,
            on_demand_usd_per_gpu_hour: Some(usd),
            max_gpus: None,
            purchase: Purchase::default(),
            spot: None,
        };
        Problem {
            slot_hours: 1.0,
            gpus: vec![gpu("a", 1.0), gpu("b", 0.5)],
            tiers: vec![TierInput {
                name: "t".into(),
                peak_rps: vec![8.0, 8.0, 8.0, 9.0],
                mean_rps: vec![8.0; 4],
                options: vec![
                    ConfigOption::uniform(0, 1, 4.0, 4),
                    ConfigOption::uniform(1, 1, 1.0, 4),
                    ConfigOption::uniform(0, 1, 4.0, 4),
                ],
                api: None,
                rules: TierRules::default(),
            }],
            api_max_tokens_per_minute: None,
            block_slots: None,
        }
    }

    fn all(input: &Problem) -> Vec<Vec<bool>> {
        input
            .tiers
            .iter()
            .map(|t| vec![true; t.options.len()])
            .collect()
    }

    fn deployments(usd_per_deployment: f64, usd_per_vendor: f64) -> Deployments {
        Deployments {
            // Options 0 and 2 are one deployment at two caps.
            group: vec![vec![0, 1, 0]],
            vendor: vec![0, 1],
            usd_per_deployment,
            usd_per_vendor,
        }
    }

    #[test]
    fn a_sliver_deployment_stays_only_while_it_saves_more_than_it_costs() {
        let input = problem();
        let settings = Settings::exact(10.0);
        let plain = solve(&input, &settings).unwrap();
        assert!(option_used(&plain, 0, 1), "the sliver runs on `b`");
        let plain_usd = total(&input, &plain);
        // Free operations: nothing changes.
        let (s, pruned) = prune(
            &input,
            &settings,
            plain.clone(),
            &deployments(0.0, 0.0),
            &all(&input),
        )
        .unwrap();
        assert!((total(&input, &s) - plain_usd).abs() < 1e-9);
        assert!(pruned.dropped.is_empty());
        // Priced operations never leave a deployment whose drop would pay.
        let d = deployments(5.0, 20.0);
        let (s, pruned) = prune(&input, &settings, plain, &d, &all(&input)).unwrap();
        let used = d.used(&input, &s);
        assert_eq!(used[0], vec![0], "{pruned:?}");
        assert_eq!(pruned.dropped, vec![(0, 1)]);
        // The bound is the narrower problem's: no plan without `b` costs
        // less.
        assert!(s.lower_bound_usd <= total(&input, &s) + 1e-9);
        // 0.5 USD dearer in GPUs, 25 USD cheaper to run.
        assert!((total(&input, &s) - plain_usd - 0.5).abs() < 1e-9);
        for kept in &pruned.kept {
            if let Some(saving) = kept.saving_usd {
                assert!(saving + 1e-9 >= d.usd_per_deployment, "{kept:?}");
            }
        }
    }

    #[test]
    fn one_deployment_keeps_one_cap() {
        let mut input = problem();
        // Cap 0 covers 4 req/s in the first two slots only, cap 2 in the
        // last two: the plain plan runs both caps of one deployment.
        input.tiers[0].options[0].rps_by_slot = vec![4.0, 4.0, 0.5, 0.5];
        input.tiers[0].options[2].rps_by_slot = vec![0.5, 0.5, 4.0, 4.5];
        input.tiers[0].options[1].rps_by_slot = vec![0.1; 4];
        let settings = Settings::exact(10.0);
        let plain = solve(&input, &settings).unwrap();
        assert!(option_used(&plain, 0, 0) && option_used(&plain, 0, 2));
        let (s, pruned) = prune(
            &input,
            &settings,
            plain,
            &deployments(0.0, 0.0),
            &all(&input),
        )
        .unwrap();
        assert_ne!(option_used(&s, 0, 0), option_used(&s, 0, 2), "{pruned:?}");
        assert_eq!(pruned.caps_merged.len(), 1);
    }
}
