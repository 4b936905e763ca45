//! The solve-and-replay rounds: a small state machine that records its
//! moves. A candidate (the scenario as it stands, then possibly the scenario
//! with some tiers kept off the API) is solved round after round: the MILP
//! of the current capacity factors, a replay of its plan, and per tier a
//! rule ([`Rule`]) that moves the tier's factor for the next round. Every
//! round records, per tier, the rule, the factor before and after and the
//! attainment that caused it; the last round of a candidate records why it
//! stopped (`Stop`, in [`super::record`]). `docs/model.md` §5 lists the
//! rules; `factor_steps` holds the moves they make, `round_trial` the solve
//! of a round's MILP into its trial, `candidates` the candidates run and
//! the plan returned.

use super::bracket::{far_off, Bracket};
use super::feasibility::check_servable;
use super::input::{milp_input, settings, Sizing};
use super::questions::{CapacityBasis, SpeedupCase};
use super::record::{Move, Round, Rule, Stop};
use super::slot_loosening;
use super::{capacity_table, need_rps, term, SolveOptions};
use crate::base::error::PlannerError;
use crate::capacity::{simulated, CapacityEntry};
use crate::demand::workload::TraceReplay;
use crate::demand::Demand;
use crate::milp::{self, MilpError, Problem, Settings};
use crate::money::growth::TermProjection;
use crate::plan::file::PlanFile;
use crate::plan::Plan;
use crate::replay;
use crate::replay::slots::SlotReplays;
use crate::replay::verification::Verification;
use crate::scenario::{CapacitySource, Scenario, VerifySlots};
use std::collections::BTreeMap;

/// Most factor steps in a row that change no fleet before the rounds stop.
const MAX_SILENT_STEPS: u32 = 16;

/// Most rounds past `simulation.max_rounds` that bisect a bracketed tier
/// towards its band (a bracket 1.52 wide, four loosening steps, is within
/// the 1% at which it settles after six), size up the days a tier that
/// meets over the horizon still misses, or size down the slots far over the
/// target of a tier that meets in every window.
pub(super) const BISECTION_ROUNDS: u32 = 6;

/// Whether a round's `moves` only close in on the targets: some tier moved,
/// and every move was a bisection, a window tightening or slots loosened
/// (the rounds may then run past `simulation.max_rounds`, up to
/// [`BISECTION_ROUNDS`] more).
fn closing_in(moves: &[Move]) -> bool {
    let moving: Vec<&Move> = moves
        .iter()
        .filter(|m| m.factor_after != m.factor_before || !m.windows.is_empty())
        .collect();
    !moving.is_empty()
        && moving.iter().all(|m| {
            matches!(
                m.rule,
                Rule::Bisect | Rule::TightenWindows | Rule::UndoLoosening | Rule::LoosenSlots
            )
        })
}

/// The rounds a candidate may replay ([`Candidate::round_limit`]):
/// `max_rounds`, or [`BISECTION_ROUNDS`] more while none of its plans has
/// met every target (`met`) or its last round's moves only closed in.
fn round_limit(max_rounds: u32, met: bool, last_moves: Option<&[Move]>) -> u32 {
    if !met || last_moves.is_some_and(closing_in) {
        max_rounds + BISECTION_ROUNDS
    } else {
        max_rounds
    }
}

/// What every candidate shares: the demand, the traces to replay (when the
/// plan is verified) and how to run.
#[derive(Clone, Copy)]
pub(super) struct Shared<'a> {
    pub demand: &'a Demand,
    pub replay: Option<&'a TraceReplay>,
    /// The slots replayed so far, by the fleet each ran.
    pub slot_replays: &'a SlotReplays,
    pub options: &'a SolveOptions,
}

