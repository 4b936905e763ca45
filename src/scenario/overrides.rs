//! `--set KEY=VALUE`: changes to a scenario given on the command line, applied
//! to the parsed TOML document before validation, so that a changed value is
//! checked exactly like one written in the file.
//!
//! KEY is a path into the document: dotted keys with zero-based indices into
//! arrays and arrays of tables (`api.usd_per_million_output_tokens`,
//! `demand[1].scale`, `gpus[2].max_gpus`, `gpus[0].tensor_parallel[1]`).
//! VALUE is a TOML value (`0.6`, `16`, `true`, `[2, 4]`, `"fp8"`); a bare word
//! that is not one (`fp8`) is taken as a string.
//!
//! The document is edited in place (`toml_edit` keeps every untouched line as
//! written), and each changed or added line carries a marker comment, so a
//! problem found later on such a line names the `--set` key, and a problem on
//! any other line keeps its line and column in the file.

use crate::base::error::Problem;
use std::fmt::Write as _;
use std::path::Path;
use toml_edit::{DocumentMut, Item, Table, Value};

/// One `--set KEY=VALUE`.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// The key path as written (`demand[1].scale`).
    pub key: String,
    /// The value as written.
    pub value: String,
    path: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
    /// `[*]`: every entry of the array.
    Every,
}

impl Override {
    /// Parses `KEY=VALUE`; the error says what is wrong with the argument.
    pub fn parse(arg: &str) -> Result<Override, String> {
        let quoted = crate::base::text::excerpt(arg.as_bytes());
        let Some((key, value)) = arg.split_once('=') else {
            return Err(format!(
                "--set `{quoted}`: expected KEY=VALUE, e.g. --set api.usd_per_million_output_tokens=0.6"
            ));
        };
        let key = key.trim();
        let path = parse_path(key).map_err(|e| format!("--set `{quoted}`: {e}"))?;
        Ok(Override {
            key: key.to_string(),
            value: value.trim().to_string(),
            path,
        })
    }

    /// The same key with another value.
    #[must_use]
    pub fn with_value(&self, value: &str) -> Override {
        Override {
            value: value.to_string(),
            ..self.clone()
        }
    }

    /// `KEY=VALUE`, as on the command line.
    pub fn label(&self) -> String {
        format!("{}={}", self.key, self.value)
    }
}

/// Longest `--set` key, in bytes: the deepest key of a scenario is under
/// fifty (`gpus[0].reserved_offers[1].usd_per_gpu_hour`).
pub const MAX_KEY_BYTES: usize = 200;

/// Most parts (keys and indices) in a `--set` key.
pub const MAX_KEY_PARTS: usize = 8;

/// Largest index a `--set` key may give: no list of a scenario is longer.
pub const MAX_KEY_INDEX: usize = 10_000;

fn parse_path(key: &str) -> Result<Vec<Segment>, String> {
    if key.is_empty() {
        return Err("the key is empty".into());
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(format!(
            "the key is {} bytes long; a scenario's keys are at most {MAX_KEY_BYTES} (e.g. `gpus[0].max_gpus`)",
            key.len()
        ));
    }
    let mut path = Vec::new();
    for part in key.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        let name_ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !name_ok {
            return Err(format!(
                "`{part}` is not a key; keys are letters, digits, `_` and `-`, joined by `.`, with `[N]` after an array (e.g. `gpus[0].max_gpus`)"
            ));
        }
        path.push(Segment::Key(name.to_string()));
        while !rest.is_empty() {
            let close = rest
                .find(']')
                .ok_or_else(|| format!("`{part}`: `[` without `]`"))?;
            if &rest[1..close] == "*" {
                path.push(Segment::Every);
                rest = &rest[close + 1..];
                if !rest.is_empty() && !rest.starts_with('[') {
                    return Err(format!("`{part}`: unexpected `{rest}` after `]`"));
                }
                continue;
            }
            let index = rest[1..close].parse::<usize>().map_err(|_| {
                format!(
                    "`{part}`: `{}` is not an index (0, 1, 2, …, or * for every entry)",
                    &rest[1..close]
                )
            })?;
            if index > MAX_KEY_INDEX {
                return Err(format!(
                    "`{part}`: index {index} is past any list of a scenario (at most {MAX_KEY_INDEX})"
                ));
            }
            path.push(Segment::Index(index));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(format!("`{part}`: unexpected `{rest}` after `]`"));
            }
        }
    }
    if path.len() > MAX_KEY_PARTS {
        return Err(format!(
            "the key has {} parts; a scenario's keys have at most {MAX_KEY_PARTS} (e.g. `gpus[0].reserved_offers[1].term_months`)",
            path.len()
        ));
    }
    Ok(path)
}

