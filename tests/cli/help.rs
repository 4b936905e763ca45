//! `planner --help`.

use crate::{planner, stdout};

#[test]
fn help_teaches_the_commands() {
    let out = planner(&["--help"]);
    let text = stdout(&out);
    for word in ["solve", "trace", "bench", "calibrate", "perf", "Exit codes"] {
        assert!(text.contains(word), "--help lacks {word}");
    }
}
