//! Seeded mutation tests of every input reader: the scenario parser, the
//! trace readers (Azure CSV, Mooncake JSONL), the ServeGen rate-curve reader,
//! the plan reader and the goodput log readers (CSV, vLLM JSON).
//!
//! Each case takes a valid file, applies a few seeded mutations (bytes
//! flipped, deleted or inserted; a number replaced by an extreme one; a line
//! duplicated, dropped or cut; a BOM, a CR or invalid UTF-8 put in) and runs
//! the real executable on it. The property, for every case:
//!
//! - exit 0, with valid output (JSON that parses and holds no NaN, infinity
//!   or null figure), and exactly the output files asked for; or
//! - exit 2, with a message that names the mutated file and no empty
//!   location, and no file left behind (temporary or final).
//!
//! Anything else — a panic (exit 101), a crash, exit 4, a hang past the
//! watchdog, an unlocated message, a stray file — fails the test and prints
//! the seed, the case and the mutated input. The number of cases per target
//! is fixed ([`CASES`]) so the suite runs in well under a minute; set
//! `PLANNER_MUTATION_CASES` and `PLANNER_MUTATION_SEED` for a longer
//! campaign, and `PLANNER_MUTATION_BIN` to test another build of the
//! executable (docs/fuzzing.md).

use super::{entries, temp_dir};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

/// Cases per target in the normal suite.
const CASES: u64 = 150;

/// A run taking longer than this is a hang (the watchdog kills it).
const WATCHDOG: Duration = Duration::from_mins(1);

/// Numbers that once crashed, hung or overflowed something.
const EXTREME_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "-30",
    "1e308",
    "-1e308",
    "1e-300",
    "nan",
    "inf",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "99999999999999999999",
    "2147483647",
    "0.0",
    "1e100",
    "3",
    "100000",
];

/// Fragments that once confused a parser.
const FRAGMENTS: &[&[u8]] = &[
    b"\xEF\xBB\xBF",
    b"\r",
    b"\r\n",
    b"\xFF",
    b"\xC3",
    b"\n",
    b",",
    b"=",
    b"[",
    b"]",
    b"{",
    b"}",
    b"\"",
    b"'",
    b"2023-11-31 00:00:00",
    b"+99:99",
    b"[[tiers]]\n",
    b"[simulation]\n",
    b"#",
    b"\0",
];

