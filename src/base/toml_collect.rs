//! Every key and type problem of a TOML document in one pass. Deserialising
//! stops at the first unknown key or wrong type; here each such problem is
//! recorded, the document patched past it (an unknown key's line commented
//! out, a wrong value replaced by a placeholder of the expected type, on
//! the same line), and deserialised again, so that one run reports every
//! problem, and the checks that need the whole document (profiles, tier
//! names) can still run on it. The lines patched are returned, so that a
//! later check does not report the placeholder a second time.

use super::located::{line_col, Problem};
use super::toml_file::plain_type_names;
use serde::de::DeserializeOwned;
use std::path::Path;

/// Most problems one pass records before it stops patching.
const MAX_PATCHES: usize = 64;

/// What a pass found.
#[derive(Debug)]
pub(crate) struct Collected<T> {
    /// The document deserialised with every patch, when it could be.
    pub value: Option<T>,
    /// The document with every patch (the text `value`'s spans point into:
    /// as many lines as the document had).
    pub text: String,
    /// The problems, in the order found.
    pub problems: Vec<Problem>,
    /// The lines (from 1) a patch changed, and the key paths it changed:
    /// a check of the patched document must not report them again.
    pub patched_lines: Vec<usize>,
    pub patched_keys: Vec<String>,
}

impl<T> Collected<T> {
    /// Whether `p`, a problem a later check found in the patched document,
    /// is at a place a patch changed.
    pub(crate) fn at_a_patch(&self, p: &Problem) -> bool {
        let line = p
            .location
            .split(':')
            .next()
            .and_then(|l| l.parse::<usize>().ok());
        line.is_some_and(|l| self.patched_lines.contains(&l))
            || self
                .patched_keys
                .iter()
                .any(|k| !k.is_empty() && p.location == *k)
    }
}

/// Deserialises `text` (the contents of `path`) into `T`, collecting every
/// unknown key and wrong type (see the module's documentation); syntax
/// errors are all reported at once and stop the pass.
pub(crate) fn collect<T: DeserializeOwned>(path: &Path, text: &str) -> Collected<T> {
    let mut out = Collected {
        value: None,
        text: String::new(),
        problems: Vec::new(),
        patched_lines: Vec::new(),
        patched_keys: Vec::new(),
    };
    let mut text = text.to_string();
    for _ in 0..MAX_PATCHES {
        let deserializer = toml::Deserializer::new(&text);
        let err = match serde_path_to_error::deserialize::<_, T>(deserializer) {
            Ok(value) => {
                out.value = Some(value);
                out.text = text;
                return out;
            }
            Err(err) => err,
        };
        if toml::from_str::<toml::Table>(&text).is_err() {
            // A syntax error: in the file as written, every one of them; in
            // a patched document, the patch went wrong, and what was found
            // before stands.
            if out.problems.is_empty() {
                if let Err(all) = super::toml_file::parse_toml::<T>(path, &text) {
                    out.problems = all;
                }
            }
            return out;
        }
        let key_path = err.path().to_string();
        let key_path = if key_path == "." {
            String::new()
        } else {
            key_path
        };
        let inner = err.into_inner();
        let raw = inner.message().trim().replace('\n', "; ");
        let span = inner.span();
        let location = span
            .as_ref()
            .map_or_else(String::new, |s| line_col(&text, s.start));
        let mut message = plain_type_names(&raw);
        if let Some(near) = nearest_expected(&raw) {
            message = format!("{message}; did you mean `{near}`?");
        }
        if !key_path.is_empty() {
            message = format!("{message} (at key `{key_path}`)");
        }
        out.problems
            .push(Problem::new(path.to_path_buf(), location, message));
        let Some(span) = span else {
            return out;
        };
        let Some(lines) = patch(&mut text, span, &raw) else {
            return out;
        };
        out.patched_lines.extend(lines);
        out.patched_keys.push(key_path);
    }
    out
}

/// Patches `text` past the problem at `span`: an unknown key's line (and a
/// table header's whole table) commented out, a wrong value replaced by a
/// placeholder of the expected type. Returns the lines changed, or `None`
/// where no patch applies.
fn patch(text: &mut String, span: std::ops::Range<usize>, raw: &str) -> Option<Vec<usize>> {
    if span.start > text.len() || span.end > text.len() || span.start > span.end {
        return None;
    }
    if !text.is_char_boundary(span.start) || !text.is_char_boundary(span.end) {
        return None;
    }
    let line_of = |t: &str, at: usize| t[..at].matches('\n').count() + 1;
    if raw.starts_with("unknown field") {
        let start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
        if !text[start..span.start].trim().is_empty()
            && !text[start..span.start].trim().starts_with('[')
        {
            return None;
        }
        let first = line_of(text, start);
        let header = text[start..].trim_start().starts_with('[');
        // A table header takes its whole table: every line up to the next
        // header.
        let mut end = text[start..]
            .find('\n')
            .map_or(text.len(), |i| start + i + 1);
        if header {
            while end < text.len() && !text[end..].trim_start().starts_with('[') {
                end = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
            }
        }
        let mut commented = String::with_capacity(end - start + 8);
        for l in text[start..end].split_inclusive('\n') {
            commented.push('#');
            commented.push_str(l);
        }
        let last = first + text[start..end].matches('\n').count();
        text.replace_range(start..end, &commented);
        return Some((first..=last.max(first)).collect());
    }
    let placeholder = placeholder(raw)?;
    let newlines = text[span.clone()].matches('\n').count();
    let first = line_of(text, span.start);
    text.replace_range(span, &format!("{placeholder}{}", "\n".repeat(newlines)));
    Some((first..=first + newlines).collect())
}

