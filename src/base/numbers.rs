//! Numbers as people read them: money with thousands grouped, figures
//! with a chosen number of significant digits.

/// `1234567.891` → `1,234,568`; `12.3456` → `12.35` (two decimals below 1,000).
pub fn usd(amount: f64) -> String {
    if amount.abs() >= 1000.0 {
        group_thousands(amount.round() as i64)
    } else {
        format!("{amount:.2}")
    }
}

/// A money amount readable at any size: grouped whole units from 1,000,
/// two decimals from 1, three significant digits below (`0.00345`), so a
/// small but real amount never prints as `0.0`.
pub fn money(amount: f64) -> String {
    if amount.abs() >= 1.0 {
        usd(amount)
    } else {
        significant(amount, 3)
    }
}

/// `v` with `digits` significant digits, without an exponent:
/// `0.0001234` → `0.000123`, `0.5` → `0.500`, `12.345` → `12.3`; whole
/// numbers of more digits keep them (`12345` → `12345`).
pub fn significant(v: f64, digits: u32) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
    format!("{v:.decimals$}")
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

/// `one` after a count of 1, `many` after any other count: the noun of
/// "1 day" and "2 days".
pub(crate) fn noun(count: u64, one: &'static str, many: &'static str) -> &'static str {
    if count == 1 {
        one
    } else {
        many
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_of_one_takes_the_singular() {
        assert_eq!(format!("1 {}", noun(1, "day", "days")), "1 day");
        assert_eq!(format!("0 {}", noun(0, "day", "days")), "0 days");
        assert_eq!(format!("7 {}", noun(7, "GPU", "GPUs")), "7 GPUs");
    }

    #[test]
    fn money_formats() {
        assert_eq!(usd(1_234_567.891), "1,234,568");
        assert_eq!(usd(12.3456), "12.35");
        assert_eq!(group_thousands(-1000), "-1,000");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(significant(0.000_123_4, 3), "0.000123");
        assert_eq!(significant(0.5, 3), "0.500");
        assert_eq!(significant(12.345, 3), "12.3");
        assert_eq!(significant(12345.0, 3), "12345");
        assert_eq!(money(0.0345), "0.0345");
        assert_eq!(money(12.3456), "12.35");
        assert_eq!(money(0.0), "0");
    }
}
