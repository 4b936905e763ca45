//! Where a long computation's time goes: named stages, each timed as it
//! runs, collected in the order they finished (`planner bench` prints them).
//! Recording costs a clock read and a push under a lock per stage.

use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One timed stage: its name (with its round or candidate) and wall time.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    pub name: String,
    pub seconds: f64,
}

/// A shared, cloneable list of timed stages.
#[derive(Debug, Clone, Default)]
pub struct Timings(Arc<Mutex<Vec<Stage>>>);

impl Timings {
    /// Runs `work`, recording its wall time under `name`.
    pub fn time<T>(&self, name: impl FnOnce() -> String, work: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = work();
        let seconds = start.elapsed().as_secs_f64();
        self.record(name(), seconds);
        out
    }

    /// Adds a stage timed elsewhere.
    pub fn record(&self, name: String, seconds: f64) {
        if let Ok(mut stages) = self.0.lock() {
            stages.push(Stage { name, seconds });
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
}
