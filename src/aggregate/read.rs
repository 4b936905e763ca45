//! Reads an aggregate folder and checks it: the format version, every column,
//! non-negative counts, known bins, every minute from a tier's first to its
//! last, and histograms that add up to the minutes' counts and tokens. Every
//! problem is located (file and line, or Parquet row) and all are reported.

use super::bins::{coarse_of_fine, fine_range, COARSE_BINS, FINE_BINS};
use super::table::{self, RawRow, RawTable};
use super::{
    Aggregate, BinTotal, MinuteRow, TierAggregate, FORMAT_VERSION, MINUTE_COLUMNS, MINUTE_US,
    READ_VERSIONS, TABLES,
};
use crate::error::Problem;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Reports beyond this many are counted, not listed.
const MAX_LISTED: usize = 20;

/// Version 1's minutes table: version 2's without the arrival offsets.
const MINUTE_COLUMNS_V1: &[&str] = MINUTE_COLUMNS.split_at(8).0;
const LENGTH_COLUMNS: [&str; 6] = ["version", "tier", "axis", "bin", "requests", "tokens"];
const PAIR_COLUMNS: [&str; 5] = ["version", "tier", "input_bin", "output_bin", "requests"];

struct Problems(Vec<Problem>);

impl Problems {
    fn at(&mut self, t: &RawTable, location: &str, message: String) {
        self.0.push(Problem {
            file: t.path.clone(),
            location: location.to_string(),
            message,
        });
    }
}

/// A row's cells by column name.
struct Row<'a> {
    row: &'a RawRow,
    index: &'a HashMap<String, usize>,
}

impl Row<'_> {
    fn cell(&self, name: &str) -> Result<&table::Cell, String> {
        self.row.cells.get(self.index[name]).ok_or_else(|| {
            format!(
                "the row has {} cells, too few for `{name}`",
                self.row.cells.len()
            )
        })
    }

    fn text(&self, name: &str) -> Result<String, String> {
        self.cell(name)?
            .text()
            .map_err(|e| format!("`{name}`: {e}"))
    }

    fn int(&self, name: &str) -> Result<i64, String> {
        self.cell(name)?.int().map_err(|e| format!("`{name}`: {e}"))
    }

    fn count(&self, name: &str) -> Result<u64, String> {
        let v = self.int(name)?;
        u64::try_from(v).map_err(|_| format!("`{name}` is negative ({v}); counts are 0 or more"))
    }

    /// The row is of the aggregate's format `version`.
    fn version(&self, version: i64) -> Result<(), String> {
        match self.int("version")? {
            v if v == version => Ok(()),
            v if READ_VERSIONS.contains(&v) => Err(format!(
                "this row is format version {v}, but the minutes table's first row is version {version}; an aggregate's tables are all of one version (make them again with one planner or one sql/aggregate.sql)"
            )),
            v => Err(format!(
                "aggregate format version {v} is not known; this planner reads versions {} (docs/aggregate-format.md)",
                READ_VERSIONS.map(|v| v.to_string()).join(" and ")
            )),
        }
    }

    /// The minute's first and last arrival offsets (format version 2): in
    /// the minute, in order, and none for an empty minute.
    fn arrivals_us(&self, requests: u64) -> Result<Option<(u32, u32)>, String> {
        let offset = |name: &str| -> Result<u32, String> {
            let v = self.int(name)?;
            if v < 0 {
                return Err(format!("`{name}` is negative ({v}); it counts microseconds from the minute's start, 0 to {}", MINUTE_US - 1));
            }
            u32::try_from(v).ok().filter(|&v| v < MINUTE_US).ok_or_else(|| {
                format!("`{name}` {v} lies outside the minute; it counts microseconds from the minute's start, 0 to {}", MINUTE_US - 1)
            })
        };
        let (first, last) = (offset("first_arrival_us")?, offset("last_arrival_us")?);
        match requests {
            0 if first == 0 && last == 0 => Ok(None),
            0 => Err(format!("an empty minute (0 requests) has arrival offsets {first} and {last}; write 0 for both")),
            _ if first > last => Err(format!(
                "`first_arrival_us` {first} is after `last_arrival_us` {last}; the first arrival comes no later than the last"
            )),
            1 if first != last => Err(format!(
                "a minute of one request has one arrival, but `first_arrival_us` {first} and `last_arrival_us` {last} differ"
            )),
            _ => Ok(Some((first, last))),
        }
    }
}

/// The aggregate's format version, from the minutes table's first row, and
/// whether this planner reads it (when it does not, or the row has none, the
/// current version: the rows then report the version they hold).
fn folder_version(minutes: &RawTable) -> (i64, bool) {
    let column = minutes
        .columns
        .iter()
        .position(|c| c.eq_ignore_ascii_case("version"));
    match column.and_then(|i| minutes.rows.first()?.cells.get(i)?.int().ok()) {
        Some(v) if READ_VERSIONS.contains(&v) => (v, true),
        Some(_) => (FORMAT_VERSION, false),
        None => (FORMAT_VERSION, true),
    }
}