/// The comment that marks a line changed by `--set KEY`.
fn marker(key: &str) -> String {
    format!(" # planner --set {key}")
}

const MARKER_PREFIX: &str = "# planner --set ";

/// A scenario text with overrides applied, and how its lines map back to
/// the file's.
#[derive(Debug, Clone)]
pub struct Overridden {
    /// The edited document, to be parsed and validated.
    pub text: String,
    /// Per line of `text` (0-based): the `--set` key that wrote it, if any.
    set_by: Vec<Option<String>>,
    /// Per line of `text`: the line of the original file it is, if any.
    original_line: Vec<Option<usize>>,
}

impl Overridden {
    /// Rewrites a problem's `line:column` in the edited text into the file's,
    /// or into `--set KEY` when the line was written by an override; adds the
    /// override to problems whose key path lies under an overridden key.
    pub fn locate(&self, mut problem: Problem, overrides: &[Override]) -> Problem {
        if let Some((line, col)) = parse_line_col(&problem.location) {
            let i = line.saturating_sub(1);
            if let Some(Some(key)) = self.set_by.get(i) {
                problem.location = format!("--set {key}");
            } else if let Some(Some(orig)) = self.original_line.get(i) {
                problem.location = format!("{}:{col}", orig + 1);
            }
            return problem;
        }
        if let Some(o) = overrides.iter().find(|o| under(&problem.location, &o.key)) {
            problem.message = format!("{} (set by --set {})", problem.message, o.label());
        }
        problem
    }
}

/// Whether the key path `location` is `key` or lies under it, an index
/// `[*]` of `key` matching any index (`demand[1].scale` is under
/// `demand[*].scale` and under `demand[1]`).
fn under(location: &str, key: &str) -> bool {
    let mut rest = location;
    let mut pieces = key.split("[*]").peekable();
    while let Some(piece) = pieces.next() {
        let Some(after) = rest.strip_prefix(piece) else {
            return false;
        };
        rest = after;
        if pieces.peek().is_some() {
            let Some(index) = rest.strip_prefix('[') else {
                return false;
            };
            let digits = index.chars().take_while(char::is_ascii_digit).count();
            let Some(after) = index[digits..].strip_prefix(']').filter(|_| digits > 0) else {
                return false;
            };
            rest = after;
        }
    }
    rest.is_empty() || rest.starts_with('.') || rest.starts_with('[')
}

fn parse_line_col(location: &str) -> Option<(usize, usize)> {
    let (l, c) = location.split_once(':')?;
    Some((l.parse().ok()?, c.parse().ok()?))
}

/// Applies `overrides` in order to the TOML `text` of `file`. Every override
/// that cannot be applied (no such array entry, a table where a value is
/// expected, a value of another type than the one it replaces) is a problem
/// located at `--set KEY`; all of them are returned together.
pub fn apply(
    file: &Path,
    text: &str,
    overrides: &[Override],
) -> Result<(Overridden, Vec<Problem>), Vec<Problem>> {
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        let location = e
            .span()
            .map(|s| crate::base::located::line_col(text, s.start))
            .unwrap_or_default();
        vec![Problem::new(
            file.to_path_buf(),
            location,
            e.message().trim().to_string(),
        )]
    })?;
    let mut problems = Vec::new();
    let mut expanded = Vec::new();
    for o in overrides {
        match expand(&doc, o) {
            Ok(mut each) => expanded.append(&mut each),
            Err(message) => problems.push(Problem::new(
                file.to_path_buf(),
                format!("--set {}", o.key),
                message,
            )),
        }
    }
    for o in &expanded {
        if let Err(message) = apply_one(&mut doc, o) {
            problems.push(Problem::new(
                file.to_path_buf(),
                format!("--set {}", o.key),
                message,
            ));
        }
    }
    // The overrides that applied make the document the checks read, so
    // their problems come beside these.
    let edited = doc.to_string();
    Ok((map_lines(text, edited), problems))
}

