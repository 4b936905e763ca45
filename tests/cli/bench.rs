//! `planner bench`: the first round's MILP timed by either method.

use crate::{planner, stderr, stdout};

#[test]
fn bench_times_the_first_round_milp_by_either_method() {
    for method in ["monolithic", "decomposed"] {
        let out = planner(&[
            "bench",
            "tests/fixtures/ok/tiny.toml",
            "--repeat",
            "1",
            "--milp-method",
            method,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        let capitalised = format!("{}{}", method[..1].to_uppercase(), &method[1..]);
        assert!(
            text.contains("first round's MILP") && text.contains(&format!("{capitalised} method")),
            "{text}"
        );
    }
    let out = planner(&[
        "bench",
        "tests/fixtures/ok/tiny.toml",
        "--milp-method",
        "fast",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown MILP method `fast`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn bench_shows_the_capacity_stages_parts_beneath_it_and_counts_them_once() {
    let out = planner(&[
        "bench",
        "tests/fixtures/ok/tiny.toml",
        "--repeat",
        "1",
        "--no-cache",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    let table = lines
        .iter()
        .position(|l| l.trim_start().starts_with("plan: capacity table"))
        .unwrap_or_else(|| panic!("no capacity stage in {text}"));
    let parts = [
        "capacity: batch caps screened on one replica (",
        "capacity: chunk sizes screened on one replica (",
        "capacity: fleet step functions extended (",
    ];
    for (i, part) in parts.iter().enumerate() {
        let line = lines[table + 1 + i];
        assert!(
            line.starts_with("      ") && line.trim_start().starts_with(part),
            "line {} is not the part `{part}`: {text}",
            table + 2 + i
        );
    }
    // The parts' time is inside the capacity stage's: the stages outside
    // every other stage add up to at most the whole solve.
    let seconds = |l: &str| -> f64 {
        l.trim_end_matches(" s")
            .rsplit(' ')
            .next()
            .and_then(|x| x.parse().ok())
            .unwrap_or_else(|| panic!("no seconds in `{l}`"))
    };
    let whole: f64 = lines[0]
        .split("full solve (demand + capacity + MILP + replay rounds + report data) ")
        .nth(1)
        .and_then(|r| r.split(" s;").next())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("no full solve time in {text}"));
    let staged: f64 = lines[2..]
        .iter()
        .filter(|l| l.starts_with("    ") && !l.starts_with("      "))
        .map(|l| seconds(l))
        .sum();
    assert!(
        staged <= whole + 0.01,
        "{staged} s staged in {whole} s: {text}"
    );
}

#[test]
fn bench_times_a_what_if_given_with_set() {
    let total = |extra: &[&str]| {
        let mut args = vec!["bench", "tests/fixtures/ok/tiny.toml", "--repeat", "1"];
        args.extend_from_slice(extra);
        let out = planner(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        let first = text.lines().next().unwrap_or_default().to_string();
        let Some((_, usd)) = first.rsplit_once("total ") else {
            panic!("no total in {first}")
        };
        usd.to_string()
    };
    // The L40S at 2.5 USD an hour instead of 1: the plan the bench times
    // is the what-if's, dearer.
    let shipped = total(&[]);
    let dearer = total(&["--set", "gpus[1].on_demand_usd_per_gpu_hour=2.5"]);
    assert_eq!(shipped, "0.05 USD");
    assert_eq!(dearer, "0.12 USD");
    let out = planner(&["bench", "tests/fixtures/ok/tiny.toml", "--set", "nosuch=1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--set nosuch"), "{}", stderr(&out));
}
