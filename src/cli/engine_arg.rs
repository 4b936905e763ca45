//! The `--engine` of `perf`, `predict` and `calibrate`: a shipped engine id
//! (`profiles/engines/<id>.toml`) or a calibrated profile's path.

use crate::base::error::PlannerError;
use crate::profiles::{engine_file, is_engine_path, known_ids, load_engine, EngineProfile};
use std::path::Path;

/// The engine `name` names: its id and its profile. An unknown id lists the
/// known ones; a file that does not exist says so.
pub(super) fn load_engine_arg(
    profiles: &Path,
    name: &str,
) -> Result<(String, EngineProfile), PlannerError> {
    let file = engine_file(profiles, Path::new("."), name);
    if !file.is_file() {
        let dir = profiles.join("engines");
        let known = known_ids(&dir);
        return Err(PlannerError::Usage(if is_engine_path(name) {
            format!(
                "--engine {name}: no such file; give an engine id ({}) or the path of a profile `planner calibrate --runs --out` wrote",
                known.join(", ")
            )
        } else if known.is_empty() {
            format!(
                "no engine profiles in {}: run from the repository root or pass --profiles DIR",
                dir.display()
            )
        } else {
            format!(
                "unknown --engine `{name}`; known: {} (files in {}), or the path of a calibrated profile",
                known.join(", "),
                dir.display()
            )
        }));
    }
    let profile = load_engine(&file).map_err(|p| PlannerError::Profile(vec![p]))?;
    Ok((name.to_string(), profile))
}
