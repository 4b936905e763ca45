//! Parsing a TOML file into a struct, with the error located by line, column
//! and key path.

use crate::base::located::{line_col, Problem};
use serde::de::DeserializeOwned;
use std::path::Path;

/// Reads and parses `path` (a UTF-8 BOM and CRLF line ends accepted).
/// Errors carry the file, `line:column` and the key path; every syntax error
/// is listed ([`super::toml_syntax`]).
pub(crate) fn read_toml_file<T: DeserializeOwned>(
    path: &Path,
) -> Result<(T, String), Vec<Problem>> {
    let text = read_toml_text(path).map_err(|p| vec![p])?;
    let value = parse_toml(path, &text)?;
    Ok((value, text))
}

/// The text of a TOML file: without its BOM, invalid UTF-8 and lone
/// carriage returns located, at most
/// [`MAX_TOML_BYTES`](crate::base::text::MAX_TOML_BYTES).
pub(crate) fn read_toml_text(path: &Path) -> Result<String, Problem> {
    use crate::base::text::{read_text_within, MAX_TOML_BYTES};
    read_text_within(
        path,
        MAX_TOML_BYTES,
        "a TOML file (a scenario, a profile, a plan)",
    )
}

/// Parses `text` (the contents of `path`) into `T`: all syntax errors, or
/// the first type error.
pub(crate) fn parse_toml<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, Vec<Problem>> {
    let syntax_error = || toml::from_str::<toml::Table>(text).is_err();
    let deserializer = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(deserializer).map_err(|err| {
        let key_path = err.path().to_string();
        let inner = err.into_inner();
        let location = inner
            .span()
            .map(|span| line_col(text, span.start))
            .unwrap_or_default();
        let message = plain_type_names(&inner.message().trim().replace('\n', "; "));
        let message = if key_path.is_empty() || key_path == "." {
            message
        } else {
            format!("{message} (at key `{key_path}`)")
        };
        let first = Problem::new(path.to_path_buf(), location, message);
        if syntax_error() {
            super::toml_syntax::all_syntax_problems(path, text, first)
        } else {
            vec![first]
        }
    })
}

/// `message` with the Rust type a value was expected to have (serde's
/// "expected f64", "expected u32") in words a scenario's author knows
/// (serde's JSON messages name them alike).
pub(crate) fn plain_type_names(message: &str) -> String {
    const WORDS: [(&str, &str); 12] = [
        ("f64", "a number"),
        ("f32", "a number"),
        ("usize", "a whole number, 0 or more"),
        ("u64", "a whole number, 0 or more"),
        ("u32", "a whole number, 0 or more"),
        ("u16", "a whole number, 0 or more"),
        ("u8", "a whole number, 0 or more"),
        ("isize", "a whole number"),
        ("i64", "a whole number"),
        ("i32", "a whole number"),
        ("i16", "a whole number"),
        ("i8", "a whole number"),
    ];
    let mut out = message.to_string();
    for (rust, words) in WORDS {
        let pattern = format!("expected {rust}");
        let mut from = 0;
        while let Some(at) = out[from..].find(&pattern).map(|i| i + from) {
            let end = at + pattern.len();
            let whole_word = out[end..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric() && c != '_');
            if whole_word {
                out.replace_range(at..end, &format!("expected {words}"));
                from = at + "expected ".len() + words.len();
            } else {
                from = end;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[test]
    fn rust_type_names_become_words() {
        assert_eq!(
            plain_type_names("invalid type: string \"100\", expected f64"),
            "invalid type: string \"100\", expected a number"
        );
        assert_eq!(
            plain_type_names("invalid value: integer `-1`, expected u64 (at key `x`)"),
            "invalid value: integer `-1`, expected a whole number, 0 or more (at key `x`)"
        );
        assert_eq!(
            plain_type_names("expected u32, expected i64"),
            "expected a whole number, 0 or more, expected a whole number"
        );
        // Not a type name on its own: left as it is.
        assert_eq!(plain_type_names("expected u32x4"), "expected u32x4");
        assert_eq!(
            plain_type_names("expected one of `a`, `b`"),
            "expected one of `a`, `b`"
        );
    }

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        size: u32,
    }

    #[derive(Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        name: String,
        inner: Inner,
    }

    #[test]
    fn wrong_type_reports_line_and_key_path() {
        let text = "name = \"x\"\n[inner]\nsize = \"big\"\n";
        let err = parse_toml::<Outer>(Path::new("f.toml"), text)
            .unwrap_err()
            .remove(0);
        assert_eq!(err.location, "3:8");
        assert!(err.message.contains("inner.size"), "{}", err.message);
    }

    #[test]
    fn unknown_key_is_rejected() {
        let text = "name = \"x\"\ncolour = 1\n[inner]\nsize = 1\n";
        let err = parse_toml::<Outer>(Path::new("f.toml"), text)
            .unwrap_err()
            .remove(0);
        assert_eq!(err.location, "2:1");
        assert!(
            err.message.contains("unknown field `colour`"),
            "{}",
            err.message
        );
    }
}
