use super::*;
use crate::perf::step::tests::{h100, llama8b};
use crate::perf::{PerfModel, StepModel, StepTime};
use crate::profiles::precision::Precision;
use crate::profiles::Scheduler;

fn spec(kv: u64) -> ReplicaSpec {
    let mut s = ReplicaSpec::new(
        StepModel::Roofline(PerfModel::new(&h100(), &llama8b(), 1, Precision::Bf16)),
        256,
        2048,
        Scheduler::DecodeFirstChunked,
    );
    s.kv_capacity_tokens = kv;
    s
}

fn prompts(n: usize, input: u32, output: u32) -> Vec<Prompt> {
    vec![
        Prompt {
            input_tokens: input,
            output_tokens: output,
            send_s: 0.0,
            chain: crate::traces::block_chains::NO_CHAIN,
        };
        n
    ]
}

#[test]
fn one_request_alone_takes_its_prefill_then_its_decode_steps() {
    let s = spec(1_000_000);
    let run = run(&s, &prompts(1, 1000, 10), Some(1), 100_000, true, None);
    let r = &run.requests[0];
    let perf = &s.perf;
    assert!((r.ttft_s - perf.prefill_s(1000.0)).abs() < 1e-12);
    let decode: f64 = (0..9)
        .map(|j| perf.decode_step_s(1.0, 1001.0 + f64::from(j)))
        .sum();
    assert!((r.e2e_s - r.ttft_s - decode).abs() < 1e-9);
    assert_eq!(r.itls_s.len(), 9);
    assert!((r.itls_s.iter().sum::<f64>() - decode).abs() < 1e-9);
    assert!((run.duration_s - r.e2e_s).abs() < 1e-12);
}

#[test]
fn a_closed_loop_keeps_at_most_its_concurrency_in_flight() {
    let s = spec(1_000_000);
    let run = run(&s, &prompts(40, 1000, 50), Some(4), 100_000, true, None);
    assert_eq!(run.requests.len(), 40);
    // Sweep the send and finish times: never more than 4 at once.
    let mut edges: Vec<(f64, i32)> = run
        .requests
        .iter()
        .flat_map(|r| [(r.sent_s, 1), (r.sent_s + r.e2e_s, -1)])
        .collect();
    edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut open = 0;
    for (_, d) in edges {
        open += d;
        assert!(open <= 4);
    }
    // The first wave queues at time 0 (4,000 tokens, a 2,048-token budget):
    // the fourth prompt's first token comes
    // after the first's.
    let firsts: Vec<f64> = run.requests[..4].iter().map(|r| r.ttft_s).collect();
    assert!(firsts[3] > firsts[0]);
    for r in &run.requests {
        assert_eq!(r.itls_s.len(), 49);
        assert!((r.itls_s.iter().sum::<f64>() - (r.e2e_s - r.ttft_s)).abs() < 1e-9);
    }
}

#[test]
fn requests_that_cannot_fit_are_refused_not_queued() {
    let s = spec(2_000);
    let mut ps = prompts(3, 500, 50);
    ps[1].input_tokens = 5_000;
    let run = run(&s, &ps, Some(2), 100_000, true, None);
    assert!(run.requests[1]
        .error
        .as_deref()
        .unwrap()
        .contains("KV cache"));
    assert!(run.requests[0].error.is_none() && run.requests[2].error.is_none());
    let summary = BenchSummary::of(&run);
    assert_eq!((summary.completed, summary.failed), (2, 1));
}

#[test]
fn an_open_loop_sends_each_prompt_at_its_time() {
    let s = spec(1_000_000);
    let mut ps = prompts(5, 200, 5);
    for (i, p) in ps.iter_mut().enumerate() {
        p.send_s = 10.0 * i as f64;
    }
    let run = run(&s, &ps, None, 100_000, true, None);
    for (i, r) in run.requests.iter().enumerate() {
        assert_eq!(r.sent_s, 10.0 * i as f64);
        // Far apart: each runs alone.
        assert!((r.ttft_s - run.requests[0].ttft_s).abs() < 1e-12);
    }
}

