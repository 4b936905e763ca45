//! The source tree reads as the pipeline: each folder under `src/` is one
//! stage, and a stage reads only the stages before it in [`ROOMS`]; within a
//! stage, no two files read each other in a circle. A file may read the
//! `mod.rs` of a folder it sits in (its stage's shared types), and a `mod.rs`
//! may re-export its own children; every other `use` is an arrow checked
//! here. Paths are read from the code with comments taken out, so a doc link
//! is not an import.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The stages in pipeline order: a stage may read only those before it.
const ROOMS: &[&str] = &[
    "base", "profiles", "traces", "perf", "sim", "milp", "scenario", "demand", "capacity", "plan",
    "money", "replay", "solve", "sweep", "report", "cli",
];

/// Every `.rs` file under `dir`, sorted.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `text` with `//` comments (doc comments included) and string literals
/// blanked out.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_string = false;
        let mut prev = ' ';
        let mut kept = String::new();
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if !in_string && c == '/' && chars.get(i + 1) == Some(&'/') {
                break;
            }
            if c == '"' && prev != '\\' && prev != '\'' {
                in_string = !in_string;
            }
            kept.push(if in_string { ' ' } else { c });
            prev = c;
            i += 1;
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

/// The module path of a source file: `src/milp/model.rs` → `["milp",
/// "model"]`, `src/milp/mod.rs` → `["milp"]`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// Paths this file names: `crate::a::b…` and `super::a…` (resolved), as
/// module paths from the crate root. `use x::{a, b::c}` lists are opened.
fn named_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !word(bytes[i - 1]) && bytes[i - 1] != ':';
        let rest: String = bytes[i..bytes.len().min(i + 7)].iter().collect();
        let head = if starts_word && rest.starts_with("crate::") {
            Some((Vec::new(), 7))
        } else if starts_word && rest.starts_with("super::") {
            // `super` of `a/b.rs` (module a::b) and of `a/b/mod.rs` alike is a.
            let mut base = module.to_vec();
            base.pop();
            let mut j = i + 7;
            loop {
                let more: String = bytes[j..bytes.len().min(j + 7)].iter().collect();
                if more.starts_with("super::") {
                    base.pop();
                    j += 7;
                } else {
                    break;
                }
            }
            Some((base, j - i))
        } else {
            None
        };
        let Some((mut path, skip)) = head else {
            i += 1;
            continue;
        };
        let mut j = i + skip;
        loop {
            let start = j;
            while j < bytes.len() && word(bytes[j]) {
                j += 1;
            }
            if j > start {
                path.push(bytes[start..j].iter().collect());
            }
            if j + 1 < bytes.len() && bytes[j] == ':' && bytes[j + 1] == ':' {
                j += 2;
                if bytes.get(j) == Some(&'{') {
                    // A list: every entry's first segment extends the path.
                    let mut depth = 0;
                    let mut entry = String::new();
                    while j < bytes.len() {
                        let c = bytes[j];
                        if c == '{' {
                            depth += 1;
                        } else if c == '}' {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        if depth == 1 && (c == ',' || c == '{') {
                            if !entry.trim().is_empty() {
                                push_entry(&path, &entry, &mut out);
                            }
                            entry.clear();
                        } else if depth >= 1 {
                            entry.push(c);
                        }
                        j += 1;
                    }
                    if !entry.trim().is_empty() {
                        push_entry(&path, &entry, &mut out);
                    }
                    path.clear();
                    break;
                }
            } else {
                break;
            }
        }
        if !path.is_empty() {
            out.push(path);
        }
        i = j.max(i + 1);
    }
    out
}

fn push_entry(prefix: &[String], entry: &str, out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    for segment in entry.split("::") {
        let segment = segment.trim();
        let name: String = segment
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() || name == "self" {
            break;
        }
        path.push(name);
    }
    out.push(path);
}

/// The file a module path lands in: the deepest prefix that is a module.
fn file_of(modules: &BTreeMap<Vec<String>, PathBuf>, path: &[String]) -> Option<PathBuf> {
    (1..=path.len())
        .rev()
        .find_map(|n| modules.get(&path[..n]).cloned())
}

struct Tree {
    src: PathBuf,
    files: Vec<PathBuf>,
    modules: BTreeMap<Vec<String>, PathBuf>,
}

