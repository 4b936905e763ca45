//! Capacity of one replica per (configuration, tier): the highest arrival rate
//! it sustains while the tier's percentile TTFT and TPOT limits hold, for the
//! tier's real length distribution and measured burstiness.
//!
//! Queueing treatment (formulas in `docs/model.md`): prefills are served first
//! (as vLLM does without chunking), so prompts queue as a G/G/1 system
//! (Kingman's mean wait with the trace's interarrival CV, exponential tail for
//! the percentile); decoding sequences share steps, their number follows from
//! Little's law, and its percentile from a Poisson law capped at the batch.

pub(crate) mod config;
pub(crate) mod fleet;
pub(crate) mod probe;
pub(crate) mod published;
pub(crate) mod runs;
pub(crate) mod simulated;

use crate::capacity::fleet::FleetCapacity;
use crate::demand::TierDemand;
use crate::perf::{StepModel, StepTime};
use crate::scenario::{GpuOffer, ServedModel, Tier};
pub(crate) use config::{speculative_method, Config};
use serde::Serialize;
use statrs::function::gamma::ln_gamma;

/// What one replica of a configuration achieves on a tier, and (capacity by
/// simulation) what fleets of 1…N replicas behind the router sustain.
#[derive(Debug, Clone, Serialize)]
pub struct CapacityEntry {
    /// Index of the configuration's GPU type among the scenario's offers.
    #[serde(skip)]
    pub gpu: usize,
    pub config: Config,
    pub gpus_per_replica: u32,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Fleet step function: absent for the analytic model and for
    /// configurations screened out before fleet simulation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet: Option<FleetCapacity>,
}

/// Whether and how fast a configuration serves a tier.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Verdict {
    /// Serves the tier up to `max_rps` requests/s per replica.
    Serves(Sustained),
    /// Cannot serve the tier at any rate.
    Cannot {
        reason: String,
        best_ttft_ms: Option<f64>,
        best_tpot_ms: Option<f64>,
    },
}

/// The operating point at the highest sustainable rate.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Sustained {
    /// Requests/s one replica sustains under the tier's SLO.
    pub max_rps: f64,
    /// Predicted TTFT and TPOT at the tier's percentile at that rate.
    pub ttft_ms: f64,
    pub tpot_ms: f64,
    /// Mean sequences decoding at that rate.
    pub mean_batch: f64,
    /// Which limit binds: "ttft", "tpot", "batch" or "compute".
    pub binding: String,
}

/// The latency figures of a replica at one arrival rate.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OperatingPoint {
    pub ttft_ms: f64,
    pub tpot_ms: f64,
    pub mean_batch: f64,
    /// `false` when the replica cannot keep up at all (queue grows).
    pub stable: bool,
}

/// The length figures of a tier that the queueing model needs, precomputed
/// for one configuration.
#[derive(Debug, Clone)]
pub(crate) struct TierLoad {
    /// Mean prefill seconds per request, and its second moment.
    prefill_mean_s: f64,
    prefill_second_moment_s2: f64,
    /// Prefill seconds of the tier's percentile prompt.
    prefill_tail_s: f64,
    /// The server's own seconds for that prompt (outside the GPU's steps).
    server_tail_s: f64,
    /// Mean decode steps per request (output tokens − 1).
    decode_steps: f64,
    /// Mean context during decode: mean input + half the mean output.
    mean_context: f64,
    /// Interarrival coefficient of variation.
    arrival_cv: f64,
    /// Percentile as a probability, e.g. 0.99.
    quantile: f64,
}

