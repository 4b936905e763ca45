//! Text files as users save them: a UTF-8 byte-order mark (Excel, Notepad)
//! is skipped, CRLF line ends are accepted, and what cannot be read is located
//! by line and column: invalid UTF-8, and a carriage return that ends a line
//! on its own (classic Mac line ends), which TOML and the CSV readers would
//! otherwise take as part of a value.
//!
//! [`read_text`] reads a whole file (scenarios, profiles, plans, logs, rate
//! curves); [`check_line`] does the same checks on one line of a streamed
//! file (traces).

use super::located::Problem;
use std::path::Path;

/// The UTF-8 byte-order mark.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Most characters of an input that a message quotes.
pub(crate) const EXCERPT_CHARS: usize = 40;

/// `bytes` as a message quotes them: lossy UTF-8, at most
/// [`EXCERPT_CHARS`] characters, and when longer, an ellipsis and the
/// field's length in bytes (a 2 GB field is not printed whole).
pub(crate) fn excerpt(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(4 * EXCERPT_CHARS)];
    let text = String::from_utf8_lossy(head);
    let mut chars = text.chars();
    let shown: String = chars.by_ref().take(EXCERPT_CHARS).collect();
    if chars.next().is_none() && head.len() == bytes.len() {
        shown
    } else {
        format!("{shown}… ({} bytes)", bytes.len())
    }
}

/// Most bytes of a whole-file input (a benchmark's per-request log is the
/// largest: 100,000 requests of 1,000 output tokens with their gaps run to
/// about 1 GB): a longer file, or an endless one (`/dev/zero`, a pipe that
/// never closes), is refused once this much has been read.
pub(crate) const MAX_TEXT_BYTES: u64 = 1 << 30;

/// Most bytes of a TOML file (a scenario, a profile, a plan: a few
/// kilobytes to a few megabytes).
pub(crate) const MAX_TOML_BYTES: u64 = 64 << 20;

/// Reads `path` as UTF-8 text without its byte-order mark, at most
/// [`MAX_TEXT_BYTES`].
pub(crate) fn read_text(path: &Path) -> Result<String, Problem> {
    read_text_within(path, MAX_TEXT_BYTES, "a whole-file input")
}

/// [`read_text`] refusing a file past `max_bytes`, which `what` names in
/// the message.
pub(crate) fn read_text_within(path: &Path, max_bytes: u64, what: &str) -> Result<String, Problem> {
    use std::io::Read;
    let cannot = |e: std::io::Error| Problem::new(path, "", format!("cannot read the file: {e}"));
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(max_bytes + 1).read_to_end(&mut bytes))
        .map_err(cannot)?;
    if bytes.len() as u64 > max_bytes {
        return Err(Problem::new(
            path,
            "",
            format!(
                "the file is longer than {} MiB, the most {what} may be (reading stopped there): is it the right file?",
                max_bytes >> 20
            ),
        ));
    }
    decode(bytes, path)
}

/// [`read_text`] on the bytes of `path`, already read.
fn decode(mut bytes: Vec<u8>, path: &Path) -> Result<String, Problem> {
    if bytes.starts_with(BOM) {
        bytes.drain(..BOM.len());
    }
    let mut line = 1u64;
    let mut line_start = 0usize;
    let mut i = 0usize;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\n' {
            line += 1;
            line_start = i + 1;
        } else if b == b'\r' && bytes.get(i + 1) != Some(&b'\n') {
            return Err(bare_cr(path, line, column(&bytes[line_start..i])));
        }
        i += 1;
    }
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let line_start = bytes[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let line = bytes[..at].split(|&b| b == b'\n').count() as u64;
        invalid_utf8(path, line, column(&bytes[line_start..at]), bytes[at])
    })
}