/// Marks which lines of `edited` were written by an override, and which
/// original line every other line is.
fn map_lines(original: &str, edited: String) -> Overridden {
    let original_lines: Vec<&str> = original.lines().collect();
    let mut set_by = Vec::new();
    let mut original_line = Vec::new();
    let mut next = 0;
    for line in edited.lines() {
        match line.find(MARKER_PREFIX) {
            Some(at) if original_lines.get(next).is_none_or(|l| *l != line) => {
                set_by.push(Some(line[at + MARKER_PREFIX.len()..].trim().to_string()));
                // A changed line replaces the original one at this place; an
                // added line has no original.
                let replaced = original_lines.get(next).is_some_and(|l| same_key(l, line));
                original_line.push(replaced.then_some(next));
                if replaced {
                    next += 1;
                }
            }
            _ => {
                let same = original_lines.get(next).is_some_and(|l| *l == line);
                original_line.push(same.then_some(next));
                if same {
                    next += 1;
                }
                set_by.push(None);
            }
        }
    }
    Overridden {
        text: edited,
        set_by,
        original_line,
    }
}

/// Whether two `key = value` lines assign the same key.
fn same_key(a: &str, b: &str) -> bool {
    let key = |l: &str| l.split_once('=').map(|(k, _)| k.trim().to_string());
    key(a).is_some() && key(a) == key(b)
}

fn describe(item: &Item) -> &'static str {
    match item {
        Item::None => "absent",
        Item::Table(_) => "a table",
        Item::ArrayOfTables(_) => "an array of tables",
        Item::Value(v) => match v {
            Value::String(_) => "a string",
            Value::Integer(_) | Value::Float(_) => "a number",
            Value::Boolean(_) => "a boolean",
            Value::Datetime(_) => "a date-time",
            Value::Array(_) => "an array",
            Value::InlineTable(_) => "a table",
        },
    }
}

fn prefix_of(path: &[Segment]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Segment::Key(k) if s.is_empty() => s.push_str(k),
            Segment::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Segment::Index(i) => {
                let _ = write!(s, "[{i}]");
            }
            Segment::Every => s.push_str("[*]"),
        }
    }
    s
}

/// Parses VALUE as a TOML value; a bare word that is not one is a string.
fn parse_value(text: &str) -> Value {
    match text.parse::<Value>() {
        Ok(mut v) => {
            v.decor_mut().clear();
            v
        }
        Err(_) => Value::from(text),
    }
}

/// The new value, converted to the kind of the one it replaces where that is
/// lossless (an integer where a number is expected); an error otherwise.
fn fit(old: &Item, new: Value, o: &Override) -> Result<Value, String> {
    let Item::Value(old) = old else {
        return match old {
            Item::None => Ok(new),
            other => Err(format!(
                "`{}` is {} in the scenario, not a single value; set one of its keys instead (e.g. `{}.<key>`)",
                o.key,
                describe(other),
                o.key
            )),
        };
    };
    let wrong = |new: &Value| {
        // A number too large for a float is read as a word: say which.
        let out_of_range = matches!(new, Value::String(_))
            && o.value.trim().parse::<f64>().is_ok_and(f64::is_infinite);
        if out_of_range {
            return Err(format!(
                "`{}` expects {}, got `{}`, a number beyond the largest one a scenario can hold (about 1.8e308)",
                o.key,
                describe(&Item::Value(old.clone())),
                o.value
            ));
        }
        Err(format!(
            "`{}` expects {}, got {} `{}`",
            o.key,
            describe(&Item::Value(old.clone())),
            describe(&Item::Value(new.clone())),
            o.value
        ))
    };
    match (old, new) {
        (Value::Float(_), Value::Integer(i)) => Ok(Value::from(*i.value() as f64)),
        // A number where the file wrote an integer: the field's own type
        // decides (a float field accepts it, a count rejects it by name).
        (Value::Float(_) | Value::Integer(_), n @ Value::Float(_))
        | (Value::Integer(_), n @ Value::Integer(_))
        | (Value::String(_), n @ Value::String(_))
        | (Value::Boolean(_), n @ Value::Boolean(_))
        | (Value::Datetime(_), n @ Value::Datetime(_))
        | (Value::Array(_), n @ Value::Array(_))
        | (Value::InlineTable(_), n @ Value::InlineTable(_)) => Ok(n),
        (_, n) => wrong(&n),
    }
}

