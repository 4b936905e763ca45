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
