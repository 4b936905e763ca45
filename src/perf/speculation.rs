//! Speculative decoding: a proposer drafts `k` tokens per decoding sequence,
//! the target model verifies the `k + 1` in one step, and the sequence keeps
//! the drafted tokens up to the first one rejected plus the target's own.
//!
//! With a per-token acceptance rate α (each drafted token accepted with
//! probability α, given those before it were), a verification step gives a
//! sequence on average
//!
//! ```text
//! τ = 1 + α + α² + … + α^k = (1 − α^(k+1)) / (1 − α)     (k + 1 at α = 1)
//! ```
//!
//! tokens (Leviathan et al., 2023, eq. 1). What a step costs, for `B`
//! decoding sequences whose contexts sum to `C`:
//! * verification: the target model's step over `B (k + 1)` tokens, each
//!   with a logit, attending `(k + 1) C` (query, key) pairs while reading
//!   the `C` tokens of KV cache once;
//! * drafting: `k` passes of the proposer at batch `B`. n-gram lookup runs
//!   on the CPU and costs the GPU nothing; an EAGLE-3 head or a multi-token
//!   prediction module is one transformer layer and an LM head, priced as
//!   that share of the target's decode step of `B` tokens at zero context
//!   ([`Speculation::draft_share`]; its attention left out).
//!
//! The simulator keeps one token per decode step: a speculative step is
//! counted as τ steps of `1/τ` its time each (the expected tokens, not
//! their spread from step to step). Only decode-only steps speculate; a
//! step that also carries a prompt chunk runs as without speculation.

use crate::profiles::{EngineFamily, EngineProfile, ModelProfile};
use serde::Serialize;

/// How the draft tokens are proposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpecMethod {
    /// Prompt lookup: the tokens that followed the last n-gram's earlier
    /// occurrence in the context (vLLM `"ngram"`).
    Ngram,
    /// An EAGLE-3 draft head on the target's hidden states (vLLM
    /// `"eagle3"`).
    Eagle3,
    /// The model's own multi-token-prediction module (DeepSeek-V3's MTP;
    /// vLLM `"deepseek_mtp"`).
    Mtp,
}

impl SpecMethod {
    /// Every method, in the order the flags list them.
    pub const ALL: [SpecMethod; 3] = [SpecMethod::Ngram, SpecMethod::Eagle3, SpecMethod::Mtp];

    /// The name on the command line and in a scenario.
    pub fn name(self) -> &'static str {
        match self {
            SpecMethod::Ngram => "ngram",
            SpecMethod::Eagle3 => "eagle3",
            SpecMethod::Mtp => "mtp",
        }
    }

    /// The method `name` names, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The published acceptance rate to assume when none is stated, with its
    /// source; `None` where no figure carries across models and workloads
    /// (n-gram lookup depends on how much the output repeats the context;
    /// an EAGLE-3 head on how it was trained), so that it must be stated.
    pub fn default_acceptance(self) -> Option<(f64, &'static str)> {
        match self {
            SpecMethod::Mtp => Some((
                0.85,
                "DeepSeek-V3 technical report (arXiv:2412.19437, §5.4.3): the second token's acceptance rate is 85-90%",
            )),
            SpecMethod::Ngram | SpecMethod::Eagle3 => None,
        }
    }
}

/// Whether an engine of `family` keeps scheduling asynchronously (its CPU
/// work overlapping the GPU's step) under `method`: vLLM does so only with
/// EAGLE, MTP or a draft model, not with n-gram lookup, which it refuses
/// beside `--async-scheduling`.
pub fn keeps_async_scheduling(family: EngineFamily, method: SpecMethod) -> bool {
    !(family == EngineFamily::Vllm && method == SpecMethod::Ngram)
}

/// `engine` as it runs under `method` ([`keeps_async_scheduling`]).
pub fn engine_under(engine: &EngineProfile, method: SpecMethod) -> EngineProfile {
    let mut e = engine.clone();
    e.cpu_overlaps_gpu = e.cpu_overlaps_gpu && keeps_async_scheduling(e.family, method);
    e
}

/// Most draft tokens a step may propose (the planner's bound: vLLM's
/// examples use 1-5, TensorRT-LLM's `max_draft_len` is of that order).
pub const MAX_SPECULATIVE_TOKENS: u32 = 16;

/// Which stated figure of speculative decoding is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecFigure {
    Tokens,
    Acceptance,
}

