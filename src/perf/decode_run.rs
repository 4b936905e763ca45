//! A run of decode-only steps with a fixed batch, in closed form
//! ([`DecodeRun`]): a step takes the larger of two lines in the summed
//! context (the attention's compute and memory bounds) plus the time the
//! context does not change, and at least the floor, so the time of k steps
//! and the steps that reach a time are sums and crossings rather than loops.
//! Both step models make their runs here ([`StepTime::decode_run`]).
//!
//! [`StepTime::decode_run`]: super::StepTime::decode_run

/// `at_zero_s + per_context_token_s × C`: one bound of a decode step's time as
/// a function of the summed context C.
#[derive(Debug, Clone, Copy)]
struct Line {
    at_zero_s: f64,
    per_context_token_s: f64,
}

impl Line {
    fn at(&self, context: f64) -> f64 {
        self.at_zero_s + self.per_context_token_s * context
    }

    /// Σ_{j<k} at(c0 + j b).
    fn sum(&self, c0: f64, b: f64, k: f64) -> f64 {
        k * self.at_zero_s + self.per_context_token_s * (k * c0 + b * k * (k - 1.0) / 2.0)
    }
}

/// Consecutive decode-only steps with a fixed batch: step j takes
/// max(max(compute(C_j), memory(C_j)) + fixed, floor) with C_j = C_0 + j B,
/// where the floor is the CPU's time when it overlaps the GPU's (0 when it
/// does not: it is then part of `fixed`), and the two
/// bounds are the attention's (linear in C) and `fixed` holds everything the
/// summed context does not change (weight GEMMs and LM head of B tokens,
/// all-reduces, fixed GPU time, engine overhead). The time of k steps has a
/// closed form and the simulator advances a whole run at once.
#[derive(Debug, Clone, Copy)]
pub struct DecodeRun {
    compute: Line,
    memory: Line,
    fixed_s: f64,
    floor_s: f64,
    context_tokens: f64,
    batch: f64,
    /// The first step whose GPU time reaches the floor (`u64::MAX` when
    /// none does, or there is no floor): the steps before it are held up by
    /// the floor.
    first_at_floor: u64,
    /// The GPU's seconds over the steps before `first_at_floor`, when it is
    /// finite.
    gpu_at_floor_s: f64,
    /// [`Self::find_crossing_step`], computed once.
    crossing_step: f64,
    /// The summed context at which the steeper line meets the flatter
    /// (when their slopes differ), and the least at which either line
    /// lifts the GPU's step to the floor: both independent of the run's
    /// start, so found once for every [`Self::at_context`].
    crossing_context: f64,
    floor_context: f64,
}

impl DecodeRun {
    /// A run whose step j takes max(max(a + s_c C_j, b + s_m C_j) + fixed,
    /// floor) for the compute line (a, s_c) and the memory line (b, s_m).
    pub(crate) fn new(
        compute: (f64, f64),
        memory: (f64, f64),
        fixed_s: f64,
        floor_s: f64,
        context_tokens: f64,
        batch: f64,
    ) -> Self {
        let mut run = DecodeRun {
            compute: Line {
                at_zero_s: compute.0,
                per_context_token_s: compute.1,
            },
            memory: Line {
                at_zero_s: memory.0,
                per_context_token_s: memory.1,
            },
            fixed_s,
            floor_s,
            context_tokens,
            batch,
            first_at_floor: u64::MAX,
            gpu_at_floor_s: 0.0,
            crossing_step: 0.0,
            crossing_context: 0.0,
            floor_context: 0.0,
        };
        let (flat, steep) = run.lines();
        run.crossing_context = (flat.at_zero_s - steep.at_zero_s)
            / (steep.per_context_token_s - flat.per_context_token_s);
        let rise = run.floor_s - run.fixed_s;
        run.floor_context = [run.compute, run.memory]
            .iter()
            .filter(|l| l.per_context_token_s > 0.0)
            .map(|l| (rise - l.at_zero_s) / l.per_context_token_s)
            .fold(f64::INFINITY, f64::min);
        run.derive();
        run
    }

    /// Sets what follows from the lines, the floor and the start: the
    /// crossing step, the floor's step and the GPU's time before it.
    fn derive(&mut self) {
        self.crossing_step = self.find_crossing_step();
        self.first_at_floor = u64::MAX;
        self.gpu_at_floor_s = 0.0;
        if self.floor_s > 0.0 {
            self.first_at_floor = self.first_step_at_floor();
            if self.first_at_floor != u64::MAX {
                self.gpu_at_floor_s = self.gpu_elapsed_s(self.first_at_floor);
            }
        }
    }