/// The server's own time (a fixed part and a part per prompt token) comes
/// before the engine sees a request: a request alone has its first token and
/// its last that much later, its decode steps unchanged.
#[test]
fn the_servers_own_time_delays_a_lone_requests_first_token_by_its_figures() {
    use crate::perf::EngineModel;
    let lone = |server_ms: f64, us_per_token: f64| {
        let mut e = crate::profiles::engine_fixture();
        e.server_ms_per_request = server_ms;
        e.server_us_per_prompt_token = us_per_token;
        let s = ReplicaSpec::new(
            StepModel::Engine(Box::new(EngineModel::new(
                "vllm",
                &e,
                &h100(),
                &llama8b(),
                1,
                Precision::Bf16,
            ))),
            256,
            2048,
            Scheduler::DecodeFirstChunked,
        );
        run(&s, &prompts(1, 1000, 10), Some(1), 100_000, true, None).requests[0].clone()
    };
    let (bare, served) = (lone(0.0, 0.0), lone(12.0, 3.0));
    // 12 ms + 3 µs × 1,000 tokens = 15 ms.
    assert!((served.ttft_s - bare.ttft_s - 0.015).abs() < 1e-12);
    assert!((served.e2e_s - bare.e2e_s - 0.015).abs() < 1e-12);
    assert_eq!(served.itls_s.len(), bare.itls_s.len());
    for (a, b) in served.itls_s.iter().zip(&bare.itls_s) {
        assert!((a - b).abs() < 1e-12);
    }
}

/// The end of each decode step of a request's tokens after its first.
fn decode_ends(r: &RequestRecord) -> Vec<f64> {
    r.itls_s
        .iter()
        .scan(r.sent_s + r.ttft_s, |t, gap| {
            *t += gap;
            Some(*t)
        })
        .collect()
}

#[test]
fn a_scheduler_that_receives_every_ten_decode_steps_admits_a_request_at_the_tenth() {
    let mut s = spec(1_000_000);
    let alone =
        decode_ends(&run(&s, &prompts(1, 1000, 100), Some(1), 100_000, true, None).requests[0]);
    // A second request reaches the replica during the first one's second
    // decode step.
    let mut ps = prompts(2, 1000, 100);
    ps[1].send_s = f64::midpoint(alone[0], alone[1]);
    // The decode step of the first request in which the second is
    // prefilled (the first that differs from the request alone), and
    // whether the second's first token comes at its end.
    let joins_at = |s: &ReplicaSpec| {
        let both = run(s, &ps, Some(2), 100_000, true, None);
        let first = decode_ends(&both.requests[0]);
        let j = (0..first.len()).find(|&j| first[j] != alone[j]).unwrap();
        let second = &both.requests[1];
        assert_eq!(second.sent_s + second.ttft_s, first[j]);
        j
    };
    // Received at once, it is prefilled in the third decode step.
    assert_eq!(joins_at(&s), 2);
    // Received after the tenth decode step (the receipt after the first
    // request's prefill opened the interval), it is prefilled in the
    // eleventh.
    s.recv_interval_steps = 10;
    assert_eq!(joins_at(&s), 10);
    // A request that reaches an idle replica is received at once: a lone
    // request is served as it was.
    let lone = run(&s, &prompts(1, 1000, 100), Some(1), 100_000, true, None);
    assert_eq!(decode_ends(&lone.requests[0]), alone);
}

/// The first `n` requests of the shipped Mooncake conversation trace under
/// `max_input` prompt tokens, as prompts with their block chains.
fn conversation(n: usize, max_input: u32) -> (Vec<Prompt>, Arc<BlockChains>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/mooncake/conversation_trace.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let mut chains = BlockChains::new(512);
    let mut prompts = Vec::new();
    for line in text.lines() {
        let (r, blocks) = crate::traces::mooncake::parse_row_with_blocks(line.as_bytes()).unwrap();
        if r.input_tokens > max_input {
            continue;
        }
        prompts.push(Prompt {
            input_tokens: r.input_tokens,
            output_tokens: r.output_tokens.clamp(1, 64),
            send_s: 0.0,
            chain: chains.push(&blocks),
        });
        if prompts.len() == n {
            break;
        }
    }
    (prompts, Arc::new(chains))
}

