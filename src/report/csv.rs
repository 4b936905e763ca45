//! Comma-separated values for spreadsheets: quoting by RFC 4180.

/// One CSV field: quoted when it holds a comma, a quote or a line break.
pub fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// One CSV line from its fields, ending in `\n`.
pub fn line<S: AsRef<str>>(fields: &[S]) -> String {
    let mut out = fields
        .iter()
        .map(|f| field(f.as_ref()))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    out
}

/// A number as CSV: the shortest text that reads back as the same value.
pub fn number(v: f64) -> String {
    if v.is_finite() {
        // Nine significant digits: what the figures mean, without the
        // binary noise of their sums (`325871.99999999994` is `325872`).
        let rounded: f64 = format!("{v:.8e}").parse().unwrap_or(v);
        format!("{rounded}")
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_nine_significant_digits() {
        assert_eq!(number(325_871.999_999_999_94), "325872");
        assert_eq!(number(0.1 + 0.2), "0.3");
        assert_eq!(number(0.001_234_567_891), "0.00123456789");
        assert_eq!(number(f64::NAN), "");
    }

    #[test]
    fn fields_are_quoted_only_when_needed() {
        assert_eq!(field("abc"), "abc");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(line(&["x", "1,2"]), "x,\"1,2\"\n");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(f64::NAN), "");
    }
}
