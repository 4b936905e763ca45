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
            dropped_over_context: a.dropped_over_context.plus(b.dropped_over_context),
        },
        last_arrival: second.last_arrival.or(first.last_arrival),
        last_line: second.last_line,
        failed: second.failed,
    }
}

/// Where the second part starts: after the first line end at or past
/// [`FIRST_PART_SHARE`] of the file; `None` when no line ends there within
/// a line's greatest length, or the file cannot be read (one pass then says
/// why).
pub(super) fn second_part_start(path: &Path, size: u64) -> Option<u64> {
    let from = (size as f64 * FIRST_PART_SHARE) as u64;
    let mut file = File::open(path).ok()?;
    file.seek(SeekFrom::Start(from)).ok()?;
    let mut reader = BufReader::new(file.take(super::lines::MAX_LINE_BYTES as u64));
    let mut skipped = Vec::new();
    let n = reader.read_until(b'\n', &mut skipped).ok()?;
    let start = from + n as u64;
    (skipped.last() == Some(&b'\n') && start < size).then_some(start)
}
