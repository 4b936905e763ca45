//! The rows of a trace: each format's parser, the checks every request
//! passes, and the loop that reads a trace's rows (the whole file, or a part
//! of it, [`super::split`]) with one reused line buffer and a callback per
//! request. Bad rows fail with their line number, or are skipped and counted.

use super::lines::Lines;
pub use super::row_error::RowError;
use super::timestamp::parse_timestamp_checked;
use super::{Request, TraceFormat};
use crate::base::located::Problem;
use crate::base::text::excerpt;
use std::io::BufRead;
use std::path::Path;

/// How to read a trace.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReaderOptions {
    /// `None`: detect from the content.
    pub format: Option<TraceFormat>,
    /// Skip and count bad rows instead of failing on the first.
    pub skip_bad_rows: bool,
    /// Refuse (or skip) a request whose input plus output tokens exceed
    /// this context, as a server running the model would.
    pub max_context_tokens: Option<u32>,
    /// Drop and count the requests over `max_context_tokens` instead of
    /// refusing the trace at the first.
    pub drop_over_context: bool,
}

/// What a read went through.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadSummary {
    /// Requests delivered to the callback.
    pub requests: u64,
    /// Bad rows skipped (only with `skip_bad_rows`).
    pub skipped_rows: u64,
    /// Bytes read.
    pub bytes: u64,
    /// The first skipped row's line and reason, to show the user.
    pub first_skipped: Option<(u64, String)>,
    /// Requests over the model's context dropped (only with
    /// `drop_over_context`), and their prompt and output tokens.
    pub dropped_over_context: Dropped,
}

/// Requests a read dropped, and their tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dropped {
    pub requests: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Dropped {
    /// The two counts together (two parts of one trace).
    #[must_use]
    pub fn plus(self, other: Dropped) -> Dropped {
        Dropped {
            requests: self.requests + other.requests,
            input_tokens: self.input_tokens + other.input_tokens,
            output_tokens: self.output_tokens + other.output_tokens,
        }
    }
}

/// What reading a part of a trace (or the whole) found.
#[derive(Debug, Default)]
pub(super) struct PartRead {
    pub summary: ReadSummary,
    /// The arrival of the last request delivered.
    pub last_arrival: Option<f64>,
    /// The number of the last line read.
    pub last_line: u64,
    /// The problem that ended the read, if one did.
    pub failed: Option<Problem>,
}

/// Reads the rows of `lines` (the whole trace, or a part that starts at a
/// line's beginning), checking each request's order against the previous
/// one, `last_arrival` before the first; stops at the first problem that
/// is not skipped.
pub(super) fn read_part<R: BufRead>(
    mut lines: Lines<'_, R>,
    path: &Path,
    format: TraceFormat,
    options: &ReaderOptions,
    mut last_arrival: f64,
    mut on_request: impl FnMut(Request),
    mut on_progress: impl FnMut(u64),
) -> PartRead {
    let fail = |line: Option<u64>, message: String| Problem::at_line(path, line, None, message);
    let mut out = PartRead::default();
    let mut next_progress = 0u64;
    while let Some(next) = lines.next_line() {
        let (line_no, parsed) = match next {
            Ok((line_no, row)) => {
                if row.is_empty() {
                    continue;
                }
                let row = row.as_bytes();
                let parsed = match format {
                    TraceFormat::Azure => {
                        // A first line of words is a header: Azure's, or
                        // another's columns.
                        if line_no == 1 && row.first().is_some_and(u8::is_ascii_alphabetic) {
                            if row != b"TIMESTAMP,ContextTokens,GeneratedTokens" {
                                out.failed = Some(fail(Some(1), format!(
                                    "unexpected header `{}`; expected `TIMESTAMP,ContextTokens,GeneratedTokens`",
                                    excerpt(row)
                                )));
                                break;
                            }
                            continue;
                        }
                        parse_azure_row(row)
                    }
                    TraceFormat::Mooncake => super::mooncake::parse_row(row),
                    TraceFormat::Burstgpt => {
                        if line_no == 1 && row.starts_with(b"Timestamp") {
                            if row != super::BURSTGPT_HEADER.as_bytes() {
                                out.failed = Some(fail(
                                    Some(1),
                                    format!(
                                        "unexpected header `{}`; expected `{}`",
                                        excerpt(row),
                                        super::BURSTGPT_HEADER
                                    ),
                                ));
                                break;
                            }
                            continue;
                        }
                        parse_burstgpt_row(row)
                    }
                };
                let checked = parsed.and_then(|r| {
                    if options.drop_over_context && over_context(&r, options) {
                        return Ok(Err(r));
                    }
                    check_row(r, options, last_arrival).map(Ok)
                });
                (
                    line_no,
                    checked.map_err(|e| Problem::at_line(path, Some(line_no), e.column, e.message)),
                )
            }
            Err(e) if !e.skippable => {
                out.failed = Some(e);
                break;
            }
            Err(e) => (lines.line(), Err(e)),
        };
        if lines.bytes_read() >= next_progress {
            on_progress(lines.bytes_read());
            next_progress = lines.bytes_read() + (8 << 20);
        }
        match parsed {
            Ok(Err(dropped)) => {
                let d = &mut out.summary.dropped_over_context;
                d.requests += 1;
                d.input_tokens += u64::from(dropped.input_tokens);
                d.output_tokens += u64::from(dropped.output_tokens);
            }
            Ok(Ok(request)) => {
                last_arrival = request.arrival_s;
                out.last_arrival = Some(request.arrival_s);
                out.summary.requests += 1;
                on_request(request);
            }
            Err(e) if options.skip_bad_rows => {
                out.summary.skipped_rows += 1;
                out.summary
                    .first_skipped
                    .get_or_insert((line_no, e.message));
            }
            Err(mut problem) => {
                problem.skippable = true;
                out.failed = Some(problem);
                break;
            }
        }
    }
    out.summary.bytes = lines.bytes_read();
    out.last_line = lines.line();
    out
}