/// Checks the columns; returns the name → position index when all are there.
fn columns(
    t: &RawTable,
    expected: &[&str],
    problems: &mut Problems,
) -> Option<HashMap<String, usize>> {
    let index: HashMap<String, usize> = t
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| (c.to_ascii_lowercase(), i))
        .collect();
    let missing: Vec<&str> = expected
        .iter()
        .copied()
        .filter(|c| !index.contains_key(*c))
        .collect();
    let unknown: Vec<&str> = t
        .columns
        .iter()
        .map(String::as_str)
        .filter(|c| !expected.contains(&c.to_ascii_lowercase().as_str()))
        .collect();
    if !missing.is_empty() || !unknown.is_empty() {
        let mut what = Vec::new();
        if !missing.is_empty() {
            what.push(format!("missing column(s) {}", missing.join(", ")));
        }
        if !unknown.is_empty() {
            what.push(format!("unknown column(s) {}", unknown.join(", ")));
        }
        problems.at(
            t,
            &t.header_location,
            format!(
                "{}; expected the columns {}",
                what.join("; "),
                expected.join(",")
            ),
        );
        return None;
    }
    Some(index)
}

/// `line N` for a CSV line number, the location itself otherwise.
fn at(location: &str) -> String {
    if location.chars().all(|c| c.is_ascii_digit()) {
        format!("line {location}")
    } else {
        location.to_string()
    }
}

/// Runs `parse` on every row, recording its error at the row's location. A
/// row not of the aggregate's `version` is reported once per table, at the
/// first such row.
fn each_row<'a>(
    t: &'a RawTable,
    index: &'a HashMap<String, usize>,
    version: i64,
    problems: &mut Problems,
    mut parse: impl FnMut(Row<'a>) -> Result<(), String>,
) {
    let mut bad_version: Option<(String, String, usize)> = None;
    for row in &t.rows {
        let r = Row { row, index };
        match r.version(version) {
            Err(message) => match &mut bad_version {
                Some((_, _, n)) => *n += 1,
                None => bad_version = Some((row.location.clone(), message, 0)),
            },
            Ok(()) => {
                if let Err(message) = parse(Row { row, index }) {
                    problems.at(t, &row.location, message);
                }
            }
        }
    }
    if let Some((location, message, more)) = bad_version {
        let suffix = if more > 0 {
            format!(" ({more} more rows of this table are not version {version} either)")
        } else {
            String::new()
        };
        problems.at(t, &location, format!("{message}{suffix}"));
    }
}

