//! Reads an aggregate folder and checks it: the format version, every column,
//! non-negative counts, known bins, every minute from a tier's first to its
//! last, histograms and pairs that add up to the minutes' counts and tokens,
//! and a length sample of the size and order the format fixes. Every problem
//! is located (file and line, or Parquet row) and all are reported.

use super::bins::{fine_range, COARSE_BINS, FINE_BINS};
use super::cells::RawTable;
use super::checks::{check_minute, check_sums, tokens_outside_bin, Problems, Tables};
use super::rows::{at, columns, each_row};
use super::table;
use super::{
    tables_of, Aggregate, BinTotal, JointLengths, MinuteRow, PairCell, SampleRow, TierAggregate,
    FORMAT_VERSION, MINUTE_COLUMNS, PAIR_COLUMNS, READ_VERSIONS, SAMPLE_COLUMNS,
};
use crate::base::error::Problem;
use crate::traces::length_sample::{LENGTH_SAMPLE_SIZE, SAMPLE_KEY_MODULUS};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Version 1's minutes table: version 2's without the arrival offsets.
const MINUTE_COLUMNS_V1: &[&str] = MINUTE_COLUMNS.split_at(8).0;
/// Version 2's minutes table: version 3's without the window sums.
const MINUTE_COLUMNS_V2: &[&str] = MINUTE_COLUMNS.split_at(10).0;
const LENGTH_COLUMNS: [&str; 6] = ["version", "tier", "axis", "bin", "requests", "tokens"];
/// Versions 1 and 2's pairs table: coarse cells, counts only.
const PAIR_COLUMNS_V2: &[&str] = PAIR_COLUMNS.split_at(5).0;

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

/// Reads and checks the aggregate in `dir`.
pub fn read_aggregate(dir: &Path) -> Result<Aggregate, Vec<Problem>> {
    if !dir.is_dir() {
        return Err(vec![Problem::new(dir.to_path_buf(), String::new(), "not a folder: an aggregate is a folder holding minutes, lengths, pairs and sample tables (make one with `planner trace aggregate` or sql/aggregate.sql)")]);
    }
    let mut problems = Problems(Vec::new());
    let minutes_t = table::find(dir, "minutes")
        .and_then(|p| table::read(&p))
        .map_err(|p| vec![p])?;
    let (version, known) = folder_version(&minutes_t);
    if !known {
        // Its columns are those of a version this planner does not know:
        // report the version, not the columns or the tables.
        let index = minutes_t
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.to_ascii_lowercase(), i))
            .collect();
        each_row(&minutes_t, &index, version, &mut problems, |_| Ok(()));
        return Err(problems.0);
    }
    let mut tables = Vec::new();
    for name in &tables_of(version)[1..] {
        match table::find(dir, name).and_then(|p| table::read(&p)) {
            Ok(t) => tables.push(t),
            Err(p) => problems.0.push(p),
        }
    }
    if !problems.0.is_empty() {
        return Err(problems.0);
    }
    let mut tables = tables.into_iter();
    let (lengths_t, pairs_t) = (
        tables.next().expect("lengths"),
        tables.next().expect("pairs"),
    );
    let sample_t = tables.next();

    let mut tiers = read_minutes(&minutes_t, version, &mut problems);
    read_lengths(&lengths_t, version, &mut tiers, &mut problems);
    read_pairs(&pairs_t, version, &mut tiers, &mut problems);
    if let Some(sample_t) = &sample_t {
        read_sample(sample_t, version, &mut tiers, &mut problems);
    }
    let prefixes_t = match table::find_optional(dir, super::PREFIXES_TABLE) {
        Ok(found) => found.map(|p| table::read(&p)).transpose(),
        Err(p) => Err(p),
    };
    match prefixes_t {
        Ok(Some(t)) => super::prefixes::read(&t, version, &mut tiers, &mut problems),
        Ok(None) => {}
        Err(p) => problems.0.push(p),
    }

    if problems.0.is_empty() {
        let tables = Tables {
            minutes: &minutes_t,
            lengths: &lengths_t,
            pairs: &pairs_t,
            sample: sample_t.as_ref(),
        };
        for t in tiers.values() {
            check_sums(t, &tables, &mut problems);
        }
    }
    if problems.0.is_empty() {
        return Ok(Aggregate {
            tiers: tiers.into_values().collect(),
        });
    }
    Err(crate::base::located::listed(problems.0, dir))
}

