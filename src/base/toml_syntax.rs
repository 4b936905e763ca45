//! Every TOML syntax error of a file in one run.
//!
//! The `toml` crate (0.8) that reads scenarios and profiles stops at the
//! first syntax error. `toml_parser`, the parser of the newer `toml` releases,
//! recovers after an error and goes on, so a second pass with it finds the
//! syntax errors after the first: the lexer and parser report unbalanced
//! brackets, keys without values and stray tokens; decoding every key and
//! scalar reports bad strings, numbers and dates. Errors that need the whole
//! document (a key or table defined twice) are still found one per run, by
//! `toml` itself.
//!
//! `toml_parser` follows TOML 1.1, which accepts a few things 1.0 does not
//! (newlines in inline tables, `\e`): its errors only add to `toml`'s, never
//! replace them.

use crate::base::located::{line_col, Problem};
use std::fmt::Write as _;
use std::path::Path;
use toml_parser::parser::{Event, EventKind};
use toml_parser::{ParseError, Source};

/// The syntax errors of `text` that `toml_parser` finds, as (byte offset,
/// message), in file order, one per line.
pub(crate) fn syntax_errors(text: &str) -> Vec<(usize, String)> {
    let source = Source::new(text);
    let tokens = source.lex().into_vec();
    let mut events: Vec<Event> = Vec::new();
    let mut errors: Vec<ParseError> = Vec::new();
    toml_parser::parser::parse_document(&tokens, &mut events, &mut errors);
    for event in &events {
        let Some(raw) = source.get(event) else {
            continue;
        };
        match event.kind() {
            EventKind::SimpleKey => raw.decode_key(&mut (), &mut errors),
            EventKind::Scalar => {
                let _ = raw.decode_scalar(&mut (), &mut errors);
            }
            EventKind::Comment => raw.decode_comment(&mut errors),
            EventKind::Newline => raw.decode_newline(&mut errors),
            _ => {}
        }
    }
    let mut found: Vec<(usize, String)> = errors
        .iter()
        .map(|e| {
            let at = e
                .unexpected()
                .or(e.context())
                .map_or(text.len(), |s| s.start());
            (at, describe(e, text))
        })
        .collect();
    found.sort_by_key(|(at, _)| *at);
    let line_of = |at: usize| text[..at.min(text.len())].matches('\n').count();
    found.dedup_by(|b, a| line_of(a.0) == line_of(b.0));
    found
}

fn describe(e: &ParseError, text: &str) -> String {
    if e.description() == "string values must be quoted" {
        let found = e
            .unexpected()
            .and_then(|s| text.get(s.start()..s.end()))
            .unwrap_or("")
            .trim();
        return if found.is_empty() {
            "a value is missing after `=`".into()
        } else {
            format!("`{found}` is not a TOML value: a string needs quotes, a number only digits, a list brackets")
        };
    }
    let mut message = e.description().to_string();
    if let Some(expected) = e.expected().filter(|x| !x.is_empty()) {
        let list: Vec<String> = expected
            .iter()
            .map(|x| match x {
                toml_parser::Expected::Literal(l) => format!("`{l}`"),
                toml_parser::Expected::Description(d) => d.to_string(),
                other => format!("{other:?}"),
            })
            .collect();
        let _ = write!(message, "; expected {}", list.join(", "));
    }
    message
}

/// `first` (the `toml` crate's error) followed by every syntax error
/// `toml_parser` finds on a later line, and a last entry saying how they
/// were found. A first error with no message takes `toml_parser`'s for its
/// place, or a generic one.
pub(crate) fn all_syntax_problems(path: &Path, text: &str, mut first: Problem) -> Vec<Problem> {
    let found = syntax_errors(text);
    let first_line = first
        .location
        .split(':')
        .next()
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(0);
    let line_of = |at: usize| {
        line_col(text, at)
            .split(':')
            .next()
            .unwrap_or("0")
            .parse::<usize>()
            .unwrap_or(0)
    };
    // The same error, told by the parser that explains it in words.
    if let Some((_, m)) = found.iter().find(|(at, _)| line_of(*at) == first_line) {
        first.message.clone_from(m);
    } else if first.message.trim().is_empty() {
        first.message = "incomplete TOML here: a key needs `= value` on its line, a string its closing quote, a table header its `]`".into();
    }
    let later: Vec<Problem> = found
        .into_iter()
        .filter(|(at, _)| line_of(*at) > first_line)
        .map(|(at, message)| Problem::new(path.to_path_buf(), line_col(text, at), message))
        .collect();
    let _ = match later.len() {
        0 => write!(
            first.message,
            " (the rest of the file has no other syntax error)"
        ),
        1 => write!(
            first.message,
            " (the rest of the file, checked past this error, has 1 more, below)"
        ),
        n => write!(
            first.message,
            " (the rest of the file, checked past this error, has {n} more, below)"
        ),
    };
    let mut problems = vec![first];
    problems.extend(later);
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_errors_on_several_lines() {
        let text = "a = 1 2\nb = \"open\nc = [1,\n[d\ne = 0x\nf = 1\n";
        let found = syntax_errors(text);
        let lines: Vec<String> = found.iter().map(|(at, _)| line_col(text, *at)).collect();
        assert!(found.len() >= 3, "{found:?} at {lines:?}");
        assert!(lines[0].starts_with("1:"), "{lines:?}");
    }

    #[test]
    fn a_valid_file_has_none() {
        assert!(syntax_errors("a = 1\n[t]\nb = [1, 2]\nc = \"x\"\n").is_empty());
    }

    #[test]
    fn an_empty_first_message_gets_one() {
        let first = Problem::new("s.toml", "2:6", String::new());
        let p = all_syntax_problems(Path::new("s.toml"), "name = \"x\"\nkey =", first);
        assert!(!p[0].message.is_empty(), "{p:?}");
        assert_eq!(p[0].location, "2:6");
    }
}