/// Reads and checks the aggregate in `dir`.
pub fn read_aggregate(dir: &Path) -> Result<Aggregate, Vec<Problem>> {
    if !dir.is_dir() {
        return Err(vec![Problem {
            file: dir.to_path_buf(),
            location: String::new(),
            message: "not a folder: an aggregate is a folder holding minutes, lengths and pairs tables (make one with `planner trace aggregate` or sql/aggregate.sql)".into(),
        }]);
    }
    let mut problems = Problems(Vec::new());
    let mut tables = Vec::new();
    for name in TABLES {
        match table::find(dir, name).and_then(|p| table::read(&p)) {
            Ok(t) => tables.push(t),
            Err(p) => problems.0.push(p),
        }
    }
    if !problems.0.is_empty() {
        return Err(problems.0);
    }
    let [minutes_t, lengths_t, pairs_t] = <[RawTable; 3]>::try_from(tables).expect("three tables");
    let mut tiers: BTreeMap<String, TierAggregate> = BTreeMap::new();
    let mut minute_at: BTreeMap<String, Vec<(MinuteRow, String)>> = BTreeMap::new();

    let (version, known) = folder_version(&minutes_t);
    let minute_columns: &[&str] = if version == 1 {
        MINUTE_COLUMNS_V1
    } else {
        &MINUTE_COLUMNS
    };
    if !known {
        // Its columns are those of a version this planner does not know:
        // report the version, not the columns.
        let index = minutes_t
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.to_ascii_lowercase(), i))
            .collect();
        each_row(&minutes_t, &index, version, &mut problems, |_| Ok(()));
    } else if let Some(index) = columns(&minutes_t, minute_columns, &mut problems) {
        each_row(&minutes_t, &index, version, &mut problems, |r| {
            let tier = r.text("tier")?;
            let minute_s = r.int("minute_s")?;
            if minute_s.rem_euclid(60) != 0 {
                return Err(format!(
                    "`minute_s` {minute_s} is not the start of a minute (a multiple of 60)"
                ));
            }
            let requests = r.count("requests")?;
            let m = MinuteRow {
                minute_s,
                requests,
                input_tokens: r.count("input_tokens")?,
                output_tokens: r.count("output_tokens")?,
                busiest_second: r.count("busiest_second")?,
                second_sq_sum: r.count("second_sq_sum")?,
                arrivals_us: if version == 1 {
                    None
                } else {
                    r.arrivals_us(requests)?
                },
            };
            check_minute(&m)?;
            minute_at
                .entry(tier)
                .or_default()
                .push((m, r.row.location.clone()));
            Ok(())
        });
    }
    for (tier, rows) in &mut minute_at {
        rows.sort_by_key(|(m, _)| m.minute_s);
        for w in rows.windows(2) {
            let ((a, at), (b, bt)) = (&w[0], &w[1]);
            if b.minute_s == a.minute_s {
                problems.at(
                    &minutes_t,
                    bt,
                    format!(
                        "tier `{tier}` lists minute_s {} twice (also at {at})",
                        b.minute_s
                    ),
                );
            } else if b.minute_s != a.minute_s + 60 {
                let missing = (b.minute_s - a.minute_s) / 60 - 1;
                problems.at(&minutes_t, bt, format!(
                    "missing minutes: tier `{tier}` goes from minute_s {} ({}) to {}, leaving out {missing} minute{}; list every minute from a tier's first to its last, with zero counts for empty ones",
                    a.minute_s, self::at(at), b.minute_s, if missing == 1 { "" } else { "s" }
                ));
            }
        }
        let mut t = TierAggregate::empty(tier);
        t.minutes = rows.iter().map(|(m, _)| *m).collect();
        tiers.insert(tier.clone(), t);
    }

    if let Some(index) = columns(&lengths_t, &LENGTH_COLUMNS, &mut problems) {
        let mut seen: HashMap<(String, String, i64), String> = HashMap::new();
        each_row(&lengths_t, &index, version, &mut problems, |r| {
            let tier = r.text("tier")?;
            let axis = r.text("axis")?;
            if axis != "input" && axis != "output" {
                return Err(format!(
                    "unknown axis `{axis}`; expected `input` or `output`"
                ));
            }
            let bin = r.int("bin")?;
            let (lo, hi) = u32::try_from(bin).ok().and_then(fine_range).ok_or_else(|| {
                format!("unknown length bin {bin}; the fine bins are 0 to {} (docs/aggregate-format.md)", FINE_BINS - 1)
            })?;
            let total = BinTotal {
                requests: r.count("requests")?,
                tokens: r.count("tokens")?,
            };
            let lo_sum = u64::from(lo) * total.requests;
            let too_many = hi.is_some_and(|h| total.tokens > u64::from(h - 1) * total.requests);
            if total.tokens < lo_sum || too_many {
                return Err(format!(
                    "bin {bin} holds {} requests of {lo}{} tokens, so its tokens must lie in {lo_sum}..={}, not {}",
                    total.requests,
                    hi.map_or(" or more".to_string(), |h| format!("-{}", h - 1)),
                    hi.map_or("∞".to_string(), |h| (u64::from(h - 1) * total.requests).to_string()),
                    total.tokens
                ));
            }
            if let Some(first) =
                seen.insert((tier.clone(), axis.clone(), bin), r.row.location.clone())
            {
                return Err(format!(
                    "tier `{tier}` lists {axis} bin {bin} twice (also at {first})"
                ));
            }
            let t = tiers
                .entry(tier.clone())
                .or_insert_with(|| TierAggregate::empty(&tier));
            let hist = if axis == "input" {
                &mut t.input
            } else {
                &mut t.output
            };
            hist[bin as usize] = total;
            Ok(())
        });
    }

    if let Some(index) = columns(&pairs_t, &PAIR_COLUMNS, &mut problems) {
        let mut seen: HashMap<(String, i64, i64), String> = HashMap::new();
        each_row(&pairs_t, &index, version, &mut problems, |r| {
            let tier = r.text("tier")?;
            let coarse = |name: &str| -> Result<i64, String> {
                let b = r.int(name)?;
                if (0..i64::from(COARSE_BINS)).contains(&b) {
                    Ok(b)
                } else {
                    Err(format!("unknown {name} {b}; the coarse bins are 0 to {} (docs/aggregate-format.md)", COARSE_BINS - 1))
                }
            };
            let (i, o) = (coarse("input_bin")?, coarse("output_bin")?);
            let n = r.count("requests")?;
            if let Some(first) = seen.insert((tier.clone(), i, o), r.row.location.clone()) {
                return Err(format!(
                    "tier `{tier}` lists the pair ({i}, {o}) twice (also at {first})"
                ));
            }
            let t = tiers
                .entry(tier.clone())
                .or_insert_with(|| TierAggregate::empty(&tier));
            t.pairs[(i * i64::from(COARSE_BINS) + o) as usize] = n;
            Ok(())
        });
    }

    if problems.0.is_empty() {
        for t in tiers.values() {
            check_sums(t, &minutes_t, &lengths_t, &pairs_t, &mut problems);
        }
    }
    if problems.0.is_empty() {
        return Ok(Aggregate {
            tiers: tiers.into_values().collect(),
        });
    }
    let mut listed = problems.0;
    if listed.len() > MAX_LISTED {
        let more = listed.len() - MAX_LISTED;
        listed.truncate(MAX_LISTED);
        listed.push(Problem {
            file: dir.to_path_buf(),
            location: String::new(),
            message: format!("and {more} more problems"),
        });
    }
    Err(listed)
}

