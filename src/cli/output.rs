//! The files a command writes, all or nothing.
//!
//! A command names every file it will write up front ([`Outputs::prepare`]),
//! before it reads or computes anything expensive. Each path is checked (not a
//! directory, its folder exists, no two outputs share a path) and a temporary
//! file is created beside it, which proves the folder is writable. The command
//! then writes each output into its temporary file ([`Outputs::write_text`],
//! [`Outputs::writer`], or [`Outputs::temp_path`] for a file another library
//! writes, such as the solver's log). [`Outputs::commit`] flushes them all and
//! only then renames them into place.
//!
//! If the command fails at any point, dropping the [`Outputs`] removes every
//! temporary file and renames none: a failed run leaves nothing behind. The
//! temporary files are hidden (`.NAME.PID.planner-tmp`) in the output's own
//! folder, so the final rename never crosses file systems.
//!
//! Standard output is not an [`Output`]: the report printed there is printed
//! after [`Outputs::commit`] succeeds (see [`emit_stdout`]).

use crate::base::error::PlannerError;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// One file a command will write, and the option that named it.
#[derive(Debug, Clone)]
pub(crate) struct Output {
    /// The command-line option, e.g. `--out`, used in messages.
    pub option: &'static str,
    /// Where the file goes.
    pub path: PathBuf,
}

impl Output {
    /// An output named by `option`, when the user gave a path.
    pub(crate) fn optional(option: &'static str, path: Option<&Path>) -> Option<Output> {
        path.map(|p| Output {
            option,
            path: p.to_path_buf(),
        })
    }

    /// An output that is always written.
    pub(crate) fn new(option: &'static str, path: &Path) -> Output {
        Output {
            option,
            path: path.to_path_buf(),
        }
    }
}

struct Pending {
    output: Output,
    tmp: PathBuf,
    writer: Option<BufWriter<File>>,
}

/// Every file a command writes, held as temporary files until [`commit`](Outputs::commit).
pub(crate) struct Outputs {
    pending: Vec<Pending>,
}

impl Outputs {
    /// Checks every path and creates one empty temporary file per output.
    /// Fails, with nothing left behind, if any path is a directory, names no
    /// file, lies in a folder that does not exist or cannot be written, or is
    /// given twice.
    pub(crate) fn prepare<I: IntoIterator<Item = Option<Output>>>(
        outputs: I,
    ) -> Result<Outputs, PlannerError> {
        let mut prepared = Outputs {
            pending: Vec::new(),
        };
        for output in outputs.into_iter().flatten() {
            check_path(&output)?;
            if let Some(other) = prepared
                .pending
                .iter()
                .find(|p| same_file(&p.output.path, &output.path))
            {
                return Err(PlannerError::Usage(format!(
                    "{} and {} both name {}: give each output its own file",
                    other.output.option,
                    output.option,
                    output.path.display()
                )));
            }
            let tmp = temp_path(&output.path);
            let file = File::options()
                .write(true)
                .create_new(true)
                .open(&tmp)
                .map_err(|source| PlannerError::Io {
                    path: output.path.clone(),
                    source,
                })?;
            prepared.pending.push(Pending {
                output,
                tmp,
                writer: Some(BufWriter::with_capacity(1 << 20, file)),
            });
        }
        Ok(prepared)
    }

    fn find(&mut self, option: &str) -> &mut Pending {
        self.pending
            .iter_mut()
            .find(|p| p.output.option == option)
            .unwrap_or_else(|| panic!("output {option} was not prepared"))
    }

    /// Whether `option` was given (and so prepared).
    pub(crate) fn has(&self, option: &str) -> bool {
        self.pending.iter().any(|p| p.output.option == option)
    }

    /// The buffered writer of `option`'s temporary file, for streamed output.
    /// Panics if `option` was not prepared (a programming error).
    pub(crate) fn writer(&mut self, option: &str) -> &mut BufWriter<File> {
        self.find(option)
            .writer
            .as_mut()
            .expect("an output's writer is only closed by temp_path")
    }

    /// Writes the whole text of `option`'s output.
    pub(crate) fn write_text(&mut self, option: &str, text: &str) -> Result<(), PlannerError> {
        let path = self.find(option).output.path.clone();
        self.writer(option)
            .write_all(text.as_bytes())
            .map_err(|source| PlannerError::Io { path, source })
    }

    /// The temporary file of `option`, for a file another library opens and
    /// writes itself (the solver's log). Closes this module's handle on it.
    pub(crate) fn temp_path(&mut self, option: &str) -> PathBuf {
        let p = self.find(option);
        p.writer = None;
        p.tmp.clone()
    }

