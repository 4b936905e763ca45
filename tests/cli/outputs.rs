//! Nothing written on failure: every output path is checked before the work
//! starts, and outputs are renamed into place only when all are complete.

use crate::{entries, planner, stderr, stdout, temp_dir};
use std::path::Path;
use std::process::Command;

#[test]
fn out_file_is_written_whole() {
    let dir = temp_dir("out");
    let file = dir.join("plan.json");
    let out = planner(&[
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--format",
        "json",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert!(stdout(&out).is_empty());
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(plan["scenario"], "tiny");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn solve_with_an_unwritable_out_writes_no_plan_out() {
    let dir = temp_dir("out-dir-plan-out");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let plan = dir.join("plan.json");
    let out = planner(&[
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--quiet",
        "--plan-out",
        plan.to_str().unwrap(),
        "--out",
        dir.join("sub").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--out"), "{}", stderr(&out));
    assert!(stderr(&out).contains("is a directory"), "{}", stderr(&out));
    assert_eq!(entries(&dir), ["sub"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn out_naming_a_directory_leaves_no_temporary_file() {
    let dir = temp_dir("out-is-dir");
    for target in [
        dir.to_str().unwrap().to_string(),
        format!("{}/", dir.display()),
        format!("{}/.", dir.display()),
    ] {
        let out = planner(&[
            "solve",
            "tests/fixtures/ok/tiny.toml",
            "--quiet",
            "--out",
            &target,
        ]);
        assert_eq!(out.status.code(), Some(2), "{target}: {}", stderr(&out));
        assert_eq!(entries(&dir), Vec::<String>::new(), "{target}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn trace_synth_failing_leaves_nothing_behind() {
    let dir = temp_dir("synth-fail");
    let target = dir.join("trace.csv");
    for args in [
        vec!["--lengths-from", "tests/fixtures/traces/no-such-trace.csv"],
        vec!["--lengths-from", "tests/fixtures/traces/bad-rows.csv"],
        vec![
            "--lengths-from",
            "tests/fixtures/traces/tiny.csv",
            "--cv",
            "0",
        ],
    ] {
        let mut all = vec![
            "trace",
            "synth",
            "--quiet",
            "--out",
            target.to_str().unwrap(),
        ];
        all.extend(args.iter().copied());
        let out = planner(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(entries(&dir), Vec::<String>::new(), "{args:?}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn trace_synth_out_dot_is_refused_before_reading() {
    let dir = temp_dir("synth-dot");
    let out = Command::new(env!("CARGO_BIN_EXE_planner"))
        .args(["trace", "synth", "--quiet", "--out", ".", "--lengths-from"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/traces/tiny.csv"))
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--out ."), "{}", stderr(&out));
    assert_eq!(entries(&dir), Vec::<String>::new());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn simulate_with_the_same_file_twice_is_refused() {
    let dir = temp_dir("same-twice");
    let f = dir.join("x.csv");
    let out = planner(&[
        "simulate",
        "tests/fixtures/ok/code-burst.toml",
        "--plan",
        "tests/fixtures/ok/code-burst-plan.json",
        "--out",
        f.to_str().unwrap(),
        "--requests-out",
        f.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("both name"), "{}", stderr(&out));
    assert_eq!(entries(&dir), Vec::<String>::new());
    std::fs::remove_dir_all(dir).unwrap();
}

/// `--out /dev/stdout` into a pipe (as a test's capture is) writes the
/// report to standard output, and the file a shell redirected standard
/// output to keeps what was written before it.
#[test]
fn out_dev_stdout_writes_to_standard_output() {
    let args = [
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--format",
        "json",
        "--out",
        "/dev/stdout",
        "-q",
    ];
    let out = planner(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let plan: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(plan["scenario"], "tiny");
    let dir = temp_dir("out-dev-stdout");
    let file = dir.join("combined.txt");
    std::fs::write(&file, "HEADER\n").unwrap();
    let appended = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_planner"))
        .args(args)
        .stdout(appended)
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with("HEADER\n{"),
        "{}",
        &text[..40.min(text.len())]
    );
    std::fs::remove_dir_all(dir).unwrap();
}
