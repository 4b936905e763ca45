//! The one located message: a problem in an input file (scenario, profile,
//! plan, trace, aggregate, log, rate curve, any text file), where it is in
//! the file, and what is wrong and how to fix it. Every input error of every
//! stage is one, and prints one way: `file:location: message`.

use std::fmt;
use std::path::{Path, PathBuf};

/// One problem found in an input file, with where it is and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file the problem is in.
    pub file: PathBuf,
    /// `line:column`, a line, a dotted key path such as `gpus[1].max_batch`,
    /// or `row 7` of a table; empty when the problem is the whole file.
    pub location: String,
    /// What is wrong and what is accepted.
    pub message: String,
    /// A bad row that a reader told to skip bad rows would pass over (the
    /// message then says `--skip-bad-rows` gets past it).
    pub skippable: bool,
}

impl Problem {
    /// A problem at `location` of `file`.
    pub fn new(
        file: impl Into<PathBuf>,
        location: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Problem {
            file: file.into(),
            location: location.into(),
            message: message.into(),
            skippable: false,
        }
    }

    /// A problem at a 1-based line and column of `file` (either may be
    /// unknown).
    pub fn at_line(
        file: impl Into<PathBuf>,
        line: Option<u64>,
        column: Option<u64>,
        message: impl Into<String>,
    ) -> Self {
        let location = match (line, column) {
            (Some(l), Some(c)) => format!("{l}:{c}"),
            (Some(l), None) => l.to_string(),
            _ => String::new(),
        };
        Problem::new(file, location, message)
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.location.is_empty() {
            write!(f, "{}: {}", self.file.display(), self.message)?;
        } else {
            write!(
                f,
                "{}:{}: {}",
                self.file.display(),
                self.location,
                self.message
            )?;
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

impl std::error::Error for Problem {}

/// Most problems listed for one input file; the rest are counted in one
/// more line.
pub(crate) const MAX_LISTED: usize = 20;

/// How the problem that counts the rest of a cut list begins.
pub(crate) const MORE_PROBLEMS: &str = "… and ";

/// `problems` cut to [`MAX_LISTED`], with one more problem of `file` that
/// counts the rest.
pub(crate) fn listed(mut problems: Vec<Problem>, file: &Path) -> Vec<Problem> {
    if problems.len() > MAX_LISTED {
        let more = problems.len() - MAX_LISTED;
        problems.truncate(MAX_LISTED);
        problems.push(Problem::new(
            file,
            "",
            format!("{MORE_PROBLEMS}{more} more problems"),
        ));
    }
    problems
}

/// Converts a byte offset in `text` into a 1-based `line:column` string.
pub(crate) fn line_col(text: &str, byte_offset: usize) -> String {
    let offset = byte_offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rfind('\n').map_or(offset, |i| offset - i - 1) + 1;
    format!("{line}:{column}")
}

#[cfg(test)]
mod tests {
    use super::{line_col, Problem};

    #[test]
    fn a_problem_prints_its_file_location_and_message() {
        let p = Problem::at_line("t.csv", Some(3), Some(7), "bad count");
        assert_eq!(p.to_string(), "t.csv:3:7: bad count");
        assert_eq!(
            Problem::at_line("t.csv", Some(3), None, "x").to_string(),
            "t.csv:3: x"
        );
        assert_eq!(
            Problem::new("s.toml", "", "empty").to_string(),
            "s.toml: empty"
        );
        let mut row = Problem::at_line("t.csv", Some(2), None, "bad");
        row.skippable = true;
        assert_eq!(
            row.to_string(),
            "t.csv:2: bad (fix the row, or pass --skip-bad-rows to skip and count such rows)"
        );
    }

    #[test]
    fn line_col_counts_from_one() {
        let text = "a = 1\nbb = 2\n";
        assert_eq!(line_col(text, 0), "1:1");
        assert_eq!(line_col(text, 6), "2:1");
        assert_eq!(line_col(text, 9), "2:4");
    }
}