fn tree() -> Tree {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let modules = files
        .iter()
        .map(|f| (module_of(&src, f), f.clone()))
        .collect();
    Tree {
        src,
        files,
        modules,
    }
}

/// (importing file, imported file) for every arrow in the tree.
fn arrows(tree: &Tree) -> Vec<(PathBuf, PathBuf)> {
    let mut out = BTreeSet::new();
    for file in &tree.files {
        let module = module_of(&tree.src, file);
        if module.is_empty() || module == ["main"] || module == ["lib"] {
            continue;
        }
        let is_mod = file.ends_with("mod.rs");
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        for path in named_paths(&code, &module) {
            let Some(target) = file_of(&tree.modules, &path) else {
                continue;
            };
            let target_module = module_of(&tree.src, &target);
            // A file reading a folder it sits in (its own stage's shared
            // types), or a mod.rs reading its own children: not an arrow.
            let is_ancestor = target.ends_with("mod.rs") && module.starts_with(&target_module);
            let is_child = is_mod && target_module.starts_with(&module);
            if target != *file && !is_ancestor && !is_child {
                out.insert((file.clone(), target));
            }
        }
    }
    out.into_iter().collect()
}

fn room_of(tree: &Tree, file: &Path) -> String {
    module_of(&tree.src, file)[0].clone()
}

#[test]
fn every_stage_reads_only_the_stages_before_it() {
    let tree = tree();
    let mut rooms: BTreeSet<String> = BTreeSet::new();
    let mut wrong = Vec::new();
    for file in &tree.files {
        let module = module_of(&tree.src, file);
        if module.len() == 1 && (module[0] == "lib" || module[0] == "main") {
            continue;
        }
        rooms.insert(module[0].clone());
    }
    let unknown: Vec<&String> = rooms
        .iter()
        .filter(|r| !ROOMS.contains(&r.as_str()))
        .collect();
    assert!(
        unknown.is_empty(),
        "stages not in the pipeline order of tests/cli/layout.rs: {unknown:?}"
    );
    for (from, to) in arrows(&tree) {
        let (a, b) = (room_of(&tree, &from), room_of(&tree, &to));
        let rank = |r: &str| ROOMS.iter().position(|x| *x == r).unwrap();
        if rank(&a) < rank(&b) {
            wrong.push(format!(
                "{} reads {} ({a} is before {b})",
                from.strip_prefix(&tree.src).unwrap().display(),
                to.strip_prefix(&tree.src).unwrap().display()
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "imports that run back up the pipeline:\n  {}",
        wrong.join("\n  ")
    );
}

/// Depth-first search from `file`: every back edge closes a circle.
fn visit(
    file: &PathBuf,
    next: &BTreeMap<PathBuf, Vec<PathBuf>>,
    state: &mut BTreeMap<PathBuf, u8>,
    stack: &mut Vec<PathBuf>,
    circles: &mut Vec<Vec<PathBuf>>,
) {
    state.insert(file.clone(), 1);
    stack.push(file.clone());
    for to in next.get(file).into_iter().flatten() {
        match state.get(to).copied().unwrap_or(0) {
            0 => visit(to, next, state, stack, circles),
            1 => {
                let at = stack.iter().position(|f| f == to).unwrap();
                circles.push(stack[at..].to_vec());
            }
            _ => {}
        }
    }
    stack.pop();
    state.insert(file.clone(), 2);
}

#[test]
fn no_two_files_read_each_other_in_a_circle() {
    let tree = tree();
    let mut next: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for (from, to) in arrows(&tree) {
        next.entry(from).or_default().push(to);
    }
    let mut state = BTreeMap::new();
    let mut circles = Vec::new();
    for file in &tree.files {
        if state.get(file).copied().unwrap_or(0) == 0 {
            visit(file, &next, &mut state, &mut Vec::new(), &mut circles);
        }
    }
    let shown: Vec<String> = circles
        .iter()
        .map(|c| {
            c.iter()
                .map(|f| f.strip_prefix(&tree.src).unwrap().display().to_string())
                .collect::<Vec<_>>()
                .join(" -> ")
        })
        .collect();
    assert!(
        circles.is_empty(),
        "files that read each other in a circle:\n  {}",
        shown.join("\n  ")
    );
}
