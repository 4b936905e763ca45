//! Errors of the trace readers, located by file and line.

use std::fmt;
use std::path::PathBuf;

/// A trace could not be read.
#[derive(Debug)]
pub struct TraceError {
    /// The trace file.
    pub path: PathBuf,
    /// 1-based line number (the header is line 1), when the problem is in a row.
    pub line: Option<u64>,
    /// What is wrong.
    pub message: String,
    /// Whether `--skip-bad-rows` would get past it.
    pub skippable: bool,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.message)?,
            None => write!(f, "{}: {}", self.path.display(), self.message)?,
        }
        if self.skippable {
            write!(
                f,
                " (fix the row, or pass --skip-bad-rows to skip and count such rows)"
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for TraceError {}