/// One plan tried: the MILP's solution assembled, the alternatives priced
/// beside it, the capacity it read, the facts of its questions, and once
/// replayed what the replay found.
#[derive(Debug, Clone)]
pub(super) struct Trial {
    pub plan: Plan,
    pub term: Option<TermProjection>,
    pub capacity: Vec<Vec<CapacityEntry>>,
    pub capacity_basis: Vec<CapacityBasis>,
    pub speedup: Vec<SpeedupCase>,
    pub verification: Option<Verification>,
    /// The MILP the plan solves.
    pub milp: std::sync::Arc<RoundMilp>,
    /// Per tier, the capacity factor its figures were read with.
    pub factors: Vec<f64>,
    /// Per tier and slot, the factor of its windows on top.
    pub window_factors: Vec<Vec<f64>>,
    /// Per tier and slot, the share of the peak its fleets were sized for.
    pub gpu_share: Vec<Vec<f64>>,
    /// `(tier, capacity entry)` of the options the price for complexity
    /// ruled out of this trial (the next round starts without them).
    pub ruled_out: std::collections::BTreeSet<(usize, usize)>,
    /// Per tier, the smallest factor any of its windows' slots were sized
    /// with on top (1 when no window was tightened).
    pub window_factor_min: Vec<f64>,
}

impl Trial {
    /// Whether its replay met every tier's target (or it was not replayed).
    pub(super) fn meets_targets(&self) -> bool {
        self.verification
            .as_ref()
            .is_none_or(|v| v.tiers.values().all(|t| t.meets_target))
    }
}

/// A candidate whose rounds have ended: the plan it returns (the cheapest
/// that met every target, else the last replayed), its scenario, and its
/// rounds.
#[derive(Debug, Clone)]
pub(super) struct Finished {
    pub scenario: Scenario,
    pub trial: Trial,
    pub rounds: Vec<Round>,
}

/// The MILP one round solves: the horizon's problem, its settings, and with
/// growth the term's problem beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundMilp {
    pub problem: Problem,
    pub settings: Settings,
    pub(super) term: Option<term::Term>,
}

impl RoundMilp {
    /// With growth, the term's MILP.
    pub(super) fn term(&self) -> Option<&Problem> {
        self.term.as_ref().map(term::Term::first)
    }

    /// Solves it as the round does: the horizon's MILP, or with growth the
    /// term's MILP and the horizon with its reservations; the horizon's
    /// solution.
    pub fn solve(&self) -> Result<milp::Solution, MilpError> {
        match &self.term {
            None => milp::solve(&self.problem, &self.settings),
            Some(t) => {
                Ok(term::solve(&self.problem, &self.settings, t, self.problem.slots())?.horizon)
            }
        }
    }
}

/// The last replayed round of a candidate: its trial, what its MILP's
/// coverage rows read, and the factors behind them.
#[derive(Debug, Clone)]
pub(super) struct Last {
    pub(super) trial: Trial,
    coverage: Vec<Vec<Vec<f64>>>,
    pub(super) factors: Vec<f64>,
}

/// Where a candidate's rounds left its factors (after the last round's
/// rules moved them).
#[derive(Clone)]
pub(super) struct Reached {
    pub(super) factors: Vec<f64>,
    window_factors: Vec<Vec<f64>>,
    brackets: Vec<Bracket>,
    slot_brackets: Vec<BTreeMap<usize, Bracket>>,
}

