//! The `[model]` section: the served model's profile and precision.

use super::Validator;
use crate::profiles::precision::Precision;
use crate::profiles::ModelProfile;
use crate::scenario::raw::RawScenario;
use crate::scenario::ServedModel;
use std::path::Path;

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
        Some(ServedModel {
            id,
            profile,
            precision,
            kv_cache,
        })
    }
}
