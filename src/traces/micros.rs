//! Arrival instants in whole microseconds: the resolution at which a trace's
//! span is measured, so that the span read from the requests and the span an
//! aggregate records (its first and last arrivals' microsecond offsets within
//! their minutes) are the same integer. A timestamp near 1.7·10⁹ s (2023, UTC)
//! is held as a double to about 0.24 µs, so nothing meaningful is lost.

/// Whole microseconds of `arrival_s`: `⌊arrival_s⌋·10⁶ + min(⌊(arrival_s −
/// ⌊arrival_s⌋)·10⁶ + 0.5⌋, 999,999)`, the fraction rounded to the nearest
/// microsecond and kept inside its second. The subtraction is exact in double
/// precision, and the product and the sum are correctly rounded IEEE
/// operations (the sum exactly), so `sql/aggregate.sql` computes the same
/// integer on any engine from the same double. Rounding, not truncating,
/// makes it the same integer from any double within 0.5 µs of the written
/// time: a timestamp with microsecond digits (`…:00.308776`) is parsed by
/// one engine to the double just below and by another to the one just above,
/// and both give 308,776 µs.
pub fn arrival_us(arrival_s: f64) -> i64 {
    let second = arrival_s.floor();
    let within_us = ((arrival_s - second) * 1_000_000.0 + 0.5).floor() as i64;
    second as i64 * 1_000_000 + within_us.min(999_999)
}

/// Seconds from `first_us` to `last_us`.
pub fn span_s(first_us: i64, last_us: i64) -> f64 {
    (last_us - first_us) as f64 / 1_000_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_round_the_fraction() {
        assert_eq!(arrival_us(0.0), 0);
        assert_eq!(arrival_us(61.25), 61_250_000);
        assert_eq!(arrival_us(1.999_999_9), 1_999_999);
        assert_eq!(arrival_us(1.000_000_4), 1_000_000);
        assert_eq!(arrival_us(-0.5), -500_000);
        // An Azure timestamp, 2023-11-16 18:15:46.6805900 UTC, held as the
        // double just below it: its fraction times 10⁶ is 680,589.99….
        let t = 1_700_158_546.0_f64 + 0.680_59;
        assert!((t - t.floor()) * 1e6 < 680_590.0);
        assert_eq!(arrival_us(t), 1_700_158_546_680_590);
        // The doubles on either side of a microsecond give that microsecond.
        let written = 1_715_299_200.308_776_f64;
        for t in [written.next_down(), written, written.next_up()] {
            assert_eq!(arrival_us(t), 1_715_299_200_308_776);
        }
        assert_eq!(span_s(1_000_000, 3_500_000), 2.5);
    }
}
