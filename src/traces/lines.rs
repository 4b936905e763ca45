//! The line layer every trace reader stands on: one reused buffer, line
//! numbers from 1, and files as users save them — a UTF-8 byte-order mark on
//! the first line is skipped, a CRLF end is taken as a line end, and invalid
//! UTF-8 or a lone carriage return is an error naming the line and column
//! ([`crate::base::text::check_line`]). A reader for a new format reads its rows
//! from [`Lines::next_line`] and inherits all of this.

use crate::base::located::Problem;
use crate::base::text::check_line;
use std::io::BufRead;
use std::path::Path;

/// Lines of a streamed text file.
pub struct Lines<'p, R> {
    reader: R,
    path: &'p Path,
    buf: Vec<u8>,
    line: u64,
    bytes: u64,
}

impl<'p, R: BufRead> Lines<'p, R> {
    /// Lines of `reader`, the file `path`, from the first.
    pub fn new(reader: R, path: &'p Path) -> Self {
        Lines {
            reader,
            path,
            buf: Vec::with_capacity(256),
            line: 0,
            bytes: 0,
        }
    }

    /// The number of the line read last (1-based; 0 before the first), or
    /// of the line that could not be read.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The next line, without its end, the BOM or trailing spaces, with its
    /// 1-based number; `None` at the end of the file.
    pub fn next_line(&mut self) -> Option<Result<(u64, &str), Problem>> {
        self.buf.clear();
        let n = match self.reader.read_until(b'\n', &mut self.buf) {
            Ok(n) => n,
            Err(e) => {
                self.line += 1;
                return Some(Err(Problem::at_line(
                    self.path,
                    Some(self.line),
                    None,
                    format!("cannot read the file: {e}"),
                )));
            }
        };
        if n == 0 {
            return None;
        }
        self.line += 1;
        self.bytes += n as u64;
        let line = self.line;
        let body = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
        Some(check_line(body, line, self.path).map(|text| (line, text.trim_end_matches(' '))))
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
    fn bad_lines_are_located_and_reading_goes_on() {
        assert_eq!(
            all(b"ok\nb\xFFd\nx\ry\n"),
            vec![Ok((1, "ok".into())), Err("2:2".into()), Err("3:2".into())]
        );
    }
}