/// The tier called `name` in `tiers`, made empty (as `version` holds it)
/// when first named.
fn tier_entry<'a>(
    tiers: &'a mut BTreeMap<String, TierAggregate>,
    name: &str,
    version: i64,
) -> &'a mut TierAggregate {
    tiers
        .entry(name.to_string())
        .or_insert_with(|| TierAggregate::empty_of_version(name, version))
}

/// The minutes table: each tier's minutes, contiguous and in order.
fn read_minutes(
    minutes_t: &RawTable,
    version: i64,
    problems: &mut Problems,
) -> BTreeMap<String, TierAggregate> {
    let mut tiers: BTreeMap<String, TierAggregate> = BTreeMap::new();
    let mut minute_at: BTreeMap<String, Vec<(MinuteRow, String)>> = BTreeMap::new();
    let minute_columns: &[&str] = match version {
        1 => MINUTE_COLUMNS_V1,
        2 => MINUTE_COLUMNS_V2,
        _ => &MINUTE_COLUMNS,
    };
    if let Some(index) = columns(minutes_t, minute_columns, problems) {
        each_row(minutes_t, &index, version, problems, |r| {
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
                seconds: if version >= 3 {
                    Some(r.seconds()?)
                } else {
                    None
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
                    minutes_t,
                    bt,
                    format!(
                        "tier `{tier}` lists minute_s {} twice (also at {at})",
                        b.minute_s
                    ),
                );
            } else if b.minute_s != a.minute_s + 60 {
                let missing = (b.minute_s - a.minute_s) / 60 - 1;
                problems.at(minutes_t, bt, format!(
                    "missing minutes: tier `{tier}` goes from minute_s {} ({}) to {}, leaving out {missing} minute{}; list every minute from a tier's first to its last, with zero counts for empty ones",
                    a.minute_s, self::at(at), b.minute_s, if missing == 1 { "" } else { "s" }
                ));
            }
        }
        let mut t = TierAggregate::empty_of_version(tier, version);
        t.minutes = rows.iter().map(|(m, _)| *m).collect();
        tiers.insert(tier.clone(), t);
    }
    tiers
}

/// The lengths table: each tier's input and output histograms.
fn read_lengths(
    lengths_t: &RawTable,
    version: i64,
    tiers: &mut BTreeMap<String, TierAggregate>,
    problems: &mut Problems,
) {
    if let Some(index) = columns(lengths_t, &LENGTH_COLUMNS, problems) {
        let mut seen: HashMap<(String, String, i64), String> = HashMap::new();
        each_row(lengths_t, &index, version, problems, |r| {
            let tier = r.text("tier")?;
            let axis = r.text("axis")?;
            if axis != "input" && axis != "output" {
                return Err(format!(
                    "unknown axis `{axis}`; expected `input` or `output`"
                ));
            }
            let bin = r.int("bin")?;
            let fine = u32::try_from(bin).ok().filter(|&b| fine_range(b).is_some()).ok_or_else(|| {
                format!("unknown length bin {bin}; the fine bins are 0 to {} (docs/aggregate-format.md)", FINE_BINS - 1)
            })?;
            let total = BinTotal {
                requests: r.count("requests")?,
                tokens: r.count("tokens")?,
            };
            if let Some(why) = tokens_outside_bin(fine, total.requests, total.tokens) {
                return Err(why);
            }
            if let Some(first) =
                seen.insert((tier.clone(), axis.clone(), bin), r.row.location.clone())
            {
                return Err(format!(
                    "tier `{tier}` lists {axis} bin {bin} twice (also at {first})"
                ));
            }
            let t = tier_entry(tiers, &tier, version);
            let hist = if axis == "input" {
                &mut t.input
            } else {
                &mut t.output
            };
            hist[bin as usize] = total;
            Ok(())
        });
    }
}

