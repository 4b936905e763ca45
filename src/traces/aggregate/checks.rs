//! The consistency checks of an aggregate: a row's figures against each
//! other, and a tier's histograms, pairs and sample against its minutes and
//! each other; and the located problems they (and the reading) report.

use super::bins::{coarse_of_fine, fine_bin, fine_range, COARSE_BINS, FINE_BINS};
use super::cells::RawTable;
use super::{BinTotal, JointLengths, MinuteRow, PairCell, SampleRow, TierAggregate};
use crate::base::error::Problem;
use crate::traces::length_sample::LENGTH_SAMPLE_SIZE;
use std::collections::BTreeMap;

pub(super) struct Problems(pub(super) Vec<Problem>);

impl Problems {
    pub(super) fn at(&mut self, t: &RawTable, location: &str, message: String) {
        self.0
            .push(Problem::new(t.path.clone(), location.to_string(), message));
    }
}

/// Why `tokens` summed over `requests` lengths cannot all lie in fine bin
/// `bin` (`None` when they can).
pub(super) fn tokens_outside_bin(bin: u32, requests: u64, tokens: u64) -> Option<String> {
    let (lo, hi) = fine_range(bin)?;
    let lo_sum = u64::from(lo) * requests;
    let too_many = hi.is_some_and(|h| tokens > u64::from(h - 1) * requests);
    (tokens < lo_sum || too_many).then(|| {
        format!(
            "bin {bin} holds {requests} requests of {lo}{} tokens, so its tokens must lie in {lo_sum}..={}, not {tokens}",
            hi.map_or(" or more".to_string(), |h| format!("-{}", h - 1)),
            hi.map_or("∞".to_string(), |h| (u64::from(h - 1) * requests).to_string()),
        )
    })
}

/// One minute's figures agree with each other.
pub(super) fn check_minute(m: &MinuteRow) -> Result<(), String> {
    let (n, b, s) = (m.requests, m.busiest_second, m.second_sq_sum);
    if b > n || (n > 0 && b == 0) {
        return Err(format!("`busiest_second` {b} is impossible with {n} requests in the minute (it lies in 1..={n}, 0 for an empty minute)"));
    }
    // The per-second counts c add up to n with max b: b² ≤ Σc² ≤ b·n, and
    // Σc² ≥ n²/60 (an even spread over the 60 seconds).
    if s < b * b || s > b * n || s * 60 < n * n {
        return Err(format!(
            "`second_sq_sum` {s} is impossible with {n} requests and a busiest second of {b} (it lies between max({}, ⌈n²/60⌉ = {}) and {})",
            b * b,
            (n * n).div_ceil(60),
            b * n
        ));
    }
    if n == 0 && (m.input_tokens > 0 || m.output_tokens > 0) {
        return Err("an empty minute (0 requests) has tokens".into());
    }
    if let Some(seconds) = &m.seconds {
        check_seconds(m, seconds)?;
    }
    Ok(())
}

/// The tables of one aggregate, for locating a tier's inconsistencies.
pub(super) struct Tables<'a> {
    pub(super) minutes: &'a RawTable,
    pub(super) lengths: &'a RawTable,
    pub(super) pairs: &'a RawTable,
    pub(super) sample: Option<&'a RawTable>,
}

/// Version 3: a minute's per-second arrivals are its count, its busiest
/// second and its sum of squares, and lie between its first and last
/// arrivals' seconds.
fn check_seconds(m: &MinuteRow, seconds: &[u32; 60]) -> Result<(), String> {
    let total: u64 = seconds.iter().map(|&c| u64::from(c)).sum();
    let busiest = seconds.iter().copied().max().map_or(0, u64::from);
    let squares: u64 = seconds.iter().map(|&c| u64::from(c) * u64::from(c)).sum();
    if total != m.requests {
        return Err(format!(
            "`second_00` to `second_59` add up to {total} arrivals, but `requests` is {}; each second's column counts the arrivals in it",
            m.requests
        ));
    }
    if busiest != m.busiest_second || squares != m.second_sq_sum {
        return Err(format!(
            "the seconds' arrivals give a busiest second of {busiest} and a sum of squares of {squares}, but `busiest_second` is {} and `second_sq_sum` {}",
            m.busiest_second, m.second_sq_sum
        ));
    }
    if let Some((first, last)) = m.arrivals_us {
        let (a, b) = ((first / 1_000_000) as usize, (last / 1_000_000) as usize);
        let outside = seconds
            .iter()
            .enumerate()
            .find(|&(k, &c)| c > 0 && (k < a || k > b));
        let empty_end = seconds[a] == 0 || seconds[b] == 0;
        if let Some((k, _)) = outside {
            return Err(format!(
                "`second_{k:02}` holds arrivals, but the first and last arrivals ({first} and {last} µs) lie in seconds {a} and {b}"
            ));
        }
        if empty_end {
            return Err(format!(
                "the first and last arrivals ({first} and {last} µs) lie in seconds {a} and {b}, but `second_{:02}` is 0",
                if seconds[a] == 0 { a } else { b }
            ));
        }
    }
    Ok(())
}

