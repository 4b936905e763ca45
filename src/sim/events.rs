//! The event queue: a binary heap ordered by (time, insertion sequence), so
//! events at the same instant run in the order they were scheduled and a run
//! is reproducible. The workload's next arrival (one at a time: each
//! arrival schedules the next) waits beside the heap with its sequence
//! number and is taken when it comes first in the same order, which saves a
//! heap push and pop per request. Slot starts, scheduled in time order
//! before the run begins, wait beside it in a queue of their own, which
//! keeps the heap to the replicas' step ends.

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
    StepEnd { replica: usize, generation: u32 },
    /// A spot replica is taken back by its provider during slot `slot`.
    Interrupt { replica: usize, slot: usize },
    /// A replica that started slot `slot` loading its model (a pooled
    /// fleet moved its GPUs from another model) is up.
    Loaded { replica: usize, slot: usize },
    /// Request `request`'s KV cache has reached the decode side of a
    /// disaggregated unit: the fleet's part `decode` takes it.
    Handoff { request: usize, decode: usize },
}

/// The bit of an `Interrupt` word's slot that marks a `Loaded` event.
const LOADED: u64 = 1 << 31;
/// The bit of an `Interrupt` word's slot that marks a `Handoff` event.
const HANDOFF: u64 = 1 << 30;

/// Most replicas (and slots) an event can name: 30 bits of the packed word.
const MOST_INDEX: usize = 1 << 30;

impl Event {
    /// The event as one word: 2 bits of kind, 30 of replica, 32 of
    /// generation or slot.
    fn pack(self) -> u64 {
        let word = |kind: u64, a: usize, b: u64| {
            assert!(a < MOST_INDEX, "event index {a} beyond {MOST_INDEX}");
            kind << 62 | (a as u64) << 32 | b
        };
        match self {
            Event::Arrival => 0,
            Event::SlotStart(s) => word(1, s, 0),
            Event::StepEnd {
                replica,
                generation,
            } => word(2, replica, u64::from(generation)),
            Event::Interrupt { replica, slot } => {
                assert!(slot < MOST_INDEX, "slot {slot} beyond {MOST_INDEX}");
                word(3, replica, slot as u64)
            }
            Event::Loaded { replica, slot } => {
                assert!(slot < MOST_INDEX, "slot {slot} beyond {MOST_INDEX}");
                word(3, replica, slot as u64 | LOADED)
            }
            Event::Handoff { request, decode } => {
                assert!(decode < MOST_INDEX, "part {decode} beyond {MOST_INDEX}");
                word(3, request, decode as u64 | HANDOFF)
            }
        }
    }

    fn unpack(word: u64) -> Event {
        let a = ((word >> 32) & (MOST_INDEX as u64 - 1)) as usize;
        let b = word & 0xFFFF_FFFF;
        match word >> 62 {
            0 => Event::Arrival,
            1 => Event::SlotStart(a),
            2 => Event::StepEnd {
                replica: a,
                generation: b as u32,
            },
            _ if b & HANDOFF != 0 => Event::Handoff {
                request: a,
                decode: (b & !HANDOFF) as usize,
            },
            _ if b & LOADED != 0 => Event::Loaded {
                replica: a,
                slot: (b & !LOADED) as usize,
            },
            _ => Event::Interrupt {
                replica: a,
                slot: b as usize,
            },
        }
    }
}

/// Events ordered by (time, sequence). Times are seconds ≥ 0; their IEEE bit
/// patterns order like the numbers. The heap holds (time bits, sequence,
/// packed event): the sequence is unique, so the event is never compared.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: BinaryHeap<Reverse<(u64, u64, u64)>>,
    /// The pending arrival's (time bits, sequence).
    arrival: Option<(u64, u64)>,
    /// Slot starts scheduled in time order: (time bits, sequence, slot).
    slot_starts: std::collections::VecDeque<(u64, u64, usize)>,
    next_seq: u64,
}

impl EventQueue {
    /// Schedules `event` at `time_s` (≥ 0).
    pub(crate) fn push(&mut self, time_s: f64, event: Event) {
        debug_assert!(time_s >= 0.0 && time_s.is_finite(), "event time {time_s}");
        let key = (time_s.max(0.0).to_bits(), self.next_seq);
        self.next_seq += 1;
        match (event, self.arrival) {
            (Event::Arrival, None) => self.arrival = Some(key),
            (Event::SlotStart(s), _)
                if self.slot_starts.back().is_none_or(|last| last.0 <= key.0) =>
            {
                self.slot_starts.push_back((key.0, key.1, s));
            }
            _ => self.heap.push(Reverse((key.0, key.1, event.pack()))),
        }
    }

    /// The earliest event, first scheduled first among equal times.
    pub(crate) fn pop(&mut self) -> Option<(f64, Event)> {
        let heap_first = self
            .heap
            .peek()
            .map(|Reverse((bits, seq, _))| (*bits, *seq));
        let slot_first = self.slot_starts.front().map(|&(bits, seq, _)| (bits, seq));
        let side_first = match (self.arrival, slot_first) {
            (Some(a), Some(s)) => Some(a.min(s)),
            (a, s) => a.or(s),
        };
        match side_first {
            Some(first) if heap_first.is_none_or(|h| first < h) => {
                if self.arrival == Some(first) {
                    self.arrival = None;
                    Some((f64::from_bits(first.0), Event::Arrival))
                } else {
                    let (bits, _, s) = self.slot_starts.pop_front()?;
                    Some((f64::from_bits(bits), Event::SlotStart(s)))
                }
            }
            _ => self
                .heap
                .pop()
                .map(|Reverse((bits, _, e))| (f64::from_bits(bits), Event::unpack(e))),
        }
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

    #[test]
    fn arrivals_beside_the_heap_keep_the_order_of_time_then_insertion() {
        let mut q = EventQueue::default();
        q.push(1.0, Event::SlotStart(1));
        q.push(1.0, Event::Arrival);
        q.push(1.0, Event::SlotStart(2));
        // A second arrival while one is pending goes into the heap.
        q.push(0.5, Event::Arrival);
        q.push(2.0, Event::SlotStart(3));
        let order: Vec<(f64, Event)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (0.5, Event::Arrival),
                (1.0, Event::SlotStart(1)),
                (1.0, Event::Arrival),
                (1.0, Event::SlotStart(2)),
                (2.0, Event::SlotStart(3)),
            ]
        );
        q.push(3.0, Event::Arrival);
        q.push(3.0, Event::SlotStart(4));
        assert_eq!(q.pop(), Some((3.0, Event::Arrival)));
        assert_eq!(q.pop(), Some((3.0, Event::SlotStart(4))));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn events_survive_their_packing() {
        for e in [
            Event::Arrival,
            Event::SlotStart(0),
            Event::SlotStart(MOST_INDEX - 1),
            Event::StepEnd {
                replica: 12_345,
                generation: u32::MAX,
            },
            Event::Interrupt {
                replica: MOST_INDEX - 1,
                slot: 8_760,
            },
            Event::Loaded {
                replica: 7,
                slot: MOST_INDEX - 1,
            },
            Event::Handoff {
                request: MOST_INDEX - 1,
                decode: MOST_INDEX - 1,
            },
            Event::Handoff {
                request: 0,
                decode: 3,
            },
        ] {
            assert_eq!(Event::unpack(e.pack()), e);
        }
    }
}
