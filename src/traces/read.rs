//! Reading a trace file: opened, its format told from its first bytes (or
//! named), its rows parsed in one pass, or in two parts on two cores when
//! the file is large ([`super::split`]), with the same result.

use super::reader::{not_a_file, ReadSummary, ReaderOptions};
use super::{Request, TraceFormat};
use crate::base::located::Problem;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// Reads the trace at `path`, calling `on_request` for each request in file
/// order, and `on_progress` with the bytes read so far every few megabytes.
/// A trace of [`super::split::SPLIT_MIN_BYTES`] or more is parsed in two
/// parts on two cores ([`super::split`]), with the same requests, summary
/// and errors as one pass.
pub fn read_trace(
    path: &Path,
    options: ReaderOptions,
    on_request: impl FnMut(Request),
    on_progress: impl FnMut(u64),
) -> Result<(TraceFormat, ReadSummary), Problem> {
    let split_min_bytes = if crate::base::parallel::workers() >= 2 {
        super::split::SPLIT_MIN_BYTES
    } else {
        u64::MAX
    };
    read_trace_split_from(path, options, split_min_bytes, on_request, on_progress)
}

/// [`read_trace`], parsing in two parts a file of `split_min_bytes` or more.
pub(super) fn read_trace_split_from(
    path: &Path,
    options: ReaderOptions,
    split_min_bytes: u64,
    mut on_request: impl FnMut(Request),
    mut on_progress: impl FnMut(u64),
) -> Result<(TraceFormat, ReadSummary), Problem> {
    let fail = |line: Option<u64>, message: String| Problem::at_line(path, line, None, message);
    let file = File::open(path).map_err(|e| fail(None, format!("cannot open the trace: {e}")))?;
    let metadata = file
        .metadata()
        .map_err(|e| fail(None, format!("cannot read the trace: {e}")))?;
    let kind = metadata.file_type();
    if !kind.is_file() {
        return Err(fail(
            None,
            format!("{}; a trace is a regular file", not_a_file(kind)),
        ));
    }
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let head = reader
        .fill_buf()
        .map_err(|e| fail(None, format!("cannot read the trace: {e}")))?;
    let head = head.strip_prefix(crate::base::text::BOM).unwrap_or(head);
    let format = match options.format {
        Some(f) => f,
        None => TraceFormat::detect(head).ok_or_else(|| {
            if head.iter().all(u8::is_ascii_whitespace) {
                fail(None, "the trace is empty: it holds no request".into())
            } else if head.contains(&b'\r') && !head.contains(&b'\n') {
                fail(
                    Some(1),
                    "its lines end in a carriage return alone (classic Mac line ends); save the file with LF or CRLF line ends".into(),
                )
            } else {
                fail(
                    Some(1),
                    "cannot tell the trace format: expected a CSV header `TIMESTAMP,ContextTokens,GeneratedTokens` (Azure), `Timestamp,Model,Request tokens,…` (BurstGPT) or JSON lines with `timestamp`, `input_length`, `output_length` (Mooncake); name the format with --trace-format on the command line, or `format` in the scenario's [[demand]]".into(),
                )
            }
        })?,
    };
    let part = super::split::read_parts(
        reader,
        path,
        metadata.len(),
        split_min_bytes,
        format,
        &options,
        &mut on_request,
        &mut on_progress,
    );
    if let Some(problem) = part.failed {
        return Err(problem);
    }
    let summary = part.summary;
    on_progress(summary.bytes);
    if summary.requests == 0 {
        return Err(fail(None, "the trace holds no request".into()));
    }
    Ok((format, summary))
}

