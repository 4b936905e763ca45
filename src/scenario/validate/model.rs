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
                        "unknown precision `{}`; accepted: \"bf16\", \"fp8\" (or leave it out to let each GPU type try both)",
                        p.get_ref()
                    ),
                );
                    return None;
                }
            }
        };
        let profile: ModelProfile =
            self.profile(&raw.model.profile, &profiles_dir.join("models"), "model")?;
        Some(ServedModel {
            id,
            profile,
            precision,
        })
    }
}