/// One candidate's state between rounds.
pub(super) struct Candidate {
    pub(super) scenario: Scenario,
    /// What the candidate is, for the stages' timings.
    name: &'static str,
    /// With demand growing over the term, the demand fleets are sized for
    /// (the horizon's peaks × the busiest month's factor).
    sizing: Option<Demand>,
    pub(super) factors: Vec<f64>,
    /// Per tier and slot, the factor of the slots whose windows missed
    /// (1 until one does).
    pub(super) window_factors: Vec<Vec<f64>>,
    pub(super) capacity: Vec<Vec<CapacityEntry>>,
    pub(super) brackets: Vec<Bracket>,
    /// Per tier, each replayed slot's search for its factor (read as the
    /// tier's factor times the slot's own): the largest that met the
    /// target, the smallest that missed it.
    pub(super) slot_brackets: Vec<BTreeMap<usize, Bracket>>,
    /// Per tier and slot, the share of the peak the GPUs served in the last
    /// round (1 until a round sends some of it to the API).
    pub(super) gpu_share: Vec<Vec<f64>>,
    /// Per tier, whether the last round answered its miss by resizing.
    resized_last: Vec<bool>,
    /// `(tier, capacity entry)` of the options the price for complexity
    /// ruled out in the last round solved.
    pub(super) ruled_out: std::collections::BTreeSet<(usize, usize)>,
    pub(super) rounds: Vec<Round>,
    best: Option<Trial>,
    /// The cheapest trial whose every complete window also kept the guard
    /// against the replay's noise ([`guarded`]).
    best_guarded: Option<Trial>,
    pub(super) last: Option<Last>,
    silent_steps: u32,
    /// The trial of a plan that is not verified (`simulation.verify = "off"`).
    unverified: Option<Trial>,
    /// Every MILP the candidate solved, in order (tests compare them).
    #[cfg(test)]
    solved: Vec<RoundMilp>,
}

/// The rounds over every candidate, and the plan they return: the cheapest
/// of the candidates' plans that meets every target (the first candidate's
/// when none does), with the comparison when there were two.
/// The first round's MILP of `scenario`, as [`run`] builds and solves it
/// (for timing it on its own, `planner bench`).
pub fn first_round(
    scenario: &Scenario,
    demand: &Demand,
    options: &SolveOptions,
) -> Result<RoundMilp, PlannerError> {
    let slot_replays = SlotReplays::default();
    let shared = Shared {
        demand,
        replay: None,
        slot_replays: &slot_replays,
        options,
    };
    let mut candidate = Candidate::start(scenario.clone(), shared, "plan")?;
    let mut milp = candidate.round_milp(shared);
    candidate.with_term(shared, &mut milp);
    Ok(milp)
}

impl Candidate {
    /// A candidate at factor 1 everywhere: its capacity table, checked to
    /// serve every tier with demand.
    pub(super) fn start(
        scenario: Scenario,
        shared: Shared<'_>,
        name: &'static str,
    ) -> Result<Self, PlannerError> {
        let sizing = term::sizing_demand(&scenario, shared.demand);
        let factors = vec![1.0; scenario.tiers.len()];
        let capacity = shared.options.timings.time(
            || format!("{name}: capacity table"),
            || {
                capacity_table(
                    &scenario,
                    sizing.as_ref().unwrap_or(shared.demand),
                    &factors,
                    shared.options,
                )
            },
        );
        Self::with_table(scenario, shared, name, sizing, capacity)
    }

    /// A candidate at factor 1 everywhere with the capacity table at factor
    /// 1 already built (the tiers' API permission does not change it: the
    /// candidate kept off the API starts from the first candidate's).
    pub(super) fn with_table(
        scenario: Scenario,
        shared: Shared<'_>,
        name: &'static str,
        sizing: Option<Demand>,
        capacity: Vec<Vec<CapacityEntry>>,
    ) -> Result<Self, PlannerError> {
        let demand = shared.demand;
        let tiers = scenario.tiers.len();
        let factors = vec![1.0; tiers];
        check_servable(&scenario, demand, &capacity)?;
        Ok(Candidate {
            sizing,
            factors,
            window_factors: vec![vec![1.0; demand.slots]; tiers],
            capacity,
            brackets: vec![Bracket::default(); tiers],
            slot_brackets: vec![BTreeMap::new(); tiers],
            gpu_share: vec![vec![1.0; demand.slots]; tiers],
            resized_last: vec![false; tiers],
            ruled_out: std::collections::BTreeSet::new(),
            rounds: Vec::new(),
            best: None,
            best_guarded: None,
            last: None,
            silent_steps: 0,
            unverified: None,
            #[cfg(test)]
            solved: Vec::new(),
            scenario,
            name,
        })
    }

