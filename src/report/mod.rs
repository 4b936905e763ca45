//! Rendering plans and trace statistics as text for people and JSON for tools.

pub mod calibration_text;
pub mod capacity_text;
pub mod goodput_text;
pub mod json;
pub mod kernels_text;
pub mod text;
pub mod trace_text;
pub mod verification_text;

/// Output format chosen on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned text for a person.
    Text,
    /// Pretty-printed JSON with stable key order.
    Json,
}

/// `1234567.891` → `1,234,568`; `12.3456` → `12.35` (two decimals below 1,000).
pub fn usd(amount: f64) -> String {
    if amount.abs() >= 1000.0 {
        group_thousands(amount.round() as i64)
    } else {
        format!("{amount:.2}")
    }
}

/// Digits grouped by thousands with commas.
pub fn group_thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_formats() {
        assert_eq!(usd(1_234_567.891), "1,234,568");
        assert_eq!(usd(12.3456), "12.35");
        assert_eq!(group_thousands(-1000), "-1,000");
        assert_eq!(group_thousands(999), "999");
    }
}