/// What a path that is not a regular file is, in words.
pub(crate) fn not_a_file(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "is a folder"
    } else if kind.is_char_device() || kind.is_block_device() {
        "is a device"
    } else if kind.is_fifo() {
        "is a pipe (FIFO)"
    } else if kind.is_socket() {
        "is a socket"
    } else {
        "is not a regular file"
    }
}

/// Whether `request`'s input plus output tokens exceed the context the
/// options give.
fn over_context(request: &Request, options: &ReaderOptions) -> bool {
    options.max_context_tokens.is_some_and(|c| {
        u64::from(request.input_tokens) + u64::from(request.output_tokens) > u64::from(c)
    })
}

/// The checks every parsed request passes, whatever its format: a finite
/// arrival in time order, lengths within [`super::MAX_TOKENS_PER_REQUEST`]
/// and within the model's context when one is given.
fn check_row(
    request: Request,
    options: &ReaderOptions,
    last_arrival: f64,
) -> Result<Request, RowError> {
    let most = super::MAX_TOKENS_PER_REQUEST;
    let message = if !request.arrival_s.is_finite() {
        format!("arrival time {} is not a finite number", request.arrival_s)
    } else if request.input_tokens > most || request.output_tokens > most {
        format!(
            "a request of {} input and {} output tokens is longer than the {most} tokens a trace row may hold",
            request.input_tokens, request.output_tokens
        )
    } else if let Some(context) = options
        .max_context_tokens
        .filter(|_| over_context(&request, options))
    {
        format!(
            "a request of {} input + {} output tokens does not fit the model's context of {context} tokens; a server running the model would refuse it",
            request.input_tokens, request.output_tokens
        )
    } else if request.arrival_s < last_arrival {
        format!(
            "arrival time {} is earlier than the previous row's {}: traces must be sorted by time",
            arrival_text(request.arrival_s),
            arrival_text(last_arrival)
        )
    } else {
        return Ok(request);
    };
    Err(message.into())
}

/// An arrival as a reader wrote it: a clock time (UTC, to the millisecond)
/// for a timestamp since 1970 (Azure, BurstGPT's dated rows), else seconds
/// from the trace's start (Mooncake's milliseconds).
fn arrival_text(arrival_s: f64) -> String {
    // After 1973: a date, not an offset from the trace's start.
    if arrival_s >= 1e8 {
        let whole = arrival_s.floor();
        let ms = ((arrival_s - whole) * 1e3).round().min(999.0);
        format!(
            "{}.{ms:03.0} UTC",
            super::timestamp::format_utc(whole as i64)
        )
    } else {
        format!("{arrival_s:.3} s")
    }
}

fn parse_count(field: &[u8], column: &str) -> Result<u32, String> {
    let text = || excerpt(field);
    if field.is_empty() {
        return Err(format!(
            "{column} is empty; expected a non-negative integer"
        ));
    }
    let mut value: u64 = 0;
    for &b in field {
        if !b.is_ascii_digit() {
            return Err(format!(
                "{column} must be a non-negative integer, got `{}`",
                text()
            ));
        }
        value = value * 10 + u64::from(b - b'0');
        if value > u64::from(u32::MAX) {
            return Err(format!("{column} `{}` is too large", text()));
        }
    }
    Ok(value as u32)
}