/// The draft tokens and acceptance rate of `method` as stated (`None`: the
/// default, 3 draft tokens, 1 for MTP; the method's published acceptance
/// rate where it has one), with where the rate comes from; or what is wrong
/// with each figure.
pub fn resolve(
    method: SpecMethod,
    tokens: Option<u32>,
    acceptance: Option<f64>,
) -> Result<(u32, f64, String), Vec<(SpecFigure, String)>> {
    let mut problems = Vec::new();
    let tokens = tokens.unwrap_or(if method == SpecMethod::Mtp { 1 } else { 3 });
    if !(1..=MAX_SPECULATIVE_TOKENS).contains(&tokens) {
        problems.push((
            SpecFigure::Tokens,
            format!("{tokens} draft tokens a step; state 1 to {MAX_SPECULATIVE_TOKENS}"),
        ));
    }
    let (acceptance, source) = match (acceptance, method.default_acceptance()) {
        (Some(a), _) => (a, "stated".to_string()),
        (None, Some((a, source))) => (a, source.to_string()),
        (None, None) => {
            problems.push((
                SpecFigure::Acceptance,
                format!(
                    "`{}` has no acceptance rate that holds across models and workloads: state the one measured on yours (vLLM's spec-decode metrics log the draft acceptance rate)",
                    method.name()
                ),
            ));
            return Err(problems);
        }
    };
    if !(acceptance > 0.0 && acceptance <= 1.0) {
        problems.push((
            SpecFigure::Acceptance,
            format!("an acceptance rate is a probability in (0, 1]; got {acceptance}"),
        ));
    }
    if problems.is_empty() {
        Ok((tokens, acceptance, source))
    } else {
        Err(problems)
    }
}

/// Speculative decoding as a replica runs it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Speculation {
    pub method: SpecMethod,
    /// Draft tokens per step, `k` (vLLM `num_speculative_tokens`).
    pub tokens: u32,
    /// Per-token acceptance rate α in (0, 1].
    pub acceptance: f64,
    /// The proposer's pass at batch B as a share of the target's decode
    /// step of B tokens (0 for n-gram lookup).
    pub draft_share: f64,
}

impl Speculation {
    /// Speculation by `method` with `tokens` draft tokens accepted at
    /// `acceptance`, its proposer priced for `model`.
    pub fn new(method: SpecMethod, tokens: u32, acceptance: f64, model: &ModelProfile) -> Self {
        Speculation {
            method,
            tokens,
            acceptance,
            draft_share: Self::draft_share(method, model),
        }
    }

    /// One layer and the LM head of `model` against its active parameters:
    /// what an EAGLE-3 head or an MTP module reads and computes per token
    /// beside the target; 0 for n-gram lookup (CPU only).
    pub fn draft_share(method: SpecMethod, model: &ModelProfile) -> f64 {
        if method == SpecMethod::Ngram {
            return 0.0;
        }
        let active = model.active_params_billion * 1e9;
        let head = f64::from(model.vocab_size) * f64::from(model.hidden);
        // The layers' share of the active parameters, less the two
        // vocabulary matrices (embedding and LM head).
        let layer = ((active - 2.0 * head) / f64::from(model.layers.max(1))).max(0.0);
        ((layer + head) / active).clamp(0.0, 1.0)
    }

    /// τ: tokens a decoding sequence gains per verification step.
    pub fn tokens_per_step(&self) -> f64 {
        let (a, k) = (self.acceptance, f64::from(self.tokens));
        if (1.0 - a).abs() < 1e-12 {
            k + 1.0
        } else {
            (1.0 - a.powf(k + 1.0)) / (1.0 - a)
        }
    }

