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
    /// 1-based column within the line, when known.
    pub column: Option<u64>,
    /// What is wrong.
    pub message: String,
    /// Whether `--skip-bad-rows` would get past it.
    pub skippable: bool,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(line), Some(column)) => write!(
                f,
                "{}:{line}:{column}: {}",
                self.path.display(),
                self.message
            )?,
            (Some(line), None) => write!(f, "{}:{line}: {}", self.path.display(), self.message)?,
            _ => write!(f, "{}: {}", self.path.display(), self.message)?,
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