/// Parses `TIMESTAMP,ContextTokens,GeneratedTokens`; an error names the
/// column (1-based, in characters of the ASCII row) where the bad field starts.
pub(super) fn parse_azure_row(row: &[u8]) -> Result<Request, RowError> {
    let mut fields = row.split(|&b| b == b',');
    let (Some(ts), Some(input), Some(output), None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        let n = row.split(|&b| b == b',').count();
        return Err(format!(
            "expected 3 columns (TIMESTAMP,ContextTokens,GeneratedTokens), found {n}"
        )
        .into());
    };
    let arrival_s = parse_timestamp_checked(ts).map_err(|e| RowError {
        column: Some(e.offset as u64 + 1),
        message: if e.message == "not a timestamp" {
            format!(
                "bad timestamp `{}`; expected e.g. `2023-11-16 18:17:03.9799600` or `2024-05-10 00:00:00.009930+00:00`",
                excerpt(ts)
            )
        } else {
            format!("{} in `{}`", e.message, excerpt(ts))
        },
    })?;
    let at = |column: usize| {
        move |message: String| RowError {
            column: Some(column as u64 + 1),
            message,
        }
    };
    Ok(Request {
        arrival_s,
        input_tokens: parse_count(input, "ContextTokens").map_err(at(ts.len() + 1))?,
        output_tokens: parse_count(output, "GeneratedTokens")
            .map_err(at(ts.len() + input.len() + 2))?,
    })
}

/// Parses a BurstGPT row `Timestamp,Model,Request tokens,Response tokens,
/// Total tokens,Log Type` (timestamp in seconds since the trace start; a
/// failed request has 0 response tokens and is kept: its prompt was sent).
pub(super) fn parse_burstgpt_row(row: &[u8]) -> Result<Request, RowError> {
    let fields: Vec<&[u8]> = row.split(|&b| b == b',').collect();
    if fields.len() != 6 {
        return Err(format!(
            "expected 6 columns ({}), found {}",
            super::BURSTGPT_HEADER,
            fields.len()
        )
        .into());
    }
    let start = |i: usize| Some(fields[..i].iter().map(|f| f.len() + 1).sum::<usize>() as u64 + 1);
    let ts = std::str::from_utf8(fields[0])
        .ok()
        .and_then(|t| t.trim().parse::<f64>().ok())
        .filter(|t| t.is_finite() && *t >= 0.0)
        .ok_or_else(|| RowError {
            column: start(0),
            message: format!(
                "`Timestamp` must be non-negative seconds since the trace start, got `{}`",
                excerpt(fields[0])
            ),
        })?;
    let count = |i: usize, name: &str| {
        parse_count(fields[i], name).map_err(|message| RowError {
            column: start(i),
            message,
        })
    };
    let (input, output, total) = (
        count(2, "Request tokens")?,
        count(3, "Response tokens")?,
        count(4, "Total tokens")?,
    );
    if u64::from(input) + u64::from(output) != u64::from(total) {
        return Err(RowError {
            column: start(4),
            message: format!(
                "`Total tokens` {total} is not `Request tokens` {input} + `Response tokens` {output}"
            ),
        });
    }
    Ok(Request {
        arrival_s: ts,
        input_tokens: input,
        output_tokens: output,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An unsorted row is named by its clock time as the trace wrote it
    /// (a date) or by its offset in seconds.
    #[test]
    fn arrivals_are_named_as_the_trace_wrote_them() {
        assert_eq!(
            arrival_text(1_700_158_546.68),
            "2023-11-16 18:15:46.680 UTC"
        );
        assert_eq!(arrival_text(12.5), "12.500 s");
    }

    #[test]
    fn azure_row_parses() {
        let r = parse_azure_row(b"2023-11-16 18:17:03.9799600,4808,10").unwrap();
        assert_eq!((r.input_tokens, r.output_tokens), (4808, 10));
    }

    #[test]
    fn azure_row_errors_say_what_is_wrong() {
        assert!(parse_azure_row(b"2023-11-16 18:17:03,-4,10")
            .unwrap_err()
            .message
            .contains("non-negative integer"));
        assert!(parse_azure_row(b"2023-11-16 18:17:03,4.5,10")
            .unwrap_err()
            .message
            .contains("`4.5`"));
        assert!(parse_azure_row(b"2023-11-16 18:17:03,4")
            .unwrap_err()
            .message
            .contains("found 2"));
        assert!(parse_azure_row(b"16/11/2023,4,5")
            .unwrap_err()
            .message
            .contains("bad timestamp"));
    }

    #[test]
    fn detects_formats() {
        assert_eq!(
            TraceFormat::detect(b"TIMESTAMP,ContextTokens,GeneratedTokens\n"),
            Some(TraceFormat::Azure)
        );
        assert_eq!(
            TraceFormat::detect(b"{\"timestamp\": 0}\n"),
            Some(TraceFormat::Mooncake)
        );
        assert_eq!(TraceFormat::detect(b"a;b;c\n"), None);
    }
}
