//! Aggregate demand: `planner trace aggregate`, scenarios that read an
//! aggregate instead of its traces (the same demand, the same plan), older
//! aggregate versions, bad aggregates, and the SQL aggregate on DuckDB.

use crate::{json, planner, solve_json, solve_met_on_seed, stderr, stdout, temp_dir};
use std::path::{Path, PathBuf};
use std::process::Command;

fn read_dir_text(dir: &Path) -> String {
    ["minutes", "lengths", "pairs", "sample"]
        .iter()
        .map(|n| {
            let p = dir.join(format!("{n}.csv"));
            format!("== {n}.csv\n{}", std::fs::read_to_string(&p).unwrap())
        })
        .collect::<Vec<_>>()
        .concat()
}

/// `planner trace aggregate TRACES… --out OUT -q`, which must succeed.
fn aggregate_into(out: &Path, traces: &[&str]) {
    let mut args = vec!["trace", "aggregate", "--out", out.to_str().unwrap(), "-q"];
    args.extend_from_slice(traces);
    let o = planner(&args);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn trace_aggregate_writes_the_four_tables() {
    let dir = temp_dir("agg-tiny");
    let out = dir.join("agg");
    aggregate_into(
        &out,
        &[
            "tests/fixtures/traces/tiny.csv",
            "batch=tests/fixtures/traces/tiny.jsonl",
        ],
    );
    insta::assert_snapshot!("tiny_aggregate", read_dir_text(&out));
    // No temporary files are left behind.
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    // No block of the Mooncake fixture is used twice: no prefixes table.
    assert_eq!(names.len(), 4, "{names:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn trace_aggregate_counts_every_request_of_the_trace() {
    let dir = temp_dir("agg-code");
    let trace = "data/azure-llm-2023/AzureLLMInferenceTrace_code.csv";
    for format in ["csv", "parquet"] {
        let out = dir.join(format);
        let o = planner(&[
            "trace",
            "aggregate",
            trace,
            "--out",
            out.to_str().unwrap(),
            "--table-format",
            format,
            "-q",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(out.join(format!("minutes.{format}")).is_file());
    }
    let minutes = std::fs::read_to_string(dir.join("csv/minutes.csv")).unwrap();
    let stats = json(&planner(&["trace", "stats", trace, "--format", "json"]));
    let column = |k: usize| -> u64 {
        minutes
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(k).unwrap().parse::<u64>().unwrap())
            .sum()
    };
    assert_eq!(column(3), stats["requests"].as_u64().unwrap());
    let rows = minutes.lines().count() as u64 - 1;
    assert_eq!(rows, stats["per_minute"]["windows"].as_u64().unwrap());
    // The busiest second is the trace's busiest second.
    let busiest = minutes
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(6).unwrap().parse::<f64>().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(busiest, stats["per_second"]["max"].as_f64().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn trace_aggregate_checks_its_output_folder_first() {
    let dir = temp_dir("agg-out");
    let file = dir.join("taken");
    std::fs::write(&file, "x").unwrap();
    let o = planner(&[
        "trace",
        "aggregate",
        "tests/fixtures/traces/tiny.csv",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not a folder"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_scenario_reads_the_same_demand_from_a_trace_and_from_its_aggregate() {
    let pairs = [
        (vec![], vec![]),
        (
            vec![
                "demand[0].trace=\"../../../data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv\"",
            ],
            vec![
                "demand[0].aggregate=\"../aggregates/conv\"",
                "demand[0].aggregate_tier=\"interactive\"",
            ],
        ),
    ];
    for (trace_sets, aggregate_sets) in pairs {
        let from_trace = solve_json("tests/fixtures/ok/tiny.toml", &trace_sets);
        let from_agg = solve_json("tests/fixtures/ok/tiny-aggregate.toml", &aggregate_sets);
        let (t, a) = (&from_trace["demand"]["chat"], &from_agg["demand"]["chat"]);
        for key in ["peak_rps", "mean_rps", "peak_to_mean_minute"] {
            assert_eq!(t[key], a[key], "{key}");
        }
        // The first and last arrivals' offsets give the trace's span exactly.
        assert_eq!(t["sources"][0]["span_s"], a["sources"][0]["span_s"]);
        let close = |k: &str| {
            let (x, y) = (t[k].as_f64().unwrap(), a[k].as_f64().unwrap());
            assert!((x - y).abs() < 1e-9 * x.abs().max(1.0), "{k}: {x} vs {y}");
        };
        close("within_minute_cv");
        assert_eq!(t["input_tokens"]["mean"], a["input_tokens"]["mean"]);
        assert_eq!(t["output_tokens"]["mean"], a["output_tokens"]["mean"]);
        // Binned percentiles: never below the exact figure, at most one bin above.
        for axis in ["input_tokens", "output_tokens"] {
            for p in ["p50", "p99", "max"] {
                let (x, y) = (t[axis][p].as_f64().unwrap(), a[axis][p].as_f64().unwrap());
                assert!(y >= x && y <= x * 1.25 + 1.0, "{axis}.{p}: {x} vs {y}");
            }
        }
        assert!(a["interarrival_cv"].is_null());
        assert_eq!(a["sources"][0]["format"], "aggregate");
        let method = from_agg["verification"]["method"].as_str().unwrap();
        assert!(method.contains("sampled from the aggregate"), "{method}");
        assert!(!from_trace["verification"]["method"]
            .as_str()
            .unwrap()
            .contains("sampled"));
        // Sampled minutes hold the trace's counts: the same slots replay as
        // many requests; the plan meets the tier on both.
        let (vt, va) = (&from_trace["verification"], &from_agg["verification"]);
        if vt["replayed_slots"] == va["replayed_slots"] {
            assert_eq!(vt["requests"], va["requests"]);
        }
        assert_eq!(vt["tiers"]["chat"]["meets_target"], true);
        assert_eq!(va["tiers"]["chat"]["meets_target"], true);
    }
}

#[test]
fn the_peak_plan_from_an_aggregate_is_the_plan_from_its_traces() {
    // peak.toml with its two traces replaced by their aggregate: the same
    // demand and burstiness, the same length sample, so the same capacity
    // figures and first plan; the replay samples requests from the
    // aggregate's seconds and lengths, and the plan it accepts costs what
    // the traces' does, within the scenario's 1% MILP gap.
    let dir = temp_dir("peak-aggregate");
    let agg = dir.join("agg");
    aggregate_into(
        &agg,
        &[
            "interactive=data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv",
            "standard=data/azure-llm-2023/AzureLLMInferenceTrace_code.csv",
        ],
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("scenarios/peak.toml")).unwrap();
    let conv = "trace = \"../data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv\"";
    let code = "trace = \"../data/azure-llm-2023/AzureLLMInferenceTrace_code.csv\"";
    assert!(text.contains(conv) && text.contains(code));
    let aggregate = |tier: &str| {
        format!(
            "aggregate = \"{}\"\naggregate_tier = \"{tier}\"",
            agg.display()
        )
    };
    let scenario = text
        .replace(conv, &aggregate("interactive"))
        .replace(code, &aggregate("standard"))
        .replace(
            "\"../data/servegen/",
            &format!("\"{}/data/servegen/", root.display()),
        )
        .replace(
            "name = \"peak\"",
            &format!(
                "name = \"peak\"\nprofiles_dir = \"{}/profiles\"",
                root.display()
            ),
        );
    let path = dir.join("peak-aggregate.toml");
    std::fs::write(&path, scenario).unwrap();
    // The sampled replay alone: the two demands' equivalence, not the
    // windows of the whole week, is what this checks.
    // With a band of a whole point over the target the rounds stop near
    // the first plan, which both demands share; a narrower band walks on
    // each replay's own sampled hours, which are other draws.
    let sample = [
        "simulation.verify=sample-only",
        "simulation.attainment_margin_points=1",
    ];
    let from_traces = solve_json("scenarios/peak.toml", &sample);
    let from_agg = solve_json(path.to_str().unwrap(), &sample);
    assert_eq!(from_traces["capacity"], from_agg["capacity"]);
    for tier in ["interactive", "standard"] {
        let (t, a) = (&from_traces["demand"][tier], &from_agg["demand"][tier]);
        for key in ["peak_rps", "mean_rps", "within_minute_cv"] {
            assert_eq!(t[key], a[key], "{tier}: {key}");
        }
        assert_eq!(t["sources"][0]["capacity_lengths"], "trace-sample");
        assert_eq!(a["sources"][0]["capacity_lengths"], "aggregate-sample");
    }
    let (rt, ra) = (&from_traces["rounds"][0], &from_agg["rounds"][0]);
    assert_eq!(rt["total_cost_usd"], ra["total_cost_usd"]);
    let (t, a) = (
        from_traces["total_cost_usd"].as_f64().unwrap(),
        from_agg["total_cost_usd"].as_f64().unwrap(),
    );
    assert!(
        (a / t - 1.0).abs() <= 0.01,
        "{a} from the aggregate, {t} from the traces"
    );
    for tier in ["interactive", "standard"] {
        assert_eq!(
            from_agg["verification"]["tiers"][tier]["meets_target"],
            true
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_shaped_demand_has_the_same_rates_from_a_trace_and_from_its_aggregate() {
    // With a rate curve the base rate is requests / span: the aggregate's first
    // and last arrival offsets make its span the trace's, to the microsecond.
    let shape = [
        "shape.servegen=\"../../../data/servegen/m-large-summed.csv\"",
        "shape.days=1",
        "planning.slot_minutes=60",
    ];
    let mut trace_sets = shape.to_vec();
    trace_sets
        .push("demand[0].trace=\"../../../data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv\"");
    let mut aggregate_sets = shape.to_vec();
    aggregate_sets.extend([
        "demand[0].aggregate=\"../aggregates/conv\"",
        "demand[0].aggregate_tier=\"interactive\"",
    ]);
    let from_trace = solve_json("tests/fixtures/ok/tiny.toml", &trace_sets);
    let from_agg = solve_json("tests/fixtures/ok/tiny-aggregate.toml", &aggregate_sets);
    let (t, a) = (&from_trace["demand"]["chat"], &from_agg["demand"]["chat"]);
    assert_eq!(t["peak_rps"].as_array().unwrap().len(), 24);
    assert_eq!(t["sources"][0]["span_s"], 3_501.721_937);
    for key in ["peak_rps", "mean_rps"] {
        assert_eq!(t[key], a[key], "{key}");
    }
    assert_eq!(t["sources"][0]["span_s"], a["sources"][0]["span_s"]);
}

#[test]
fn a_version_1_aggregate_is_read_with_its_span_in_whole_minutes() {
    let v2 = solve_json("tests/fixtures/ok/tiny-aggregate.toml", &[]);
    let v1 = solve_json(
        "tests/fixtures/ok/tiny-aggregate.toml",
        &["demand[0].aggregate=\"../aggregates/tiny-v1\""],
    );
    let trace = solve_json("tests/fixtures/ok/tiny.toml", &[]);
    let span = |p: &serde_json::Value| {
        p["demand"]["chat"]["sources"][0]["span_s"]
            .as_f64()
            .unwrap()
    };
    // Version 2 knows the first (00:00:00.00993) and last (00:03:00) arrivals;
    // version 1 only that they lie in the first and the fourth minute.
    assert_eq!(span(&v2), span(&trace));
    assert!((span(&v2) - 179.990_07).abs() < 1e-9, "{}", span(&v2));
    assert_eq!(span(&v1), 180.0);
    for key in ["peak_rps", "mean_rps", "within_minute_cv"] {
        assert_eq!(
            v1["demand"]["chat"][key], v2["demand"]["chat"][key],
            "{key}"
        );
    }
}

#[test]
fn a_version_2_aggregate_has_no_length_sample_and_says_so() {
    // Version 2 has no sample: the capacity search runs on pairs drawn from
    // its bins, and the report says so; version 3 runs on its sample.
    let v2 = "demand[0].aggregate=\"../aggregates/tiny-v2\"";
    let plan = solve_json("tests/fixtures/ok/tiny-aggregate.toml", &[v2]);
    let source = &plan["demand"]["chat"]["sources"][0];
    assert_eq!(source["capacity_lengths"], "aggregate-bins");
    let v3 = solve_json("tests/fixtures/ok/tiny-aggregate.toml", &[]);
    assert_eq!(
        v3["demand"]["chat"]["sources"][0]["capacity_lengths"],
        "aggregate-sample"
    );
    let text = planner(&[
        "solve",
        "tests/fixtures/ok/tiny-aggregate.toml",
        "--quiet",
        "--set",
        v2,
    ]);
    assert!(text.status.success(), "{}", stderr(&text));
    assert!(
        stdout(&text).contains("capacity runs on lengths drawn from its bins"),
        "{}",
        stdout(&text)
    );
}

#[test]
fn bad_aggregates_fail_with_located_errors() {
    let mut messages = Vec::new();
    for bad in [
        "missing-minute",
        "negative-count",
        "histogram-sum",
        "unknown-bin",
        "unknown-version",
        "offsets",
        "mixed-version",
        "pairs",
        "sample",
    ] {
        let set = format!("demand[0].aggregate=\"../aggregates/bad-{bad}\"");
        let out = planner(&[
            "solve",
            "tests/fixtures/ok/tiny-aggregate.toml",
            "--quiet",
            "--set",
            &set,
        ]);
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", stderr(&out));
        assert!(stdout(&out).is_empty());
        messages.push(format!("== {bad}\n{}", stderr(&out)));
    }
    insta::assert_snapshot!("bad_aggregates", messages.join("\n"));
}

/// Mean input, mean output, mean (input + output)·output (the KV-cache
/// token-steps a request holds) and the 99th percentile of input + output.
fn length_moments(pairs: &[(u32, u32)]) -> [f64; 4] {
    let n = pairs.len() as f64;
    let mean = |f: &dyn Fn(f64, f64) -> f64| {
        pairs
            .iter()
            .map(|&(i, o)| f(f64::from(i), f64::from(o)))
            .sum::<f64>()
            / n
    };
    let mut context: Vec<u32> = pairs.iter().map(|&(i, o)| i + o).collect();
    context.sort_unstable();
    [
        mean(&|i, _| i),
        mean(&|_, o| o),
        mean(&|i, o| (i + o) * o),
        f64::from(context[(0.99 * n) as usize]),
    ]
}

#[test]
fn lengths_drawn_from_an_aggregate_keep_the_traces_moments() {
    use planner::traces::aggregate::AggregateBuilder;
    use planner::traces::{read_all, ReaderOptions};
    for path in [
        "data/azure-llm-2023/AzureLLMInferenceTrace_code.csv",
        "data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv",
    ] {
        let requests = read_all(Path::new(path), ReaderOptions::default()).unwrap();
        let mut builder = AggregateBuilder::new();
        for r in &requests {
            builder.push("t", r);
        }
        let exact: Vec<(u32, u32)> = requests
            .iter()
            .map(|r| (r.input_tokens, r.output_tokens))
            .collect();
        let drawn = builder.finish().tiers[0].drawn_lengths(200_000);
        let (e, d) = (length_moments(&exact), length_moments(&drawn));
        // Means are exact per bin; the joint moment loses only the
        // correlation inside a coarse cell; the tail is at most a bin wider.
        for (k, tolerance) in [(0, 0.01), (1, 0.01), (2, 0.06), (3, 0.05)] {
            assert!(
                (d[k] / e[k] - 1.0).abs() < tolerance,
                "{path}: moment {k}: drawn {} vs trace {}",
                d[k],
                e[k]
            );
        }
    }
}

/// The Python that has DuckDB: `PLANNER_PYTHON`, the virtual environment
/// `scripts/prereqs.sh` makes when the system Python lacks it, or `python3`.
fn python_with_duckdb() -> PathBuf {
    if let Some(p) = std::env::var_os("PLANNER_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/python-duckdb/bin/python3");
    if venv.is_file() {
        return venv;
    }
    PathBuf::from("python3")
}

#[test]
fn sql_aggregate_on_duckdb_equals_trace_aggregate_bin_by_bin() {
    use planner::traces::{read_all, ReaderOptions};
    let dir = temp_dir("agg-duckdb");
    let traces = [
        (
            "code",
            "data/azure-llm-2023/AzureLLMInferenceTrace_code.csv",
        ),
        (
            "conv",
            "data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv",
        ),
        ("chat", "data/mooncake/conversation_trace.jsonl"),
    ];
    // The requests table the SQL reads, from the same parsed traces.
    let mut table = String::from("ts,tier,input_tokens,output_tokens\n");
    for (tier, path) in traces {
        for r in read_all(Path::new(path), ReaderOptions::default()).unwrap() {
            table += &[
                r.arrival_s.to_string(),
                (*tier).to_string(),
                r.input_tokens.to_string(),
                r.output_tokens.to_string(),
            ]
            .join(",");
            table.push('\n');
        }
    }
    let requests = dir.join("requests.csv");
    std::fs::write(&requests, table).unwrap();
    let ours = dir.join("planner");
    let args: Vec<String> = traces.iter().map(|(t, p)| format!("{t}={p}")).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    aggregate_into(&ours, &args);
    let ours_read = planner::traces::aggregate::read_aggregate(&ours).unwrap();
    for parquet in [false, true] {
        let theirs = dir.join(if parquet {
            "duckdb-parquet"
        } else {
            "duckdb-csv"
        });
        let mut py = Command::new(python_with_duckdb());
        py.arg("scripts/duckdb_aggregate.py")
            .arg(&requests)
            .arg(&theirs);
        if parquet {
            py.arg("--parquet");
        }
        let out = py.current_dir(env!("CARGO_MANIFEST_DIR")).output().expect(
            "python3 runs (scripts/prereqs.sh installs DuckDB's Python package for this test)",
        );
        assert!(
            out.status.success(),
            "sql/aggregate.sql on DuckDB failed (run scripts/prereqs.sh to install DuckDB): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let theirs_read = planner::traces::aggregate::read_aggregate(&theirs).unwrap();
        assert_eq!(theirs_read.tiers.len(), 3);
        for (a, b) in ours_read.tiers.iter().zip(&theirs_read.tiers) {
            assert_eq!(a.tier, b.tier);
            assert_eq!(a.minutes, b.minutes, "{}: minutes", a.tier);
            assert_eq!(a.input, b.input, "{}: input bins", a.tier);
            assert_eq!(a.output, b.output, "{}: output bins", a.tier);
            assert_eq!(a.pairs, b.pairs, "{}: pairs", a.tier);
            assert_eq!(a.sample, b.sample, "{}: sample", a.tier);
        }
        if !parquet {
            // Same rows in the same order: the CSV files are identical.
            for name in ["minutes", "lengths", "pairs", "sample"] {
                let read =
                    |d: &Path| std::fs::read_to_string(d.join(format!("{name}.csv"))).unwrap();
                assert_eq!(read(&ours), read(&theirs), "{name}.csv");
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sql_prefixes_on_duckdb_equal_trace_aggregates_bin_by_bin_and_step_by_step() {
    // The Mooncake conversation trace names its prompts' blocks: the
    // `prefixes` table of sql/prefixes.sql on DuckDB (from a requests table
    // with each request's place in the log, and one row per block) is the
    // one `planner trace aggregate` writes, byte for byte, as are the other
    // four tables.
    use planner::traces::block_chains::BlockChains;
    use planner::traces::{read_all, ReaderOptions};
    use std::fmt::Write as _;
    let dir = temp_dir("agg-duckdb-prefixes");
    let trace = Path::new("data/mooncake/conversation_trace.jsonl");
    let requests = read_all(trace, ReaderOptions::default()).unwrap();
    let chains = BlockChains::read_mooncake(trace, "").unwrap();
    assert_eq!(chains.len(), requests.len());
    let mut table = String::from("ts,tier,input_tokens,output_tokens,request_seq\n");
    let mut blocks = String::from("tier,request_seq,block_index,hash_id,block_tokens\n");
    for (seq, r) in requests.iter().enumerate() {
        let _ = writeln!(
            table,
            "{},chat,{},{},{seq}",
            r.arrival_s, r.input_tokens, r.output_tokens
        );
        for (k, h) in chains.get(seq as u32).iter().enumerate() {
            let _ = writeln!(blocks, "chat,{seq},{k},{h},{}", chains.block_tokens);
        }
    }
    std::fs::write(dir.join("requests.csv"), table).unwrap();
    std::fs::write(dir.join("blocks.csv"), blocks).unwrap();
    let ours = dir.join("planner");
    aggregate_into(&ours, &["chat=data/mooncake/conversation_trace.jsonl"]);
    let theirs = dir.join("duckdb");
    let out = Command::new(python_with_duckdb())
        .arg("scripts/duckdb_aggregate.py")
        .arg(dir.join("requests.csv"))
        .arg(&theirs)
        .arg("--blocks")
        .arg(dir.join("blocks.csv"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("python3 runs (scripts/prereqs.sh installs DuckDB's Python package for this test)");
    assert!(
        out.status.success(),
        "sql/prefixes.sql on DuckDB failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in ["minutes", "lengths", "pairs", "sample", "prefixes"] {
        let read = |d: &Path| std::fs::read_to_string(d.join(format!("{name}.csv"))).unwrap();
        assert_eq!(read(&ours), read(&theirs), "{name}.csv");
    }
    let read = planner::traces::aggregate::read_aggregate(&theirs).unwrap();
    let p = read.tiers[0].prefixes.as_ref().unwrap();
    // Every request is sampled (12,031 < 16,384); 16,709 steps.
    assert_eq!(p.steps.len(), requests.len());
    assert_eq!(p.steps.iter().map(Vec::len).sum::<usize>(), 16_709);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_plan_on_prefix_caching_from_an_aggregate_is_sized_on_the_traces_hits() {
    // api-vs-reserved.toml caches prefixes of the Mooncake conversation
    // trace; with the trace replaced by its aggregate (whose prefixes table
    // carries each sampled request's reuse), the capacity search counts the
    // same cached tokens, so the capacity figures and first plan are the
    // trace's. The replay draws requests from the aggregate, each finding
    // what one cache of its replica's memory finds over the whole log; its
    // draws are not the trace's requests (with or without caching it accepts
    // 2 H100 and rentals where the trace's replay asks for 3), so the final
    // plans are compared with caching and without, on the aggregate.
    let dir = temp_dir("prefix-aggregate");
    let agg = dir.join("agg");
    aggregate_into(&agg, &["chat=data/mooncake/conversation_trace.jsonl"]);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("scenarios/api-vs-reserved.toml")).unwrap();
    let trace = "trace = \"../data/mooncake/conversation_trace.jsonl\"\nformat = \"mooncake\"";
    assert!(text.contains(trace));
    let scenario = text
        .replace(
            trace,
            &format!(
                "aggregate = \"{}\"\naggregate_tier = \"chat\"",
                agg.display()
            ),
        )
        .replace(
            "name = \"api-vs-reserved\"",
            &format!(
                "name = \"api-vs-reserved\"\nprofiles_dir = \"{}/profiles\"",
                root.display()
            ),
        );
    let path = dir.join("api-vs-reserved-aggregate.toml");
    std::fs::write(&path, scenario).unwrap();
    // The trace's clock is rounded to 3 s; its aggregate's seconds say so
    // too, and both take the within-minute CV of 1 such a clock falls back to.
    let from_trace = solve_json("scenarios/api-vs-reserved.toml", &[]);
    let from_agg = solve_json(path.to_str().unwrap(), &[]);
    for j in [&from_trace, &from_agg] {
        assert_eq!(j["demand"]["assistant"]["within_minute_cv"], 1.0);
        let step = j["demand"]["assistant"]["sources"][0]["quantised_step_s"].as_f64();
        assert!((step.unwrap() - 3.0).abs() < 0.01, "{step:?}");
    }
    // The configurations' figures; the fleets the rounds extended follow
    // each replay.
    let figures = |j: &serde_json::Value| {
        let mut c = j["capacity"]["assistant"].clone();
        for config in c.as_array_mut().unwrap() {
            config.as_object_mut().unwrap().remove("fleet");
        }
        c
    };
    assert_eq!(figures(&from_trace), figures(&from_agg));
    let shares =
        |j: &serde_json::Value| j["questions"]["capacity_basis"][0]["prefix_shares"].clone();
    assert_eq!(shares(&from_trace), shares(&from_agg));
    assert!(shares(&from_agg)[0].as_f64().unwrap() > 0.05);
    assert_eq!(
        from_trace["rounds"][0]["total_cost_usd"],
        from_agg["rounds"][0]["total_cost_usd"]
    );
    let hit = |j: &serde_json::Value| {
        j["verification"]["tiers"]["assistant"]["prefix_cache"]["hit_rate"].as_f64()
    };
    assert!(hit(&from_agg).unwrap() > 0.04, "{:?}", hit(&from_agg));
    assert_eq!(
        from_agg["verification"]["tiers"]["assistant"]["meets_target"],
        true
    );
    // Without prefix caching the aggregate's reuse is not used.
    let off = solve_json(path.to_str().unwrap(), &["simulation.prefix_caching=false"]);
    assert_eq!(hit(&off), None);
    assert!(shares(&off).is_null() || shares(&off)[0].as_f64() == Some(0.0));
    let cost = |j: &serde_json::Value| j["total_cost_usd"].as_f64().unwrap();
    assert!(
        cost(&from_agg) <= cost(&off),
        "{} cached, {} not",
        cost(&from_agg),
        cost(&off)
    );
    // The cache never costs more beyond the MILP's gap on the other seeds.
    for seed in [2, 3] {
        let solve = |extra: &[&str]| cost(&solve_met_on_seed(path.to_str().unwrap(), seed, extra));
        let (cached, plain) = (solve(&[]), solve(&["simulation.prefix_caching=false"]));
        assert!(
            cached <= plain * 1.01 + 1e-9,
            "seed {seed}: {cached} cached, {plain} not"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