/// A value of the type serde's message says it expected.
fn placeholder(raw: &str) -> Option<String> {
    if raw.starts_with("unknown variant") {
        return expected_names(raw)
            .into_iter()
            .next()
            .map(|v| format!("\"{v}\""));
    }
    let expected = raw.split("expected ").nth(1)?;
    let word = expected.split([' ', ',', ';']).next()?;
    Some(
        match word {
            "f64" | "f32" => "1.0",
            "u8" | "u16" | "u32" | "u64" | "usize" | "i8" | "i16" | "i32" | "i64" | "isize" => "1",
            "a" if expected.starts_with("a string") => "\"\"",
            "a" if expected.starts_with("a boolean") => "false",
            "a" if expected.starts_with("a sequence") => "[]",
            "string" => "\"\"",
            "bool" | "boolean" => "false",
            _ => return None,
        }
        .to_string(),
    )
}

/// The names serde lists after "expected" (fields or variants: "expected
/// one of `a`, `b`", "expected `a` or `b`", "expected `a`").
fn expected_names(raw: &str) -> Vec<&str> {
    let Some((_, list)) = raw.split_once("expected ") else {
        return Vec::new();
    };
    list.split('`')
        .skip(1)
        .step_by(2)
        .filter(|n| !n.is_empty())
        .collect()
}

/// The expected name nearest the unknown one in serde's message ("unknown
/// field `x`, expected one of …"): [`super::nearest::nearest`].
fn nearest_expected(raw: &str) -> Option<String> {
    let given = raw.split('`').nth(1)?;
    if !(raw.starts_with("unknown field") || raw.starts_with("unknown variant")) {
        return None;
    }
    super::nearest::nearest(given, expected_names(raw)).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Doc {
        name: String,
        count: u32,
        #[serde(default)]
        items: Vec<Item>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Item {
        size_ms: f64,
        kind: Kind,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Kind {
        Small,
        #[allow(dead_code)]
        Large,
    }

    fn path() -> &'static Path {
        Path::new("d.toml")
    }

    #[test]
    fn every_unknown_key_and_wrong_type_is_found_in_one_pass() {
        let text = "name = \"a\"\ncount = \"three\"\ncuont = 2\n\n[[items]]\nsize_ms = \"x\"\nkind = \"medium\"\nsize = 4\n";
        let c = collect::<Doc>(path(), text);
        let found: Vec<String> = c.problems.iter().map(ToString::to_string).collect();
        assert_eq!(found.len(), 5, "{found:#?}");
        assert!(
            found[0]
                .starts_with("d.toml:2:9: invalid type: string \"three\", expected a whole number"),
            "{found:#?}"
        );
        assert!(
            found
                .iter()
                .any(|p| p.contains("3:1: unknown field `cuont`")
                    && p.contains("did you mean `count`?")),
            "{found:#?}"
        );
        assert!(
            found
                .iter()
                .any(|p| p.contains("6:11: invalid type: string \"x\", expected a number")),
            "{found:#?}"
        );
        assert!(
            found.iter().any(|p| p.contains("unknown variant `medium`")),
            "{found:#?}"
        );
        assert!(
            found.iter().any(|p| p.contains("8:1: unknown field `size`")
                && p.contains("did you mean `size_ms`?")),
            "{found:#?}"
        );
        // The patched document deserialised, each wrong value replaced by
        // a placeholder of its type; the lines patched are known.
        let doc = c.value.as_ref().unwrap();
        assert_eq!((doc.name.as_str(), doc.count), ("a", 1));
        assert_eq!(doc.items.len(), 1);
        assert_eq!(doc.items[0].size_ms, 1.0);
        assert!(matches!(doc.items[0].kind, Kind::Small));
        for line in [2, 3, 6, 7, 8] {
            assert!(c.patched_lines.contains(&line), "{:?}", c.patched_lines);
        }
    }

    #[test]
    fn a_syntax_error_is_reported_as_before_and_stops_the_pass() {
        let c = collect::<Doc>(path(), "name = \ncount = 1\n");
        assert!(c.value.is_none());
        assert_eq!(c.problems.len(), 1);
        assert!(c.problems[0].location.starts_with("1:"), "{:?}", c.problems);
    }

    #[test]
    fn an_unknown_table_is_commented_out_whole() {
        let text = "name = \"a\"\ncount = 1\n\n[[itemz]]\nsize_ms = 1.0\nkind = \"small\"\n";
        let c = collect::<Doc>(path(), text);
        assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
        assert!(c.problems[0].message.contains("unknown field `itemz`"));
        assert!(c.problems[0].message.contains("did you mean `items`?"));
        let doc = c.value.unwrap();
        assert!(doc.items.is_empty(), "the table's keys went with it");
        assert_eq!(doc.count, 1);
    }

    #[test]
    fn only_an_unknown_name_gets_a_suggestion() {
        assert_eq!(
            nearest_expected("unknown field `cuont`, expected one of `count`, `name`").as_deref(),
            Some("count")
        );
        assert_eq!(
            nearest_expected("unknown field `zzz`, expected one of `count`, `name`"),
            None
        );
        assert_eq!(
            nearest_expected("invalid type: string \"a\", expected `count`"),
            None
        );
    }
}
