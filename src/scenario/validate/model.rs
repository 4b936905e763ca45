//! The `[model]` section, or the `[[models]]` of a pooled fleet: each
//! served model's profile, precision and API offer.

use super::Validator;
use crate::perf::speculation::{resolve, SpecFigure};
use crate::perf::{SpecMethod, Speculation};
use crate::profiles::precision::Precision;
use crate::profiles::ModelProfile;
use crate::scenario::raw::{RawApi, RawModel, RawScenario, RawSpeculative};
use crate::scenario::{ApiOffer, ServedContext, ServedModel, SpeculativeChoice, Yarn};
use std::path::Path;
use toml::Spanned;

/// One served model as the file states it: where its keys are, the id
/// tiers name it by, and its API offer.
pub(super) struct ModelEntry<'a> {
    pub raw: &'a RawModel,
    /// `model` or `models[j]`.
    pub key: String,
    pub id: String,
    pub api: Option<&'a RawApi>,
}

impl Validator {
    /// The served models as listed: `[model]` with the top-level `[api]`,
    /// or every `[[models]]` entry with its own; both, neither, an empty
    /// list, two entries with one id, or a key of the other form are
    /// problems.
    pub(super) fn model_entries<'a>(&mut self, raw: &'a RawScenario) -> Vec<ModelEntry<'a>> {
        match (&raw.model, &raw.models) {
            (Some(_), Some(_)) => {
                self.at_key(
                    "models",
                    "`[model]` and `[[models]]` are both given: state one model as `[model]` (with `[api]`), or every model of a pooled fleet as a `[[models]]` entry with its own `id` and `api`",
                );
                Vec::new()
            }
            (None, None) => {
                self.at_key(
                    "model",
                    "the scenario names no model: add a `[model]` table (`profile = \"llama-3.1-8b\"`), or one `[[models]]` entry per model of a pooled fleet",
                );
                Vec::new()
            }
            (Some(m), None) => {
                if let Some(id) = &m.id {
                    self.at_span(id, "`id` names a `[[models]]` entry; the one `[model]` is named by its `profile` (remove `id`)");
                }
                if m.api.is_some() {
                    self.at_key("model.api", "the one `[model]` takes its API offer from the top-level `[api]` table; move it there");
                }
                vec![ModelEntry {
                    raw: m,
                    key: "model".into(),
                    id: m.profile.get_ref().clone(),
                    api: raw.api.as_ref(),
                }]
            }
            (None, Some(list)) => {
                if list.is_empty() {
                    self.at_key(
                        "models",
                        "`models` lists no model: give at least one `[[models]]` entry",
                    );
                }
                if raw.api.is_some() {
                    self.at_key("api", "with `[[models]]` each model states its own API offer: move `[api]` into the entry of the model it sells (`[models.api]` after that entry)");
                }
                let mut seen = std::collections::BTreeMap::<String, usize>::default();
                list.iter()
                    .enumerate()
                    .map(|(j, m)| {
                        let id = m.id.as_ref().map_or_else(|| m.profile.get_ref().clone(), |i| i.get_ref().clone());
                        if let Some(first) = seen.insert(id.clone(), j) {
                            let message = format!("two models have the id `{id}` (models[{first}] and models[{j}]); give each its own `id`");
                            match &m.id {
                                Some(span) => self.at_span(span, message),
                                None => self.at_key(format!("models[{j}].id"), message),
                            }
                        }
                        ModelEntry {
                            raw: m,
                            key: format!("models[{j}]"),
                            id,
                            api: m.api.as_ref(),
                        }
                    })
                    .collect()
            }
        }
    }

    /// A model's API offer, its prices bounded at `key`.
    pub(super) fn api(&mut self, key: &str, a: &RawApi) -> ApiOffer {
        self.bounded(
            &format!("{key}.usd_per_million_input_tokens"),
            a.usd_per_million_input_tokens,
        );
        self.bounded(
            &format!("{key}.usd_per_million_output_tokens"),
            a.usd_per_million_output_tokens,
        );
        if let Some(limit) = a.max_tokens_per_minute {
            self.bounded(&format!("{key}.max_tokens_per_minute"), limit);
        }
        ApiOffer {
            name: a.name.clone(),
            usd_per_million_input_tokens: a.usd_per_million_input_tokens,
            usd_per_million_output_tokens: a.usd_per_million_output_tokens,
            max_tokens_per_minute: a.max_tokens_per_minute,
            price_source: a.price_source.clone(),
        }
    }

    pub(super) fn model(
        &mut self,
        entry: &ModelEntry<'_>,
        profiles_dir: &Path,
    ) -> Option<ServedModel> {
        let raw_model = entry.raw;
        let id = raw_model.profile.get_ref().clone();
        let precision = match raw_model.precision.as_ref() {
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
        let kv_cache = match raw_model.kv_cache.as_ref() {
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
            self.profile(&raw_model.profile, &profiles_dir.join("models"), "model")?;
        match kv_cache {
            Some(Precision::Fp8) => {
                profile.kv_bytes_per_element = profile.kv_bytes_per_element.min(1.0);
            }
            Some(_) => profile.kv_bytes_per_element = 2.0,
            None => {}
        }
        let context = raw_model
            .max_context_tokens
            .as_ref()
            .and_then(|stated| self.served_context(stated, &id, &mut profile));
        let speculative = match raw_model.speculative.as_ref() {
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
        let api = entry.api.map(|a| {
            let key = if entry.key == "model" {
                "api".to_string()
            } else {
                format!("{}.api", entry.key)
            };
            self.api(&key, a)
        });
        Some(ServedModel {
            name: entry.id.clone(),
            id,
            profile,
            precision,
            kv_cache,
            context,
            speculative,
            api,
            gpus: Vec::new(),
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
        // On eight H200s, which hold its FP8 weights.
        let big = ["gpus[0].profile=h200", "gpus[0].tensor_parallel=[8]"];
        let s = tiny(&["model.profile=deepseek-v3", big[0], big[1]]).unwrap();
        let mtp = s.models[0]
            .speculative
            .clone()
            .expect("DeepSeek-V3 carries an MTP module");
        assert_eq!(mtp.speculation.method, SpecMethod::Mtp);
        assert_eq!(
            (mtp.speculation.tokens, mtp.speculation.acceptance),
            (1, 0.85)
        );
        assert!(mtp.acceptance_source.contains("arXiv:2412.19437"));
        let off = tiny(&[
            "model.profile=deepseek-v3",
            "model.speculative.method=none",
            big[0],
            big[1],
        ])
        .unwrap();
        assert!(off.models[0].speculative.is_none());
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
        let draft = eagle.models[0].speculative.clone().unwrap().draft;
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
        assert!(tiny(&[]).unwrap().models[0].speculative.is_none());
    }
}
