//! The `[model]` section: the served model's profile and precision.

use super::Validator;
use crate::profiles::precision::Precision;
use crate::profiles::ModelProfile;
use crate::scenario::raw::RawScenario;
use crate::scenario::{ServedContext, ServedModel, Yarn};
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
        Some(ServedModel {
            id,
            profile,
            precision,
            kv_cache,
            context,
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
