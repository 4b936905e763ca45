//! Where a long computation's time goes: named stages, each timed as it
//! runs, collected in the order they finished (`planner bench` prints them).
//! A stage may be recorded as a part of the stage that encloses it (which
//! finishes after it): its time is inside the enclosing stage's, not beside
//! it. Recording costs a clock read and a push under a lock per stage.

use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One timed stage: its name (with its round or candidate) and wall time.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    pub name: String,
    pub seconds: f64,
    /// Whether the stage is a part of the next stage recorded that is not
    /// one (its time is counted there).
    pub part: bool,
}

/// A shared, cloneable list of timed stages.
#[derive(Debug, Clone, Default)]
pub struct Timings(Arc<Mutex<Vec<Stage>>>);

impl Timings {
    /// Runs `work`, recording its wall time under `name`.
    pub fn time<T>(&self, name: impl FnOnce() -> String, work: impl FnOnce() -> T) -> T {
        self.timed(name, work, false)
    }

    /// Runs `work`, recording its wall time under `name` as a part of the
    /// stage that encloses it.
    pub fn time_part<T>(&self, name: impl FnOnce() -> String, work: impl FnOnce() -> T) -> T {
        self.timed(name, work, true)
    }

    fn timed<T>(&self, name: impl FnOnce() -> String, work: impl FnOnce() -> T, part: bool) -> T {
        let start = Instant::now();
        let out = work();
        let seconds = start.elapsed().as_secs_f64();
        self.push(name(), seconds, part);
        out
    }

    /// Adds a stage timed elsewhere.
    pub fn record(&self, name: String, seconds: f64) {
        self.push(name, seconds, false);
    }

    /// Adds a part of the enclosing stage timed elsewhere.
    pub fn record_part(&self, name: String, seconds: f64) {
        self.push(name, seconds, true);
    }

    fn push(&self, name: String, seconds: f64, part: bool) {
        if let Ok(mut stages) = self.0.lock() {
            stages.push(Stage {
                name,
                seconds,
                part,
            });
        }
    }

    /// The stages recorded so far, in the order they finished; empties the list.
    pub fn take(&self) -> Vec<Stage> {
        self.0
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_are_kept_in_the_order_they_finish_and_taken_once() {
        let t = Timings::default();
        let clone = t.clone();
        let x = t.time(|| "outer".into(), || clone.time(|| "inner".into(), || 7));
        assert_eq!(x, 7);
        let names: Vec<String> = t.take().into_iter().map(|s| s.name).collect();
        assert_eq!(names, ["inner", "outer"]);
        assert!(t.take().is_empty());
    }

    #[test]
    fn a_part_is_marked_as_one_and_the_stage_around_it_is_not() {
        let t = Timings::default();
        let clone = t.clone();
        t.time(
            || "outer".into(),
            || clone.time_part(|| "inner".into(), || ()),
        );
        let parts: Vec<(String, bool)> = t.take().into_iter().map(|s| (s.name, s.part)).collect();
        assert_eq!(parts, [("inner".into(), true), ("outer".into(), false)]);
    }
}
