//! An aggregate table's rows read by column name, each row's problem
//! recorded at its location: what every table's reader shares.

use super::cells::{Cell, RawRow, RawTable};
use super::checks::Problems;
use super::{MINUTE_COLUMNS, MINUTE_US, READ_VERSIONS};
use std::collections::HashMap;

/// The versions this planner reads, for messages: "1, 2 and 3".
pub(super) fn read_versions_text() -> String {
    let v: Vec<String> = READ_VERSIONS.iter().map(i64::to_string).collect();
    match v.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => v.join(""),
    }
}

/// A row's cells by column name.
pub(super) struct Row<'a> {
    pub(super) row: &'a RawRow,
    index: &'a HashMap<String, usize>,
}

impl Row<'_> {
    pub(super) fn cell(&self, name: &str) -> Result<&Cell, String> {
        self.row.cells.get(self.index[name]).ok_or_else(|| {
            format!(
                "the row has {} cells, too few for `{name}`",
                self.row.cells.len()
            )
        })
    }

    pub(super) fn text(&self, name: &str) -> Result<String, String> {
        self.cell(name)?
            .text()
            .map_err(|e| format!("`{name}`: {e}"))
    }

    pub(super) fn int(&self, name: &str) -> Result<i64, String> {
        self.cell(name)?.int().map_err(|e| format!("`{name}`: {e}"))
    }

    pub(super) fn count(&self, name: &str) -> Result<u64, String> {
        let v = self.int(name)?;
        u64::try_from(v).map_err(|_| format!("`{name}` is negative ({v}); counts are 0 or more"))
    }

    /// A token count of one request: 0 to 2³² − 1.
    pub(super) fn tokens(&self, name: &str) -> Result<u32, String> {
        let v = self.count(name)?;
        u32::try_from(v).map_err(|_| {
            format!(
                "`{name}` {v} is more tokens than one request holds (at most {})",
                u32::MAX
            )
        })
    }

    /// The row is of the aggregate's format `version`.
    pub(super) fn version(&self, version: i64) -> Result<(), String> {
        match self.int("version")? {
            v if v == version => Ok(()),
            v if READ_VERSIONS.contains(&v) => Err(format!(
                "this row is format version {v}, but the minutes table's first row is version {version}; an aggregate's tables are all of one version (make them again with one planner or one sql/aggregate.sql)"
            )),
            v => Err(format!(
                "aggregate format version {v} is not known; this planner reads versions {} (docs/aggregate-format.md)",
                read_versions_text()
            )),
        }
    }

    /// The minute's arrivals per clock second (format version 3).
    pub(super) fn seconds(&self) -> Result<[u32; 60], String> {
        let mut out = [0u32; 60];
        for (k, c) in out.iter_mut().enumerate() {
            let name = &MINUTE_COLUMNS[10 + k];
            let v = self.count(name)?;
            *c = u32::try_from(v).map_err(|_| {
                format!(
                    "`{name}` {v} is more arrivals than a second can count here (at most {})",
                    u32::MAX
                )
            })?;
        }
        Ok(out)
    }

    /// The minute's first and last arrival offsets (format version 2): in
    /// the minute, in order, and none for an empty minute.
    pub(super) fn arrivals_us(&self, requests: u64) -> Result<Option<(u32, u32)>, String> {
        let offset = |name: &str| -> Result<u32, String> {
            let v = self.int(name)?;
            if v < 0 {
                return Err(format!("`{name}` is negative ({v}); it counts microseconds from the minute's start, 0 to {}", MINUTE_US - 1));
            }
            u32::try_from(v).ok().filter(|&v| v < MINUTE_US).ok_or_else(|| {
                format!("`{name}` {v} lies outside the minute; it counts microseconds from the minute's start, 0 to {}", MINUTE_US - 1)
            })
        };
        let (first, last) = (offset("first_arrival_us")?, offset("last_arrival_us")?);
        match requests {
            0 if first == 0 && last == 0 => Ok(None),
            0 => Err(format!("an empty minute (0 requests) has arrival offsets {first} and {last}; write 0 for both")),
            _ if first > last => Err(format!(
                "`first_arrival_us` {first} is after `last_arrival_us` {last}; the first arrival comes no later than the last"
            )),
            1 if first != last => Err(format!(
                "a minute of one request has one arrival, but `first_arrival_us` {first} and `last_arrival_us` {last} differ"
            )),
            _ => Ok(Some((first, last))),
        }
    }
}

/// Checks the columns; returns the name → position index when all are there.
pub(super) fn columns(
    t: &RawTable,
    expected: &[&str],
    problems: &mut Problems,
) -> Option<HashMap<String, usize>> {
    let index: HashMap<String, usize> = t
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| (c.to_ascii_lowercase(), i))
        .collect();
    let missing: Vec<&str> = expected
        .iter()
        .copied()
        .filter(|c| !index.contains_key(*c))
        .collect();
    let unknown: Vec<&str> = t
        .columns
        .iter()
        .map(String::as_str)
        .filter(|c| !expected.contains(&c.to_ascii_lowercase().as_str()))
        .collect();
    if !missing.is_empty() || !unknown.is_empty() {
        let mut what = Vec::new();
        if !missing.is_empty() {
            what.push(format!("missing column(s) {}", missing.join(", ")));
        }
        if !unknown.is_empty() {
            what.push(format!("unknown column(s) {}", unknown.join(", ")));
        }
        problems.at(
            t,
            &t.header_location,
            format!(
                "{}; expected the columns {}",
                what.join("; "),
                expected.join(",")
            ),
        );
        return None;
    }
    Some(index)
}

/// `line N` for a CSV line number, the location itself otherwise.
pub(super) fn at(location: &str) -> String {
    if location.chars().all(|c| c.is_ascii_digit()) {
        format!("line {location}")
    } else {
        location.to_string()
    }
}

/// Runs `parse` on every row, recording its error at the row's location. A
/// row not of the aggregate's `version` is reported once per table, at the
/// first such row.
pub(super) fn each_row<'a>(
    t: &'a RawTable,
    index: &'a HashMap<String, usize>,
    version: i64,
    problems: &mut Problems,
    mut parse: impl FnMut(Row<'a>) -> Result<(), String>,
) {
    let mut bad_version: Option<(String, String, usize)> = None;
    for row in &t.rows {
        let r = Row { row, index };
        match r.version(version) {
            Err(message) => match &mut bad_version {
                Some((_, _, n)) => *n += 1,
                None => bad_version = Some((row.location.clone(), message, 0)),
            },
            Ok(()) => {
                if let Err(message) = parse(Row { row, index }) {
                    problems.at(t, &row.location, message);
                }
            }
        }
    }
    if let Some((location, message, more)) = bad_version {
        let suffix = if more > 0 {
            format!(" ({more} more rows of this table are not version {version} either)")
        } else {
            String::new()
        };
        problems.at(t, &location, format!("{message}{suffix}"));
    }
}
