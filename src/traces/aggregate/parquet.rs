//! The aggregate's tables as Parquet files: read with the `parquet` crate's
//! row API (plain, dictionary and Snappy-compressed files, as DuckDB and Spark
//! write by default), written with its column writers (Snappy).

use super::cells::{Cell, RawRow, RawTable};
use super::write::{Column, Columns};
use crate::base::error::Problem;
use parquet::basic::Compression;
use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::record::Field;
use parquet::schema::parser::parse_message_type;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

/// Reads a Parquet table; rows are located as `row N` (from 1).
pub(super) fn read(path: &Path) -> Result<RawTable, Problem> {
    let problem =
        |location: String, message: String| Problem::new(path.to_path_buf(), location, message);
    let file = File::open(path).map_err(|e| problem(String::new(), format!("cannot open: {e}")))?;
    let reader = SerializedFileReader::new(file)
        .map_err(|e| problem(String::new(), format!("not a readable Parquet file: {e}")))?;
    let columns: Vec<String> = reader
        .metadata()
        .file_metadata()
        .schema_descr()
        .root_schema()
        .get_fields()
        .iter()
        .map(|f| f.name().to_string())
        .collect();
    let rows_iter = reader.get_row_iter(None).map_err(|e| {
        problem(
            String::new(),
            format!("cannot read the rows: {e}{}", codec_hint(&e.to_string())),
        )
    })?;
    let mut rows = Vec::new();
    for (i, row) in rows_iter.enumerate() {
        let location = format!("row {}", i + 1);
        let row = row.map_err(|e| {
            problem(
                location.clone(),
                format!("cannot read the row: {e}{}", codec_hint(&e.to_string())),
            )
        })?;
        let cells = row.get_column_iter().map(|(_, f)| cell(f)).collect();
        rows.push(RawRow { location, cells });
    }
    Ok(RawTable {
        path: path.to_path_buf(),
        columns,
        header_location: "schema".into(),
        rows,
    })
}

/// What to do about a compression codec this build does not read.
fn codec_hint(error: &str) -> &'static str {
    if error.contains("feature") || error.to_ascii_lowercase().contains("codec") {
        " (this planner reads uncompressed and Snappy-compressed Parquet; write the table with Snappy, the DuckDB and Spark default, or as CSV)"
    } else {
        ""
    }
}

fn cell(f: &Field) -> Cell {
    match f {
        Field::Null => Cell::Null,
        Field::Byte(v) => Cell::Int(i64::from(*v)),
        Field::Short(v) => Cell::Int(i64::from(*v)),
        Field::Int(v) => Cell::Int(i64::from(*v)),
        Field::Long(v) => Cell::Int(*v),
        Field::UByte(v) => Cell::Int(i64::from(*v)),
        Field::UShort(v) => Cell::Int(i64::from(*v)),
        Field::UInt(v) => Cell::Int(i64::from(*v)),
        Field::ULong(v) => i64::try_from(*v).map_or(Cell::Float(*v as f64), Cell::Int),
        Field::Float(v) => Cell::Float(f64::from(*v)),
        Field::Double(v) => Cell::Float(*v),
        Field::Str(s) => Cell::Text(s.clone()),
        other => Cell::Text(other.to_string()),
    }
}

/// Writes `columns` as one Parquet row group (Snappy).
pub fn write(columns: &Columns, out: File) -> Result<(), parquet::errors::ParquetError> {
    let fields: Vec<String> = columns
        .iter()
        .map(|(name, c)| match c {
            Column::Int(_) => format!("required int64 {name};"),
            Column::Text(_) => format!("required binary {name} (UTF8);"),
        })
        .collect();
    let schema = Arc::new(parse_message_type(&format!(
        "message aggregate {{ {} }}",
        fields.join(" ")
    ))?);
    let props = Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build(),
    );
    let mut writer = SerializedFileWriter::new(out, schema, props)?;
    let mut group = writer.next_row_group()?;
    let mut values = columns.iter();
    while let Some(mut col) = group.next_column()? {
        match values.next().map(|(_, c)| c) {
            Some(Column::Int(v)) => {
                col.typed::<Int64Type>().write_batch(v, None, None)?;
            }
            Some(Column::Text(v)) => {
                let bytes: Vec<ByteArray> = v.iter().map(|s| ByteArray::from(s.as_str())).collect();
                col.typed::<ByteArrayType>()
                    .write_batch(&bytes, None, None)?;
            }
            None => {}
        }
        col.close()?;
    }
    group.close()?;
    writer.close()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traces::aggregate::write::columns;
    use crate::traces::aggregate::AggregateBuilder;
    use crate::traces::Request;

    #[test]
    fn parquet_round_trips_a_table() {
        let mut b = AggregateBuilder::new();
        for i in 0..300u32 {
            b.push(
                "t",
                &Request {
                    arrival_s: f64::from(i),
                    input_tokens: i,
                    output_tokens: 7,
                },
            );
        }
        let agg = b.finish();
        let dir = std::env::temp_dir().join(format!("planner-parquet-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("minutes.parquet");
        let cols = columns(&agg, "minutes");
        write(&cols, File::create(&path).unwrap()).unwrap();
        let t = read(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let names: Vec<&str> = cols.iter().map(|(n, _)| *n).collect();
        assert_eq!(t.columns, names);
        assert_eq!(t.rows.len(), 5);
        assert_eq!(t.rows[4].location, "row 5");
        assert_eq!(t.rows[0].cells[1], Cell::Text("t".into()));
        assert_eq!(t.rows[0].cells[3], Cell::Int(60));
    }
}