/// The pairs table: coarse counts (versions 1 and 2) or fine cells with
/// their tokens (version 3).
fn read_pairs(
    pairs_t: &RawTable,
    version: i64,
    tiers: &mut BTreeMap<String, TierAggregate>,
    problems: &mut Problems,
) {
    let fine = version >= 3;
    let expected: &[&str] = if fine { &PAIR_COLUMNS } else { PAIR_COLUMNS_V2 };
    let Some(index) = columns(pairs_t, expected, problems) else {
        return;
    };
    let bins = if fine { FINE_BINS } else { COARSE_BINS };
    let kind = if fine { "fine" } else { "coarse" };
    let mut seen: HashMap<(String, u32, u32), String> = HashMap::new();
    each_row(pairs_t, &index, version, problems, |r| {
        let tier = r.text("tier")?;
        let bin = |name: &str| -> Result<u32, String> {
            let b = r.int(name)?;
            u32::try_from(b).ok().filter(|&b| b < bins).ok_or_else(|| {
                format!(
                    "unknown {name} {b}; the {kind} bins are 0 to {} (docs/aggregate-format.md)",
                    bins - 1
                )
            })
        };
        let (i, o) = (bin("input_bin")?, bin("output_bin")?);
        let requests = r.count("requests")?;
        if let Some(first) = seen.insert((tier.clone(), i, o), r.row.location.clone()) {
            return Err(format!(
                "tier `{tier}` lists the pair ({i}, {o}) twice (also at {first})"
            ));
        }
        let t = tier_entry(tiers, &tier, version);
        match &mut t.pairs {
            JointLengths::Coarse(cells) => cells[(i * COARSE_BINS + o) as usize] = requests,
            JointLengths::Fine(cells) => {
                let cell = PairCell {
                    requests,
                    input_tokens: r.count("input_tokens")?,
                    output_tokens: r.count("output_tokens")?,
                };
                for (axis, b, tokens) in [
                    ("input", i, cell.input_tokens),
                    ("output", o, cell.output_tokens),
                ] {
                    if let Some(why) = tokens_outside_bin(b, requests, tokens) {
                        return Err(format!("`{axis}_tokens`: {axis} {why}"));
                    }
                }
                cells.insert((i, o), cell);
            }
        }
        Ok(())
    });
}

