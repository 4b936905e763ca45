//! JSON output: the serialised structs, pretty-printed, keys in a stable order
//! so the same inputs give byte-identical files.

use serde::Serialize;

/// Pretty JSON with a trailing newline.
pub fn render<T: Serialize>(value: &T) -> String {
    let mut text =
        serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    text.push('\n');
    text
}