    /// Where its rounds left the factors: the tiers' and their slots', with
    /// the brackets that searched for them.
    pub(super) fn reached(&self) -> Reached {
        Reached {
            factors: self.factors.clone(),
            window_factors: self.window_factors.clone(),
            brackets: self.brackets.clone(),
            slot_brackets: self.slot_brackets.clone(),
        }
    }

    /// This candidate with its factors where another candidate's rounds
    /// left them: the kept-off-the-API candidate differs from the first
    /// only in the tiers' access to the API, and the replays that moved the
    /// first candidate's factors measured the same figures against the same
    /// trace, so its rounds go on from there instead of starting over. The
    /// tiers `restart` keep their own factor and bracket at 1.
    pub(super) fn starting_from(mut self, reached: Reached, restart: &[usize]) -> Self {
        let (factors, brackets) = (self.factors.clone(), self.brackets.clone());
        self.factors = reached.factors;
        self.window_factors = reached.window_factors;
        self.brackets = reached.brackets;
        self.slot_brackets = reached.slot_brackets;
        for &k in restart {
            self.factors[k] = factors[k];
            self.brackets[k] = brackets[k];
        }
        self
    }

    /// The MILP of the current factors and GPU shares, the fleets extended
    /// first (capacity by simulation) to what they ask for; the term's MILP
    /// beside it (with growth) is built when the round solves.
    fn round_milp(&mut self, shared: Shared<'_>) -> RoundMilp {
        let (scenario, demand, options) = (&self.scenario, shared.demand, shared.options);
        let sizing_demand = self.sizing.as_ref().unwrap_or(demand);
        if scenario.simulation.capacity == CapacitySource::Simulated {
            let stage = self.stage("fleets extended");
            options.timings.time(stage, || {
                simulated::extend_fleets(
                    &mut self.capacity,
                    scenario,
                    &sizing_demand.tiers,
                    &need_rps(sizing_demand, &self.factors, &self.window_factors),
                    options.cache_dir.as_deref(),
                    options.progress,
                    &options.timings,
                );
            });
        }
        let problem = milp_input(scenario, demand, &self.capacity, self.sizing());
        RoundMilp {
            problem,
            settings: settings(scenario, options),
            term: None,
        }
    }

    /// With growth, the term's MILP beside the round's (`term::term_input`:
    /// the same capacity and shares, the months at each tier's least
    /// equivalent factor).
    fn with_term(&self, shared: Shared<'_>, milp: &mut RoundMilp) {
        milp.term = term::term_input(
            &self.scenario,
            shared.demand,
            &self.capacity,
            self.sizing(),
            (&milp.problem, &milp.settings),
        );
    }

    /// The name of a stage of the round being run, for its timing.
    pub(super) fn stage(&self, what: &str) -> impl FnOnce() -> String {
        let name = format!("{} round {}: {what}", self.name, self.rounds.len() + 1);
        move || name
    }

