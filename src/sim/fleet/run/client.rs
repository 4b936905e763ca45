//! A benchmark client against a fleet: prompts sent at their times with at
//! most `max_concurrency` in flight, each completion (or refusal) letting
//! the next one in, as `vllm bench serve` drives a deployment's router (a
//! disaggregated unit's front included).

use super::Run;
use crate::sim::events::Event;
use crate::sim::fleet::{Completed, Fleet};
use crate::sim::request::Arrival;
use crate::traces::block_chains::NO_CHAIN;

/// One prompt the client sends: not before `send_s`, to tier 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ClientPrompt {
    pub send_s: f64,
    pub input_tokens: u32,
    pub output_tokens: u32,
}

/// What the client saw: each completed request in completion order, the
/// requests the fleet could not serve, and when the last one ended.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClientRun {
    pub completed: Vec<Completed>,
    pub refused: u64,
    pub duration_s: f64,
}

/// Runs `prompts` (sorted by `send_s`) against `fleet`'s slot 0 with at
/// most `max_concurrency` in flight (`None`: no cap).
pub(crate) fn client(
    fleet: &Fleet,
    prompts: &[ClientPrompt],
    max_concurrency: Option<u32>,
) -> ClientRun {
    let mut run = Run::new(fleet, 0..1, 0);
    run.start_slot(0);
    let cap = max_concurrency.map_or(usize::MAX, |c| c as usize);
    let mut out = ClientRun::default();
    let (mut next, mut waking) = (0, false);
    loop {
        let ended = out.completed.len() + run.result.tiers[0].unserved_requests as usize;
        let now = out.duration_s;
        // Send what may go now; wake at the next prompt's time otherwise.
        while next < prompts.len() && next - ended.min(next) < cap {
            let p = prompts[next];
            if p.send_s > now {
                if !waking {
                    run.queue.push(p.send_s, Event::Arrival);
                    waking = true;
                }
                break;
            }
            next += 1;
            run.arrive(
                now,
                Arrival {
                    time_s: now,
                    tier: 0,
                    input_tokens: p.input_tokens,
                    output_tokens: p.output_tokens,
                    chain: NO_CHAIN,
                },
            );
        }
        let Some((at, event)) = run.queue.pop() else {
            break;
        };
        out.duration_s = out.duration_s.max(at);
        match event {
            Event::Arrival => waking = false,
            Event::StepEnd {
                replica,
                generation,
            } if run.replicas[replica].generation == generation => {
                run.end_step(at, replica, &mut |c: &Completed| out.completed.push(*c));
            }
            Event::Handoff { request, decode } => run.hand_off(at, request as u32, decode),
            Event::Interrupt { replica, slot } => run.interrupt(replica, slot),
            Event::Loaded { replica, slot } => run.loaded(replica, slot, at),
            Event::StepEnd { .. } | Event::SlotStart(_) => {}
        }
    }
    out.refused = run.result.tiers[0].unserved_requests;
    out
}