/// Reads a whole small trace into memory (tests and tiny tools).
pub fn read_all(path: &Path, options: ReaderOptions) -> Result<Vec<Request>, Problem> {
    let mut out = Vec::new();
    read_trace(path, options, |r| out.push(r), |_| {})?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traces::split::second_part_start;
    use proptest::prelude::*;

    /// What reading `text` gives: the requests delivered, in order, and the
    /// format and summary or the problem; parsed in two parts when `split`.
    fn read(
        text: &[u8],
        name: &str,
        skip_bad_rows: bool,
        split: bool,
    ) -> (
        Vec<Request>,
        Result<(TraceFormat, super::super::ReadSummary), Problem>,
    ) {
        let dir = std::env::temp_dir().join(format!("planner-split-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let options = ReaderOptions {
            skip_bad_rows,
            ..ReaderOptions::default()
        };
        let mut requests = Vec::new();
        let min = if split { 0 } else { u64::MAX };
        let result = read_trace_split_from(&path, options, min, |r| requests.push(r), |_| {});
        std::fs::remove_file(&path).unwrap();
        (requests, result)
    }

    /// A row of the Azure format at `second` past a fixed minute.
    fn row(second: f64, input: u32, output: u32) -> String {
        format!(
            "2023-11-16 18:{:02}:{:010.7},{input},{output}",
            (second / 60.0) as u32,
            second % 60.0
        )
    }

    /// A row whose request is earlier than the row before the second part
    /// starts: the second part is read again after the first, and the
    /// requests, the skipped row and its line are those of one pass.
    #[test]
    fn a_second_part_that_starts_before_the_first_ends_reads_as_one_pass() {
        let mut lines = vec!["TIMESTAMP,ContextTokens,GeneratedTokens".to_string()];
        lines.extend((0..200).map(|i| row(f64::from(i), 10 + i, 5)));
        // Where the second part starts in the file written below.
        let text = lines.join("\n") + "\n";
        let dir = std::env::temp_dir().join(format!("planner-split-start-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let probe = dir.join("probe.csv");
        std::fs::write(&probe, &text).unwrap();
        let start = second_part_start(&probe, text.len() as u64).unwrap();
        std::fs::remove_file(&probe).unwrap();
        let first_line_of_second = text[..start as usize].matches('\n').count();
        // That line's request goes back in time.
        lines[first_line_of_second] = row(0.5, 1, 1);
        let text = lines.join("\n") + "\n";
        for skip in [false, true] {
            let whole = read(text.as_bytes(), "back.csv", skip, false);
            let parts = read(text.as_bytes(), "back.csv", skip, true);
            assert_eq!(whole.0, parts.0);
            assert_eq!(whole.1, parts.1);
            match &parts.1 {
                Ok((_, summary)) => {
                    assert!(skip);
                    assert_eq!(summary.skipped_rows, 1);
                    let (line, message) = summary.first_skipped.clone().unwrap();
                    assert_eq!(line, first_line_of_second as u64 + 1);
                    assert!(
                        message.contains("earlier than the previous row"),
                        "{message}"
                    );
                }
                Err(problem) => {
                    assert!(!skip);
                    assert_eq!(problem.location, (first_line_of_second + 1).to_string());
                }
            }
        }
    }

    /// With `drop_over_context`, the requests over the context are left out
    /// and counted (their tokens too), read whole or in two parts alike;
    /// without it, the first is refused at its line.
    #[test]
    fn requests_over_the_context_are_dropped_and_counted_in_either_read() {
        let mut lines = vec!["TIMESTAMP,ContextTokens,GeneratedTokens".to_string()];
        lines.extend((0..200).map(|i| {
            let input = if i % 10 == 7 { 5_000 } else { 10 + i };
            row(f64::from(i), input, 5)
        }));
        let text = lines.join("\n") + "\n";
        let dir = std::env::temp_dir().join(format!("planner-drop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("long.csv");
        std::fs::write(&path, &text).unwrap();
        for min in [0, u64::MAX] {
            let read = |drop_over_context| {
                let options = ReaderOptions {
                    max_context_tokens: Some(4_096),
                    drop_over_context,
                    ..ReaderOptions::default()
                };
                let mut kept = 0u64;
                let r = read_trace_split_from(&path, options, min, |_| kept += 1, |_| {});
                (kept, r)
            };
            let (kept, dropped) = read(true);
            let (_, summary) = dropped.unwrap();
            assert_eq!((kept, summary.requests), (180, 180));
            let d = summary.dropped_over_context;
            assert_eq!(
                (d.requests, d.input_tokens, d.output_tokens),
                (20, 100_000, 100)
            );
            let refused = read(false).1.unwrap_err();
            assert_eq!(refused.location, "9");
        }
        std::fs::remove_file(&path).unwrap();
    }

    /// How a row of a generated trace goes wrong, if it does.
    #[derive(Debug, Clone, Copy)]
    enum Row {
        Good,
        Earlier,
        Malformed,
        Empty,
    }

    fn rows() -> impl Strategy<Value = Vec<(Row, u32)>> {
        let kind = prop_oneof![
            20 => Just(Row::Good),
            1 => Just(Row::Earlier),
            1 => Just(Row::Malformed),
            1 => Just(Row::Empty),
        ];
        proptest::collection::vec((kind, 1u32..5000), 1..400)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Parsed in two parts or in one pass, a trace gives the same
        /// requests in the same order, the same summary, and the same first
        /// problem at the same line and column, with bad rows skipped or
        /// not, a header or none, CRLF or LF line ends and a byte-order mark.
        #[test]
        fn two_parts_read_as_one_pass(
            rows in rows(),
            header in any::<bool>(),
            crlf in any::<bool>(),
            bom in any::<bool>(),
        ) {
            let mut lines = Vec::new();
            if header {
                lines.push("TIMESTAMP,ContextTokens,GeneratedTokens".to_string());
            }
            let mut second = 0.0;
            for (kind, n) in rows {
                second += f64::from(n % 7) * 0.25;
                lines.push(match kind {
                    Row::Good => row(second, n, n % 100),
                    Row::Earlier => row((second - 3.0).max(0.0), n, 1),
                    Row::Malformed => format!("2023-11-16 18:00:00,{n}"),
                    Row::Empty => String::new(),
                });
            }
            let end = if crlf { "\r\n" } else { "\n" };
            let mut text = if bom { "\u{feff}".to_string() } else { String::new() };
            text += &(lines.join(end) + end);
            for skip in [false, true] {
                let whole = read(text.as_bytes(), "prop.csv", skip, false);
                let parts = read(text.as_bytes(), "prop.csv", skip, true);
                prop_assert_eq!(&whole.0, &parts.0);
                prop_assert_eq!(&whole.1, &parts.1);
            }
        }
    }
}