impl TierLoad {
    /// Precomputes the tier's load figures on `perf`.
    pub(crate) fn new(perf: &StepModel, demand: &TierDemand, tier: &Tier) -> Self {
        let quantile = tier.percentile / 100.0;
        let n = demand.lengths.len().max(1) as f64;
        let (sum, sum_sq) = demand
            .lengths
            .iter()
            .fold((0.0, 0.0), |(s, s2), &(input, _)| {
                let t = perf.prefill_s(f64::from(input));
                (s + t, s2 + t * t)
            });
        let mut inputs: Vec<f64> = demand.lengths.iter().map(|l| f64::from(l.0)).collect();
        inputs.sort_by(f64::total_cmp);
        let tail_input = crate::base::stats::percentile_sorted(&inputs, quantile);
        TierLoad {
            prefill_mean_s: sum / n,
            prefill_second_moment_s2: sum_sq / n,
            prefill_tail_s: perf.prefill_s(tail_input),
            server_tail_s: perf.server_s(tail_input.round() as u32),
            decode_steps: (demand.output_tokens.mean - 1.0).max(0.0),
            mean_context: demand.input_tokens.mean + demand.output_tokens.mean / 2.0,
            arrival_cv: demand.within_minute_cv,
            quantile,
        }
    }
}

/// Predicted percentile TTFT and TPOT of one replica at `rate_rps`.
pub(crate) fn operating_point(
    perf: &StepModel,
    load: &TierLoad,
    max_batch: u32,
    rate_rps: f64,
) -> OperatingPoint {
    let batch_cap = f64::from(max_batch);
    let rho = rate_rps * load.prefill_mean_s;
    if rho >= 1.0 {
        return OperatingPoint {
            ttft_ms: f64::INFINITY,
            tpot_ms: f64::INFINITY,
            mean_batch: batch_cap,
            stable: false,
        };
    }
    // Little's law for decoding sequences: n = λ × steps × step(n) / (1 − ρ).
    let k = rate_rps * load.decode_steps / (1.0 - rho);
    let step = |n: f64| perf.decode_step_s(n.max(1.0), load.mean_context);
    let (mean_batch, batch_full) = if k * step(batch_cap) > batch_cap {
        (batch_cap, true)
    } else {
        let (mut lo, mut hi) = (0.0, batch_cap);
        for _ in 0..60 {
            let mid = 0.5 * (lo + hi);
            if mid >= k * step(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        (hi, false)
    };
    let tail_batch = if mean_batch > 0.0 {
        poisson_quantile(mean_batch, load.quantile, batch_cap)
    } else {
        0.0
    };
    let tpot_s = step(tail_batch.min(batch_cap)) / (1.0 - rho);
    // Kingman: W = ρ/(1−ρ) × (ca² + cs²)/2 × E[S]; P(W > t) = ρ exp(−ρ t / W).
    let es = load.prefill_mean_s;
    let cs2 = if es > 0.0 {
        (load.prefill_second_moment_s2 / (es * es) - 1.0).max(0.0)
    } else {
        0.0
    };
    let mean_wait = rho / (1.0 - rho) * (load.arrival_cv.powi(2) + cs2) / 2.0 * es;
    let tail_wait = if rho > 1.0 - load.quantile && mean_wait > 0.0 {
        mean_wait / rho * (rho / (1.0 - load.quantile)).ln()
    } else {
        0.0
    };
    // A new prompt also waits for the decode step in flight, if any: a full
    // step, weighted by the chance that one is running.
    let residual_s = if mean_batch > 0.0 {
        step(mean_batch) * mean_batch.min(1.0)
    } else {
        0.0
    };
    let ttft_s = tail_wait + load.prefill_tail_s + residual_s + load.server_tail_s;
    OperatingPoint {
        ttft_ms: ttft_s * 1e3,
        tpot_ms: tpot_s * 1e3,
        mean_batch,
        stable: !batch_full,
    }
}

/// The smallest k with P(N ≤ k) ≥ q for N ~ Poisson(mean), searched up to
/// `cap` (returned when the quantile lies beyond it).
pub(crate) fn poisson_quantile(mean: f64, q: f64, cap: f64) -> f64 {
    let ln_mean = mean.ln();
    let mut cumulative = 0.0;
    let mut k = 0.0;
    while k < cap {
        cumulative += (-mean + k * ln_mean - ln_gamma(k + 1.0)).exp();
        if cumulative >= q {
            return k;
        }
        k += 1.0;
    }
    cap
}

/// Among the entries at `among`, those serving the tier and not dominated on
/// their GPU type by one with no more GPUs per replica and at least as much
/// single-replica capacity per GPU (ties go to the lower index), in index
/// order.
pub(crate) fn non_dominated(entries: &[CapacityEntry], among: &[usize]) -> Vec<usize> {
    let serving: Vec<(usize, u32, f64, usize)> = among
        .iter()
        .filter_map(|&i| {
            let e = &entries[i];
            match &e.verdict {
                Verdict::Serves(s) => Some((i, e.gpus_per_replica, s.max_rps, e.gpu)),
                Verdict::Cannot { .. } => None,
            }
        })
        .collect();
    let mut kept: Vec<usize> = serving
        .iter()
        .filter(|&&(i, p, mu, g)| {
            !serving.iter().any(|&(j, q, nu, h)| {
                j != i
                    && h == g
                    && q <= p
                    && nu / f64::from(q) >= mu / f64::from(p)
                    && (q < p || nu / f64::from(q) > mu / f64::from(p) || j < i)
            })
        })
        .map(|&(i, ..)| i)
        .collect();
    kept.sort_unstable();
    kept
}

/// Capacity of one configuration on one tier.
pub(crate) fn evaluate(
    gpu: usize,
    offer: &GpuOffer,
    model: &ServedModel,
    config: &Config,
    tier: &Tier,
    demand: &TierDemand,
) -> CapacityEntry {
    let max_batch = config.max_batch;
    let entry = |verdict| CapacityEntry {
        gpu,
        config: config.clone(),
        gpus_per_replica: config.gpus_per_replica(),
        verdict,
        fleet: None,
    };
    let cannot = |reason: String| Verdict::Cannot {
        reason,
        best_ttft_ms: None,
        best_tpot_ms: None,
    };
    let perf = config.perf(offer, model);
    let kv_tokens = perf.kv_capacity_tokens();
    if kv_tokens <= 0.0 {
        return entry(cannot(format!(
            "weights need {:.1} GB per GPU; {} has {:.1} GB usable",
            perf.weight_bytes_per_gpu() / 1e9,
            offer.id,
            perf.usable_memory_bytes_per_gpu() / 1e9
        )));
    }
    let mean_sequence = demand.input_tokens.mean + demand.output_tokens.mean;
    if f64::from(max_batch) * mean_sequence > kv_tokens {
        return entry(cannot(format!(
            "KV cache holds {:.0} tokens, {:.0} sequences of the tier's mean length {:.0}, fewer than the batch cap",
            kv_tokens,
            kv_tokens / mean_sequence,
            mean_sequence
        )));
    }
    let longest = (demand.input_tokens.max + demand.output_tokens.max) as f64;
    if longest > kv_tokens {
        return entry(cannot(format!(
            "the tier's longest request ({longest:.0} tokens) does not fit the KV cache ({kv_tokens:.0} tokens)"
        )));
    }
    let load = TierLoad::new(&perf, demand, tier);
    if tier.percentile >= 100.0 {
        // Kingman's waiting time has an exponential tail: at any rate above
        // 0 its p100 is infinite. Unloaded, a request waits for nothing.
        let unloaded = operating_point(&perf, &load, max_batch, 0.0);
        return entry(Verdict::Cannot {
            reason: "the queueing model has no finite p100 TTFT at any rate (its waiting time has an exponential tail): size a p100 tier by simulation (`simulation.capacity = \"simulated\"`) or give a percentile below 100".into(),
            best_ttft_ms: Some(unloaded.ttft_ms),
            best_tpot_ms: Some(unloaded.tpot_ms),
        });
    }
    let meets =
        |p: &OperatingPoint| p.stable && p.ttft_ms <= tier.ttft_ms && p.tpot_ms <= tier.tpot_ms;
    let idle = operating_point(&perf, &load, max_batch, 1e-9);
    if !meets(&idle) {
        return entry(Verdict::Cannot {
            reason: format!(
                "even unloaded, p{} TTFT is {:.0} ms (limit {}) and TPOT {:.1} ms (limit {})",
                tier.percentile, idle.ttft_ms, tier.ttft_ms, idle.tpot_ms, tier.tpot_ms
            ),
            best_ttft_ms: Some(idle.ttft_ms),
            best_tpot_ms: Some(idle.tpot_ms),
        });
    }
    // Bisection on the rate: every limit only tightens as the rate grows.
    let mut lo = 1e-9;
    let mut hi = (1.0 / load.prefill_mean_s).min(1e6);
    for _ in 0..80 {
        let mid = 0.5 * (lo + hi);
        if meets(&operating_point(&perf, &load, max_batch, mid)) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let at = operating_point(&perf, &load, max_batch, lo);
    let beyond = operating_point(&perf, &load, max_batch, hi);
    let binding = if !beyond.stable {
        "batch"
    } else if beyond.ttft_ms > tier.ttft_ms {
        "ttft"
    } else if beyond.tpot_ms > tier.tpot_ms {
        "tpot"
    } else {
        "compute"
    };
    entry(Verdict::Serves(Sustained {
        max_rps: lo,
        ttft_ms: at.ttft_ms,
        tpot_ms: at.tpot_ms,
        mean_batch: at.mean_batch,
        binding: binding.into(),
    }))
}

/// Every configuration of every GPU offer evaluated on every tier:
/// `result[tier]` lists the entries in offer, TP, batch order.
pub(crate) fn evaluate_all(
    scenario: &crate::scenario::Scenario,
    demand: &[TierDemand],
) -> Vec<Vec<CapacityEntry>> {
    scenario
        .tiers
        .iter()
        .zip(demand)
        .map(|(tier, d)| {
            let model = scenario.tier_model(tier);
            let offers = &model.gpus;
            // Only the simulation sizes a disaggregated unit.
            Config::candidates(offers, speculative_method(model))
                .iter()
                .filter(|(_, c)| c.disaggregated.is_none())
                .map(|(g, c)| evaluate(*g, &offers[*g], model, c, tier, d))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traces::stats::LengthStats;

    fn lengths(mean: f64, v: u64) -> LengthStats {
        LengthStats {
            mean,
            p50: v,
            p90: v,
            p99: v,
            max: v,
        }
    }

    fn demand(input: u32, output: u32, cv: f64) -> TierDemand {
        TierDemand {
            tier: "t".into(),
            peak_rps: vec![1.0],
            mean_rps: vec![1.0],
            input_tokens: lengths(f64::from(input), u64::from(input)),
            output_tokens: lengths(f64::from(output), u64::from(output)),
            interarrival_cv: Some(cv),
            within_minute_cv: cv,
            peak_to_mean_minute: 1.0,
            lengths: vec![(input, output); 16],
            prefix_reuse: None,
            sample_chains: Vec::new(),
            sources: vec![],
        }
    }

    fn perf() -> StepModel {
        StepModel::Roofline(crate::perf::PerfModel::new(
            &crate::perf::step::tests::h100(),
            &crate::perf::step::tests::llama8b(),
            1,
            crate::profiles::precision::Precision::Bf16,
        ))
    }

    fn tier(ttft_ms: f64, tpot_ms: f64) -> Tier {
        Tier {
            model: 0,
            name: "t".into(),
            ttft_ms,
            tpot_ms,
            percentile: 99.0,
            api_allowed: false,
            rules: crate::scenario::ServingRules::default(),
        }
    }

    #[test]
    fn poisson_quantiles() {
        // Poisson(2): P(N ≤ 4) = 0.947, P(N ≤ 5) = 0.983, P(N ≤ 6) = 0.9955.
        assert_eq!(poisson_quantile(2.0, 0.95, 100.0), 5.0);
        assert_eq!(poisson_quantile(2.0, 0.99, 100.0), 6.0);
        assert_eq!(poisson_quantile(2.0, 0.99, 4.0), 4.0);
        assert_eq!(poisson_quantile(1e-9, 0.99, 100.0), 0.0);
    }

    #[test]
    fn unloaded_replica_sees_prefill_plus_one_step() {
        let p = perf();
        let load = TierLoad::new(&p, &demand(1000, 100, 1.0), &tier(1e9, 1e9));
        let op = operating_point(&p, &load, 64, 1e-9);
        let expected = p.prefill_s(1000.0) * 1e3;
        assert!(
            (op.ttft_ms - expected).abs() < 0.05,
            "{} vs {expected}",
            op.ttft_ms
        );
        assert!(op.tpot_ms < 7.0 && op.tpot_ms > 5.5, "{}", op.tpot_ms);
    }

    #[test]
    fn latency_grows_with_rate_and_burstiness() {
        let p = perf();
        let calm = TierLoad::new(&p, &demand(1000, 100, 1.0), &tier(1e9, 1e9));
        let bursty = TierLoad::new(&p, &demand(1000, 100, 3.0), &tier(1e9, 1e9));
        let a = operating_point(&p, &calm, 64, 5.0);
        let b = operating_point(&p, &calm, 64, 10.0);
        let c = operating_point(&p, &bursty, 64, 10.0);
        assert!(b.ttft_ms > a.ttft_ms && b.tpot_ms > a.tpot_ms);
        assert!(c.ttft_ms > b.ttft_ms);
    }

    #[test]
    fn the_capacity_meets_the_limits_and_a_little_more_breaks_them() {
        let p = perf();
        let t = tier(500.0, 30.0);
        let d = demand(1000, 100, 1.0);
        let offer = crate::scenario::GpuOffer {
            id: "h100".into(),
            profile: crate::perf::step::tests::h100(),
            engine: None,
            on_demand_usd_per_gpu_hour: Some(3.0),
            reserved_usd_per_gpu_hour: None,
            reserved_term: String::new(),
            reserved_offers: Vec::new(),
            reserved_offer: None,
            price_source: String::new(),
            max_gpus: None,
            purchase: crate::scenario::PurchaseTerms::default(),
            spot: None,
            tensor_parallel: vec![1],
            expert_parallel: vec![1],
            attention_dp: vec![1],
            cross_node: false,
            layouts: vec![crate::perf::Layout::tp(1)],
            max_batch: vec![64],
            max_batched_tokens: vec![8192],
            precision: vec![crate::profiles::precision::Precision::Bf16],
            weights_load_gb_per_s: crate::scenario::DEFAULT_WEIGHTS_LOAD_GB_PER_S,
            disaggregated: Vec::new(),
            network_gb_s: None,
        };
        let model = ServedModel {
            name: "8b".into(),
            id: "8b".into(),
            profile: crate::perf::step::tests::llama8b(),
            precision: None,
            kv_cache: None,
            context: None,
            speculative: None,
            api: None,
            gpus: Vec::new(),
        };
        let (_, config) = Config::candidates(std::slice::from_ref(&offer), None).remove(0);
        let e = evaluate(0, &offer, &model, &config, &t, &d);
        let Verdict::Serves(s) = e.verdict else {
            panic!("should serve")
        };
        assert!(s.ttft_ms <= 500.0 && s.tpot_ms <= 30.0);
        let load = TierLoad::new(&p, &d, &t);
        let over = operating_point(&p, &load, 64, s.max_rps * 1.01);
        assert!(!over.stable || over.ttft_ms > 500.0 || over.tpot_ms > 30.0);
        // A TTFT limit below the bare prefill time cannot be met.
        let strict = evaluate(0, &offer, &model, &config, &tier(10.0, 30.0), &d);
        assert!(matches!(
            strict.verdict,
            Verdict::Cannot {
                best_ttft_ms: Some(_),
                ..
            }
        ));
    }
}
