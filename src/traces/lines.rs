//! The line layer every trace reader stands on: one reused buffer, line
//! numbers from 1, and files as users save them — a UTF-8 byte-order mark on
//! the first line is skipped, a CRLF end is taken as a line end, and invalid
//! UTF-8 or a lone carriage return is an error naming the line and column
//! ([`crate::base::text::check_line`]); a line longer than [`MAX_LINE_BYTES`]
//! ends the read with an error naming the line, so memory stays bounded
//! whatever the file holds. A reader for a new format reads its rows from
//! [`Lines::next_line`] and inherits all of this.

use crate::base::located::Problem;
use crate::base::numbers::group_thousands;
use crate::base::text::check_line;
use std::io::BufRead;
use std::path::Path;

/// Longest line a streamed file may hold: 1 MiB (a trace row is under a
/// hundred bytes; a longer line is not a trace's).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Lines of a streamed text file.
pub struct Lines<'p, R> {
    reader: R,
    path: &'p Path,
    buf: Vec<u8>,
    line: u64,
    bytes: u64,
    /// A line could not be read, or was too long: nothing more is read.
    ended: bool,
}

impl<'p, R: BufRead> Lines<'p, R> {
    /// Lines of `reader`, the file `path`, from the first.
    pub fn new(reader: R, path: &'p Path) -> Self {
        Self::from_line(reader, path, 1)
    }

    /// Lines of `reader`, which starts at line `first` of the file `path`
    /// (a part of a file read on its own: only line 1 may hold a BOM).
    pub fn from_line(reader: R, path: &'p Path, first: u64) -> Self {
        Lines {
            reader,
            path,
            buf: Vec::with_capacity(256),
            line: first.saturating_sub(1),
            bytes: 0,
            ended: false,
        }
    }

    /// The number of the line read last (1-based; 0 before the first), or
    /// of the line that could not be read.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The next line, without its end, the BOM or trailing spaces, with its
    /// 1-based number; `None` at the end of the file. A line that cannot be
    /// decoded is a problem a reader may skip (`skippable`); one that cannot
    /// be read, or is longer than [`MAX_LINE_BYTES`], ends the file.
    pub fn next_line(&mut self) -> Option<Result<(u64, &str), Problem>> {
        if self.ended {
            return None;
        }
        self.buf.clear();
        let mut n = 0usize;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(b) => b,
                Err(e) => {
                    self.ended = true;
                    self.line += 1;
                    return Some(Err(Problem::at_line(
                        self.path,
                        Some(self.line),
                        None,
                        format!("cannot read the file: {e}"),
                    )));
                }
            };
            if available.is_empty() {
                break;
            }
            let (take, done) = match memchr::memchr(b'\n', available) {
                Some(i) => (i + 1, true),
                None => (available.len(), false),
            };
            self.buf.extend_from_slice(&available[..take]);
            self.reader.consume(take);
            n += take;
            if done {
                break;
            }
            if self.buf.len() > MAX_LINE_BYTES {
                self.ended = true;
                self.line += 1;
                return Some(Err(Problem::at_line(
                    self.path,
                    Some(self.line),
                    None,
                    format!(
                        "the line is longer than {} bytes (stopped after {} bytes): a trace row is a few dozen; is this the right file?",
                        group_thousands(MAX_LINE_BYTES as i64),
                        group_thousands(self.buf.len() as i64)
                    ),
                )));
            }
        }
        if n == 0 {
            return None;
        }
        self.line += 1;
        self.bytes += n as u64;
        let line = self.line;
        let body = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
        Some(
            check_line(body, line, self.path)
                .map(|text| (line, text.trim_end_matches(' ')))
                .map_err(|mut e| {
                    e.skippable = true;
                    e
                }),
        )
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(bytes: &[u8]) -> Vec<Result<(u64, String), String>> {
        let mut lines = Lines::new(bytes, std::path::Path::new("t.csv"));
        let mut out = Vec::new();
        while let Some(l) = lines.next_line() {
            out.push(l.map(|(n, t)| (n, t.to_string())).map_err(|e| e.location));
        }
        out
    }

    #[test]
    fn bom_crlf_and_a_missing_last_end() {
        assert_eq!(
            all(b"\xEF\xBB\xBFa,b\r\nc,d \r\ne"),
            vec![
                Ok((1, "a,b".into())),
                Ok((2, "c,d".into())),
                Ok((3, "e".into()))
            ]
        );
    }

    #[test]
    fn an_endless_line_ends_the_read_with_its_line_number() {
        let mut bytes = b"ok\n".to_vec();
        bytes.extend(std::iter::repeat_n(0u8, 3 * MAX_LINE_BYTES));
        let mut lines = Lines::new(&bytes[..], std::path::Path::new("z"));
        assert!(lines.next_line().unwrap().is_ok());
        let e = lines.next_line().unwrap().unwrap_err();
        assert_eq!(e.location, "2");
        assert!(!e.skippable);
        assert!(
            e.message.contains("longer than 1,048,576 bytes"),
            "{}",
            e.message
        );
        assert!(lines.next_line().is_none());
    }

    #[test]
    fn bad_lines_are_located_and_reading_goes_on() {
        assert_eq!(
            all(b"ok\nb\xFFd\nx\ry\n"),
            vec![Ok((1, "ok".into())), Err("2:2".into()), Err("3:2".into())]
        );
    }
}