    /// Tokens each sequence runs through the target per step, `k + 1`.
    pub fn verified_tokens(&self) -> u32 {
        self.tokens + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::engine::tests::decode;
    use crate::perf::step::tests::llama8b;

    #[test]
    fn tokens_per_step_run_from_one_to_k_plus_one() {
        let s = |a: f64| Speculation::new(SpecMethod::Ngram, 3, a, &llama8b());
        // α = 0.5, k = 3: 1 + 0.5 + 0.25 + 0.125.
        assert!((s(0.5).tokens_per_step() - 1.875).abs() < 1e-12);
        assert!((s(1.0).tokens_per_step() - 4.0).abs() < 1e-12);
        assert!((s(1e-9).tokens_per_step() - 1.0).abs() < 1e-6);
        assert!(s(0.999_999).tokens_per_step() < 4.0);
    }

    #[test]
    fn a_draft_head_is_a_layer_and_the_lm_head() {
        // Llama 3.1 8B: (8.03e9 − 2 × 128,256 × 4,096) / 32 = 218 M a layer,
        // plus a 525 M LM head, of 8.03 B: 9.3%.
        let share = Speculation::draft_share(SpecMethod::Eagle3, &llama8b());
        assert!((share - 0.0925).abs() < 0.001, "{share}");
        assert_eq!(Speculation::draft_share(SpecMethod::Ngram, &llama8b()), 0.0);
        for m in SpecMethod::ALL {
            assert_eq!(SpecMethod::from_name(m.name()), Some(m));
        }
    }

    /// The engine model (vLLM on an H100, CPU overlapped or not) and the
    /// roofline model, each with and without a draft head.
    fn models() -> Vec<(String, crate::perf::StepModel)> {
        use crate::perf::{EngineModel, PerfModel, StepModel};
        use crate::profiles::precision::Precision;
        let h100 = crate::perf::step::tests::h100();
        let mut out = vec![(
            "roofline".to_string(),
            StepModel::Roofline(PerfModel::new(&h100, &llama8b(), 1, Precision::Bf16)),
        )];
        for overlap in [true, false] {
            let mut e = crate::profiles::engine_fixture();
            e.cpu_overlaps_gpu = overlap;
            e.cpu_step_ms = 7.0;
            out.push((
                format!("vllm overlap {overlap}"),
                StepModel::Engine(Box::new(EngineModel::new(
                    "vllm",
                    &e,
                    &h100,
                    &llama8b(),
                    1,
                    Precision::Bf16,
                ))),
            ));
        }
        out
    }

    #[test]
    fn a_speculative_run_sums_its_steps() {
        use crate::perf::StepTime;
        for (name, plain) in models() {
            for method in [SpecMethod::Ngram, SpecMethod::Eagle3] {
                let m = plain
                    .clone()
                    .speculating(Speculation::new(method, 3, 0.6, &llama8b()));
                for (batch, context) in [(1u32, 100.0), (24, 24.0 * 50.0), (200, 200.0 * 900.0)] {
                    let run = m.decode_run(batch, context);
                    let mut total = 0.0;
                    for j in 0..300u64 {
                        let c = context + j as f64 * f64::from(batch);
                        let step = m.decode_step_s(f64::from(batch), c / f64::from(batch));
                        assert!(
                            (run.step_s(j) - step).abs() < 1e-12,
                            "{name} {method:?} {batch} {j}: {} against {step}",
                            run.step_s(j)
                        );
                        total += step;
                        assert!((run.elapsed_s(j + 1) - total).abs() < 1e-9 * total.max(1.0));
                    }
                }
            }
        }
    }

    #[test]
    fn acceptance_near_zero_never_pays_and_a_draft_head_costs() {
        use crate::perf::StepTime;
        for (name, plain) in models() {
            for (batch, context) in [(1.0, 500.0), (32.0, 2_000.0), (256.0, 4_000.0)] {
                let base = plain.step_s(&decode(batch, context));
                let per_token = |method, acceptance| {
                    plain
                        .clone()
                        .speculating(Speculation::new(method, 3, acceptance, &llama8b()))
                        .step_s(&decode(batch, context))
                };
                // Nothing accepted: a token a step, at a verification's cost.
                assert!(
                    per_token(SpecMethod::Ngram, 1e-12) >= base * (1.0 - 1e-9),
                    "{name} {batch}"
                );
                assert!(
                    per_token(SpecMethod::Eagle3, 1e-12) > base,
                    "{name} {batch}"
                );
                // Everything accepted: the verification step over k + 1 tokens.
                let all = per_token(SpecMethod::Ngram, 1.0);
                assert!(all < base, "{name} {batch}: {all} against {base}");
                assert!(all * 4.0 >= base * (1.0 - 1e-9), "{name} {batch}");
            }
        }
        // A step with a prompt chunk does not speculate.
        let (_, plain) = models().remove(1);
        let chunk = crate::perf::StepWork {
            tokens: 512.0 + 8.0,
            attention_pairs: 512.0 * 256.0 + 8.0 * 1_000.0,
            kv_read_tokens: 8.0 * 1_000.0,
            logit_tokens: 1.0 + 8.0,
            sequences: 9.0,
        };
        let spec =
            plain
                .clone()
                .speculating(Speculation::new(SpecMethod::Eagle3, 3, 0.8, &llama8b()));
        assert_eq!(spec.step_s(&chunk), plain.step_s(&chunk));
        // The draft head's weights come out of the KV cache.
        assert!(spec.kv_capacity_tokens() < plain.kv_capacity_tokens());
    }
}
