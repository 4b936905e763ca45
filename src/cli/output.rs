//! The files a command writes, all or nothing.
//!
//! A command names every file it will write up front ([`Outputs::prepare`]),
//! before it reads or computes anything expensive. Each path is checked (not
//! a directory, its folder exists and takes a file, no two outputs share a
//! path), and nothing is created yet. What a command writes as one text
//! ([`Outputs::write_text`]) is held until [`Outputs::commit`], which writes
//! each into a temporary file beside its target and renames them all into
//! place only once every one is written. An output written while the command
//! runs ([`Outputs::writer`], or [`Outputs::temp_path`] for a file another
//! library writes, such as the solver's log) gets its temporary file when it
//! is first asked for.
//!
//! The targets:
//! - a regular file, or a path with nothing there yet: the temporary file is
//!   renamed over it;
//! - a symbolic link: the same, over the file the link points to, so the link
//!   stays a link and its target gets the new content;
//! - a character device or a FIFO (`/dev/stdout`, a named pipe), and `-`
//!   (standard output): written directly at commit, after the files.
//!
//! Nothing is left behind by a failed command: dropping the [`Outputs`]
//! removes its temporary files; SIGINT and SIGTERM remove them before the
//! process exits ([`install_signal_cleanup`]); and the temporaries of a
//! process that was killed outright (`kill -9`) are removed by the next run
//! that writes to the same folder. Temporary files are hidden
//! (`.NAME.PID.planner-tmp`), in the target's own folder, so the rename never
//! crosses file systems.

use crate::base::error::PlannerError;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One file a command will write, and the option that named it.
#[derive(Debug, Clone)]
pub(crate) struct Output {
    /// The command-line option, e.g. `--out`, used in messages.
    pub option: &'static str,
    /// Where the file goes, as given (`-`: standard output).
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

/// Where an output's bytes end up.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    /// A regular file (or none yet), reached through any symbolic links:
    /// written to a temporary file beside it and renamed over it.
    File(PathBuf),
    /// A character device or FIFO: opened and written at commit.
    Stream(PathBuf),
    /// `-`: standard output, written at commit.
    Stdout,
}

struct Pending {
    output: Output,
    target: Target,
    /// What [`Outputs::write_text`] gave, held until commit.
    text: Vec<u8>,
    /// The temporary file, once a streamed write or another library needs
    /// one; for a stream target it lives in the system's temporary folder
    /// and is copied to the stream at commit.
    temp: Option<Temp>,
}

struct Temp {
    path: PathBuf,
    writer: Option<BufWriter<File>>,
}

/// Every file a command writes, held back until [`commit`](Outputs::commit).
pub(crate) struct Outputs {
    pending: Vec<Pending>,
}