    pub(super) fn sizing(&self) -> Sizing<'_> {
        Sizing {
            factors: &self.factors,
            window_factors: &self.window_factors,
            gpu_share: &self.gpu_share,
        }
    }

    /// One pass: the MILP of the current factors (not solved again when it
    /// repeats the last round's), then either another step (its fleets are
    /// the last round's) or a replay and the rules' next factors. `Some`
    /// when the candidate's rounds stop.
    pub(super) fn step(&mut self, shared: Shared<'_>) -> Result<Option<Stop>, PlannerError> {
        let mut milp = self.round_milp(shared);
        let coverage = coverage_of(&milp.problem);
        let repeated = self.last.as_ref().is_some_and(|l| l.coverage == coverage);
        let solved = if repeated {
            None
        } else {
            self.with_term(shared, &mut milp);
            let trial = self.solve(shared, &milp)?;
            self.ruled_out.clone_from(&trial.ruled_out);
            #[cfg(test)]
            self.solved.push(milp);
            Some(trial)
        };
        if let Some(last) = &self.last {
            if solved
                .as_ref()
                .is_none_or(|t| last.trial.plan.same_fleets(&t.plan))
            {
                // A step too small to change any fleet: its replay would
                // repeat the last one. Step the moved tiers again, the same
                // way, until the fleets change or the brackets stop them.
                self.silent_steps += 1;
                let rule = if solved.is_none() {
                    Rule::RepeatSkipped
                } else {
                    Rule::SameFleets
                };
                if self.silent_steps <= MAX_SILENT_STEPS && self.step_again(rule) {
                    return Ok(None);
                }
                return Ok(Some(Stop::FleetsUnchanged));
            }
        }
        self.silent_steps = 0;
        let mut trial = solved.expect("a new MILP was solved");
        let Some(traces) = shared.replay else {
            self.unverified = Some(trial);
            return Ok(Some(Stop::Settled));
        };
        let scenario = &self.scenario;
        let plan_file = PlanFile::of(&trial.plan, scenario.planning.slot_minutes);
        let timings = &shared.options.timings;
        let mut v = timings.time(self.stage("replay"), || {
            replay::verify_with(
                scenario,
                shared.demand,
                &plan_file,
                traces,
                scenario.simulation.verify,
                shared.slot_replays,
                shared.options.progress,
            )
        });
        let mut met = scenario.tiers.iter().all(|t| v.tiers[&t.name].meets_target);
        // A plan checked on the sampled slots is replayed over the whole
        // horizon, where its targets are measured window by window, whether
        // or not it met on the sample: the sample's busy hours pool bursts
        // that the quiet hours carry alone, and a tier that misses on them
        // may meet over the horizon with only some days to size up, which a
        // whole-tier step would over-build (a looser limit then cost more).
        // Not when a tier missed its sample by twice the allowed misses or
        // more: its whole tier is tightened, whatever its days say.
        let far = scenario.tiers.iter().any(|t| {
            let r = &v.tiers[&t.name];
            !r.meets_target && far_off(r.attainment, r.target)
        });
        if scenario.simulation.verify == VerifySlots::Sample
            && !far
            && v.replayed_slots.len() < shared.demand.slots
        {
            let started = std::time::Instant::now();
            let (every, reuse) = replay::verify_every_slot(
                scenario,
                shared.demand,
                &plan_file,
                traces,
                shared.slot_replays,
                shared.options.progress,
            );
            let reused = reuse.map_or(String::new(), |r| {
                let stored = if r.stored > 0 {
                    format!(", {} of them from the cache on disk", r.stored)
                } else {
                    String::new()
                };
                format!(" ({} replayed, {} reused{stored})", r.replayed, r.reused)
            });
            timings.record(
                self.stage(&format!("replay of every slot{reused}"))(),
                started.elapsed().as_secs_f64(),
            );
            v = every;
            met = scenario.tiers.iter().all(|t| v.tiers[&t.name].meets_target);
        }
        let shares: Vec<Vec<f64>> = scenario
            .tiers
            .iter()
            .map(|t| trial.plan.gpu_share(&t.name))
            .collect();
        // A tier whose plan sends to the API a share its fleets were not
        // sized for runs smaller fleets than its figures assumed, and a
        // smaller fleet pools its bursts less: its miss is first answered
        // by sizing its fleets for that share (next round), not by
        // tightening its figures, once in a row.
        let resized: Vec<bool> = shares
            .iter()
            .zip(&self.gpu_share)
            .zip(&self.resized_last)
            .map(|((now, used), &last)| {
                !last && !shares_close(std::slice::from_ref(now), std::slice::from_ref(used))
            })
            .collect();
        let windows_before = self.window_factors.clone();
        let kept_guard = guarded(&self.scenario, &v);
        let (next, moves) = self.next_factors(&trial.plan, &v, &resized, met && kept_guard);
        let windows_moved = self.window_factors != windows_before;
        self.resized_last = resized;
        let scenario = &self.scenario;
        self.rounds.push(Round {
            round: self.rounds.len() as u32 + 1,
            total_cost_usd: trial.plan.total_cost_usd,
            capacity_factor: named(scenario, &self.factors),
            attainment: scenario
                .tiers
                .iter()
                .map(|t| (t.name.clone(), v.tiers[&t.name].binding_attainment()))
                .collect(),
            moves,
            stop: None,
        });
        trial.verification = Some(v);
        let cheaper = |best: &Option<Trial>| {
            best.as_ref()
                .is_none_or(|b| trial.plan.total_cost_usd < b.plan.total_cost_usd)
        };
        if met && cheaper(&self.best) {
            self.best = Some(trial.clone());
        }
        if met && kept_guard && cheaper(&self.best_guarded) {
            self.best_guarded = Some(trial.clone());
        }
        // Every tier in its band, or no factor left to move while the GPU
        // shares (which size the fleets) have settled.
        let settled = next == self.factors
            && !windows_moved
            && (met || shares_close(&shares, &self.gpu_share));
        self.gpu_share = shares;
        self.last = Some(Last {
            trial,
            coverage,
            factors: self.factors.clone(),
        });
        self.factors = next;
        if settled {
            return Ok(Some(Stop::Settled));
        }
        if self.rounds.len() as u32 >= self.round_limit() {
            return Ok(Some(Stop::RoundLimit));
        }
        Ok(None)
    }

    /// The rounds this candidate may replay: `simulation.max_rounds`, and
    /// past it, while the last round's only moves were bisections (every
    /// moving tier bracketed between a factor that met and one that
    /// missed) or window tightenings (a tier that met over the horizon
    /// sizing up the days it missed), or while no plan of the candidate has
    /// met every target yet, up to [`BISECTION_ROUNDS`] more, so that the
    /// loop closes on the band [target, target + margin] instead of
    /// stopping short of it, and does not return a plan that misses where
    /// a few more rounds find one that meets.
    fn round_limit(&self) -> u32 {
        round_limit(
            self.scenario.simulation.max_rounds,
            self.best.is_some(),
            self.rounds.last().map(|r| r.moves.as_slice()),
        )
    }

    /// The candidate's plan and rounds once they stop: the cheapest trial
    /// that met every target, else the last replayed (or the one trial of
    /// an unverified plan).
    pub(super) fn finish(mut self, stop: Stop) -> Finished {
        if let Some(round) = self.rounds.last_mut() {
            round.stop = Some(stop);
        }
        let trial = self
            .best_guarded
            .or(self.best)
            .or(self.last.map(|l| l.trial))
            .or(self.unverified)
            .expect("a candidate stops after its first MILP");
        Finished {
            scenario: self.scenario,
            trial,
            rounds: self.rounds,
        }
    }
}