/// One minute's figures agree with each other.
fn check_minute(m: &MinuteRow) -> Result<(), String> {
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
    Ok(())
}

/// The histograms and pairs of a tier add up to its minutes.
fn check_sums(
    t: &TierAggregate,
    minutes: &RawTable,
    lengths: &RawTable,
    pairs: &RawTable,
    problems: &mut Problems,
) {
    let tier = &t.tier;
    if t.minutes.is_empty() {
        problems.at(
            minutes,
            "",
            format!("tier `{tier}` has lengths or pairs but no minutes"),
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
            problems.at(lengths, "", format!("tier `{tier}`: the {axis} histogram holds {n} requests, but the minutes count {requests}; the histograms must sum to the counts"));
        } else if sum != tokens {
            problems.at(lengths, "", format!("tier `{tier}`: the {axis} histogram holds {sum} tokens, but the minutes' `{axis}_tokens` add up to {tokens}"));
        }
    }
    let pair_total: u64 = t.pairs.iter().sum();
    if pair_total != requests {
        problems.at(pairs, "", format!("tier `{tier}`: the pairs hold {pair_total} requests, but the minutes count {requests}; the pairs must sum to the counts"));
        return;
    }
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
                            t.pairs[k * c + j]
                        } else {
                            t.pairs[j * c + k]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::{columns, write_csv, write_parquet, AggregateBuilder};
    use crate::traces::Request;

    fn sample() -> Aggregate {
        let mut b = AggregateBuilder::new();
        for i in 0..2000u32 {
            let r = Request {
                arrival_s: 1.7e9 + f64::from(i) * 0.37,
                input_tokens: (i * 7919) % 20_000,
                output_tokens: (i * 104_729) % 900,
            };
            b.push(if i % 3 == 0 { "batch" } else { "chat" }, &r);
        }
        b.finish()
    }

    #[test]
    fn csv_and_parquet_read_back_what_was_written() {
        let agg = sample();
        for parquet in [false, true] {
            let dir =
                std::env::temp_dir().join(format!("planner-agg-{}-{parquet}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            for name in TABLES {
                if parquet {
                    let f = std::fs::File::create(dir.join(format!("{name}.parquet"))).unwrap();
                    write_parquet(&columns(&agg, name), f).unwrap();
                } else {
                    let mut f = std::fs::File::create(dir.join(format!("{name}.csv"))).unwrap();
                    write_csv(&agg, name, &mut f).unwrap();
                }
            }
            let back = read_aggregate(&dir);
            std::fs::remove_dir_all(&dir).unwrap();
            assert_eq!(back.unwrap(), agg, "parquet: {parquet}");
        }
    }

    #[test]
    fn version_1_reads_without_the_arrival_offsets() {
        let agg = sample();
        let dir = std::env::temp_dir().join(format!("planner-agg-v1-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in TABLES {
            let mut out = Vec::new();
            write_csv(&agg, name, &mut out).unwrap();
            // Version 1: the same rows without the two offset columns.
            let v1: String = String::from_utf8(out)
                .unwrap()
                .lines()
                .map(|l| {
                    let cells: Vec<&str> = l.split(',').collect();
                    let keep = if name == "minutes" { 8 } else { cells.len() };
                    let line = cells[..keep].join(",");
                    format!(
                        "{}\n",
                        line.strip_prefix("2,")
                            .map_or(line.clone(), |r| format!("1,{r}"))
                    )
                })
                .collect();
            std::fs::write(dir.join(format!("{name}.csv")), v1).unwrap();
        }
        let back = read_aggregate(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        let back = back.unwrap();
        for (a, b) in agg.tiers.iter().zip(&back.tiers) {
            assert!(b.minutes.iter().all(|m| m.arrivals_us.is_none()));
            assert_eq!(a.requests(), b.requests());
            assert_eq!(b.span_s(), (b.minutes.len() - 1) as f64 * 60.0);
            assert!(a.span_s() < b.span_s() + 60.0);
        }
    }

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
    }
}