/// The sample table (version 3): each tier's sampled requests, by rank.
fn read_sample(
    sample_t: &RawTable,
    version: i64,
    tiers: &mut BTreeMap<String, TierAggregate>,
    problems: &mut Problems,
) {
    let Some(index) = columns(sample_t, &SAMPLE_COLUMNS, problems) else {
        return;
    };
    let mut ranked: BTreeMap<String, Vec<(u64, SampleRow, String)>> = BTreeMap::new();
    each_row(sample_t, &index, version, problems, |r| {
        let tier = r.text("tier")?;
        let rank = r.count("sample_rank")?;
        if rank == 0 || rank > LENGTH_SAMPLE_SIZE as u64 {
            return Err(format!(
                "`sample_rank` {rank} is outside 1..={LENGTH_SAMPLE_SIZE}; a tier's sample holds its {LENGTH_SAMPLE_SIZE} requests of smallest key, ranked from 1"
            ));
        }
        let key = r.count("sample_key")?;
        let key = u32::try_from(key)
            .ok()
            .filter(|&k| i64::from(k) < SAMPLE_KEY_MODULUS)
            .ok_or_else(|| {
                format!("`sample_key` {key} is not a key: keys lie in 0..{SAMPLE_KEY_MODULUS} (docs/aggregate-format.md)")
            })?;
        let row = SampleRow {
            key,
            input_tokens: r.tokens("input_tokens")?,
            output_tokens: r.tokens("output_tokens")?,
        };
        ranked
            .entry(tier)
            .or_default()
            .push((rank, row, r.row.location.clone()));
        Ok(())
    });
    for (tier, mut rows) in ranked {
        rows.sort_by_key(|(rank, _, _)| *rank);
        let mut ok = true;
        for w in rows.windows(2) {
            let ((ra, a, at), (rb, b, bt)) = (&w[0], &w[1]);
            let message = if rb == ra {
                format!(
                    "tier `{tier}` lists sample_rank {rb} twice (also at {})",
                    self::at(at)
                )
            } else if *rb != ra + 1 {
                format!("tier `{tier}`'s sample goes from sample_rank {ra} ({}) to {rb}; ranks run 1, 2, 3, … without gaps", self::at(at))
            } else if b.key < a.key {
                format!("tier `{tier}`'s sample_rank {rb} has key {} below rank {ra}'s {}; ranks follow the keys (smallest first)", b.key, a.key)
            } else {
                continue;
            };
            // The first break in a tier's ranks; what follows it would
            // repeat the report.
            problems.at(sample_t, bt, message);
            ok = false;
            break;
        }
        if let Some((first, _, at)) = rows.first().filter(|(r, _, _)| *r != 1) {
            problems.at(
                sample_t,
                at,
                format!("tier `{tier}`'s sample starts at sample_rank {first}; ranks start at 1"),
            );
            ok = false;
        }
        if ok {
            let t = tier_entry(tiers, &tier, version);
            t.sample = Some(rows.into_iter().map(|(_, row, _)| row).collect());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traces::aggregate::{columns, write_csv, write_parquet, AggregateBuilder, TABLES};
    use crate::traces::Request;
    use std::fmt::Write as _;

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

    /// Writes `agg` into `dir` as format `version` 1 or 2 writes it: no
    /// seconds and no sample, pairs counted on the coarse grid, and (version
    /// 1) no arrival offsets.
    fn write_legacy(agg: &Aggregate, version: i64, dir: &Path) {
        use crate::traces::aggregate::bins::coarse_bin;
        let relabel = |text: String, keep: Option<usize>| -> String {
            text.lines().fold(String::new(), |mut out, l| {
                let cells: Vec<&str> = l.split(',').collect();
                let line = cells[..keep.unwrap_or(cells.len())].join(",");
                let line = line
                    .strip_prefix("3,")
                    .map_or(line.clone(), |r| format!("{version},{r}"));
                let _ = writeln!(out, "{line}");
                out
            })
        };
        for name in ["minutes", "lengths"] {
            let mut out = Vec::new();
            write_csv(agg, name, &mut out).unwrap();
            // Version 1's minutes lack the offsets and the seconds, 2's the seconds.
            let keep = (name == "minutes").then_some(if version == 1 { 8 } else { 10 });
            let text = relabel(String::from_utf8(out).unwrap(), keep);
            std::fs::write(dir.join(format!("{name}.csv")), text).unwrap();
        }
        let mut pairs = String::from("version,tier,input_bin,output_bin,requests\n");
        for t in &agg.tiers {
            let JointLengths::Fine(cells) = &t.pairs else {
                panic!("a built aggregate")
            };
            let mut coarse: BTreeMap<(u32, u32), u64> = BTreeMap::new();
            for (&(i, o), c) in cells {
                let lo = |b: u32| fine_range(b).unwrap().0;
                *coarse
                    .entry((coarse_bin(lo(i)), coarse_bin(lo(o))))
                    .or_default() += c.requests;
            }
            for ((i, o), n) in coarse {
                let _ = writeln!(pairs, "{version},{},{i},{o},{n}", t.tier);
            }
        }
        std::fs::write(dir.join("pairs.csv"), pairs).unwrap();
    }

    #[test]
    fn versions_1_and_2_read_with_coarse_pairs_and_no_sample() {
        let agg = sample();
        for version in [1, 2] {
            let dir =
                std::env::temp_dir().join(format!("planner-agg-v{version}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            write_legacy(&agg, version, &dir);
            let back = read_aggregate(&dir);
            std::fs::remove_dir_all(&dir).unwrap();
            let back = back.unwrap();
            for (a, b) in agg.tiers.iter().zip(&back.tiers) {
                assert_eq!(a.requests(), b.requests());
                assert_eq!((&a.input, &a.output), (&b.input, &b.output));
                assert!(matches!(b.pairs, JointLengths::Coarse(_)));
                assert!(!b.has_length_sample());
                assert_eq!(b.capacity_lengths().len(), LENGTH_SAMPLE_SIZE);
                if version == 1 {
                    // No offsets: the span is known to whole minutes.
                    assert!(b.minutes.iter().all(|m| m.arrivals_us.is_none()));
                    assert_eq!(b.span_s(), (b.minutes.len() - 1) as f64 * 60.0);
                    assert!(a.span_s() < b.span_s() + 60.0);
                } else {
                    // All but the seconds, which version 2 lacks.
                    assert!(b.minutes.iter().all(|m| m.seconds.is_none()));
                    let without = |m: &MinuteRow| MinuteRow {
                        seconds: None,
                        ..*m
                    };
                    let a_minutes: Vec<MinuteRow> = a.minutes.iter().map(without).collect();
                    assert_eq!(a_minutes, b.minutes);
                    assert_eq!(a.span_s(), b.span_s());
                }
            }
        }
    }

    #[test]
    fn a_sample_out_of_order_or_of_the_wrong_size_is_refused() {
        let agg = sample();
        let dir =
            std::env::temp_dir().join(format!("planner-agg-bad-sample-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for name in TABLES {
            let mut f = std::fs::File::create(dir.join(format!("{name}.csv"))).unwrap();
            write_csv(&agg, name, &mut f).unwrap();
        }
        let good = std::fs::read_to_string(dir.join("sample.csv")).unwrap();
        let lines: Vec<&str> = good.lines().collect();
        let problems = |text: String| {
            std::fs::write(dir.join("sample.csv"), text).unwrap();
            read_aggregate(&dir).unwrap_err()
        };
        // A row dropped: a gap in the ranks.
        let mut gap = lines.clone();
        gap.remove(5);
        let p = problems(gap.join("\n"));
        assert!(p[0].message.contains("from sample_rank 4"), "{p:?}");
        assert_eq!(p[0].location, "6");
        // The last row dropped: too few requests.
        let short = lines[..lines.len() - 1].join("\n");
        let p = problems(short);
        assert!(
            p[0].message
                .contains("holds 1332 requests; a tier of 1333 requests has 1333"),
            "{p:?}"
        );
        // Two rows' keys swapped: out of key order.
        let cells = |l: &str| l.split(',').map(String::from).collect::<Vec<_>>();
        let (mut a, mut b) = (cells(lines[1]), cells(lines[2]));
        std::mem::swap(&mut a[3], &mut b[3]);
        let mut swapped: Vec<String> = lines.iter().map(std::string::ToString::to_string).collect();
        (swapped[1], swapped[2]) = (a.join(","), b.join(","));
        let p = problems(swapped.join("\n"));
        assert!(p[0].message.contains("ranks follow the keys"), "{p:?}");
        // A key outside 0..P.
        let mut big = cells(lines[1]);
        big[3] = "2147483647".into();
        let mut bad: Vec<String> = lines.iter().map(std::string::ToString::to_string).collect();
        bad[1] = big.join(",");
        let p = problems(bad.join("\n"));
        assert!(p[0].message.contains("is not a key"), "{p:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
