//! A large trace parsed in two parts on two cores: this thread parses the
//! first part and hands its requests on as it goes, another parses the rest
//! and queues its requests in batches, which this thread hands on once its
//! own part is done, so the caller still sees every request in file order. The parts are told apart at a line's
//! end. The second part numbers its lines from 2 (so that it takes no
//! header and no byte-order mark) and its line numbers are moved on by the
//! first part's lines once they are known; it checks its first request's
//! order against nothing, and where that request turns out to be earlier
//! than the first part's last, the second part is read again after the
//! first, as one pass would have read it. The requests, the summary and the
//! first problem are those of one pass.

use super::lines::Lines;
use super::reader::{read_part, PartRead};
use super::{ReaderOptions, Request, TraceFormat};
use crate::base::located::Problem;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// Traces from this size on are parsed in two parts (a smaller one parses in
/// a fraction of a second on one core).
pub(super) const SPLIT_MIN_BYTES: u64 = 32 << 20;

/// The share of the file this thread parses: it also hands on the other
/// part's requests, so it parses less. On a week of 16.8 million rows the
/// read took 1.39 s at 0.32 and 0.37 of the file, 1.52 s at 0.42.
const FIRST_PART_SHARE: f64 = 0.37;

/// Requests the other thread hands on at a time.
const BATCH: usize = 1 << 16;

/// Reads the trace `reader` (at its start, `size` bytes) in one pass, or in
/// two parts when it holds `split_min_bytes` or more.
#[allow(clippy::too_many_arguments)]
pub(super) fn read_parts(
    reader: BufReader<File>,
    path: &Path,
    size: u64,
    split_min_bytes: u64,
    format: TraceFormat,
    options: &ReaderOptions,
    on_request: &mut impl FnMut(Request),
    on_progress: &mut impl FnMut(u64),
) -> PartRead {
    let split = (size >= split_min_bytes)
        .then(|| second_part_start(path, size))
        .flatten();
    let Some(start) = split else {
        return read_part(
            Lines::new(reader, path),
            path,
            format,
            options,
            f64::NEG_INFINITY,
            on_request,
            on_progress,
        );
    };
    std::thread::scope(|scope| {
        let (send, receive) = std::sync::mpsc::channel::<Vec<Request>>();
        let second = scope.spawn(move || {
            let mut batch = Vec::with_capacity(BATCH);
            let part = read_from(path, start, 2, format, options, f64::NEG_INFINITY, |r| {
                batch.push(r);
                if batch.len() == BATCH {
                    // The receiver is gone only when the first part failed.
                    let _ = send.send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)));
                }
            });
            if !batch.is_empty() {
                let _ = send.send(batch);
            }
            part
        });
        // This part's progress stands for the whole file's.
        let scale = size as f64 / start as f64;
        let first = read_part(
            Lines::new(reader.take(start), path),
            path,
            format,
            options,
            f64::NEG_INFINITY,
            &mut *on_request,
            |bytes| on_progress((bytes as f64 * scale) as u64),
        );
        if first.failed.is_some() {
            drop(receive);
            let _ = second.join();
            return first;
        }
        // The second part's requests as the other thread parses them, the
        // first of them checked against the first part's last.
        let mut in_order = None;
        for batch in receive {
            let ok = *in_order.get_or_insert_with(|| match (first.last_arrival, batch.first()) {
                (Some(last), Some(next)) => next.arrival_s >= last,
                _ => true,
            });
            if ok {
                for r in batch {
                    on_request(r);
                }
            }
        }
        let Ok(second) = second.join() else {
            return failed_part(path, "the second part of the trace could not be read");
        };
        let second = if in_order.unwrap_or(true) {
            // Its lines were numbered from 2: move them on to the file's.
            with_lines_after(second, first.last_line.saturating_sub(1))
        } else {
            let last = first.last_arrival.unwrap_or(f64::NEG_INFINITY);
            read_from(
                path,
                start,
                first.last_line + 1,
                format,
                options,
                last,
                &mut *on_request,
            )
        };
        joined(first, second)
    })
}

/// The part of the trace from byte `start` (the beginning of line
/// `first_line`, or numbered so), read with `last_arrival` as the arrival
/// before its first row.
fn read_from(
    path: &Path,
    start: u64,
    first_line: u64,
    format: TraceFormat,
    options: &ReaderOptions,
    last_arrival: f64,
    on_request: impl FnMut(Request),
) -> PartRead {
    let opened = File::open(path).and_then(|mut file| {
        file.seek(SeekFrom::Start(start))?;
        Ok(file)
    });
    match opened {
        Ok(file) => read_part(
            Lines::from_line(BufReader::with_capacity(1 << 20, file), path, first_line),
            path,
            format,
            options,
            last_arrival,
            on_request,
            |_| {},
        ),
        Err(e) => failed_part(path, &format!("cannot read the trace: {e}")),
    }
}

/// `part` with every line number it holds moved on by `by` lines.
fn with_lines_after(mut part: PartRead, by: u64) -> PartRead {
    if let Some((line, _)) = part.summary.first_skipped.as_mut() {
        *line += by;
    }
    if let Some(problem) = part.failed.as_mut() {
        let digits = problem
            .location
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        if let Ok(line) = problem.location[..digits].parse::<u64>() {
            problem.location = format!("{}{}", line + by, &problem.location[digits..]);
        }
    }
    part.last_line += by;
    part
}

fn failed_part(path: &Path, message: &str) -> PartRead {
    PartRead {
        failed: Some(Problem::at_line(path, None, None, message)),
        ..PartRead::default()
    }
}

/// The first part's read followed by the second's: one pass's.
fn joined(first: PartRead, second: PartRead) -> PartRead {
    let (a, b) = (first.summary, second.summary);
    PartRead {
        summary: super::ReadSummary {
            requests: a.requests + b.requests,
            skipped_rows: a.skipped_rows + b.skipped_rows,
            bytes: a.bytes + b.bytes,
            first_skipped: a.first_skipped.or(b.first_skipped),
        },
        first_arrival: first.first_arrival.or(second.first_arrival),
        last_arrival: second.last_arrival.or(first.last_arrival),
        last_line: second.last_line,
        failed: second.failed,
    }
}

/// Where the second part starts: after the first line end at or past
/// [`FIRST_PART_SHARE`] of the file; `None` when no line ends there within
/// a line's greatest length, or the file cannot be read (one pass then says
/// why).
fn second_part_start(path: &Path, size: u64) -> Option<u64> {
    let from = (size as f64 * FIRST_PART_SHARE) as u64;
    let mut file = File::open(path).ok()?;
    file.seek(SeekFrom::Start(from)).ok()?;
    let mut reader = BufReader::new(file.take(super::lines::MAX_LINE_BYTES as u64));
    let mut skipped = Vec::new();
    let n = reader.read_until(b'\n', &mut skipped).ok()?;
    let start = from + n as u64;
    (skipped.last() == Some(&b'\n') && start < size).then_some(start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traces::reader::read_trace_split_from;
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