/// Checks line `line` of the streamed file `path` (`bytes` without its
/// `\n`; line 1 may start with the BOM) and returns it without the BOM and
/// the `\r` of a CRLF end.
pub(crate) fn check_line<'a>(bytes: &'a [u8], line: u64, path: &Path) -> Result<&'a str, Problem> {
    let mut row = bytes;
    if line == 1 {
        row = row.strip_prefix(BOM).unwrap_or(row);
    }
    if let Some(stripped) = row.strip_suffix(b"\r") {
        row = stripped;
    }
    if let Some(cr) = memchr::memchr(b'\r', row) {
        return Err(bare_cr(path, line, column(&row[..cr])));
    }
    std::str::from_utf8(row).map_err(|e| {
        let at = e.valid_up_to();
        invalid_utf8(path, line, column(&row[..at]), row[at])
    })
}

/// 1-based character column after the valid UTF-8 `before`.
fn column(before: &[u8]) -> u64 {
    String::from_utf8_lossy(before).chars().count() as u64 + 1
}

fn bare_cr(path: &Path, line: u64, column: u64) -> Problem {
    Problem::at_line(
        path,
        Some(line),
        Some(column),
        "a carriage return not followed by a line feed (classic Mac line ends); save the file with LF or CRLF line ends",
    )
}

fn invalid_utf8(path: &Path, line: u64, column: u64, byte: u8) -> Problem {
    Problem::at_line(
        path,
        Some(line),
        Some(column),
        format!("invalid UTF-8 (byte 0x{byte:02X}); save the file as UTF-8"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f() -> &'static Path {
        Path::new("f.txt")
    }

    #[test]
    fn a_huge_field_is_quoted_in_part() {
        assert_eq!(excerpt(b"12x"), "12x");
        let long = vec![b'7'; 2_000_000];
        let q = excerpt(&long);
        assert!(q.starts_with(&"7".repeat(EXCERPT_CHARS)), "{q}");
        assert!(q.ends_with("… (2000000 bytes)"), "{q}");
        assert!(q.len() < 80, "{q}");
    }

    #[test]
    fn a_file_past_the_cap_is_refused_without_reading_it_all() {
        let p = std::env::temp_dir().join(format!("planner-text-cap-{}", std::process::id()));
        std::fs::write(&p, "x = 1\n".repeat(10)).unwrap();
        assert!(read_text_within(&p, 60, "a test").is_ok());
        let e = read_text_within(&p, 59, "a test").unwrap_err();
        std::fs::remove_file(&p).unwrap();
        assert!(
            e.to_string()
                .contains("longer than 0 MiB, the most a test may be"),
            "{e}"
        );
        // An endless file stops at the cap.
        let zero = Path::new("/dev/zero");
        if zero.exists() {
            let e = read_text_within(zero, 1 << 20, "a scenario").unwrap_err();
            assert!(e.to_string().contains("longer than 1 MiB"), "{e}");
        }
    }

    #[test]
    fn bom_and_crlf_are_accepted() {
        let text = decode(b"\xEF\xBB\xBFa = 1\r\nb = 2\r\n".to_vec(), f()).unwrap();
        assert_eq!(text, "a = 1\r\nb = 2\r\n");
        assert_eq!(
            check_line(b"\xEF\xBB\xBFTIMESTAMP,a\r", 1, f()).unwrap(),
            "TIMESTAMP,a"
        );
        assert_eq!(check_line(b"x,y\r", 2, f()).unwrap(), "x,y");
    }

    #[test]
    fn invalid_utf8_names_its_line_and_column() {
        let e = decode(b"ok\nab\xFFcd\n".to_vec(), f()).unwrap_err();
        assert_eq!(e.location, "2:3");
        assert!(e.message.contains("0xFF"), "{}", e.message);
        let e = check_line(b"\xC3\xA9t\xE9", 7, f()).unwrap_err();
        assert_eq!(e.location, "7:3");
    }

    #[test]
    fn a_lone_carriage_return_is_located() {
        let e = decode(b"a = 1\rb = 2\n".to_vec(), f()).unwrap_err();
        assert_eq!(e.location, "1:6");
        assert!(e.message.contains("carriage return"));
        assert_eq!(
            check_line(b"1,2\r3,4\r", 3, f()).unwrap_err().location,
            "3:4"
        );
    }
}