    /// The run of speculative steps this run's verification stands for
    /// ([`super::speculation`]): `self` is the target's run of `batch ×
    /// verified` tokens at `verified ×` the context, each token attending
    /// its sequence's context; the speculative run has `batch` sequences
    /// from `context_tokens`, reads their KV cache once a step, adds
    /// `draft_s` to every step, and counts each step as `tokens_per_step`
    /// steps of one token each.
    #[must_use]
    pub(crate) fn speculative(
        &self,
        batch: f64,
        context_tokens: f64,
        verified: f64,
        draft_s: f64,
        tokens_per_step: f64,
    ) -> DecodeRun {
        let per = 1.0 / tokens_per_step;
        DecodeRun::new(
            (
                self.compute.at_zero_s * per,
                self.compute.per_context_token_s * verified * per,
            ),
            (
                self.memory.at_zero_s * per,
                self.memory.per_context_token_s * per,
            ),
            (self.fixed_s + draft_s) * per,
            self.floor_s * per,
            context_tokens,
            batch,
        )
    }

    /// The same run from a summed context of `context_tokens` at its first
    /// step: what [`StepTime::decode_run`] gives for that context, since
    /// only the start of the context lines depends on it.
    ///
    /// [`StepTime::decode_run`]: super::StepTime::decode_run
    #[must_use]
    pub fn at_context(&self, context_tokens: f64) -> DecodeRun {
        let mut run = DecodeRun {
            context_tokens,
            ..*self
        };
        run.derive();
        run
    }

    /// The first step j whose GPU time reaches the floor, `u64::MAX` when
    /// none does. The GPU's step time is non-decreasing in j (in floating
    /// point too: each operation rounds monotonically), so the step is
    /// found from the closed-form crossing of the two lines with the floor
    /// and then checked against its neighbours.
    fn first_step_at_floor(&self) -> u64 {
        let reaches = |j: u64| self.gpu_step_s(j) >= self.floor_s;
        if reaches(0) {
            return 0;
        }
        let guess = ((self.floor_context - self.context_tokens) / self.batch).ceil();
        // Beyond 2^52 steps no run goes: the floor holds every step.
        if self.batch <= 0.0 || !guess.is_finite() || guess >= 4.5e15 {
            return u64::MAX;
        }
        let mut j = guess.max(1.0) as u64;
        // The guess is off by a rounding at most; walk to the exact step.
        let mut walked = 0;
        while j > 1 && reaches(j - 1) && walked < 64 {
            j -= 1;
            walked += 1;
        }
        while !reaches(j) && walked < 64 {
            j += 1;
            walked += 1;
        }
        if walked < 64 {
            return j;
        }
        // Far from the guess (it should not happen): search for it.
        if !reaches(1 << 52) {
            return u64::MAX;
        }
        first_reaching(1, 1 << 52, reaches)
    }

    /// Seconds taken by the first `steps` steps.
    pub fn elapsed_s(&self, steps: u64) -> f64 {
        if self.floor_s <= 0.0 {
            return self.gpu_elapsed_s(steps);
        }
        // The GPU's step grows with the context: the steps the floor holds
        // up come first.
        let floored = self.steps_below_floor(steps);
        let gpu_s = self.gpu_elapsed_s(steps);
        let gpu_floored_s = if floored == steps {
            gpu_s
        } else {
            self.gpu_at_floor_s
        };
        self.floor_s * floored as f64 + gpu_s - gpu_floored_s
    }

    /// The GPU's seconds of step `j`.
    fn gpu_step_s(&self, j: u64) -> f64 {
        let c = self.context_tokens + j as f64 * self.batch;
        self.compute.at(c).max(self.memory.at(c)) + self.fixed_s
    }

    /// How many of the first `steps` steps the floor holds up (their GPU
    /// time is below it).
    fn steps_below_floor(&self, steps: u64) -> u64 {
        self.first_at_floor.min(steps)
    }

    /// The flatter and the steeper of the two lines.
    fn lines(&self) -> (Line, Line) {
        if self.compute.per_context_token_s <= self.memory.per_context_token_s {
            (self.compute, self.memory)
        } else {
            (self.memory, self.compute)
        }
    }

    /// The first step on the steeper line, before clamping to the run: the
    /// steeper line dominates from the crossing on and steps before it
    /// follow the flatter line (`INFINITY`: every step does).
    fn find_crossing_step(&self) -> f64 {
        let (c0, b) = (self.context_tokens, self.batch);
        let (flat, steep) = self.lines();
        let slope_gap = steep.per_context_token_s - flat.per_context_token_s;
        if slope_gap <= 0.0 {
            if steep.at_zero_s >= flat.at_zero_s {
                0.0
            } else {
                f64::INFINITY
            }
        } else {
            let crossing = self.crossing_context;
            if b > 0.0 {
                ((crossing - c0) / b).ceil()
            } else if c0 >= crossing {
                0.0
            } else {
                f64::INFINITY
            }
        }
    }

    /// Σ of the GPU's time over the first `steps` steps.
    fn gpu_elapsed_s(&self, steps: u64) -> f64 {
        let k = steps as f64;
        let (c0, b) = (self.context_tokens, self.batch);
        let (flat, steep) = self.lines();
        let split = self.crossing_step.clamp(0.0, k);
        flat.sum(c0, b, split) + steep.sum(c0 + split * b, b, k - split) + k * self.fixed_s
    }