impl Outputs {
    /// Checks every path; creates nothing. Fails if any path is a
    /// directory, names no file, lies in a folder that does not exist or
    /// takes no file, or is given twice. Removes the temporary files that
    /// killed runs left beside these targets.
    pub(crate) fn prepare<I: IntoIterator<Item = Option<Output>>>(
        outputs: I,
    ) -> Result<Outputs, PlannerError> {
        let mut prepared = Outputs {
            pending: Vec::new(),
        };
        for output in outputs.into_iter().flatten() {
            let target = target_of(&output)?;
            if let Some(other) = prepared
                .pending
                .iter()
                .find(|p| same_target(&p.target, &target))
            {
                return Err(PlannerError::Usage(format!(
                    "{} and {} both name {}: give each output its own file",
                    other.output.option,
                    output.option,
                    output.path.display()
                )));
            }
            if let Target::File(file) = &target {
                check_writable(&output, file)?;
                remove_stale_temporaries(file);
            }
            prepared.pending.push(Pending {
                output,
                target,
                text: Vec::new(),
                temp: None,
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

    /// A buffered writer into `option`'s temporary file, for output written
    /// while the command runs. Panics if `option` was not prepared (a
    /// programming error).
    pub(crate) fn writer(&mut self, option: &str) -> Result<&mut BufWriter<File>, PlannerError> {
        let p = self.find(option);
        let temp = p.temp(true)?;
        Ok(temp.writer.as_mut().expect("opened with a writer"))
    }

    /// Holds the whole text of `option`'s output until commit.
    pub(crate) fn write_text(&mut self, option: &str, text: &str) -> Result<(), PlannerError> {
        let p = self.find(option);
        if let Some(w) = p.temp.as_mut().and_then(|t| t.writer.as_mut()) {
            w.write_all(text.as_bytes())
                .map_err(|source| PlannerError::Io {
                    path: p.output.path.clone(),
                    source,
                })
        } else {
            p.text.extend_from_slice(text.as_bytes());
            Ok(())
        }
    }

    /// The temporary file of `option`, for a file another library opens and
    /// writes itself (the solver's log).
    pub(crate) fn temp_path(&mut self, option: &str) -> Result<PathBuf, PlannerError> {
        let p = self.find(option);
        let temp = p.temp(false)?;
        Ok(temp.path.clone())
    }

    /// Writes the held texts, flushes every temporary file, renames them all
    /// into place, then writes the stream targets. If any write or flush
    /// fails, nothing is renamed and every temporary file is removed.
    pub(crate) fn commit(mut self) -> Result<(), PlannerError> {
        for p in &mut self.pending {
            if p.target != Target::Stdout && !matches!(p.target, Target::Stream(_))
                || p.temp.is_some()
            {
                let text = std::mem::take(&mut p.text);
                let path = p.output.path.clone();
                let temp = p.temp(true)?;
                let io = |source| PlannerError::Io {
                    path: path.clone(),
                    source,
                };
                let mut w = match temp.writer.take() {
                    Some(w) => w,
                    None => {
                        BufWriter::new(File::options().append(true).open(&temp.path).map_err(io)?)
                    }
                };
                w.write_all(&text).map_err(io)?;
                w.flush().map_err(io)?;
                w.get_ref().sync_all().map_err(io)?;
            }
        }
        // Checked again: a directory may have appeared since `prepare`.
        for p in &self.pending {
            if let Target::File(file) = &p.target {
                if file.is_dir() {
                    return Err(usage(&p.output, "is a directory; give a file path"));
                }
            }
        }
        // Files first, all or nothing among them; what is still pending when
        // one fails is removed by `drop`.
        let mut i = 0;
        while i < self.pending.len() {
            let Target::File(file) = self.pending[i].target.clone() else {
                i += 1;
                continue;
            };
            let mut p = self.pending.remove(i);
            let temp = p.temp.take().expect("every file target was written");
            forget(&temp.path);
            if let Err(source) = std::fs::rename(&temp.path, &file) {
                let _ = std::fs::remove_file(&temp.path);
                return Err(PlannerError::Io { path: file, source });
            }
        }
        // Then the streams.
        while !self.pending.is_empty() {
            let mut p = self.pending.remove(0);
            let bytes = match p.temp.take() {
                Some(temp) => {
                    let read = std::fs::read(&temp.path);
                    forget(&temp.path);
                    let _ = std::fs::remove_file(&temp.path);
                    read.map_err(|source| PlannerError::Io {
                        path: p.output.path.clone(),
                        source,
                    })?
                }
                None => std::mem::take(&mut p.text),
            };
            write_stream(&p, &bytes)?;
        }
        Ok(())
    }
}

impl Pending {
    /// The output's temporary file, created on first use (with a writer
    /// when `writer`).
    fn temp(&mut self, writer: bool) -> Result<&mut Temp, PlannerError> {
        if self.temp.is_none() {
            let path = match &self.target {
                Target::File(file) => temp_path(file),
                Target::Stream(_) | Target::Stdout => std::env::temp_dir().join(format!(
                    "planner-{}-{}.planner-tmp",
                    std::process::id(),
                    self.output.option.trim_start_matches('-')
                )),
            };
            remember(&path);
            let file = File::options()
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(|source| {
                    forget(&path);
                    PlannerError::Io {
                        path: self.output.path.clone(),
                        source,
                    }
                })?;
            self.temp = Some(Temp {
                path,
                writer: writer.then(|| BufWriter::with_capacity(1 << 20, file)),
            });
        }
        Ok(self.temp.as_mut().expect("just created"))
    }
}

impl Drop for Outputs {
    /// Removes the temporary files of a command that did not commit.
    fn drop(&mut self) {
        for p in &mut self.pending {
            if let Some(mut temp) = p.temp.take() {
                temp.writer = None;
                let _ = std::fs::remove_file(&temp.path);
                forget(&temp.path);
            }
        }
    }
}

/// Writes `bytes` to a stream target: standard output (a closed pipe is
/// not an error) or a device or FIFO opened for writing.
fn write_stream(p: &Pending, bytes: &[u8]) -> Result<(), PlannerError> {
    let io = |source| PlannerError::Io {
        path: p.output.path.clone(),
        source,
    };
    match &p.target {
        Target::Stdout => {
            let mut out = std::io::stdout().lock();
            match out.write_all(bytes).and_then(|()| out.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(io(e)),
                _ => Ok(()),
            }
        }
        Target::Stream(path) => {
            let mut f = File::options().write(true).open(path).map_err(io)?;
            f.write_all(bytes).and_then(|()| f.flush()).map_err(io)
        }
        Target::File(_) => unreachable!("files are renamed into place"),
    }
}

/// Where `output`'s bytes go, its path checked.
fn target_of(output: &Output) -> Result<Target, PlannerError> {
    let path = &output.path;
    let text = path.as_os_str().to_string_lossy();
    // Standard output by any of its names: written through this process's
    // own handle, so a pipe gets the bytes and a file the shell opened (for
    // appending or after what it wrote before) keeps its place.
    if matches!(
        text.as_ref(),
        "-" | "/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1"
    ) {
        return Ok(Target::Stdout);
    }
    if path.is_dir() || text.ends_with('/') || text.ends_with(std::path::MAIN_SEPARATOR) {
        return Err(usage(output, "is a directory; give a file path"));
    }
    match path.file_name() {
        None => return Err(usage(output, "names no file; give a file path")),
        Some(n) if n == "." || n == ".." => {
            return Err(usage(output, "names no file; give a file path"))
        }
        Some(_) => {}
    }
    // Through symbolic links to what they name (a dangling link: the file
    // it would name).
    let mut file = path.clone();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&file) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = std::fs::read_link(&file).map_err(|source| PlannerError::Io {
                    path: path.clone(),
                    source,
                })?;
                // A descriptor's link to a pipe or a socket (`pipe:[N]`)
                // names no path: the descriptor itself is written.
                let named = link.to_string_lossy();
                if named.starts_with("pipe:[") || named.starts_with("socket:[") {
                    return Ok(Target::Stream(file));
                }
                file = match file.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            Ok(meta) if meta.is_file() => return Ok(Target::File(file)),
            Ok(meta) if meta.is_dir() => {
                return Err(usage(output, "links to a directory; give a file path"))
            }
            Ok(meta) => {
                use std::os::unix::fs::FileTypeExt;
                let kind = meta.file_type();
                return if kind.is_char_device() || kind.is_fifo() {
                    Ok(Target::Stream(file))
                } else {
                    Err(usage(
                        output,
                        "exists and is neither a file, a character device nor a pipe",
                    ))
                };
            }
            Err(_) => {
                let folder = match file.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
                if !folder.is_dir() {
                    return Err(usage(output, "its folder does not exist; create it first"));
                }
                return Ok(Target::File(file));
            }
        }
    }
    Err(usage(output, "is a loop of symbolic links"))
}

/// Whether the folder of `file` takes a new file: a probe is created and
/// removed at once (registered, so not even a signal leaves it).
fn check_writable(output: &Output, file: &Path) -> Result<(), PlannerError> {
    let probe = temp_path(file).with_extension("probe");
    remember(&probe);
    let made = File::options().write(true).create_new(true).open(&probe);
    let _ = std::fs::remove_file(&probe);
    forget(&probe);
    made.map(|_| ()).map_err(|source| PlannerError::Io {
        path: output.path.clone(),
        source,
    })
}

fn usage(output: &Output, why: &str) -> PlannerError {
    PlannerError::Usage(format!(
        "{} {}: {why}",
        output.option,
        output.path.display()
    ))
}

/// `.NAME.PID.planner-tmp` beside `file`.
fn temp_path(file: &Path) -> PathBuf {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    file.with_file_name(format!(".{name}.{}.planner-tmp", std::process::id()))
}

/// Removes `.NAME.PID.planner-tmp` (and `.probe`) files beside `file` whose
/// process is gone: what a run killed outright (`kill -9`) left.
fn remove_stale_temporaries(file: &Path) {
    let Some(name) = file.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let folder = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let prefix = format!(".{name}.");
    for entry in entries.flatten() {
        let entry_name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = entry_name.strip_prefix(&prefix) else {
            continue;
        };
        let Some(pid) = rest
            .strip_suffix(".planner-tmp")
            .or_else(|| rest.strip_suffix(".planner-tmp.probe"))
            .or_else(|| rest.strip_suffix(".probe"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !process_alive(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Whether process `pid` exists (Linux: `/proc/PID`; elsewhere assumed, so
/// nothing of a live process is ever removed).
fn process_alive(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.is_dir() || proc.join(pid.to_string()).exists()
}

fn same_target(a: &Target, b: &Target) -> bool {
    match (a, b) {
        (Target::File(a), Target::File(b)) | (Target::Stream(a), Target::Stream(b)) => {
            a == b
                || match (absolute(a), absolute(b)) {
                    (Some(a), Some(b)) => a == b,
                    _ => false,
                }
        }
        (Target::Stdout, Target::Stdout) => true,
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

/// The temporary files of this process, removed if a signal ends it.
static LIVE_TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn remember(path: &Path) {
    if let Ok(mut live) = LIVE_TEMPORARIES.lock() {
        live.push(path.to_path_buf());
    }
}

fn forget(path: &Path) {
    if let Ok(mut live) = LIVE_TEMPORARIES.lock() {
        live.retain(|p| p != path);
    }
}

/// On SIGINT or SIGTERM: removes this process's temporary files, then exits
/// with 128 + the signal's number (130, 143), as a shell reports it.
pub(crate) fn install_signal_cleanup() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            if let Ok(live) = LIVE_TEMPORARIES.lock() {
                for path in live.iter() {
                    let _ = std::fs::remove_file(path);
                }
            }
            std::process::exit(128 + signal);
        }
    });
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
        // Nothing is created before a write needs it.
        assert!(entries(&d).is_empty());
        o.write_text("--out", "A").unwrap();
        assert!(entries(&d).is_empty());
        writeln!(o.writer("--log").unwrap(), "B").unwrap();
        o.commit().unwrap();
        assert_eq!(entries(&d), ["a.txt", "b.txt"]);
        assert_eq!(std::fs::read_to_string(d.join("a.txt")).unwrap(), "A");
        assert_eq!(std::fs::read_to_string(d.join("b.txt")).unwrap(), "B\n");
    }

    #[test]
    fn a_failed_command_leaves_nothing_behind() {
        let d = dir("drop");
        {
            let mut o = Outputs::prepare([Some(Output::new("--out", &d.join("a.txt")))]).unwrap();
            o.write_text("--out", "half").unwrap();
            writeln!(o.writer("--out").unwrap(), "more").unwrap();
            // dropped without commit, as on any error
        }
        assert!(entries(&d).is_empty());
    }

    #[test]
    fn a_bad_second_path_leaves_nothing() {
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

    /// Issue: an `--out` that was a symbolic link (`/dev/stdout`) was
    /// replaced by a regular file, and its target kept the old content.
    #[test]
    fn an_out_that_is_a_symlink_is_written_through() {
        let d = dir("link");
        let target = d.join("real.json");
        std::fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink("real.json", d.join("link.json")).unwrap();
        let mut o = Outputs::prepare([Some(Output::new("--out", &d.join("link.json")))]).unwrap();
        o.write_text("--out", "new").unwrap();
        o.commit().unwrap();
        let meta = std::fs::symlink_metadata(d.join("link.json")).unwrap();
        assert!(meta.file_type().is_symlink(), "the link stays a link");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(entries(&d), ["link.json", "real.json"]);
        // A dangling link: the file it names is created.
        std::os::unix::fs::symlink("made.json", d.join("dangling.json")).unwrap();
        let mut o =
            Outputs::prepare([Some(Output::new("--out", &d.join("dangling.json")))]).unwrap();
        o.write_text("--out", "made").unwrap();
        o.commit().unwrap();
        assert_eq!(
            std::fs::read_to_string(d.join("made.json")).unwrap(),
            "made"
        );
        assert!(std::fs::symlink_metadata(d.join("dangling.json"))
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn a_device_is_written_directly_and_dash_is_standard_output() {
        let d = dir("device");
        let mut o = Outputs::prepare([
            Some(Output::new("--out", Path::new("/dev/null"))),
            Some(Output::new("--plan-out", Path::new("-"))),
        ])
        .unwrap();
        o.write_text("--out", "gone").unwrap();
        o.write_text("--plan-out", "").unwrap();
        o.commit().unwrap();
        assert!(Path::new("/dev/null").exists());
        assert!(entries(&d).is_empty());
    }

    /// Issue: each killed run left `.NAME.PID.planner-tmp` files behind.
    #[test]
    fn temporaries_of_dead_processes_are_swept() {
        let d = dir("stale");
        // No process has a PID this large on Linux (the limit is 2^22).
        let stale = d.join(".a.json.4194999.planner-tmp");
        let ours = d.join(format!(".a.json.{}.planner-tmp", std::process::id()));
        let other = d.join(".b.json.4194999.planner-tmp");
        for p in [&stale, &ours, &other] {
            std::fs::write(p, "x").unwrap();
        }
        let o = Outputs::prepare([Some(Output::new("--out", &d.join("a.json")))]).unwrap();
        drop(o);
        assert!(!stale.exists(), "a dead process's temporary is removed");
        assert!(ours.exists() && other.exists(), "others are left alone");
    }
}