/// `o` with every `[*]` replaced by each index of its array in `doc`, in
/// order (`demand[*].scale` → `demand[0].scale`, `demand[1].scale`, …);
/// `o` itself when it has none.
fn expand(doc: &DocumentMut, o: &Override) -> Result<Vec<Override>, String> {
    let Some(at) = o.path.iter().position(|s| *s == Segment::Every) else {
        return Ok(vec![o.clone()]);
    };
    let mut item: &Item = doc.as_item();
    for seg in &o.path[..at] {
        let next = match seg {
            Segment::Key(k) => item.get(k.as_str()),
            Segment::Index(n) => item.get(*n),
            Segment::Every => None,
        };
        item = next.ok_or_else(|| {
            format!(
                "`{}` is not in the scenario, so `[*]` has no entries to change",
                prefix_of(&o.path[..at])
            )
        })?;
    }
    let len = match item {
        Item::ArrayOfTables(a) => a.len(),
        Item::Value(Value::Array(a)) => a.len(),
        other => {
            return Err(format!(
                "`{}` is {}, not an array; drop `[*]`",
                prefix_of(&o.path[..at]),
                describe(other)
            ))
        }
    };
    if len == 0 {
        return Err(format!(
            "`{}` has no entries, so `[*]` changes nothing",
            prefix_of(&o.path[..at])
        ));
    }
    let mut out = Vec::new();
    for i in 0..len {
        let mut path = o.path.clone();
        path[at] = Segment::Index(i);
        let one = Override {
            key: o.key.replacen("[*]", &format!("[{i}]"), 1),
            value: o.value.clone(),
            path,
        };
        out.extend(expand(doc, &one)?);
    }
    Ok(out)
}

fn apply_one(doc: &mut DocumentMut, o: &Override) -> Result<(), String> {
    let mut item: &mut Item = doc.as_item_mut();
    for (i, seg) in o.path.iter().enumerate() {
        let here = prefix_of(&o.path[..i]);
        let last = i + 1 == o.path.len();
        match seg {
            Segment::Key(k) => {
                if !item.is_table_like() {
                    return Err(format!(
                        "`{here}` is {}, so it has no key `{k}`",
                        describe(item)
                    ));
                }
                let missing = item.get(k.as_str()).is_none_or(Item::is_none);
                if missing && !last {
                    if matches!(o.path[i + 1], Segment::Index(_)) {
                        return Err(format!(
                            "`{}` is not in the scenario, so it has no entries to change; add it to the file",
                            prefix_of(&o.path[..=i])
                        ));
                    }
                    let mut table = Table::new();
                    table.decor_mut().set_suffix(marker(&o.key));
                    let new = if item.is_table() {
                        Item::Table(table)
                    } else {
                        Item::Value(Value::InlineTable(table.into_inline_table()))
                    };
                    let slot = item.get_mut(k.as_str()).expect("a table-like item");
                    *slot = new;
                }
                item = item.get_mut(k.as_str()).expect("a table-like item");
            }
            Segment::Every => {
                return Err(format!(
                    "`{here}[*]`: every entry is expanded before a change is applied"
                ));
            }
            Segment::Index(n) => {
                let len = match &*item {
                    Item::ArrayOfTables(a) => a.len(),
                    Item::Value(Value::Array(a)) => a.len(),
                    other => {
                        return Err(format!(
                            "`{here}` is {}, not an array; drop `[{n}]`",
                            describe(other)
                        ))
                    }
                };
                if *n >= len {
                    return Err(format!(
                        "`{here}` has {len} entr{} ([0] to [{}]), so `[{n}]` does not exist",
                        if len == 1 { "y" } else { "ies" },
                        len.saturating_sub(1)
                    ));
                }
                item = item.get_mut(*n).expect("index checked");
            }
        }
    }
    let mut new = fit(item, parse_value(&o.value), o)?;
    if let Some(prefix) = item.as_value().and_then(|v| v.decor().prefix()).cloned() {
        new.decor_mut().set_prefix(prefix);
    }
    *item = Item::Value(new);
    mark(doc.as_item_mut(), &o.path, &marker(&o.key));
    Ok(())
}