    /// Seconds of step `j` alone (0-based).
    pub fn step_s(&self, j: u64) -> f64 {
        self.gpu_step_s(j).max(self.floor_s)
    }

    /// The number of steps, at most `max_steps`, needed for the run to reach
    /// `elapsed_s`: the step in flight at that moment counts as done.
    ///
    /// The run's time is non-decreasing in its steps, so the answer is the
    /// one boundary of `elapsed_s(k) >= elapsed_s`: guessed from the run's
    /// mean step, checked with its neighbour, and searched for between what
    /// is known when the guess misses.
    pub fn steps_to_reach(&self, elapsed_s: f64, max_steps: u64) -> u64 {
        let reaches = |k: u64| self.elapsed_s(k) >= elapsed_s;
        if max_steps == 0 || reaches(0) {
            return 0;
        }
        let whole_s = self.elapsed_s(max_steps);
        if whole_s < elapsed_s {
            return max_steps;
        }
        // Known: not reached at `lo`, reached at `hi`.
        let (mut lo, mut hi) = (0u64, max_steps);
        let guess = (elapsed_s / whole_s * max_steps as f64).ceil();
        if guess.is_finite() && guess >= 1.0 && guess < max_steps as f64 {
            let g = guess as u64;
            if reaches(g) {
                if !reaches(g - 1) {
                    return g;
                }
                hi = g - 1;
            } else {
                if reaches(g + 1) {
                    return g + 1;
                }
                lo = g + 1;
            }
        }
        first_reaching(lo + 1, hi, reaches)
    }
}

/// The smallest k in [lo, hi] where the non-decreasing predicate `reaches`
/// holds (`hi` when it holds nowhere before it).
pub(crate) fn first_reaching(mut lo: u64, mut hi: u64, reaches: impl Fn(u64) -> bool) -> u64 {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if reaches(mid) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::step::tests::{h100, llama8b};
    use crate::perf::{PerfModel, StepTime};
    use crate::profiles::precision::Precision;

    #[test]
    fn decode_run_sums_its_steps_exactly() {
        // Small and large batches cross between memory- and compute-bound.
        let cases = [(1u32, 500.0), (64, 64.0 * 2000.0), (512, 512.0 * 100.0)];
        for ((batch, context), precision) in
            cases.into_iter().zip(Precision::ALL.into_iter().cycle())
        {
            let m = PerfModel::new(&h100(), &llama8b(), 1, precision);
            let run = m.decode_run(batch, context);
            let mut total = 0.0;
            for j in 0..300u64 {
                let c = context + j as f64 * f64::from(batch);
                let step = m.decode_step_s(f64::from(batch), c / f64::from(batch));
                assert!((run.step_s(j) - step).abs() < 1e-12);
                total += step;
                let closed = run.elapsed_s(j + 1);
                assert!(
                    (closed - total).abs() < 1e-9 * total.max(1.0),
                    "{closed} vs {total}"
                );
            }
            let half = run.elapsed_s(150) - 1e-9;
            assert_eq!(run.steps_to_reach(half, 300), 150);
            assert_eq!(run.steps_to_reach(1e9, 300), 300);
            assert_eq!(run.steps_to_reach(0.0, 300), 0);
        }
    }

    proptest::proptest! {
        /// The floor's step found from the lines' crossing is the one a
        /// search over every step finds.
        #[test]
        fn the_first_step_at_the_floor_is_the_searched_one(
            slope_c in 0.0f64..1e-7,
            slope_m in 0.0f64..1e-7,
            at_zero in 0.0f64..1e-3,
            fixed in 0.0f64..2e-2,
            floor in 1e-4f64..5e-2,
            batch in 1u32..1024,
            context in 0.0f64..4e6,
        ) {
            let run = DecodeRun::new(
                (at_zero, slope_c),
                (0.0, slope_m),
                fixed,
                floor,
                context,
                f64::from(batch),
            );
            let steps = 5000u64;
            let searched = first_reaching(0, steps, |j| run.gpu_step_s(j) >= floor);
            proptest::prop_assert_eq!(run.steps_below_floor(steps), searched);
        }

        /// The steps to reach a time, found from a guess, are the ones a
        /// search over every step finds.
        #[test]
        fn the_steps_to_reach_a_time_are_the_searched_ones(
            slope_c in 0.0f64..1e-7,
            slope_m in 0.0f64..1e-7,
            fixed in 1e-4f64..2e-2,
            floor in 0.0f64..5e-2,
            batch in 1u32..1024,
            context in 0.0f64..4e6,
            steps in 0u64..3000,
            share in 0.0f64..1.1,
        ) {
            let run = DecodeRun::new(
                (0.0, slope_c),
                (0.0, slope_m),
                fixed,
                floor,
                context,
                f64::from(batch),
            );
            let target = run.elapsed_s(steps) * share;
            let searched = first_reaching(0, steps, |k| run.elapsed_s(k) >= target);
            proptest::prop_assert_eq!(run.steps_to_reach(target, steps), searched);
        }
    }
}
