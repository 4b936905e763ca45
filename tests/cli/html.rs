//! HTML reports: one self-contained page, and every chart drawn in headless
//! Chromium.

use crate::{json, planner, stderr, stdout, temp_dir};
use std::process::Command;

/// Every `<svg class="chart">` of an HTML page and whether it holds a path
/// with an outline.
fn charts_with_paths(html: &str) -> Vec<(String, bool)> {
    html.split("<svg class=\"chart\" id=\"")
        .skip(1)
        .map(|chart| {
            let id = chart.split('"').next().unwrap_or("").to_string();
            let body = chart.split("</svg>").next().unwrap_or("");
            let drawn = body.split("<path ").skip(1).any(|p| {
                p.split(" d=\"")
                    .nth(1)
                    .is_some_and(|d| d.len() > 3 && !d.starts_with('"'))
            });
            (id, drawn)
        })
        .collect()
}

/// The plan and sweep pages rendered in a real browser (headless Chromium,
/// installed by `scripts/prereqs.sh`): every chart drew a path, no script
/// failed, and each page rendered to a non-empty PNG.
#[test]
fn html_reports_draw_every_chart_in_headless_chromium() {
    let dir = temp_dir("chromium");
    let out = Command::new("bash")
        .arg("scripts/check-html.sh")
        .arg(&dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("PLANNER_BIN", env!("CARGO_BIN_EXE_planner"))
        .env(
            "PLANNER_CACHE_DIR",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/capacity-cache"),
        )
        .output()
        .expect("bash runs scripts/check-html.sh");
    assert!(
        out.status.success(),
        "check-html failed:\n{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    for page in ["plan", "sweep"] {
        let png = std::fs::metadata(dir.join(format!("{page}.png"))).expect("a screenshot");
        assert!(png.len() > 20_000, "{page}.png is {} bytes", png.len());
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn html_report_is_one_self_contained_page_whose_charts_all_have_paths() {
    let out = planner(&[
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--format",
        "html",
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let html = stdout(&out);
    assert!(html.starts_with("<!DOCTYPE html>"));
    // No network: nothing to fetch (the SVG namespace is a name, not a request).
    let without_ns = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(!without_ns.contains("http://") && !without_ns.contains("https://"));
    assert!(!html.contains("<script src") && !html.contains("<link") && !html.contains("<img"));
    let charts = charts_with_paths(&html);
    let ids: Vec<&str> = charts.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "capacity",
            "gpus",
            "cost",
            "ttft-chat",
            "tpot-chat",
            "alternatives"
        ]
    );
    // The reserved GPUs as a flat band, the idle part of it said in words.
    assert!(
        html.contains("GPU-hours over the horizon") || html.contains("Nothing is reserved"),
        "idle reserved GPU-hours"
    );
    assert!(charts.iter().all(|(_, drawn)| *drawn), "{charts:?}");
    // The cost breakdown labels the plan's own figures.
    let plan = json(&planner(&[
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--format",
        "json",
        "--quiet",
    ]));
    let total = plan["total_cost_usd"].as_f64().unwrap();
    assert!(html.contains(&format!("{total:.2} USD")), "{total}");
}
