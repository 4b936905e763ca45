//! Hardware and model profiles: `profiles/gpus/*.toml` and `profiles/models/*.toml`.
//!
//! Every figure in a profile carries its source in the file; the structs here
//! are the parsed, checked form.

pub(crate) mod engine;
mod gpu;
mod model;
pub(crate) mod precision;
mod scheduler;

#[cfg(test)]
pub(crate) use engine::{vllm_fixture as engine_fixture, ENGINE_BOUNDS};
pub(crate) use engine::{EngineFamily, EngineProfile, FITTABLE};
#[cfg(test)]
pub(crate) use gpu::GPU_BOUNDS;
pub(crate) use gpu::{Calibration, GpuProfile};
#[cfg(test)]
pub(crate) use model::Attention;
#[cfg(test)]
pub(crate) use model::MODEL_BOUNDS;
pub(crate) use model::{AttentionKind, ModelProfile};
pub(crate) use scheduler::Scheduler;

use crate::base::error::Problem;
use crate::base::toml_file::read_toml_file;
use std::path::Path;

/// Reads and checks `<profiles_dir>/gpus/<id>.toml`.
pub(crate) fn load_gpu(profiles_dir: &Path, id: &str) -> Result<GpuProfile, Problem> {
    let file = profiles_dir.join("gpus").join(format!("{id}.toml"));
    let (profile, _): (GpuProfile, _) = read_toml_file(&file).map_err(first_of_list)?;
    first_of(profile.check(&file))?;
    Ok(profile)
}

/// Reads and checks `<profiles_dir>/models/<id>.toml`.
pub(crate) fn load_model(profiles_dir: &Path, id: &str) -> Result<ModelProfile, Problem> {
    let file = profiles_dir.join("models").join(format!("{id}.toml"));
    let (profile, _): (ModelProfile, _) = read_toml_file(&file).map_err(first_of_list)?;
    first_of(profile.check(&file))?;
    Ok(profile)
}

/// Reads and checks the engine profile at `file`.
pub(crate) fn load_engine(file: &Path) -> Result<EngineProfile, Problem> {
    let (profile, _): (EngineProfile, _) = read_toml_file(file).map_err(first_of_list)?;
    first_of(profile.check(file))?;
    Ok(profile)
}

/// Where the engine `name` lives: `<profiles_dir>/engines/<name>.toml` for
/// an id (`vllm`), else `name` itself read as a path (a calibrated file,
/// relative to `base_dir`).
pub(crate) fn engine_file(profiles_dir: &Path, base_dir: &Path, name: &str) -> std::path::PathBuf {
    if is_engine_path(name) {
        base_dir.join(name)
    } else {
        profiles_dir.join("engines").join(format!("{name}.toml"))
    }
}

/// Whether an engine name is a file path rather than a shipped id.
pub(crate) fn is_engine_path(name: &str) -> bool {
    name.contains('/')
        || name.contains('\\')
        || Path::new(name)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
}

/// The profile ids (file stems of `*.toml`) in `dir`, sorted; empty when
/// the folder cannot be read.
pub(crate) fn known_ids(dir: &Path) -> Vec<String> {
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

/// Records a problem unless `value` lies within the row of `table` for `key`.
pub(crate) fn check_bound(
    problems: &mut Vec<Problem>,
    file: &Path,
    table: &[crate::base::bounds::Bound],
    key: &str,
    value: f64,
) {
    if let Some(message) = crate::base::bounds::find(table, key).check(key, value) {
        problems.push(Problem::new(file.to_path_buf(), key.to_string(), message));
    }
}

fn first_of_list(problems: Vec<Problem>) -> Problem {
    match first_of(problems) {
        Err(p) => p,
        Ok(()) => unreachable!("an error holds at least one problem"),
    }
}

/// The first of `problems` as one, saying how many more there are.
fn first_of(mut problems: Vec<Problem>) -> Result<(), Problem> {
    if problems.is_empty() {
        return Ok(());
    }
    let more = problems.len() - 1;
    let mut first = problems.swap_remove(0);
    if more > 0 {
        first.message = format!(
            "{} (and {more} more problems in this profile)",
            first.message
        );
    }
    Err(first)
}