fn cases() -> u64 {
    std::env::var("PLANNER_MUTATION_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(CASES)
}

fn base_seed() -> u64 {
    std::env::var("PLANNER_MUTATION_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed)
}

/// One to three mutations of `input`.
fn mutate(input: &[u8], rng: &mut StdRng) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..rng.gen_range(1..=3) {
        let at = if out.is_empty() {
            0
        } else {
            rng.gen_range(0..out.len())
        };
        match rng.gen_range(0..8) {
            0 if !out.is_empty() => out[at] ^= 1 << rng.gen_range(0..8),
            1 if !out.is_empty() => {
                let end = (at + rng.gen_range(1..16)).min(out.len());
                out.drain(at..end);
            }
            2 => {
                let f = FRAGMENTS[rng.gen_range(0..FRAGMENTS.len())];
                out.splice(at..at, f.iter().copied());
            }
            3 | 4 => replace_number(&mut out, rng),
            5 => duplicate_line(&mut out, rng),
            6 => drop_line(&mut out, rng),
            _ => out.truncate(at),
        }
    }
    out
}

/// Replaces one run of digits (with its sign, fraction and exponent) by an
/// extreme number.
fn replace_number(out: &mut Vec<u8>, rng: &mut StdRng) {
    let starts: Vec<usize> = (0..out.len())
        .filter(|&i| out[i].is_ascii_digit() && (i == 0 || !out[i - 1].is_ascii_alphanumeric()))
        .collect();
    if starts.is_empty() {
        return;
    }
    let start = starts[rng.gen_range(0..starts.len())];
    let mut end = start;
    while end < out.len() && (out[end].is_ascii_digit() || b".eE+-".contains(&out[end])) {
        end += 1;
    }
    let n = EXTREME_NUMBERS[rng.gen_range(0..EXTREME_NUMBERS.len())];
    out.splice(start..end, n.bytes());
}

fn line_spans(out: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (i, &b) in out.iter().enumerate() {
        if b == b'\n' {
            spans.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < out.len() {
        spans.push((start, out.len()));
    }
    spans
}

fn duplicate_line(out: &mut Vec<u8>, rng: &mut StdRng) {
    let spans = line_spans(out);
    if let Some(&(a, b)) = spans.get(rng.gen_range(0..spans.len().max(1))) {
        let line = out[a..b].to_vec();
        out.splice(b..b, line);
    }
}

fn drop_line(out: &mut Vec<u8>, rng: &mut StdRng) {
    let spans = line_spans(out);
    if let Some(&(a, b)) = spans.get(rng.gen_range(0..spans.len().max(1))) {
        out.drain(a..b);
    }
}

/// What one run produced.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs the planner with a watchdog that kills it after [`WATCHDOG`].
fn run(args: &[String], cwd: &Path) -> Run {
    let binary = std::env::var("PLANNER_MUTATION_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_planner").to_string());
    let child = Command::new(binary)
        .args(args)
        .current_dir(cwd)
        .env(
            "PLANNER_CACHE_DIR",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/capacity-cache"),
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the planner binary runs");
    let pid = child.id();
    let (done, finished) = mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if finished.recv_timeout(WATCHDOG).is_err() {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            true
        } else {
            false
        }
    });
    let out = child.wait_with_output().expect("the planner finishes");
    let _ = done.send(());
    let killed = watchdog.join().unwrap_or(false);
    Run {
        code: if killed { None } else { out.status.code() },
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A number the JSON output must never hold.
fn bad_json_figure(v: &serde_json::Value, path: &str) -> Option<String> {
    match v {
        serde_json::Value::Number(n) => n
            .as_f64()
            .filter(|f| !f.is_finite())
            .map(|_| format!("{path} = {n}")),
        serde_json::Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, x)| bad_json_figure(x, &format!("{path}[{i}]"))),
        serde_json::Value::Object(o) => o
            .iter()
            .find_map(|(k, x)| bad_json_figure(x, &format!("{path}.{k}"))),
        _ => None,
    }
}

/// One reader under test: a valid input, where the mutated copy goes, and
/// the command to run on it (`{input}` and `{dir}` are replaced).
struct Target {
    name: &'static str,
    seed_file: &'static str,
    file_name: &'static str,
    args: &'static [&'static str],
    /// Files the command writes in `{dir}` on success.
    outputs: &'static [&'static str],
    /// Whether stdout is JSON.
    json_stdout: bool,
}

