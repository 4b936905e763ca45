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

/// What the client saw: each completed request in completion order with
/// the gaps before its tokens after the first (when asked for), the
/// requests the fleet could not serve, and when the last one ended.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClientRun {
    pub completed: Vec<Completed>,
    /// Per completed request, its inter-token gaps (seconds): the last
    /// `output − 1` steps of its replica that gave tokens after its first;
    /// empty when the run was not asked to record them.
    pub itls_s: Vec<Vec<f64>>,
    pub refused: u64,
    pub duration_s: f64,
}

/// Runs `prompts` (sorted by `send_s`) against `fleet`'s slot 0 with at
/// most `max_concurrency` in flight (`None`: no cap). `itls`: record each
/// completed request's inter-token gaps (a fit that needs only means skips
/// them: a gap per output token of every request, and every step's time
/// kept per replica to find them).
pub(crate) fn client(
    fleet: &Fleet,
    prompts: &[ClientPrompt],
    max_concurrency: Option<u32>,
    itls: bool,
) -> ClientRun {
    let mut run = Run::new(fleet, 0..1, 0);
    run.start_slot(0);
    let cap = max_concurrency.map_or(usize::MAX, |c| c as usize);
    let mut out = ClientRun::default();
    let (mut next, mut waking) = (0, false);
    // Per replica, the times its steps gave tokens.
    let mut token_times: Vec<Vec<f64>> = Vec::new();
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
                if itls {
                    if token_times.len() <= replica {
                        token_times.resize(replica + 1, Vec::new());
                    }
                    run.replicas[replica].token_times(&mut token_times[replica]);
                }
                let before = out.completed.len();
                run.end_step(at, replica, &mut |c: &Completed| out.completed.push(*c));
                if !itls {
                    continue;
                }
                let server = &run.spec(replica).perf;
                for c in &out.completed[before..] {
                    // The replica's own clock: the server's time is in the
                    // request's latencies, not in its steps.
                    let first_s = c.arrival_s + c.ttft_ms / 1e3 - server.server_s(c.input_tokens);
                    let finish_s = first_s + (c.e2e_ms - c.ttft_ms) / 1e3;
                    out.itls_s.push(gaps(
                        &token_times[replica],
                        first_s,
                        finish_s,
                        c.output_tokens,
                    ));
                }
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

/// The gaps before the tokens after the first of a request whose first
/// token came at `first_s` and its last at `finish_s`, from its replica's
/// token times: the last `output − 1` that ended in (first, finish].
fn gaps(times: &[f64], first_s: f64, finish_s: f64, output_tokens: u32) -> Vec<f64> {
    let wanted = output_tokens.saturating_sub(1) as usize;
    if wanted == 0 {
        return Vec::new();
    }
    // A tolerance for the float round trip through milliseconds.
    let eps = 1e-9 * finish_s.abs().max(1.0);
    let lo = times.partition_point(|&t| t <= first_s + eps);
    let hi = times.partition_point(|&t| t <= finish_s + eps);
    let times = &times[lo..hi];
    let times = &times[times.len().saturating_sub(wanted)..];
    let mut last = first_s;
    times
        .iter()
        .map(|&t| {
            let gap = (t - last).max(0.0);
            last = t;
            gap
        })
        .collect()
}
