//! The docs follow the code: every file path that `README.md` and `docs/`
//! cite exists, and every code path they name (`milp::vars::replica_bound`,
//! `capacity::simulated::survivors`) is a module of the tree and an item
//! defined in it.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `README.md` and every `docs/*.md`, with their text.
fn documents() -> Vec<(PathBuf, String)> {
    let mut paths = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

/// The spans of `text` between backticks.
fn quoted(text: &str) -> Vec<&str> {
    text.split('`').skip(1).step_by(2).collect()
}

/// Folders at the top of the repository that a cited path may start with.
const TOP: &[&str] = &[
    "src/",
    "tests/",
    "scenarios/",
    "profiles/",
    "data/",
    "scripts/",
    "sql/",
    "benches/",
    "docs/",
    ".ci/",
];

/// A path-like word: letters, digits and `_ - . /`, with trailing
/// punctuation taken off.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || "_-./".contains(c)))
        .map(|w| w.trim_end_matches(['.', ',', ':', ';']))
        .filter(|w| !w.is_empty())
}

#[test]
fn every_path_the_docs_cite_exists() {
    let mut missing = Vec::new();
    for (doc, text) in documents() {
        let name = doc.strip_prefix(root()).unwrap().display().to_string();
        for word in words(&text) {
            let cited = TOP.iter().any(|t| word.starts_with(t)) && !word.contains("..");
            // A source file named from inside `src/` (`milp/vars.rs`).
            let source = !cited
                && Path::new(word).extension().is_some_and(|e| e == "rs")
                && word.contains('/')
                && !word.starts_with('.')
                && !word.starts_with("shared/");
            let path = if cited {
                root().join(word)
            } else if source {
                root().join("src").join(word)
            } else {
                continue;
            };
            // A path written with a placeholder (`docs/`, `data/NAME.csv`) is
            // not a file to check.
            if word.contains("NAME") || word.ends_with('/') && path.is_dir() {
                continue;
            }
            if !path.exists() {
                missing.push(format!("{name}: {word}"));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "paths cited in the docs that do not exist:\n  {}",
        missing.join("\n  ")
    );
}

/// The pipeline's folders: a code path starting with one is the crate's.
const ROOMS: &[&str] = &[
    "base", "profiles", "traces", "perf", "sim", "milp", "scenario", "demand", "capacity", "plan",
    "money", "replay", "solve", "sweep", "report", "cli",
];

/// The file of module `path` (`["milp", "vars"]` → `src/milp/vars.rs`).
fn module_file(path: &[&str]) -> Option<PathBuf> {
    let mut dir = root().join("src");
    for (i, segment) in path.iter().enumerate() {
        let file = dir.join(format!("{segment}.rs"));
        let folder = dir.join(segment).join("mod.rs");
        if i + 1 == path.len() {
            return [file, folder].into_iter().find(|p| p.is_file());
        }
        dir = dir.join(segment);
    }
    None
}

/// The text of every source file under `src/`.
fn all_sources() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(std::fs::read_to_string(p).unwrap());
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("src"), &mut out);
    out
}

/// Crates other than this one that the docs name paths of.
const EXTERNAL: &[&str] = &[
    "std",
    "core",
    "serde",
    "serde_json",
    "good_lp",
    "highs",
    "clap",
    "toml",
    "toml_edit",
    "proptest",
    "insta",
    "rand",
    "statrs",
    "indicatif",
    "parquet",
    "duckdb",
    "pyspark",
];

/// Whether the module in `file` defines `name`, itself or through a
/// `pub use child::*` of one of its children.
fn module_defines(file: &Path, name: &str) -> bool {
    let source = std::fs::read_to_string(file).unwrap();
    if defines(&source, name) {
        return true;
    }
    let dir = file.parent().unwrap();
    // A re-export by name: `pub use child::{Name, …};`.
    let named = source.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("pub")
            && l.contains(" use ")
            && l.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == name)
    });
    named
        || source.lines().any(|l| {
            let l = l.trim();
            l.strip_prefix("pub use ")
                .or_else(|| l.strip_prefix("pub(crate) use "))
                .and_then(|r| r.strip_suffix("::*;"))
                .is_some_and(|child| {
                    let f = dir.join(format!("{child}.rs"));
                    f.is_file() && defines(&std::fs::read_to_string(f).unwrap(), name)
                })
        })
}

/// Whether `text` (a source file) defines `name`.
fn defines(text: &str, name: &str) -> bool {
    [
        "fn ", "struct ", "enum ", "const ", "static ", "mod ", "trait ", "type ",
    ]
    .iter()
    .any(|kind| {
        text.match_indices(&format!("{kind}{name}")).any(|(i, m)| {
            let after = text[i + m.len()..].chars().next();
            !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    }) || text.contains(&format!("{name},")) && text.contains("enum ")
        || text.contains(&format!("pub {name}:"))
        || text.contains(&format!("    {name} {{"))
        || text.contains(&format!("    {name}("))
}

#[test]
fn every_code_path_the_docs_name_is_in_the_tree() {
    let mut wrong = Vec::new();
    for (doc, text) in documents() {
        let name = doc.strip_prefix(root()).unwrap().display().to_string();
        for span in quoted(&text) {
            let path = span.split('(').next().unwrap_or(span);
            if !path.contains("::") || path.contains(' ') {
                continue;
            }
            let segments: Vec<&str> = path.split("::").collect();
            if EXTERNAL.contains(&segments[0])
                || segments
                    .iter()
                    .any(|s| s.is_empty() || !s.chars().all(|c| c.is_alphanumeric() || c == '_'))
            {
                continue;
            }
            if segments[0].starts_with(char::is_uppercase) {
                // `Type::item`: the type defined somewhere in `src/`, and the
                // item in the same file or an impl elsewhere.
                let sources = all_sources();
                let ty = sources.iter().any(|t| defines(t, segments[0]));
                let item = segments[1..]
                    .iter()
                    .all(|i| sources.iter().any(|t| defines(t, i)));
                if !(ty && item) {
                    wrong.push(format!("{name}: `{path}`"));
                }
                continue;
            }
            if !ROOMS.contains(&segments[0]) {
                wrong.push(format!("{name}: `{path}` (no stage `{}`)", segments[0]));
                continue;
            }
            // The longest prefix that is a module; the rest are items in it
            // (a type and its method: the type must be defined there).
            let found = (1..=segments.len())
                .rev()
                .find_map(|n| module_file(&segments[..n]).map(|f| (n, f)));
            let ok = match found {
                Some((n, _)) if n == segments.len() => true,
                Some((n, file)) => module_defines(&file, segments[n]),
                None => false,
            };
            if !ok {
                wrong.push(format!("{name}: `{path}`"));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "code paths in the docs that name no module or item of src/:\n  {}",
        wrong.join("\n  ")
    );
}
