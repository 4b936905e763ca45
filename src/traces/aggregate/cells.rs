//! The cells, rows and tables of an aggregate as read from disk (CSV or
//! Parquet), before their meaning is checked.

use std::path::PathBuf;

/// One cell as stored.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Cell {
    Int(i64),
    Float(f64),
    Text(String),
    Null,
}

impl Cell {
    /// The cell as an integer, or why it is not one.
    pub(super) fn int(&self) -> Result<i64, String> {
        match self {
            Cell::Int(v) => Ok(*v),
            Cell::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(*f as i64),
            Cell::Float(f) => Err(format!("`{f}` is not an integer")),
            Cell::Text(t) => {
                let t = t.trim();
                t.parse::<i64>()
                    .ok()
                    .or_else(|| {
                        t.parse::<f64>()
                            .ok()
                            .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                            .map(|f| f as i64)
                    })
                    .ok_or_else(|| {
                        format!(
                            "`{}` is not an integer",
                            crate::base::text::excerpt(t.as_bytes())
                        )
                    })
            }
            Cell::Null => Err("the cell is empty".into()),
        }
    }

    /// The cell as text.
    pub(super) fn text(&self) -> Result<String, String> {
        match self {
            Cell::Text(t) if !t.is_empty() => Ok(t.clone()),
            Cell::Int(v) => Ok(v.to_string()),
            Cell::Float(f) => Ok(f.to_string()),
            Cell::Text(_) | Cell::Null => Err("the cell is empty".into()),
        }
    }
}

/// One row with its location: the line (CSV) or `row N` (Parquet).
#[derive(Debug, Clone)]
pub(super) struct RawRow {
    pub location: String,
    pub cells: Vec<Cell>,
}

/// A table: its file, column names and rows.
#[derive(Debug, Clone)]
pub(super) struct RawTable {
    pub path: PathBuf,
    pub columns: Vec<String>,
    /// Location of the column names (line 1, or the Parquet schema).
    pub header_location: String,
    pub rows: Vec<RawRow>,
}
