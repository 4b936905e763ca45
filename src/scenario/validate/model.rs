//! The `[model]` section: the served model's profile and precision.

use super::Validator;
use crate::perf::speculation::{resolve, SpecFigure};
use crate::perf::{SpecMethod, Speculation};
use crate::profiles::precision::Precision;
use crate::profiles::ModelProfile;
use crate::scenario::raw::{RawScenario, RawSpeculative};
use crate::scenario::{ServedContext, ServedModel, SpeculativeChoice, Yarn};
use std::path::Path;
use toml::Spanned;

impl Validator {
    pub(super) fn model(&mut self, raw: &RawScenario, profiles_dir: &Path) -> Option<ServedModel> {
        let id = raw.model.profile.get_ref().clone();
        let precision = match raw.model.precision.as_ref() {
            None => None,
            Some(p) => {
                if let Some(precision) = Precision::parse(p.get_ref()) {
                    Some(precision)
                } else {
                    self.at_span(
                    p,
                    format!(
                        "unknown precision `{}`; accepted: \"bf16\", \"fp8\", \"fp4\" (or leave it out to let each GPU type try its list)",
                        p.get_ref()
                    ),
                );
                    return None;
                }
            }
        };
        let kv_cache = match raw.model.kv_cache.as_ref() {
            None => None,
            Some(k) => match k.get_ref().as_str() {
                "auto" => None,
                "fp8" => Some(Precision::Fp8),
                "bf16" => Some(Precision::Bf16),
                other => {
                    self.at_span(
                        k,
                        format!("unknown KV-cache precision `{other}`; accepted: \"auto\" (each engine's recipe), \"fp8\", \"bf16\""),
                    );
                    return None;
                }
            },
        };
        let mut profile: ModelProfile =
            self.profile(&raw.model.profile, &profiles_dir.join("models"), "model")?;
        match kv_cache {
            Some(Precision::Fp8) => {
                profile.kv_bytes_per_element = profile.kv_bytes_per_element.min(1.0);
            }
            Some(_) => profile.kv_bytes_per_element = 2.0,
            None => {}
        }
        let context = raw
            .model
            .max_context_tokens
            .as_ref()
            .and_then(|stated| self.served_context(stated, &id, &mut profile));
        let speculative = raw
            .model
            .speculative
            .as_ref()
            .and_then(|s| self.speculative(s, &profile));
        Some(ServedModel {
            id,
            profile,
            precision,
            kv_cache,
            context,
            speculative,
        })
    }

    /// `model.speculative`: a known method, 1 to the most draft tokens
    /// ([`crate::perf::speculation::MAX_SPECULATIVE_TOKENS`]), an acceptance rate in
    /// (0, 1] (stated, or the method's published one), and the draft head's
    /// checkpoint for EAGLE-3.
    fn speculative(
        &mut self,
        raw: &RawSpeculative,
        profile: &ModelProfile,
    ) -> Option<SpeculativeChoice> {
        let Some(method) = SpecMethod::from_name(raw.method.get_ref()) else {
            let names: Vec<String> = SpecMethod::ALL
                .iter()
                .map(|m| format!("\"{}\"", m.name()))
                .collect();
            self.at_span(
                &raw.method,
                format!(
                    "unknown speculative method `{}`; accepted: {}",
                    raw.method.get_ref(),
                    names.join(", ")
                ),
            );
            return None;
        };
        let resolved = resolve(method, raw.tokens, raw.acceptance);
        let mut ok = resolved.is_ok();
        if let Err(bad) = &resolved {
            for (figure, message) in bad {
                let key = match figure {
                    SpecFigure::Tokens => "model.speculative.tokens",
                    SpecFigure::Acceptance => "model.speculative.acceptance",
                };
                self.at_key(key.to_string(), message.clone());
            }
        }
        if method == SpecMethod::Eagle3 && raw.draft.is_none() {
            self.at_key(
                "model.speculative.draft".to_string(),
                "EAGLE-3 runs a draft head trained for the model: name its checkpoint (e.g. \"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\" for Llama 3.1 8B Instruct), as the launch commands pass it".to_string(),
            );
            ok = false;
        }
        let (tokens, acceptance, source) = resolved.ok().filter(|_| ok)?;
        Some(SpeculativeChoice {
            speculation: Speculation::new(method, tokens, acceptance, profile),
            draft: raw.draft.clone(),
            acceptance_source: if source == "stated" {
                "stated in the scenario".to_string()
            } else {
                source
            },
        })
    }
}

impl Validator {
    /// `model.max_context_tokens`: at most the published context, or the
    /// profile's documented extended one (by YaRN); the profile then holds
    /// the served figure, which every later check reads.
    fn served_context(
        &mut self,
        stated: &Spanned<u32>,
        id: &str,
        profile: &mut ModelProfile,
    ) -> Option<ServedContext> {
        let tokens = *stated.get_ref();
        let published = profile.max_context_tokens;
        let yarn = match &profile.extended_context {
            _ if tokens < 1_024 => {
                self.at_span(
                    stated,
                    format!("`max_context_tokens` = {tokens} is under 1,024 tokens: no chat request fits it; leave the key out to serve the profile's {published}"),
                );
                return None;
            }
            _ if tokens <= published => None,
            Some(x) if tokens <= x.max_context_tokens => Some(Yarn {
                factor: f64::from(tokens) / f64::from(x.original_max_position_embeddings),
                original_max_position_embeddings: x.original_max_position_embeddings,
                rope_theta: x.rope_theta,
            }),
            Some(x) => {
                self.at_span(
                    stated,
                    format!(
                        "`max_context_tokens` = {tokens} is over the {} tokens {id} is documented to reach with YaRN ({}); state at most {}",
                        x.max_context_tokens, x.source, x.max_context_tokens
                    ),
                );
                return None;
            }
            None => {
                self.at_span(
                    stated,
                    format!(
                        "`max_context_tokens` = {tokens} is over {id}'s context of {published} tokens, and its profile documents no longer one (`[extended_context]`); state at most {published}"
                    ),
                );
                return None;
            }
        };
        profile.max_context_tokens = tokens;
        Some(ServedContext {
            max_context_tokens: tokens,
            yarn,
        })
    }
}
