//! UTC timestamps of the Azure traces: `2023-11-16 18:17:03.9799600` (2023,
//! seven fractional digits, no zone) and `2024-05-10 00:00:00.009930+00:00`
//! (2024, microseconds and an offset; some rows have no fraction).

/// Days from 1970-01-01 to the given civil date (proleptic Gregorian).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date (year, month, day) of a day count since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn digits(bytes: &[u8]) -> Option<u32> {
    if bytes.is_empty() {
        return None;
    }
    let mut value = 0u32;
    for &b in bytes {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value * 10 + u32::from(b - b'0');
    }
    Some(value)
}

/// Days in `month` (1-12) of `year` (proleptic Gregorian).
pub fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Why a timestamp was refused: `offset` is the 0-based byte within the
/// field where the bad part starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimestampError {
    pub offset: usize,
    pub message: String,
}

/// Parses an Azure trace timestamp into seconds since 1970-01-01 UTC.
/// Accepts an optional fraction (any number of digits) and an optional zone
/// (`Z`, `+HH:MM`, `-HH:MM`). Returns `None` when the text is not such a time.
pub fn parse_timestamp(text: &[u8]) -> Option<f64> {
    parse_timestamp_checked(text).ok()
}

/// [`parse_timestamp`], saying what is wrong and where: a text that is not
/// a timestamp, or an impossible calendar date, time of day or UTC offset
/// (`2023-11-31`, `25:00:00`, `+99:99`), which is refused rather than shifted.
pub fn parse_timestamp_checked(text: &[u8]) -> Result<f64, TimestampError> {
    let not_a_time = |offset: usize| TimestampError {
        offset,
        message: "not a timestamp".into(),
    };
    if text.len() < 19 || text[4] != b'-' || text[7] != b'-' || text[13] != b':' || text[16] != b':'
    {
        return Err(not_a_time(0));
    }
    if text[10] != b' ' && text[10] != b'T' {
        return Err(not_a_time(10));
    }
    let field = |from: usize, to: usize| digits(&text[from..to]).ok_or_else(|| not_a_time(from));
    let year = field(0, 4)?;
    let month = field(5, 7)?;
    let day = field(8, 10)?;
    let hour = field(11, 13)?;
    let minute = field(14, 16)?;
    let second = field(17, 19)?;
    let impossible = |offset: usize, message: String| Err(TimestampError { offset, message });
    if !(1..=12).contains(&month) {
        return impossible(
            5,
            format!("impossible month {month:02}; months run 01 to 12"),
        );
    }
    let last_day = days_in_month(i64::from(year), month);
    if !(1..=last_day).contains(&day) {
        return impossible(
            8,
            format!(
                "impossible date {year:04}-{month:02}-{day:02}: {} {year} has {last_day} days",
                MONTHS[month as usize - 1]
            ),
        );
    }
    if hour > 23 || minute > 59 || second > 60 {
        return impossible(
            11,
            format!("impossible time of day {hour:02}:{minute:02}:{second:02}"),
        );
    }
    let mut rest = &text[19..];
    let mut fraction = 0.0;
    if let Some(after_dot) = rest.strip_prefix(b".") {
        let n = after_dot.iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 {
            return Err(not_a_time(20));
        }
        let mut scale = 0.1;
        for &b in &after_dot[..n] {
            fraction += f64::from(b - b'0') * scale;
            scale *= 0.1;
        }
        rest = &after_dot[n..];
    }
    let zone_at = text.len() - rest.len();
    let offset_s: i64 = match rest {
        [] | [b'Z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let h = digits(&[*h1, *h2]).ok_or_else(|| not_a_time(zone_at))?;
            let m = digits(&[*m1, *m2]).ok_or_else(|| not_a_time(zone_at))?;
            if h > 14 || m > 59 || (h == 14 && m > 0) {
                return impossible(
                    zone_at,
                    format!(
                        "impossible UTC offset {}{h:02}:{m:02}; offsets run from -14:00 to +14:00",
                        *sign as char
                    ),
                );
            }
            let s = (i64::from(h) * 60 + i64::from(m)) * 60;
            if *sign == b'+' {
                s
            } else {
                -s
            }
        }
        _ => return Err(not_a_time(zone_at)),
    };
    let days = days_from_civil(i64::from(year), month, day);
    let seconds =
        days * 86_400 + i64::from(hour) * 3600 + i64::from(minute) * 60 + i64::from(second)
            - offset_s;
    Ok(seconds as f64 + fraction)
}

/// Formats whole seconds since 1970-01-01 as `YYYY-MM-DD HH:MM:SS`.
pub fn format_utc(epoch_s: i64) -> String {
    let days = epoch_s.div_euclid(86_400);
    let secs = epoch_s.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_2023_format() {
        let t = parse_timestamp(b"2023-11-16 18:17:03.9799600").unwrap();
        // 2023-11-16 is day 19,677 since the epoch.
        let expected = 19_677.0 * 86_400.0 + 18.0 * 3600.0 + 17.0 * 60.0 + 3.97996;
        assert!((t - expected).abs() < 1e-6, "{t} vs {expected}");
    }

    #[test]
    fn parses_the_2024_format_with_and_without_fraction() {
        let a = parse_timestamp(b"2024-05-10 00:00:00.009930+00:00").unwrap();
        let b = parse_timestamp(b"2024-05-10 00:00:00+00:00").unwrap();
        // f64 seconds near 1.7e9 resolve about 0.24 microseconds.
        assert!((a - b - 0.00993).abs() < 1e-6);
        assert_eq!(b, 1_715_299_200.0);
        assert_eq!(format_utc(b as i64), "2024-05-10 00:00:00");
    }

    #[test]
    fn offsets_shift_to_utc() {
        let utc = parse_timestamp(b"2024-05-10 02:00:00+00:00").unwrap();
        let cest = parse_timestamp(b"2024-05-10 04:00:00+02:00").unwrap();
        assert_eq!(utc, cest);
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            &b"2024-13-10 00:00:00"[..],
            b"yesterday",
            b"2024-05-10 00:00:00.",
            b"2024-05-10 00:00:00+0",
        ] {
            assert!(
                parse_timestamp(bad).is_none(),
                "{:?}",
                std::str::from_utf8(bad)
            );
        }
    }

    #[test]
    fn impossible_dates_and_offsets_are_refused_where_they_start() {
        for (bad, offset, says) in [
            (&b"2023-11-31 00:00:00"[..], 8, "November 2023 has 30 days"),
            (b"2023-02-29 00:00:00", 8, "February 2023 has 28 days"),
            (
                b"2024-05-10 00:00:00+99:99",
                19,
                "impossible UTC offset +99:99",
            ),
            (
                b"2024-05-10 00:00:00.5-14:30",
                21,
                "offsets run from -14:00",
            ),
            (b"2024-05-10 24:00:00", 11, "impossible time of day"),
            (b"2024-00-10 00:00:00", 5, "impossible month 00"),
        ] {
            let e = parse_timestamp_checked(bad).unwrap_err();
            assert_eq!(e.offset, offset, "{e:?}");
            assert!(e.message.contains(says), "{e:?}");
        }
        assert!(parse_timestamp(b"2024-02-29 00:00:00").is_some());
        assert!(parse_timestamp(b"2024-05-10 00:00:00-14:00").is_some());
    }

    #[test]
    fn civil_round_trip() {
        for days in [-1000, 0, 19_677, 60_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }
}
