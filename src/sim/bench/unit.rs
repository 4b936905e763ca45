//! The benchmark client against one disaggregated unit (its prefill and
//! decode replicas behind the router, `docs/model.md` §4.3): the fleet's
//! replay driven by the client ([`crate::sim::fleet::client`]).

use super::{BenchRun, Prompt, RequestRecord};
use crate::sim::fleet::{client, ClientPrompt, Fleet, FleetTier};
use crate::sim::metrics::Limits;
use crate::sim::replica::ReplicaSpec;
use crate::sim::router::Router;

/// Runs `prompts` against one unit of `spec` (a spec with its prefill side,
/// [`ReplicaSpec::split`]). A prompt longer than `max_context_tokens`, or
/// one the unit cannot hold, is refused. Requests are recorded in
/// completion order, the refused ones after them, each with its decode
/// replica's inter-token gaps when `itls` asks for them.
pub(crate) fn unit_run(
    spec: &ReplicaSpec,
    prompts: &[Prompt],
    max_concurrency: Option<u32>,
    max_context_tokens: u32,
    itls: bool,
) -> BenchRun {
    let tier = FleetTier {
        name: "bench".into(),
        limits: Limits {
            ttft_ms: f64::INFINITY,
            tpot_ms: f64::INFINITY,
        },
        api_share_by_slot: vec![0.0],
        mean_output_tokens: mean_output(prompts),
        deadline_s: None,
    };
    let fleet = Fleet::single(1e15, tier, spec.clone(), 1, Router::LeastWork);
    let fits = |p: &Prompt| {
        u64::from(p.input_tokens.max(1)) + u64::from(p.output_tokens.max(1))
            <= u64::from(max_context_tokens)
    };
    let (sent, too_long): (Vec<&Prompt>, Vec<&Prompt>) = prompts.iter().partition(|p| fits(p));
    let sent: Vec<ClientPrompt> = sent
        .into_iter()
        .map(|p| ClientPrompt {
            send_s: p.send_s,
            input_tokens: p.input_tokens,
            output_tokens: p.output_tokens,
        })
        .collect();
    let run = client(&fleet, &sent, max_concurrency, itls);
    let mut requests: Vec<RequestRecord> = run
        .completed
        .iter()
        .zip(run.itls_s.into_iter().chain(std::iter::repeat(Vec::new())))
        .map(|(c, itls_s)| RequestRecord {
            input_tokens: c.input_tokens,
            output_tokens: c.output_tokens,
            sent_s: c.arrival_s,
            ttft_s: c.ttft_ms / 1e3,
            e2e_s: c.e2e_ms / 1e3,
            itls_s,
            error: None,
            cached_tokens: 0,
        })
        .collect();
    let refused =
        (0..run.refused).map(|_| "the unit's KV caches cannot hold the request".to_string());
    let longer = too_long
        .iter()
        .map(|_| format!("the request exceeds the model's context of {max_context_tokens}"));
    for error in refused.chain(longer) {
        requests.push(RequestRecord {
            input_tokens: 0,
            output_tokens: 0,
            sent_s: 0.0,
            ttft_s: 0.0,
            e2e_s: 0.0,
            itls_s: Vec::new(),
            error: Some(error),
            cached_tokens: 0,
        });
    }
    BenchRun {
        requests,
        duration_s: run.duration_s,
        preemptions: 0,
    }
}

fn mean_output(prompts: &[Prompt]) -> f64 {
    if prompts.is_empty() {
        return 1.0;
    }
    prompts
        .iter()
        .map(|p| f64::from(p.output_tokens))
        .sum::<f64>()
        / prompts.len() as f64
}

#[cfg(test)]
mod tests {
    use super::unit_run;
    use crate::sim::bench::{run, Prompt};
    use crate::sim::replica_spec::tests::h100_llama8b as replica;
    use crate::sim::{KvTransfer, SplitSpec};
    use crate::traces::block_chains::NO_CHAIN;

    #[test]
    fn a_closed_loop_client_keeps_its_concurrency_on_a_unit() {
        let unit = replica().split(SplitSpec {
            prefill: replica(),
            prefill_replicas: 1,
            decode_replicas: 1,
            transfer: KvTransfer::new(131_072.0, 1, 100.0, 1e-5),
        });
        let prompts: Vec<Prompt> = (0..200)
            .map(|_| Prompt {
                input_tokens: 1_000,
                output_tokens: 100,
                send_s: 0.0,
                chain: NO_CHAIN,
            })
            .collect();
        let apart = unit_run(&unit, &prompts, Some(8), 131_072, true);
        assert_eq!(apart.requests.len(), 200);
        assert!(apart.requests.iter().all(|r| r.error.is_none()));
        // Every request's gaps: one fewer than its tokens, summing to its
        // time after the first token.
        for r in &apart.requests {
            assert_eq!(r.itls_s.len(), 99);
            let sum: f64 = r.itls_s.iter().sum();
            assert!(
                (sum - (r.e2e_s - r.ttft_s)).abs() < 1e-6,
                "{sum} vs {}",
                r.e2e_s - r.ttft_s
            );
        }
        // Never more than 8 in flight: at any send time, fewer than 8
        // requests sent earlier are still running.
        for r in &apart.requests {
            let running = apart
                .requests
                .iter()
                .filter(|o| o.sent_s < r.sent_s && o.sent_s + o.e2e_s > r.sent_s + 1e-12)
                .count();
            assert!(running < 8, "{running} in flight when one was sent");
        }
        // One aggregated replica at the same concurrency: the unit's two
        // replicas finish sooner, and its streams run no slower.
        let together = run(&replica(), &prompts, Some(8), 131_072, false, None);
        assert!(apart.duration_s < together.duration_s);
        let tpot = |r: &crate::sim::bench::BenchRun| {
            r.requests
                .iter()
                .map(|q| (q.e2e_s - q.ttft_s) / 99.0)
                .sum::<f64>()
                / r.requests.len() as f64
        };
        assert!(
            tpot(&apart) <= tpot(&together),
            "{} vs {}",
            tpot(&apart),
            tpot(&together)
        );
        // A prompt past the context is refused, not sent.
        let long = [Prompt {
            input_tokens: 200_000,
            output_tokens: 10,
            send_s: 0.0,
            chain: NO_CHAIN,
        }];
        let refused = unit_run(&unit, &long, Some(1), 131_072, true);
        assert!(refused.requests[0].error.is_some());
        // Without the gaps (a fit's means): the same requests, latencies and
        // duration, and no gap kept.
        let bare = unit_run(&unit, &prompts, Some(8), 131_072, false);
        assert_eq!(bare.duration_s, apart.duration_s);
        assert_eq!(bare.requests.len(), apart.requests.len());
        for (b, a) in bare.requests.iter().zip(&apart.requests) {
            assert!(b.itls_s.is_empty());
            assert_eq!((b.sent_s, b.ttft_s, b.e2e_s), (a.sent_s, a.ttft_s, a.e2e_s));
        }
    }
}