fn check_target(t: &Target) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let seed_text = std::fs::read(root.join(t.seed_file)).unwrap();
    // Paths in a scenario are made absolute, so the copy reads the same files.
    let seed_text = String::from_utf8_lossy(&seed_text)
        .replace("\"../../../", &format!("\"{}/", root.display()))
        .replace(
            "\"../traces/",
            &format!("\"{}/tests/fixtures/traces/", root.display()),
        )
        .into_bytes();
    let work = temp_dir(&format!("mutation-{}", t.name));
    let input = work.join(t.file_name);
    let out_dir = work.join("out");
    let base = base_seed();
    let mut summary = [0u64; 2];
    let mut failures: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
    for case in 0..cases() {
        let seed = base ^ (case.wrapping_mul(0x9E37_79B9_7F4A_7C15)) ^ fnv(t.name);
        let mut rng = StdRng::seed_from_u64(seed);
        let mutated = mutate(&seed_text, &mut rng);
        std::fs::write(&input, &mutated).unwrap();
        let _ = std::fs::remove_dir_all(&out_dir);
        std::fs::create_dir_all(&out_dir).unwrap();
        let args: Vec<String> = t
            .args
            .iter()
            .map(|a| {
                a.replace("{input}", input.to_str().unwrap())
                    .replace("{dir}", out_dir.to_str().unwrap())
            })
            .collect();
        let r = run(&args, &root);
        let left = entries(&out_dir);
        let context = || {
            format!(
                "{} case {case} (PLANNER_MUTATION_SEED={base}, case seed {seed}): exit {:?}\nargs: {args:?}\nstderr: {}\ninput:\n{}",
                t.name,
                r.code,
                r.stderr,
                String::from_utf8_lossy(&mutated)
            )
        };
        match verdict(t, &r, &left, &out_dir) {
            Ok(code) => summary[usize::from(code == 2)] += 1,
            Err(kind) if keep_going() => {
                eprintln!("FAILED ({kind}): {}", context());
                *failures.entry(kind).or_insert(0u64) += 1;
            }
            Err(kind) => panic!("{kind}: {}", context()),
        }
    }
    for (kind, n) in &failures {
        eprintln!("{}: {n} cases: {kind}", t.name);
    }
    eprintln!(
        "{}: {} cases, {} exit 0, {} exit 2 (seed {base})",
        t.name,
        cases(),
        summary[0],
        summary[1]
    );
    std::fs::remove_dir_all(work).unwrap();
    assert!(failures.is_empty(), "{}: {failures:?}", t.name);
}

/// With `PLANNER_MUTATION_KEEP_GOING` set, a failing case is counted and the
/// campaign goes on; the test still fails at the end.
fn keep_going() -> bool {
    std::env::var_os("PLANNER_MUTATION_KEEP_GOING").is_some()
}