    /// Flushes every output, then renames them all into place. If any flush
    /// fails, nothing is renamed and every temporary file is removed.
    pub(crate) fn commit(mut self) -> Result<(), PlannerError> {
        for p in &mut self.pending {
            if let Some(mut w) = p.writer.take() {
                w.flush()
                    .and_then(|()| w.get_ref().sync_all())
                    .map_err(|source| PlannerError::Io {
                        path: p.output.path.clone(),
                        source,
                    })?;
            }
        }
        // Checked again: a directory may have appeared since `prepare`.
        for p in &self.pending {
            check_path(&p.output)?;
        }
        while !self.pending.is_empty() {
            let p = self.pending.remove(0);
            if let Err(source) = std::fs::rename(&p.tmp, &p.output.path) {
                let _ = std::fs::remove_file(&p.tmp);
                return Err(PlannerError::Io {
                    path: p.output.path,
                    source,
                });
            }
        }
        Ok(())
    }
}

impl Drop for Outputs {
    /// Removes the temporary files of a command that did not commit.
    fn drop(&mut self) {
        for p in &mut self.pending {
            p.writer = None;
            let _ = std::fs::remove_file(&p.tmp);
        }
    }
}

/// `.NAME.PID.planner-tmp` beside `path`.
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.planner-tmp", std::process::id()))
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || match (absolute(a), absolute(b)) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        }
}

/// The path with its folder made canonical (the file itself may not exist).
fn absolute(path: &Path) -> Option<PathBuf> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Some(std::fs::canonicalize(parent).ok()?.join(path.file_name()?))
}

fn check_path(output: &Output) -> Result<(), PlannerError> {
    let path = &output.path;
    let bad = |why: &str| {
        Err(PlannerError::Usage(format!(
            "{} {}: {why}",
            output.option,
            path.display()
        )))
    };
    let text = path.as_os_str().to_string_lossy();
    if path.is_dir() || text.ends_with('/') || text.ends_with(std::path::MAIN_SEPARATOR) {
        return bad("is a directory; give a file path");
    }
    match path.file_name() {
        None => return bad("names no file; give a file path"),
        Some(n) if n == "." || n == ".." => return bad("names no file; give a file path"),
        Some(_) => {}
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return bad("its folder does not exist; create it first");
    }
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.is_file() && !meta.file_type().is_symlink() {
            return bad("exists and is not a regular file");
        }
    }
    Ok(())
}

/// Writes a finished report to standard output; a closed pipe is not an error.
pub(crate) fn emit_stdout(text: &str) -> Result<(), PlannerError> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(PlannerError::Io {
            path: PathBuf::from("<stdout>"),
            source: e,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("planner-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn entries(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn commit_renames_every_output() {
        let d = dir("commit");
        let mut o = Outputs::prepare([
            Output::optional("--out", Some(&d.join("a.txt"))),
            Output::optional("--plan-out", None),
            Some(Output::new("--log", &d.join("b.txt"))),
        ])
        .unwrap();
        assert!(!o.has("--plan-out"));
        o.write_text("--out", "A").unwrap();
        writeln!(o.writer("--log"), "B").unwrap();
        o.commit().unwrap();
        assert_eq!(entries(&d), ["a.txt", "b.txt"]);
        assert_eq!(std::fs::read_to_string(d.join("b.txt")).unwrap(), "B\n");
    }

    #[test]
    fn a_failed_command_leaves_nothing_behind() {
        let d = dir("drop");
        {
            let mut o = Outputs::prepare([Some(Output::new("--out", &d.join("a.txt")))]).unwrap();
            o.write_text("--out", "half").unwrap();
            // dropped without commit, as on any error
        }
        assert!(entries(&d).is_empty());
    }

    #[test]
    fn a_bad_second_path_leaves_no_temporary_of_the_first() {
        let d = dir("second");
        std::fs::create_dir(d.join("sub")).unwrap();
        let e = Outputs::prepare([
            Some(Output::new("--plan-out", &d.join("plan.json"))),
            Some(Output::new("--out", &d.join("sub"))),
        ])
        .err()
        .unwrap();
        assert!(e.to_string().contains("--out"), "{e}");
        assert!(e.to_string().contains("is a directory"), "{e}");
        assert_eq!(entries(&d), ["sub"]);
    }

    #[test]
    fn paths_that_name_no_file_are_refused() {
        for p in [".", "..", "/", "nope-dir-xyz/file.txt", "x/"] {
            let e = Outputs::prepare([Some(Output::new("--out", Path::new(p)))]);
            assert!(e.is_err(), "{p}");
        }
    }

    #[test]
    fn the_same_file_twice_is_refused() {
        let d = dir("twice");
        let a = d.join("a.json");
        let again = d.join(".").join("a.json");
        let e = Outputs::prepare([
            Some(Output::new("--out", &a)),
            Some(Output::new("--plan-out", &again)),
        ])
        .err()
        .unwrap();
        assert!(e.to_string().contains("both name"), "{e}");
        assert!(entries(&d).is_empty());
    }
}
