//! The aggregate's tables as read from disk, before their meaning is checked:
//! named columns and rows of cells, each row with where it came from. CSV
//! (RFC 4180 quoting, optional byte-order mark, LF or CRLF) and Parquet.

use super::cells::{Cell, RawRow, RawTable};
use crate::base::error::Problem;
use std::path::{Path, PathBuf};

/// The file of table `name` in `dir`: `name.csv` or `name.parquet`.
pub(super) fn find(dir: &Path, name: &str) -> Result<PathBuf, Problem> {
    let csv = dir.join(format!("{name}.csv"));
    let parquet = dir.join(format!("{name}.parquet"));
    match (csv.is_file(), parquet.is_file()) {
        (true, false) => Ok(csv),
        (false, true) => Ok(parquet),
        (true, true) => Err(Problem::new(dir.to_path_buf(), String::new(), format!("both {name}.csv and {name}.parquet are here; keep one"))),
        (false, false) => Err(Problem::new(dir.to_path_buf(), String::new(), format!(
                "no {name}.csv or {name}.parquet: an aggregate folder holds minutes, lengths, pairs and (format version 3) sample tables (docs/aggregate-format.md)"
            ))),
    }
}

/// The file of the optional table `name` in `dir`, if there is one.
pub(super) fn find_optional(dir: &Path, name: &str) -> Result<Option<PathBuf>, Problem> {
    let any = ["csv", "parquet"]
        .iter()
        .any(|e| dir.join(format!("{name}.{e}")).is_file());
    any.then(|| find(dir, name)).transpose()
}

/// Reads a table file (CSV or Parquet, by extension).
pub(super) fn read(path: &Path) -> Result<RawTable, Problem> {
    let problem = |message: String| Problem::new(path.to_path_buf(), String::new(), message);
    if path.extension().is_some_and(|e| e == "parquet") {
        return super::parquet::read(path);
    }
    let bytes = std::fs::read(path).map_err(|e| problem(format!("cannot read: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        problem(format!(
            "not UTF-8 text (byte {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    parse_csv(path, text.strip_prefix('\u{feff}').unwrap_or(&text))
}

/// Parses CSV text whose first line names the columns.
pub(super) fn parse_csv(path: &Path, text: &str) -> Result<RawTable, Problem> {
    let mut lines = text.split('\n').enumerate();
    let Some((_, header)) = lines.next().filter(|(_, h)| !h.trim().is_empty()) else {
        return Err(Problem::new(
            path.to_path_buf(),
            "1",
            "the file is empty; expected a header line naming the columns",
        ));
    };
    let columns = split_fields(header.trim_end_matches('\r'))
        .map_err(|m| Problem::new(path.to_path_buf(), "1", m))?
        .into_iter()
        .map(|c| c.trim().to_string())
        .collect();
    let mut rows = Vec::new();
    for (i, line) in lines {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let location = (i + 1).to_string();
        let cells = split_fields(line)
            .map_err(|m| Problem::new(path.to_path_buf(), location.clone(), m))?;
        rows.push(RawRow {
            location,
            cells: cells
                .into_iter()
                .map(|c| {
                    if c.is_empty() {
                        Cell::Null
                    } else {
                        Cell::Text(c)
                    }
                })
                .collect(),
        });
    }
    Ok(RawTable {
        path: path.to_path_buf(),
        columns,
        header_location: "1".into(),
        rows,
    })
}

/// Splits one CSV line into fields, undoing RFC 4180 quoting.
fn split_fields(line: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut was_quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (false, '"') if field.is_empty() && !was_quoted => {
                quoted = true;
                was_quoted = true;
            }
            (false, ',') => {
                fields.push(std::mem::take(&mut field));
                was_quoted = false;
            }
            (_, c) => field.push(c),
        }
    }
    if quoted {
        return Err("a quoted field is not closed on its line".into());
    }
    fields.push(field);
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_bom_and_crlf() {
        let t = parse_csv(
            Path::new("x.csv"),
            "a,b,c\r\n1,\"x, \"\"y\"\"\",\r\n\n2,z,3\n",
        )
        .unwrap();
        assert_eq!(t.columns, vec!["a", "b", "c"]);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.rows[0].cells[1], Cell::Text("x, \"y\"".into()));
        assert_eq!(t.rows[0].cells[2], Cell::Null);
        assert_eq!(t.rows[1].location, "4");
        assert_eq!(t.rows[1].cells[2].int(), Ok(3));
        assert!(split_fields("\"open").is_err());
    }

    #[test]
    fn cells_convert_strictly() {
        assert_eq!(Cell::Text("7".into()).int(), Ok(7));
        assert_eq!(Cell::Float(7.0).int(), Ok(7));
        assert!(Cell::Text("7.5".into()).int().is_err());
        assert!(Cell::Null.int().is_err());
        assert_eq!(Cell::Int(3).text(), Ok("3".into()));
    }
}
