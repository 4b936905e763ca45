//! The event queue: a binary heap ordered by (time, insertion sequence), so
//! events at the same instant run in the order they were scheduled and a run
//! is reproducible.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What happens at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Event {
    /// The next request of the workload arrives.
    Arrival,
    /// Slot `0` begins: replicas follow the plan's counts for it.
    SlotStart(usize),
    /// The step (or run of decode steps) of a replica ends; `generation`
    /// tells a current end from one made stale by a cut run.
    StepEnd { replica: usize, generation: u64 },
    /// A spot replica is taken back by its provider during slot `slot`.
    Interrupt { replica: usize, slot: usize },
}

/// Events ordered by (time, sequence). Times are seconds ≥ 0; their IEEE bit
/// patterns order like the numbers.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: BinaryHeap<Reverse<(u64, u64, Event)>>,
    next_seq: u64,
}

impl EventQueue {
    /// Schedules `event` at `time_s` (≥ 0).
    pub(crate) fn push(&mut self, time_s: f64, event: Event) {
        debug_assert!(time_s >= 0.0 && time_s.is_finite(), "event time {time_s}");
        self.heap
            .push(Reverse((time_s.max(0.0).to_bits(), self.next_seq, event)));
        self.next_seq += 1;
    }

    /// The earliest event, first scheduled first among equal times.
    pub(crate) fn pop(&mut self) -> Option<(f64, Event)> {
        self.heap
            .pop()
            .map(|Reverse((bits, _, e))| (f64::from_bits(bits), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_insertion() {
        let mut q = EventQueue::default();
        q.push(2.0, Event::SlotStart(1));
        q.push(1.0, Event::SlotStart(2));
        q.push(1.0, Event::Arrival);
        q.push(0.5, Event::SlotStart(3));
        let order: Vec<Event> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(
            order,
            vec![
                Event::SlotStart(3),
                Event::SlotStart(2),
                Event::Arrival,
                Event::SlotStart(1)
            ]
        );
    }
}