/// Puts the marker on the key-value line of a table (or array-of-tables
/// entry) that holds the changed value.
fn mark(root: &mut Item, path: &[Segment], marker: &str) {
    let mut item = root;
    for seg in path {
        let in_table = matches!(item, Item::Table(_));
        let next = match seg {
            Segment::Key(k) => item.get_mut(k.as_str()),
            Segment::Index(n) => item.get_mut(*n),
            Segment::Every => None,
        };
        let Some(next) = next else { return };
        if in_table {
            if let Item::Value(v) = next {
                v.decor_mut().set_suffix(marker);
                return;
            }
        }
        item = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`apply`] with every override applied, or its problems.
    fn apply_all(
        file: &Path,
        text: &str,
        overrides: &[Override],
    ) -> Result<Overridden, Vec<Problem>> {
        match apply(file, text, overrides)? {
            (edited, problems) if problems.is_empty() => Ok(edited),
            (_, problems) => Err(problems),
        }
    }

    #[test]
    fn a_star_changes_every_entry_of_the_list() {
        let text = "[[demand]]\nscale = 1\n\n[[demand]]\nscale = 3\n";
        let o = Override::parse("demand[*].scale=2").unwrap();
        let edited = apply_all(Path::new("s.toml"), text, &[o]).unwrap().text;
        assert_eq!(edited.matches("scale = 2").count(), 2, "{edited}");
        assert!(!edited.contains("scale = 3"), "{edited}");
        let none = Override::parse("tiers[*].ttft_ms=2").unwrap();
        let e = apply_all(Path::new("s.toml"), text, &[none]).unwrap_err();
        assert!(e[0].message.contains("not in the scenario"), "{:?}", e[0]);
        assert!(Override::parse("demand[x].scale=2")
            .unwrap_err()
            .contains("* for every"));
    }

    /// Issue: a 120 KB `--set` key took 25 s and 8 GB, then aborted.
    #[test]
    fn long_and_deep_keys_are_refused_at_once() {
        let long = format!("{}=1", "a.".repeat(60_000) + "b");
        let e = Override::parse(&long).unwrap_err();
        assert!(e.contains("bytes long"), "{e}");
        assert!(e.len() < 300, "the message quotes the key in part: {e}");
        let deep = Override::parse("a.b.c.d.e.f.g.h.i=1").unwrap_err();
        assert!(deep.contains("9 parts"), "{deep}");
        let far = Override::parse("gpus[99999999].max_gpus=1").unwrap_err();
        assert!(far.contains("past any list"), "{far}");
        assert!(Override::parse("gpus[0].reserved_offers[1].usd_per_gpu_hour=1").is_ok());
    }

    const TEXT: &str = "name = \"x\" # the name\n\n[api]\nusd = 0.88\n\n[[gpus]]\nprofile = \"h100\"\ntp = [2, 4]\n\n[[gpus]]\nprofile = \"h200\"\n";

    fn run(sets: &[&str]) -> Result<Overridden, Vec<Problem>> {
        let overrides: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
        apply_all(Path::new("s.toml"), TEXT, &overrides)
    }

    fn messages(sets: &[&str]) -> String {
        run(sets)
            .unwrap_err()
            .iter()
            .map(|p| format!("{}: {}", p.location, p.message))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_problem_under_a_key_with_every_index_names_that_set() {
        assert!(under("demand[1].scale", "demand[*].scale"));
        assert!(under("demand[12].scale", "demand[*]"));
        assert!(under("demand[1].scale", "demand[1]"));
        assert!(under("demand[1]", "demand[1]"));
        assert!(!under("demand[1].scale_x", "demand[*].scale"));
        assert!(!under("demand[1].trace", "demand[*].scale"));
        assert!(!under("demand.scale", "demand[*].scale"));
        assert!(!under("demand[].scale", "demand[*].scale"));
        assert!(!under("tiers[0].name", "demand[*]"));
    }

    #[test]
    fn paths_parse_keys_and_indices() {
        let o = Override::parse("gpus[2].tp[1]=4").unwrap();
        assert_eq!(
            o.path,
            vec![
                Segment::Key("gpus".into()),
                Segment::Index(2),
                Segment::Key("tp".into()),
                Segment::Index(1)
            ]
        );
        assert!(Override::parse("gpus").is_err());
        assert!(Override::parse("gpus[x].a=1").is_err());
        assert!(Override::parse("a..b=1").is_err());
    }

    #[test]
    fn changes_values_and_keeps_other_lines() {
        let out = run(&["api.usd=0.6", "gpus[1].max=16", "gpus[0].tp[1]=8"]).unwrap();
        assert!(
            out.text.contains("usd = 0.6 # planner --set api.usd\n"),
            "{}",
            out.text
        );
        assert!(out
            .text
            .contains("tp = [2, 8] # planner --set gpus[0].tp[1]"));
        assert!(out.text.contains("max = 16 # planner --set gpus[1].max"));
        assert!(out.text.starts_with("name = \"x\" # the name\n"));
    }

    #[test]
    fn integers_become_numbers_and_bare_words_strings() {
        let out = run(&["api.usd=1", "gpus[0].profile=mi300x"]).unwrap();
        assert!(out.text.contains("usd = 1.0"), "{}", out.text);
        assert!(out.text.contains("profile = \"mi300x\""), "{}", out.text);
    }

    #[test]
    fn a_number_too_large_for_a_float_is_named_as_one() {
        let m = messages(&["api.usd=1e400"]);
        assert!(
            m.contains("`api.usd` expects a number, got `1e400`, a number beyond the largest"),
            "{m}"
        );
        assert!(!m.contains("a string"), "{m}");
    }

    #[test]
    fn wrong_kinds_and_missing_entries_name_the_key() {
        let m = messages(&["api.usd=cheap", "gpus[5].max=1", "api=3", "name.first=1"]);
        assert!(
            m.contains("--set api.usd: `api.usd` expects a number, got a string `cheap`"),
            "{m}"
        );
        assert!(
            m.contains("--set gpus[5].max: `gpus` has 2 entries ([0] to [1])"),
            "{m}"
        );
        assert!(
            m.contains("--set api: `api` is a table in the scenario"),
            "{m}"
        );
        assert!(
            m.contains("--set name.first: `name` is a string, so it has no key `first`"),
            "{m}"
        );
    }

    #[test]
    fn problems_on_changed_lines_name_the_key_and_others_keep_their_line() {
        let overrides = vec![
            Override::parse("gpus[0].extra=1").unwrap(),
            Override::parse("api.usd=2").unwrap(),
        ];
        let out = apply_all(Path::new("s.toml"), TEXT, &overrides).unwrap();
        let at = |line: usize| {
            out.locate(Problem::new("s.toml", format!("{line}:1"), "m"), &overrides)
                .location
        };
        let lines: Vec<&str> = out.text.lines().collect();
        let added = lines.iter().position(|l| l.starts_with("extra")).unwrap() + 1;
        assert_eq!(at(added), "--set gpus[0].extra");
        assert_eq!(at(4), "--set api.usd");
        // `profile = "h200"` is line 11 of the file and one line lower after the addition.
        let h200 = lines.iter().position(|l| l.contains("h200")).unwrap() + 1;
        assert_eq!(h200, 12);
        assert_eq!(at(h200), "11:1");
    }

    #[test]
    fn new_tables_are_created_for_optional_sections() {
        let out = run(&["simulation.seed=7"]).unwrap();
        assert!(out.text.contains("[simulation]"), "{}", out.text);
        assert!(out.text.contains("seed = 7"), "{}", out.text);
    }
}
