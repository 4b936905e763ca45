//! Hardware and model profiles: `profiles/gpus/*.toml` and `profiles/models/*.toml`.
//!
//! Every figure in a profile carries its source in the file; the structs here
//! are the parsed, checked form.

mod gpu;
mod model;
mod toml_file;

pub use gpu::GpuProfile;
pub use model::ModelProfile;
pub use toml_file::{parse_toml, read_toml_file};

use crate::error::Problem;
use std::path::Path;

/// Reads `<profiles_dir>/gpus/<id>.toml`.
pub fn load_gpu(profiles_dir: &Path, id: &str) -> Result<GpuProfile, Problem> {
    read_toml_file(&profiles_dir.join("gpus").join(format!("{id}.toml"))).map(|(p, _)| p)
}

/// Reads `<profiles_dir>/models/<id>.toml`.
pub fn load_model(profiles_dir: &Path, id: &str) -> Result<ModelProfile, Problem> {
    read_toml_file(&profiles_dir.join("models").join(format!("{id}.toml"))).map(|(p, _)| p)
}

/// The profile ids (file stems of `*.toml`) in `dir`, sorted; empty when
/// the folder cannot be read.
pub fn known_ids(dir: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let path = e.path();
            if path.extension()? != "toml" {
                return None;
            }
            Some(path.file_stem()?.to_string_lossy().into_owned())
        })
        .collect();
    ids.sort();
    ids
}

/// Records a problem unless `value` is a finite positive number.
pub(crate) fn check_positive(problems: &mut Vec<Problem>, file: &Path, key: &str, value: f64) {
    if !(value.is_finite() && value > 0.0) {
        problems.push(Problem {
            file: file.to_path_buf(),
            location: key.to_string(),
            message: format!("`{key}` must be a positive number, got {value}"),
        });
    }
}