/// The histograms, pairs and sample of a tier agree with its minutes and
/// with each other.
pub(super) fn check_sums(t: &TierAggregate, tables: &Tables, problems: &mut Problems) {
    let tier = &t.tier;
    if t.minutes.is_empty() {
        problems.at(
            tables.minutes,
            "",
            format!("tier `{tier}` has lengths, pairs or a sample but no minutes"),
        );
        return;
    }
    let requests = t.requests();
    let minute_tokens = |f: fn(&MinuteRow) -> u64| t.minutes.iter().map(f).sum::<u64>();
    for (axis, hist, tokens) in [
        ("input", &t.input, minute_tokens(|m| m.input_tokens)),
        ("output", &t.output, minute_tokens(|m| m.output_tokens)),
    ] {
        let n: u64 = hist.iter().map(|b| b.requests).sum();
        let sum: u64 = hist.iter().map(|b| b.tokens).sum();
        if n != requests {
            problems.at(tables.lengths, "", format!("tier `{tier}`: the {axis} histogram holds {n} requests, but the minutes count {requests}; the histograms must sum to the counts"));
        } else if sum != tokens {
            problems.at(tables.lengths, "", format!("tier `{tier}`: the {axis} histogram holds {sum} tokens, but the minutes' `{axis}_tokens` add up to {tokens}"));
        }
    }
    let pair_total: u64 = match &t.pairs {
        JointLengths::Coarse(cells) => cells.iter().sum(),
        JointLengths::Fine(cells) => cells.values().map(|c| c.requests).sum(),
    };
    if pair_total != requests {
        problems.at(tables.pairs, "", format!("tier `{tier}`: the pairs hold {pair_total} requests, but the minutes count {requests}; the pairs must sum to the counts"));
        return;
    }
    match &t.pairs {
        JointLengths::Coarse(cells) => check_coarse_pairs(t, cells, tables.pairs, problems),
        JointLengths::Fine(cells) => check_fine_pairs(t, cells, tables.pairs, problems),
    }
    if let (Some(sample), Some(sample_t)) = (&t.sample, tables.sample) {
        check_sample(t, sample, sample_t, problems);
    }
}

/// Versions 1 and 2: the pairs' counts per coarse bin are the fine
/// histogram's inside it.
fn check_coarse_pairs(t: &TierAggregate, cells: &[u64], pairs: &RawTable, problems: &mut Problems) {
    let tier = &t.tier;
    let c = COARSE_BINS as usize;
    for (axis, hist) in [("input", &t.input), ("output", &t.output)] {
        let mut from_hist = vec![0u64; c];
        for (b, total) in hist.iter().enumerate() {
            from_hist[coarse_of_fine(b as u32) as usize] += total.requests;
        }
        let from_pairs: Vec<u64> = (0..c)
            .map(|k| {
                (0..c)
                    .map(|j| {
                        if axis == "input" {
                            cells[k * c + j]
                        } else {
                            cells[j * c + k]
                        }
                    })
                    .sum()
            })
            .collect();
        if let Some(k) = (0..c).find(|&k| from_hist[k] != from_pairs[k]) {
            problems.at(pairs, "", format!(
                "tier `{tier}`: the pairs put {} requests in {axis} coarse bin {k}, but the {axis} histogram's bins inside it hold {}",
                from_pairs[k], from_hist[k]
            ));
        }
    }
}

