//! Reads the optional `prefixes` table: per sampled request, its steps of
//! prefix reuse ([`super::SamplePrefixes`]), checked against the tier's
//! sample: a rank the sample holds, one block size a tier, steps rising in
//! distance and in blocks, and no more cached blocks than the request's
//! prompt has.

use super::cells::RawTable;
use super::checks::Problems;
use super::rows::{at, columns, each_row};
use super::{SamplePrefixes, TierAggregate, PREFIX_COLUMNS};
use std::collections::BTreeMap;

/// One row: (rank, block tokens, distance, blocks, location).
type StepRow = (u64, u32, u32, u32, String);

/// Reads `t` into the tiers' `prefixes`; every problem is recorded.
pub(super) fn read(
    t: &RawTable,
    version: i64,
    tiers: &mut BTreeMap<String, TierAggregate>,
    problems: &mut Problems,
) {
    if version < 3 {
        problems.at(
            t,
            &t.header_location,
            format!("a prefixes table comes with format version 3; this aggregate is version {version} (make it again with `planner trace aggregate` or sql/aggregate.sql and sql/prefixes.sql)"),
        );
        return;
    }
    let Some(index) = columns(t, &PREFIX_COLUMNS, problems) else {
        return;
    };
    let mut rows: BTreeMap<String, Vec<StepRow>> = BTreeMap::new();
    each_row(t, &index, version, problems, |r| {
        let tier = r.text("tier")?;
        let rank = r.count("sample_rank")?;
        let block_tokens = r.count("block_tokens")?;
        let block_tokens = u32::try_from(block_tokens)
            .ok()
            .filter(|&b| b > 0)
            .ok_or_else(|| format!("`block_tokens` {block_tokens} is not a block size; give the tokens each hash of the log covers (Mooncake: 512)"))?;
        let distance = r.count("reuse_distance")?;
        let distance = u32::try_from(distance)
            .ok()
            .filter(|&d| d < u32::MAX)
            .ok_or_else(|| format!("`reuse_distance` {distance} is more blocks than a log's cache is counted in (below {})", u32::MAX))?;
        let blocks = r.count("cached_blocks")?;
        let blocks = u32::try_from(blocks)
            .ok()
            .filter(|&b| b > 0)
            .ok_or_else(|| {
                format!("`cached_blocks` {blocks} is not a count of leading blocks: 1 or more")
            })?;
        rows.entry(tier).or_default().push((
            rank,
            block_tokens,
            distance,
            blocks,
            r.row.location.clone(),
        ));
        Ok(())
    });
    for (name, mut steps) in rows {
        let Some(tier) = tiers.get_mut(&name) else {
            problems.at(
                t,
                &steps[0].4,
                format!("tier `{name}` has prefix rows but no minutes; a prefixes table describes the tiers of the same aggregate"),
            );
            continue;
        };
        let Some(sample) = &tier.sample else {
            continue;
        };
        steps.sort_by_key(|s| (s.0, s.2));
        let block_tokens = steps[0].1;
        let mut per_row = vec![Vec::new(); sample.len()];
        let mut ok = true;
        let mut last: Option<&StepRow> = None;
        for s in &steps {
            let (rank, bt, distance, blocks, location) = s;
            let message = if *bt != block_tokens {
                Some(format!("tier `{name}` has block_tokens {bt} here and {block_tokens} at {}; a tier's hashes are of one block size", at(&steps[0].4)))
            } else if *rank == 0 || *rank > sample.len() as u64 {
                Some(format!("`sample_rank` {rank} is not in tier `{name}`'s sample of {} requests; prefix rows describe sampled requests", sample.len()))
            } else {
                let row = &sample[*rank as usize - 1];
                let prompt_blocks = row.input_tokens.div_ceil(block_tokens);
                match last.filter(|l| l.0 == *rank) {
                    Some(l) if l.2 == *distance => Some(format!("tier `{name}`'s sample_rank {rank} lists reuse_distance {distance} twice (also at {})", at(&l.4))),
                    Some(l) if l.3 >= *blocks => Some(format!("tier `{name}`'s sample_rank {rank}: cached_blocks {blocks} at reuse_distance {distance} is not more than the {} at the smaller distance {} ({}); a larger cache finds more leading blocks", l.3, l.2, at(&l.4))),
                    _ if *blocks > prompt_blocks => Some(format!("tier `{name}`'s sample_rank {rank} has {} prompt tokens, {prompt_blocks} {} of {block_tokens}, fewer than its cached_blocks {blocks} (do `requests` and `request_blocks` number their requests alike?)", row.input_tokens, crate::base::numbers::noun(u64::from(prompt_blocks), "block", "blocks"))),
                    _ => None,
                }
            };
            if let Some(message) = message {
                problems.at(t, location, message);
                ok = false;
            } else {
                per_row[*rank as usize - 1].push((*distance, *blocks));
            }
            last = Some(s);
        }
        if ok {
            tier.prefixes = Some(SamplePrefixes {
                block_tokens,
                steps: per_row,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::base::progress::Progress;
    use crate::traces::aggregate::{
        aggregate_traces, columns, read_aggregate, write_csv, write_parquet, Aggregate,
        PREFIXES_TABLE, TABLES,
    };
    use crate::traces::ReaderOptions;
    use std::fmt::Write as _;
    use std::path::{Path, PathBuf};

    /// A Mooncake trace of conversations whose turns grow by the previous
    /// one, aggregated: every later turn reuses its conversation's blocks.
    fn conversations(dir: &Path) -> Aggregate {
        let mut text = String::new();
        let mut next_hash = 0u64;
        let mut chains: Vec<Vec<u64>> = vec![Vec::new(); 7];
        for turn in 0..5u32 {
            for (c, chain) in chains.iter_mut().enumerate() {
                for _ in 0..=(c % 3) {
                    chain.push(next_hash);
                    next_hash += 1;
                }
                let input = chain.len() as u32 * 512 - 100;
                let ms = u64::from(turn) * 60_000 + c as u64 * 1_000;
                let _ = writeln!(
                    text,
                    "{{\"timestamp\": {ms}, \"input_length\": {input}, \"output_length\": 50, \"hash_ids\": {chain:?}}}"
                );
            }
        }
        let path = dir.join("conversations.jsonl");
        std::fs::write(&path, text).unwrap();
        let traces = [("chat".to_string(), path)];
        aggregate_traces(&traces, ReaderOptions::default(), Progress::new(true))
            .unwrap()
            .0
    }

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("planner-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn write(agg: &Aggregate, dir: &Path, parquet: bool) {
        for name in TABLES.iter().chain([&PREFIXES_TABLE]) {
            if parquet {
                let f = std::fs::File::create(dir.join(format!("{name}.parquet"))).unwrap();
                write_parquet(&columns(agg, name), f).unwrap();
            } else {
                let mut f = std::fs::File::create(dir.join(format!("{name}.csv"))).unwrap();
                write_csv(agg, name, &mut f).unwrap();
            }
        }
    }

    #[test]
    fn a_logs_prefix_reuse_is_written_and_read_back() {
        let dir = temp("agg-prefixes");
        let agg = conversations(&dir);
        let p = agg.tiers[0]
            .prefixes
            .as_ref()
            .expect("the trace names blocks");
        assert_eq!(p.block_tokens, 512);
        assert_eq!(p.steps.len(), 35);
        // 7 conversations' first turns find nothing; every later turn finds
        // its whole earlier turn, past the other conversations' blocks.
        assert_eq!(p.steps.iter().filter(|s| s.is_empty()).count(), 7);
        for parquet in [false, true] {
            let out = dir.join(format!("out-{parquet}"));
            std::fs::create_dir_all(&out).unwrap();
            write(&agg, &out, parquet);
            assert_eq!(read_aggregate(&out).unwrap(), agg, "parquet: {parquet}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_prefix_rows_are_located() {
        let dir = temp("agg-bad-prefixes");
        let agg = conversations(&dir);
        write(&agg, &dir, false);
        let good = std::fs::read_to_string(dir.join("prefixes.csv")).unwrap();
        let lines: Vec<String> = good.lines().map(String::from).collect();
        let problems = |edit: &dyn Fn(&mut Vec<Vec<String>>)| {
            let mut rows: Vec<Vec<String>> = lines
                .iter()
                .map(|l| l.split(',').map(String::from).collect())
                .collect();
            edit(&mut rows);
            let text: Vec<String> = rows.iter().map(|r| r.join(",")).collect();
            std::fs::write(dir.join("prefixes.csv"), text.join("\n")).unwrap();
            read_aggregate(&dir).unwrap_err()
        };
        // Columns: version, tier, sample_rank, block_tokens, reuse_distance,
        // cached_blocks.
        let p = problems(&|r| r[1][2] = "99".into());
        assert!(
            p[0].message.contains("not in tier `chat`'s sample of 35"),
            "{p:?}"
        );
        assert_eq!(p[0].location, "2");
        let p = problems(&|r| r[1][3] = "16".into());
        assert!(p[0].message.contains("of one block size"), "{p:?}");
        let p = problems(&|r| r[1][5] = "40".into());
        assert!(
            p[0].message.contains("fewer than its cached_blocks 40"),
            "{p:?}"
        );
        let p = problems(&|r| r[1][5] = "0".into());
        assert!(p[0].message.contains("1 or more"), "{p:?}");
        let p = problems(&|r| r[1][4] = "-3".into());
        assert!(p[0].message.contains("negative"), "{p:?}");
        // A request's second step repeated below its first's blocks.
        let p = problems(&|r| {
            let mut extra = r[1].clone();
            extra[4] = (extra[4].parse::<u64>().unwrap() + 1).to_string();
            r.insert(2, extra);
        });
        assert!(p[0].message.contains("is not more than"), "{p:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
