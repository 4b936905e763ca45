//! The `[shape]` section: the rate curve the demand follows.

use super::Validator;
use crate::scenario::raw::RawShape;
use crate::scenario::{ShapeAnchor, ShapeSpec};

impl Validator {
    pub(super) fn shape(&mut self, s: &RawShape) -> Option<ShapeSpec> {
        let servegen = self.dir.join(s.servegen.get_ref());
        if !servegen.exists() {
            self.at_span(
                &s.servegen,
                format!(
                    "rate curve {} does not exist (a ServeGen CSV file or a folder of them)",
                    servegen.display()
                ),
            );
        }
        let days = s.days.unwrap_or(7);
        self.bounded("shape.days", f64::from(days));
        let anchor = match s.anchor.as_ref().map(|a| a.get_ref().as_str()) {
            None | Some("peak") => ShapeAnchor::Peak,
            Some("mean") => ShapeAnchor::Mean,
            Some(other) => {
                let message = format!("unknown anchor `{other}`; accepted: \"peak\", \"mean\"");
                self.at_span(s.anchor.as_ref()?, message);
                ShapeAnchor::Peak
            }
        };
        Some(ShapeSpec {
            servegen,
            days,
            anchor,
        })
    }
}
