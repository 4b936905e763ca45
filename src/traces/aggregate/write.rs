//! Writes an aggregate's four tables in the current format version, as CSV
//! or Parquet, rows in the order `sql/aggregate.sql` sorts them (tier, then
//! time, bin or rank). The pairs and the sample are those of a built
//! aggregate ([`super::AggregateBuilder`]); a tier read from a version-1 or 2
//! aggregate has neither in this version's form, and writes no such rows.

use super::{Aggregate, JointLengths, FORMAT_VERSION};
use std::io::{self, Write};

/// One column of a table.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    Int(Vec<i64>),
    Text(Vec<String>),
}

impl Column {
    fn len(&self) -> usize {
        match self {
            Column::Int(v) => v.len(),
            Column::Text(v) => v.len(),
        }
    }
}

/// A table as named columns of equal length.
pub type Columns = Vec<(&'static str, Column)>;

fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The table `name` (one of [`super::TABLES`], or
/// [`super::PREFIXES_TABLE`]) of `agg`, by columns.
pub fn columns(agg: &Aggregate, name: &str) -> Columns {
    let mut tier = Vec::new();
    let mut ints: Vec<Vec<i64>> = Vec::new();
    let mut axis = Vec::new();
    let names: &[&'static str] = match name {
        "minutes" => {
            ints.resize(68, Vec::new());
            for t in &agg.tiers {
                for m in &t.minutes {
                    tier.push(t.tier.clone());
                    // An empty minute has no arrivals: both offsets 0.
                    let (first_us, last_us) = m.arrivals_us.unwrap_or((0, 0));
                    let seconds = m.seconds.unwrap_or([0; 60]);
                    let row = [
                        m.minute_s,
                        int(m.requests),
                        int(m.input_tokens),
                        int(m.output_tokens),
                        int(m.busiest_second),
                        int(m.second_sq_sum),
                        i64::from(first_us),
                        i64::from(last_us),
                    ];
                    let per_second = seconds.iter().map(|&c| i64::from(c));
                    for (c, v) in ints.iter_mut().zip(row.into_iter().chain(per_second)) {
                        c.push(v);
                    }
                }
            }
            // After `version` and `tier`, which every table leads with.
            &super::MINUTE_COLUMNS[2..]
        }
        "lengths" => {
            ints.resize(3, Vec::new());
            for t in &agg.tiers {
                for (a, hist) in [("input", &t.input), ("output", &t.output)] {
                    for (bin, b) in hist.iter().enumerate().filter(|(_, b)| b.requests > 0) {
                        tier.push(t.tier.clone());
                        axis.push(a.to_string());
                        for (c, v) in
                            ints.iter_mut()
                                .zip([bin as i64, int(b.requests), int(b.tokens)])
                        {
                            c.push(v);
                        }
                    }
                }
            }
            &["bin", "requests", "tokens"]
        }
        "pairs" => {
            ints.resize(5, Vec::new());
            for t in &agg.tiers {
                let JointLengths::Fine(cells) = &t.pairs else {
                    continue;
                };
                for (&(i, o), cell) in cells.iter().filter(|(_, c)| c.requests > 0) {
                    tier.push(t.tier.clone());
                    let row = [
                        i64::from(i),
                        i64::from(o),
                        int(cell.requests),
                        int(cell.input_tokens),
                        int(cell.output_tokens),
                    ];
                    for (c, v) in ints.iter_mut().zip(row) {
                        c.push(v);
                    }
                }
            }
            &super::PAIR_COLUMNS[2..]
        }
        super::PREFIXES_TABLE => {
            ints.resize(4, Vec::new());
            for t in &agg.tiers {
                let Some(p) = &t.prefixes else {
                    continue;
                };
                for (rank, steps) in p.steps.iter().enumerate() {
                    for &(distance, blocks) in steps {
                        tier.push(t.tier.clone());
                        let row = [
                            rank as i64 + 1,
                            i64::from(p.block_tokens),
                            i64::from(distance),
                            i64::from(blocks),
                        ];
                        for (c, v) in ints.iter_mut().zip(row) {
                            c.push(v);
                        }
                    }
                }
            }
            &super::PREFIX_COLUMNS[2..]
        }
        _ => {
            ints.resize(4, Vec::new());
            for t in &agg.tiers {
                for (rank, r) in t.sample.iter().flatten().enumerate() {
                    tier.push(t.tier.clone());
                    let row = [
                        rank as i64 + 1,
                        i64::from(r.key),
                        i64::from(r.input_tokens),
                        i64::from(r.output_tokens),
                    ];
                    for (c, v) in ints.iter_mut().zip(row) {
                        c.push(v);
                    }
                }
            }
            &super::SAMPLE_COLUMNS[2..]
        }
    };
    let mut out: Columns = vec![
        ("version", Column::Int(vec![FORMAT_VERSION; tier.len()])),
        ("tier", Column::Text(tier)),
    ];
    if name == "lengths" {
        out.push(("axis", Column::Text(axis)));
    }
    out.extend(names.iter().copied().zip(ints.into_iter().map(Column::Int)));
    out
}

/// A CSV field, quoted when it holds a comma, a quote or a line break.
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Writes the table `name` of `agg` as CSV with a header line.
pub fn write_csv(agg: &Aggregate, name: &str, out: &mut impl Write) -> io::Result<()> {
    let cols = columns(agg, name);
    let header: Vec<&str> = cols.iter().map(|(n, _)| *n).collect();
    writeln!(out, "{}", header.join(","))?;
    let rows = cols.first().map_or(0, |(_, c)| c.len());
    let mut line = String::new();
    for r in 0..rows {
        line.clear();
        for (i, (_, c)) in cols.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            match c {
                Column::Int(v) => line.push_str(&v[r].to_string()),
                Column::Text(v) => line.push_str(&field(&v[r])),
            }
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traces::aggregate::AggregateBuilder;
    use crate::traces::Request;

    #[test]
    fn tables_have_their_headers_and_quote_odd_tier_names() {
        let mut b = AggregateBuilder::new();
        b.push(
            "a,b",
            &Request {
                arrival_s: 60.5,
                input_tokens: 3,
                output_tokens: 9,
            },
        );
        let agg = b.finish();
        let text = |name| {
            let mut out = Vec::new();
            write_csv(&agg, name, &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        // Arrival at 60.5 s: second 0 of the minute holds it.
        let seconds: Vec<String> = (0..60).map(|k| format!("second_{k:02}")).collect();
        assert_eq!(
            text("minutes"),
            format!(
                "version,tier,minute_s,requests,input_tokens,output_tokens,busiest_second,second_sq_sum,first_arrival_us,last_arrival_us,{}\n3,\"a,b\",60,1,3,9,1,1,500000,500000,1{}\n",
                seconds.join(","),
                ",0".repeat(59)
            )
        );
        assert_eq!(
            text("lengths"),
            "version,tier,axis,bin,requests,tokens\n3,\"a,b\",input,3,1,3\n3,\"a,b\",output,8,1,9\n"
        );
        assert_eq!(
            text("pairs"),
            "version,tier,input_bin,output_bin,requests,input_tokens,output_tokens\n3,\"a,b\",3,8,1,3,9\n"
        );
        let key = crate::traces::length_sample::sample_key(60_500_000, 3, 9);
        assert_eq!(
            text("sample"),
            format!("version,tier,sample_rank,sample_key,input_tokens,output_tokens\n3,\"a,b\",1,{key},3,9\n")
        );
    }
}