/// Version 3: the pairs' requests and tokens per fine bin of each axis are
/// the histogram's.
fn check_fine_pairs(
    t: &TierAggregate,
    cells: &BTreeMap<(u32, u32), PairCell>,
    pairs: &RawTable,
    problems: &mut Problems,
) {
    let tier = &t.tier;
    for (axis, hist) in [("input", &t.input), ("output", &t.output)] {
        let mut from_pairs = vec![BinTotal::default(); FINE_BINS as usize];
        for (&(i, o), cell) in cells {
            let (bin, tokens) = if axis == "input" {
                (i, cell.input_tokens)
            } else {
                (o, cell.output_tokens)
            };
            let total = &mut from_pairs[bin as usize];
            total.requests += cell.requests;
            total.tokens += tokens;
        }
        if let Some(b) = (0..FINE_BINS as usize).find(|&b| from_pairs[b] != hist[b]) {
            problems.at(pairs, "", format!(
                "tier `{tier}`: the pairs put {} requests and {} tokens in {axis} bin {b}, but the {axis} histogram holds {} and {} there; the pairs must add up to the histograms",
                from_pairs[b].requests, from_pairs[b].tokens, hist[b].requests, hist[b].tokens
            ));
        }
    }
}

/// Version 3: a sample of the size the format fixes, whose requests lie in
/// cells of the pairs that hold them.
fn check_sample(
    t: &TierAggregate,
    sample: &[SampleRow],
    sample_t: &RawTable,
    problems: &mut Problems,
) {
    let tier = &t.tier;
    let expected = t.requests().min(LENGTH_SAMPLE_SIZE as u64);
    if sample.len() as u64 != expected {
        problems.at(sample_t, "", format!(
            "tier `{tier}`'s sample holds {} requests; a tier of {} requests has {expected} (its {LENGTH_SAMPLE_SIZE} of smallest key, or all when fewer)",
            sample.len(),
            t.requests()
        ));
        return;
    }
    let JointLengths::Fine(cells) = &t.pairs else {
        return;
    };
    let mut in_cell: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    for r in sample {
        *in_cell
            .entry((fine_bin(r.input_tokens), fine_bin(r.output_tokens)))
            .or_default() += 1;
    }
    for (&(i, o), &n) in &in_cell {
        let held = cells.get(&(i, o)).map_or(0, |c| c.requests);
        if n > held {
            problems.at(sample_t, "", format!(
                "tier `{tier}`'s sample has {n} requests in the pair ({i}, {o}), but the pairs hold {held} there; the sample is of the tier's own requests"
            ));
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_minutes_are_refused() {
        let ok = MinuteRow {
            minute_s: 0,
            requests: 10,
            input_tokens: 5,
            output_tokens: 5,
            busiest_second: 4,
            second_sq_sum: 30,
            arrivals_us: Some((0, 1)),
            seconds: None,
        };
        assert!(check_minute(&ok).is_ok());
        assert!(check_minute(&MinuteRow {
            busiest_second: 11,
            ..ok
        })
        .is_err());
        assert!(check_minute(&MinuteRow {
            second_sq_sum: 41,
            ..ok
        })
        .is_err());
        assert!(check_minute(&MinuteRow {
            second_sq_sum: 15,
            ..ok
        })
        .is_err());
        // Version 3: the seconds are the minute's count, busiest second and
        // squares, between its first and last arrivals.
        let mut seconds = [0u32; 60];
        seconds[..5].copy_from_slice(&[4, 2, 2, 1, 1]);
        let v3 = MinuteRow {
            second_sq_sum: 26,
            arrivals_us: Some((250_000, 4_500_000)),
            seconds: Some(seconds),
            ..ok
        };
        assert!(check_minute(&v3).is_ok());
        let mut more = seconds;
        more[1] = 3;
        let mut outside = seconds;
        (outside[4], outside[9]) = (0, 1);
        for (bad, why) in [
            (
                MinuteRow {
                    seconds: Some(more),
                    ..v3
                },
                "add up to 11",
            ),
            (
                MinuteRow {
                    second_sq_sum: 27,
                    ..v3
                },
                "sum of squares of 26",
            ),
            (
                MinuteRow {
                    seconds: Some(outside),
                    ..v3
                },
                "`second_09` holds arrivals",
            ),
            (
                MinuteRow {
                    arrivals_us: Some((250_000, 5_500_000)),
                    ..v3
                },
                "`second_05` is 0",
            ),
        ] {
            let e = check_minute(&bad).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }
}
