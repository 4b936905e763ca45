//! Variables of rules that stay within one slot: `runs[k,c,t]`, a binary
//! that is 1 when tier `k` runs any replica of option `c` in slot `t` (for
//! the `headroom[k,c,t]` rows of tiers with headroom).

use super::model::{serves_in, Vars};
use super::MilpInput;
use good_lp::{variable, ProblemVariables, Variable};

/// `[k][c][t]`: `runs[k,c,t]`, present for tiers with headroom.
pub(super) struct SlotVars {
    pub runs: Vec<Vec<Vec<Option<Variable>>>>,
}

impl SlotVars {
    /// Adds `runs[k,c,t]` for every tier with headroom; the link
    /// `replicas[k,c,t] ≤ M[k,c] runs[k,c,t]` is added with the slot's rows.
    pub(super) fn add(
        input: &MilpInput,
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
    use super::super::tests::{covered, tiny};
    use super::super::{solve, MilpInput, MilpSolution};

    /// Whether every slot still covers its peak after losing `h` replicas of
    /// any one configuration it runs.
    fn survives_loss(input: &MilpInput, s: &MilpSolution, h: u32) -> bool {
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
        let plain = solve(&input).unwrap();
        assert!(!survives_loss(&input, &plain, 1), "{:?}", plain.replicas);
        input.tiers[0].rules.headroom_replicas = 1;
        let n_plus_1 = solve(&input).unwrap();
        assert!(covered(&input, &n_plus_1));
        assert!(
            survives_loss(&input, &n_plus_1, 1),
            "{:?}",
            n_plus_1.replicas
        );
        assert!(super::super::total(&input, &n_plus_1) > super::super::total(&input, &plain));
    }
}