/// What the MILP's coverage rows read: per tier and option, `mu[c,t]`.
fn coverage_of(problem: &Problem) -> Vec<Vec<Vec<f64>>> {
    problem
        .tiers
        .iter()
        .map(|t| t.options.iter().map(|o| o.rps_by_slot.clone()).collect())
        .collect()
}

/// Whether every complete window of every tier of the replay `v` is at
/// least the guard (a share of `attainment_margin_points`) over its target.
fn guarded(scenario: &Scenario, v: &Verification) -> bool {
    let guard = slot_loosening::guard(scenario.simulation.attainment_margin_points / 100.0);
    v.tiers.values().all(|t| {
        t.windows
            .iter()
            .all(|w| !w.complete || w.attainment >= t.target + guard)
    })
}

/// Whether two rounds' GPU shares agree within a percentage point in every
/// slot (the fleet sizes read from the step functions then agree too).
fn shares_close(a: &[Vec<f64>], b: &[Vec<f64>]) -> bool {
    a.iter()
        .flatten()
        .zip(b.iter().flatten())
        .all(|(x, y)| (x - y).abs() <= 0.01)
}

fn named(scenario: &Scenario, values: &[f64]) -> BTreeMap<String, f64> {
    scenario
        .tiers
        .iter()
        .zip(values)
        .map(|(t, &v)| (t.name.clone(), v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{
        closing_in, first_round, round_limit, Candidate, Move, Rule, Shared, BISECTION_ROUNDS,
    };
    use crate::base::progress::Progress;
    use crate::scenario::CapacitySource;

    /// `planner bench` times [`first_round`]: the MILP the rounds' first
    /// step solves, with and without a growing term.
    #[test]
    fn bench_times_the_milp_the_first_round_solves() {
        let mut scenario = crate::scenario::tiny_fixture();
        scenario.simulation.capacity = CapacitySource::Analytic;
        let options = crate::solve::test_options();
        for growth in [None, Some((12, 0.05))] {
            if let Some((months, g)) = growth {
                scenario.commitment_term_months = Some(months);
                scenario.commitment_monthly_growth = g;
            }
            let demand = crate::demand::build(&scenario, Progress::hidden()).unwrap();
            let bench = first_round(&scenario, &demand, &options).unwrap();
            let slot_replays = crate::replay::slots::SlotReplays::default();
            let shared = Shared {
                demand: &demand,
                replay: None,
                slot_replays: &slot_replays,
                options: &options,
            };
            let mut candidate = Candidate::start(scenario.clone(), shared, "plan").unwrap();
            candidate.step(shared).unwrap();
            assert_eq!(candidate.solved.len(), 1);
            assert_eq!(candidate.solved[0], bench, "growth {growth:?}");
            assert_eq!(bench.term.is_some(), growth.is_some());
        }
    }

    fn moved(rule: Rule, after: f64, windows: Vec<(usize, usize)>) -> Move {
        Move {
            tier: "t".into(),
            rule,
            factor_before: 1.0,
            factor_after: after,
            attainment: 0.985,
            windows,
        }
    }

    /// Rounds run past `max_rounds` only while every move closes in:
    /// bisections, days sized up and slots sized down, not a whole tier
    /// tightened or loosened.
    #[test]
    fn only_bisections_and_slot_moves_extend_the_rounds() {
        let days = vec![(24, 48)];
        assert!(closing_in(&[moved(
            Rule::TightenWindows,
            1.0,
            days.clone()
        )]));
        assert!(closing_in(&[
            moved(Rule::Bisect, 1.1, Vec::new()),
            moved(Rule::Hold, 1.0, Vec::new()),
        ]));
        assert!(!closing_in(&[
            moved(Rule::TightenWindows, 1.0, days),
            moved(Rule::Tighten, 0.9, Vec::new()),
        ]));
        assert!(closing_in(&[moved(Rule::LoosenSlots, 1.0, vec![(30, 31)])]));
        assert!(!closing_in(&[moved(Rule::Loosen, 1.111, Vec::new())]));
        assert!(!closing_in(&[moved(Rule::Hold, 1.0, Vec::new())]));
    }

    /// A candidate that has not met every target yet goes on past
    /// `max_rounds` whatever its last moves were; one that has, only while
    /// they close in.
    #[test]
    fn rounds_go_on_past_the_limit_until_a_plan_meets() {
        let loosened = [moved(Rule::Loosen, 1.111, Vec::new())];
        let bisected = [moved(Rule::Bisect, 1.1, Vec::new())];
        let most = 4 + BISECTION_ROUNDS;
        assert_eq!(round_limit(4, false, Some(&loosened)), most);
        assert_eq!(round_limit(4, false, None), most);
        assert_eq!(round_limit(4, true, Some(&loosened)), 4);
        assert_eq!(round_limit(4, true, Some(&bisected)), most);
        assert_eq!(round_limit(4, true, None), 4);
    }
}
