//! The fixed length bins of the aggregate format.
//!
//! Fine bins (the per-axis length histograms): one bin per token count below
//! 4, then four bins per power of two with edges 2^j, 1.25·2^j, 1.5·2^j and
//! 1.75·2^j (every edge an integer, each bin 14-25% wide), up to 2^21 tokens;
//! bin 80 holds everything from 2^21 (2,097,152) tokens up. Bin `b` of a count
//! `n ≥ 4` is `4·(j − 1) + ⌊(n − 2^j) / 2^(j−2)⌋` with `j = ⌊log2 n⌋`.
//!
//! Coarse bins (the joint input × output grid): one per power of two —
//! 0 tokens, 1, 2-3, 4-7, …, 2^20 to 2^21 − 1, and 2^21 up (bin 22). A fine bin
//! lies inside exactly one coarse bin ([`coarse_of_fine`]).

/// Number of fine bins (indices 0 to 80).
pub const FINE_BINS: u32 = 81;
/// Number of coarse bins (indices 0 to 22).
pub const COARSE_BINS: u32 = 23;
/// Token count from which everything shares the last bin (2^21).
pub const OPEN_FROM_TOKENS: u32 = 1 << 21;

/// The fine bin of a token count.
pub fn fine_bin(tokens: u32) -> u32 {
    if tokens < 4 {
        return tokens;
    }
    if tokens >= OPEN_FROM_TOKENS {
        return FINE_BINS - 1;
    }
    let j = tokens.ilog2();
    4 * (j - 1) + ((tokens - (1 << j)) >> (j - 2))
}

/// The token counts of fine bin `bin`: `[lo, hi)`, `hi = None` for the last,
/// open bin. `None` for an index outside the format.
pub fn fine_range(bin: u32) -> Option<(u32, Option<u32>)> {
    match bin {
        0..=3 => Some((bin, Some(bin + 1))),
        b if b < FINE_BINS - 1 => {
            let j = b / 4 + 1;
            let q = b % 4;
            let step = 1u32 << (j - 2);
            let lo = (1u32 << j) + q * step;
            Some((lo, Some(lo + step)))
        }
        b if b == FINE_BINS - 1 => Some((OPEN_FROM_TOKENS, None)),
        _ => None,
    }
}

/// The coarse bin of a token count.
pub fn coarse_bin(tokens: u32) -> u32 {
    coarse_of_fine(fine_bin(tokens))
}

/// The coarse bin holding fine bin `bin`.
pub fn coarse_of_fine(bin: u32) -> u32 {
    match bin {
        0..=2 => bin,
        3 => 2,
        b => b / 4 + 2,
    }
}

/// The token counts of coarse bin `bin`: `[lo, hi)`, `hi = None` for the last.
pub fn coarse_range(bin: u32) -> Option<(u32, Option<u32>)> {
    match bin {
        0 => Some((0, Some(1))),
        b if b < COARSE_BINS - 1 => Some((1 << (b - 1), Some(1 << b))),
        b if b == COARSE_BINS - 1 => Some((OPEN_FROM_TOKENS, None)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fine_bins_tile_the_counts_in_order() {
        let mut expected_lo = 0;
        for b in 0..FINE_BINS {
            let (lo, hi) = fine_range(b).unwrap();
            assert_eq!(lo, expected_lo, "bin {b}");
            assert_eq!(fine_bin(lo), b);
            match hi {
                Some(hi) => {
                    assert_eq!(fine_bin(hi - 1), b);
                    assert!(hi > lo);
                    expected_lo = hi;
                }
                None => assert_eq!(b, FINE_BINS - 1),
            }
        }
        assert_eq!(fine_range(FINE_BINS), None);
        assert_eq!(fine_bin(u32::MAX), FINE_BINS - 1);
    }

    #[test]
    fn fine_bins_are_log_spaced_above_four_tokens() {
        for b in 4..FINE_BINS - 1 {
            let (lo, hi) = fine_range(b).unwrap();
            let ratio = f64::from(hi.unwrap()) / f64::from(lo);
            assert!((1.14..=1.25).contains(&ratio), "bin {b}: {ratio}");
        }
        assert_eq!(fine_range(8), Some((8, Some(10))));
        assert_eq!(fine_bin(1000), 4 * 8 + 3);
    }

    #[test]
    fn every_fine_bin_lies_in_its_coarse_bin() {
        for b in 0..FINE_BINS {
            let (lo, hi) = fine_range(b).unwrap();
            let (clo, chi) = coarse_range(coarse_of_fine(b)).unwrap();
            assert!(lo >= clo);
            match (hi, chi) {
                (Some(h), Some(ch)) => assert!(h <= ch),
                (h, ch) => assert_eq!(h.is_none(), ch.is_none()),
            }
        }
        assert_eq!(coarse_bin(0), 0);
        assert_eq!(coarse_bin(3), 2);
        assert_eq!(coarse_bin(4096), 13);
        assert_eq!(coarse_bin(OPEN_FROM_TOKENS), COARSE_BINS - 1);
        assert_eq!(coarse_range(COARSE_BINS), None);
    }
}
