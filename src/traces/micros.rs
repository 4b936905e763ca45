//! Arrival instants in whole microseconds: the resolution at which a trace's
//! span is measured, so that the span read from the requests and the span an
//! aggregate records (its first and last arrivals' microsecond offsets within
//! their minutes) are the same integer. A timestamp near 1.7·10⁹ s (2023, UTC)
//! is held as a double to about 0.24 µs, so nothing meaningful is lost.

/// Whole microseconds of `arrival_s`: `⌊arrival_s⌋·10⁶ + ⌊(arrival_s −
/// ⌊arrival_s⌋)·10⁶⌋`. The subtraction is exact in double precision and the
/// product is one correctly rounded IEEE multiplication, so `sql/aggregate.sql`
/// computes the same integer on any engine. The product stays below 10⁶: the
/// largest fraction below 1 is 1 − 2⁻⁵³, whose product rounds to 10⁶ − 2⁻³³.
pub fn arrival_us(arrival_s: f64) -> i64 {
    let second = arrival_s.floor();
    let within_us = ((arrival_s - second) * 1_000_000.0).floor() as i64;
    second as i64 * 1_000_000 + within_us
}

/// Seconds from `first_us` to `last_us`.
pub fn span_s(first_us: i64, last_us: i64) -> f64 {
    (last_us - first_us) as f64 / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_floor_the_fraction() {
        assert_eq!(arrival_us(0.0), 0);
        assert_eq!(arrival_us(61.25), 61_250_000);
        assert_eq!(arrival_us(1.999_999_9), 1_999_999);
        assert_eq!(arrival_us(-0.5), -500_000);
        // An Azure timestamp: 2023-11-16 18:15:46.6805900 UTC.
        let t = 1_700_158_546.0 + 0.680_59;
        assert_eq!(arrival_us(t), 1_700_158_546_680_589);
        assert_eq!(span_s(1_000_000, 3_500_000), 2.5);
    }
}