#[test]
fn a_cached_prefix_is_not_prefilled_again() {
    let s = spec(1_000_000);
    let mut chains = BlockChains::new(512);
    let chain = chains.push(&[1, 2, 3]);
    let chains = Arc::new(chains);
    let mut ps = prompts(2, 1536, 10);
    for p in &mut ps {
        p.chain = chain;
    }
    let cached = run(&s, &ps, Some(1), 100_000, true, Some(&chains));
    let plain = run(&s, &ps, Some(1), 100_000, true, None);
    let (first, second) = (&cached.requests[0], &cached.requests[1]);
    assert_eq!(first.cached_tokens, 0);
    // All but the last token found: one token prefilled over 1,535 of context.
    assert_eq!(second.cached_tokens, 1535);
    let one_token = s.perf.step_s(&crate::perf::StepWork {
        tokens: 1.0,
        attention_pairs: 1535.0 + 0.5,
        kv_read_tokens: 1535.0,
        logit_tokens: 1.0,
        sequences: 1.0,
    });
    assert!((second.ttft_s - one_token).abs() < 1e-12, "{second:?}");
    assert!(second.ttft_s < first.ttft_s / 4.0);
    // Without the cache both prefill the whole prompt; the first alike.
    assert_eq!(plain.requests[1].cached_tokens, 0);
    assert!((plain.requests[1].ttft_s - first.ttft_s).abs() < 1e-12);
    assert!((plain.requests[0].ttft_s - first.ttft_s).abs() < 1e-12);
}

#[test]
fn with_room_for_every_block_the_hits_are_the_traces_prefix_share() {
    let (ps, chains) = conversation(300, u32::MAX);
    let s = spec(1_000_000_000);
    let got = run(&s, &ps, Some(8), 1_000_000, false, Some(&chains));
    // An independent count: a request's leading blocks seen in any earlier
    // prompt (admission follows the prompts' order), all but its last token.
    for (i, (p, r)) in ps.iter().zip(&got.requests).enumerate() {
        let blocks = chains.get(p.chain);
        let earlier = |h: &u64| ps[..i].iter().any(|q| chains.get(q.chain).contains(h));
        let hit = blocks.iter().take_while(|h| earlier(h)).count() as u32;
        assert_eq!(
            r.cached_tokens,
            (hit * 512).min(p.input_tokens - 1),
            "request {i}"
        );
    }
    let hits: u32 = got.requests.iter().map(|r| r.cached_tokens).sum();
    assert!(hits > 0);
}

#[test]
fn the_hit_rate_never_rises_when_the_cache_shrinks() {
    // One request at a time: the same requests are admitted in the same
    // order whatever the memory, so only the cache's size differs.
    let (ps, chains) = conversation(400, 16_000);
    let mut last = u64::MAX;
    let mut largest = None;
    for kv in [10_000_000, 400_000, 100_000, 40_000, 20_000] {
        let got = run(&spec(kv), &ps, Some(1), 1_000_000, false, Some(&chains));
        assert!(got.requests.iter().all(|r| r.error.is_none()));
        let hits: u64 = got
            .requests
            .iter()
            .map(|r| u64::from(r.cached_tokens))
            .sum();
        assert!(hits <= last, "{kv} tokens: {hits} > {last}");
        last = hits;
        largest.get_or_insert(hits);
    }
    // The sizes matter: the smallest cache finds less than the largest.
    assert!(last < largest.unwrap(), "{last} vs {largest:?}");
}

#[test]
fn each_attention_rank_takes_at_most_its_own_budget_of_a_prompt() {
    // The replica's step budget spans its ranks, a prompt's chunk one
    // rank's: a 4,096-token prompt under a 1,024-token rank budget takes
    // four chunks even when the step budget holds it whole.
    let mut s = spec(1_000_000);
    s.max_batched_tokens = 8_192;
    s.rank_tokens = 1_024;
    let chunked = run(&s, &prompts(1, 4_096, 2), Some(1), 100_000, true, None);
    s.rank_tokens = 8_192;
    let whole = run(&s, &prompts(1, 4_096, 2), Some(1), 100_000, true, None);
    let perf = &s.perf;
    assert!((whole.requests[0].ttft_s - perf.prefill_s(4_096.0)).abs() < 1e-12);
    let four_chunks: f64 = (0..4)
        .map(|k| {
            let (c, o) = (1_024.0, 1_024.0 * f64::from(k));
            perf.step_s(&crate::perf::StepWork {
                tokens: c,
                attention_pairs: c * o + c * c / 2.0,
                kv_read_tokens: o,
                logit_tokens: if k == 3 { 1.0 } else { 0.0 },
                sequences: 1.0,
            })
        })
        .sum();
    assert!((chunked.requests[0].ttft_s - four_chunks).abs() < 1e-9);
    // Four prompts of one rank's budget each run in one step together.
    s.rank_tokens = 1_024;
    let four = run(&s, &prompts(4, 1_024, 2), Some(4), 100_000, true, None);
    let firsts: Vec<f64> = four.requests.iter().map(|r| r.ttft_s).collect();
    assert!(
        firsts.iter().all(|&t| (t - firsts[0]).abs() < 1e-12),
        "{firsts:?}"
    );
}
