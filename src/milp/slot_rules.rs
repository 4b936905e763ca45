//! Variables of rules that stay within one slot: `runs[k,c,t]`, a binary
//! that is 1 when tier `k` runs any replica of option `c` in slot `t` (for
//! the `headroom[k,c,t]` rows of tiers with headroom).

use super::vars::{serves_in, Vars};
use super::Problem;
use good_lp::{variable, ProblemVariables, Variable};

/// `[k][c][t]`: `runs[k,c,t]`, present for tiers with headroom.
pub(super) struct SlotVars {
    pub runs: Vec<Vec<Vec<Option<Variable>>>>,
}

impl SlotVars {
    /// Adds `runs[k,c,t]` for every tier with headroom; the link
    /// `replicas[k,c,t] ≤ M[k,c] runs[k,c,t]` is added with the slot's rows.
    pub(super) fn add(
        input: &Problem,
        core: &Vars,
        vars: &mut ProblemVariables,
        integer: bool,
    ) -> Self {
        let runs = input
            .tiers
            .iter()
            .enumerate()
            .map(|(k, tier)| {
                (0..tier.options.len())
                    .map(|c| {
                        (0..input.slots())
                            .map(|t| {
                                let wanted = tier.rules.headroom_replicas > 0
                                    && serves_in(tier, t)
                                    && core.replicas[k][c][t].is_some();
                                wanted.then(|| {
                                    let def = variable().min(0).max(1);
                                    vars.add(if integer { def.integer() } else { def })
                                })
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        SlotVars { runs }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{covered, settings, tiny};
    use super::super::{solve, Problem, Solution};

    /// Whether every slot still covers its peak after losing `h` replicas of
    /// any one configuration it runs.
    fn survives_loss(input: &Problem, s: &Solution, h: u32) -> bool {
        let tier = &input.tiers[0];
        (0..input.slots()).all(|t| {
            let capacity: f64 = (0..tier.options.len())
                .map(|c| f64::from(s.replicas[0][c][t]) * tier.options[c].rps(t))
                .sum();
            (0..tier.options.len())
                .filter(|&c| s.replicas[0][c][t] > 0)
                .all(|c| {
                    let lost = f64::from(h.min(s.replicas[0][c][t])) * tier.options[c].rps(t);
                    capacity - lost >= tier.peak_rps[t] - 1e-9
                })
        })
    }

    #[test]
    fn headroom_keeps_the_peak_covered_after_losing_a_replica() {
        let mut input = tiny(vec![3.0, 11.0, 6.5]);
        let plain = solve(&input, &settings()).unwrap();
        assert!(!survives_loss(&input, &plain, 1), "{:?}", plain.replicas);
        input.tiers[0].rules.headroom_replicas = 1;
        let n_plus_1 = solve(&input, &settings()).unwrap();
        assert!(covered(&input, &n_plus_1));
        assert!(
            survives_loss(&input, &n_plus_1, 1),
            "{:?}",
            n_plus_1.replicas
        );
        assert!(super::super::total(&input, &n_plus_1) > super::super::total(&input, &plain));
    }
}

#[cfg(test)]
mod spot_tests {
    use super::super::tests::{one_type, settings};
    use super::super::{solve, total, SpotTerms};

    #[test]
    fn spot_replicas_cover_their_expected_yield_when_cheaper() {
        let mut input = one_type(vec![4.0], None);
        let terms = SpotTerms {
            usd_per_gpu_hour: 0.3,
            availability: 0.8,
            // Granted 80% of the time, then up 90.6% of the hour on average
            // at 0.2 interruptions per hour.
            yield_share: 0.8 * (1.0 - (-0.2f64).exp()) / 0.2,
        };
        input.gpus[0].spot = Some(terms);
        // Offered but not allowed: 4 rented GPUs.
        let rented = solve(&input, &settings()).unwrap();
        assert_eq!(rented.spot[0][0], vec![0]);
        assert!((total(&input, &rented) - 4.0).abs() < 1e-9);
        input.tiers[0].rules.spot_allowed = true;
        let spot = solve(&input, &settings()).unwrap();
        // ⌈4 / 0.725⌉ = 6 requested, 4.8 granted at 0.3: 1.44 USD.
        assert_eq!(spot.spot[0][0], vec![6]);
        assert_eq!(spot.replicas[0][0], vec![0]);
        assert!((total(&input, &spot) - 1.44).abs() < 1e-9);
        // Dearer than renting per request/s covered: not used.
        input.gpus[0].spot = Some(SpotTerms {
            usd_per_gpu_hour: 0.95,
            ..terms
        });
        let dear = solve(&input, &settings()).unwrap();
        assert_eq!(dear.spot[0][0], vec![0]);
    }
}