/// Exit 0 or 2 when the case holds the property, else what broke it.
fn verdict(t: &Target, r: &Run, left: &[String], out_dir: &Path) -> Result<u8, String> {
    let fail = |kind: &str| Err(kind.to_string());
    match r.code {
        Some(0) => {
            let mut expected: Vec<String> = t
                .outputs
                .iter()
                .map(std::string::ToString::to_string)
                .collect();
            expected.sort();
            if left != expected.as_slice() {
                return fail("exit 0 without exactly the files asked for");
            }
            if t.json_stdout {
                let Ok(v) = serde_json::from_str::<serde_json::Value>(&r.stdout) else {
                    return fail("exit 0 with stdout that is not JSON");
                };
                if bad_json_figure(&v, "").is_some() {
                    return fail("exit 0 with a non-finite figure");
                }
            }
            for text in std::iter::once(r.stdout.clone()).chain(
                t.outputs
                    .iter()
                    .map(|f| std::fs::read_to_string(out_dir.join(f)).unwrap_or_default()),
            ) {
                if text.contains("NaN")
                    || text.contains("inf,")
                    || text.contains(": null,") && t.name.starts_with("trace")
                {
                    return fail("exit 0 with NaN, inf or null in the output");
                }
            }
            Ok(0)
        }
        Some(2) => {
            if !left.is_empty() {
                return fail("exit 2 with a file left behind");
            }
            if !r.stdout.is_empty() {
                return fail("exit 2 with output on stdout");
            }
            if !r.stderr.contains(t.file_name) {
                return fail("exit 2 with a message that does not name the input");
            }
            if r.stderr.contains(": \n") || r.stderr.trim_end().ends_with(':') {
                return fail("exit 2 with an empty message");
            }
            Ok(2)
        }
        Some(101) => fail("panic (exit 101)"),
        None => fail("killed: a hang past the watchdog, or a signal"),
        Some(c) => Err(format!("exit {c}")),
    }
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[test]
fn mutated_scenarios_give_a_result_or_a_located_error() {
    // `goodput --scenario` reads and validates the whole scenario (profiles,
    // trace paths, every key) and then only needs its tiers: the parser is
    // exercised without a solve per case.
    check_target(&Target {
        name: "scenario",
        seed_file: "tests/fixtures/ok/tiny.toml",
        file_name: "mutated-scenario.toml",
        args: &[
            "goodput",
            "tests/fixtures/hardened/logs/goodput-with-tier.csv",
            "--scenario",
            "{input}",
            "--format",
            "json",
        ],
        outputs: &[],
        json_stdout: true,
    });
}

#[test]
fn mutated_azure_traces_give_statistics_or_a_located_error() {
    check_target(&Target {
        name: "trace-stats",
        seed_file: "tests/fixtures/traces/tiny.csv",
        file_name: "mutated-trace.csv",
        args: &["trace", "stats", "{input}", "--format", "json", "--quiet"],
        outputs: &[],
        json_stdout: true,
    });
}

#[test]
fn mutated_traces_give_an_aggregate_or_a_located_error_and_no_folder() {
    check_target(&Target {
        name: "trace-aggregate",
        seed_file: "tests/fixtures/traces/tiny.csv",
        file_name: "mutated-trace.csv",
        args: &[
            "trace",
            "aggregate",
            "chat={input}",
            "--out",
            "{dir}/new/agg",
            "--quiet",
        ],
        outputs: &["new"],
        json_stdout: false,
    });
}

#[test]
fn mutated_mooncake_traces_give_a_synthetic_trace_or_a_located_error() {
    check_target(&Target {
        name: "trace-synth",
        seed_file: "tests/fixtures/traces/tiny.jsonl",
        file_name: "mutated-trace.jsonl",
        args: &[
            "trace",
            "synth",
            "--quiet",
            "--lengths-from",
            "{input}",
            "--days",
            "1",
            "--mean-rps",
            "0.01",
            "--out",
            "{dir}/synthetic.csv",
        ],
        outputs: &["synthetic.csv"],
        json_stdout: false,
    });
}

#[test]
fn mutated_rate_curves_give_a_curve_or_a_located_error() {
    check_target(&Target {
        name: "trace-shape",
        seed_file: "tests/fixtures/hardened/traces/servegen-two-hours.csv",
        file_name: "mutated-curve.csv",
        args: &["trace", "shape", "{input}", "--out", "{dir}/curve.csv"],
        outputs: &["curve.csv"],
        json_stdout: false,
    });
}

#[test]
fn mutated_plans_give_a_replay_or_a_located_error() {
    check_target(&Target {
        name: "plan",
        seed_file: "tests/fixtures/hardened/plans/tiny-plan.json",
        file_name: "mutated-plan.json",
        args: &[
            "simulate",
            "tests/fixtures/ok/tiny.toml",
            "--plan",
            "{input}",
            "--quiet",
            "--format",
            "json",
            "--out",
            "{dir}/replay.json",
            "--requests-out",
            "{dir}/requests.csv",
        ],
        outputs: &["replay.json", "requests.csv"],
        json_stdout: false,
    });
}

#[test]
fn mutated_goodput_logs_give_goodput_or_a_located_error() {
    for (name, seed_file, file_name) in [
        (
            "goodput-csv",
            "tests/fixtures/hardened/logs/goodput-with-tier.csv",
            "mutated-log.csv",
        ),
        (
            "goodput-vllm",
            "tests/fixtures/hardened/logs/vllm-benchmark.json",
            "mutated-log.json",
        ),
    ] {
        check_target(&Target {
            name,
            seed_file,
            file_name,
            args: &[
                "goodput",
                "{input}",
                "--ttft-ms",
                "500",
                "--tpot-ms",
                "50",
                "--cost-per-hour",
                "10",
                "--duration-s",
                "60",
                "--format",
                "json",
            ],
            outputs: &[],
            json_stdout: true,
        });
    }
}
