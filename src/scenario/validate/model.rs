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
        let speculative = match raw.model.speculative.as_ref() {
            Some(s) => self.speculative(s, &profile),
            // A model whose checkpoint carries an MTP module is searched with
            // it at the published acceptance rate.
            None => profile
                .speculative
                .as_ref()
                .and_then(|d| d.mtp_modules)
                .and_then(|_| {
                    let (acceptance, source) = SpecMethod::Mtp.default_acceptance()?;
                    Some(SpeculativeChoice {
                        speculation: Speculation::new(SpecMethod::Mtp, 1, acceptance, &profile),
                        draft: None,
                        acceptance_source: format!(
                            "{source}; searched because the model's checkpoint carries an MTP module (`speculative = {{ method = \"none\" }}` turns it off)"
                        ),
                    })
                }),
        };
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
        if raw.method.get_ref() == "none" {
            return None;
        }
        let Some(method) = SpecMethod::from_name(raw.method.get_ref()) else {
            let names: Vec<String> = SpecMethod::ALL
                .iter()
                .map(|m| format!("\"{}\"", m.name()))
                .chain(["\"none\"".to_string()])
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
        let drafts = profile.speculative.as_ref();
        let draft = raw.draft.clone().or_else(|| {
            drafts
                .and_then(|d| d.eagle3_draft.clone())
                .filter(|_| method == SpecMethod::Eagle3)
        });
        if method == SpecMethod::Eagle3 && draft.is_none() {
            self.at_key(
                "model.speculative.draft".to_string(),
                format!("EAGLE-3 runs a draft head trained for the model, and the profile of {} names none: name its checkpoint, as the launch commands pass it", profile.name),
            );
            ok = false;
        }
        if method != SpecMethod::Eagle3 && raw.draft.is_some() {
            self.at_key(
                "model.speculative.draft".to_string(),
                format!(
                    "`draft` names an EAGLE-3 head; `{}` runs none: leave it out",
                    method.name()
                ),
            );
            ok = false;
        }
        if method == SpecMethod::Mtp && drafts.and_then(|d| d.mtp_modules).is_none() {
            self.at_span(
                &raw.method,
                format!("{} carries no multi-token-prediction module (its profile names none); use \"eagle3\" with a draft head, or \"ngram\"", profile.name),
            );
            ok = false;
        }
        let (tokens, acceptance, source) = resolved.ok().filter(|_| ok)?;
        Some(SpeculativeChoice {
            speculation: Speculation::new(method, tokens, acceptance, profile),
            draft,
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

#[cfg(test)]
mod tests {
    use crate::perf::SpecMethod;
    use crate::scenario::overrides::Override;
    use crate::scenario::{load_with, Scenario};

    fn tiny(sets: &[&str]) -> Result<Scenario, String> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/ok/tiny.toml");
        let overrides: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
        load_with(std::path::Path::new(path), &overrides).map_err(|e| e.to_string())
    }

    #[test]
    fn speculation_follows_the_drafts_the_model_profile_names() {
        // A checkpoint with an MTP module is searched with it, at the
        // published acceptance, unless the scenario says none.
        let s = tiny(&["model.profile=deepseek-v3"]).unwrap();
        let mtp = s
            .model
            .speculative
            .expect("DeepSeek-V3 carries an MTP module");
        assert_eq!(mtp.speculation.method, SpecMethod::Mtp);
        assert_eq!(
            (mtp.speculation.tokens, mtp.speculation.acceptance),
            (1, 0.85)
        );
        assert!(mtp.acceptance_source.contains("arXiv:2412.19437"));
        let off = tiny(&["model.profile=deepseek-v3", "model.speculative.method=none"]).unwrap();
        assert!(off.model.speculative.is_none());
        // Llama 3.1 8B: no MTP; its published EAGLE-3 head is the default
        // draft; a draft is refused for a method that runs none.
        let no_mtp = tiny(&["model.speculative.method=mtp"]).unwrap_err();
        assert!(
            no_mtp.contains("carries no multi-token-prediction module"),
            "{no_mtp}"
        );
        let eagle = tiny(&[
            "model.speculative.method=eagle3",
            "model.speculative.acceptance=0.7",
        ])
        .unwrap();
        let draft = eagle.model.speculative.unwrap().draft;
        assert_eq!(
            draft.as_deref(),
            Some("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")
        );
        let stray = tiny(&[
            "model.speculative.method=ngram",
            "model.speculative.acceptance=0.3",
            "model.speculative.draft=x/y",
        ])
        .unwrap_err();
        assert!(stray.contains("model.speculative.draft"), "{stray}");
        assert!(tiny(&[]).unwrap().model.speculative.is_none());
    }
}
