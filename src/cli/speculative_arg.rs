//! The flags of speculative decoding, shared by `perf` and `predict`.

use crate::base::error::PlannerError;
use crate::perf::speculation::{resolve, SpecFigure};
use crate::perf::{SpecMethod, Speculation};
use crate::profiles::ModelProfile;
use clap::Args;

#[derive(Debug, Args)]
pub(crate) struct SpeculativeArgs {
    /// Speculative decoding: `ngram` (prompt lookup, CPU only), `eagle3` (a
    /// draft head of one layer and an LM head) or `mtp` (the model's own
    /// multi-token-prediction module). Each decode-only step verifies K + 1
    /// tokens a sequence and gains 1 + α + … + α^K of them on average.
    #[arg(long, value_name = "METHOD")]
    pub speculative_method: Option<String>,
    /// Draft tokens a step proposes, K (vLLM num_speculative_tokens;
    /// default 3, 1 for mtp).
    #[arg(long, value_name = "K", requires = "speculative_method")]
    pub num_speculative_tokens: Option<u32>,
    /// Per-token acceptance rate α in (0, 1]: the chance a drafted token is
    /// kept, given those before it were (measured by the engine's
    /// spec-decode metrics; mtp defaults to DeepSeek-V3's published 0.85,
    /// ngram and eagle3 must state it).
    #[arg(
        long,
        value_name = "ALPHA",
        requires = "speculative_method",
        allow_negative_numbers = true
    )]
    pub acceptance_rate: Option<f64>,
}

impl SpeculativeArgs {
    /// The speculation the flags ask for on `model`, `None` without
    /// `--speculative-method`.
    pub(crate) fn speculation(
        &self,
        model: &ModelProfile,
    ) -> Result<Option<Speculation>, PlannerError> {
        let Some(name) = &self.speculative_method else {
            return Ok(None);
        };
        let problem =
            |flag: &str, message: String| PlannerError::Usage(format!("{flag}: {message}"));
        let Some(method) = SpecMethod::from_name(name) else {
            let names: Vec<&str> = SpecMethod::ALL.iter().map(|m| m.name()).collect();
            return Err(problem(
                "--speculative-method",
                format!("unknown method `{name}`; accepted: {}", names.join(", ")),
            ));
        };
        if method == SpecMethod::Mtp
            && model
                .speculative
                .as_ref()
                .and_then(|d| d.mtp_modules)
                .is_none()
        {
            return Err(problem(
                "--speculative-method",
                format!(
                    "{} carries no multi-token-prediction module (its profile names none); use eagle3 with a draft head, or ngram",
                    model.name
                ),
            ));
        }
        let (tokens, acceptance, _) =
            resolve(method, self.num_speculative_tokens, self.acceptance_rate).map_err(|bad| {
                let (figure, message) = &bad[0];
                let flag = match figure {
                    SpecFigure::Tokens => "--num-speculative-tokens",
                    SpecFigure::Acceptance => "--acceptance-rate",
                };
                problem(flag, message.clone())
            })?;
        Ok(Some(Speculation::new(method, tokens, acceptance, model)))
    }
}
