//! The HTML shell every page shares: styles, a header, and a small inline
//! check that marks the page with how many charts drew (no network, no
//! external scripts; the check only reads the page).

use super::svg::esc;
use std::fmt::Write as _;

const STYLE: &str = r#"
:root { --ink:#1d2733; --muted:#5b6b7b; --line:#d9e0e7; --bg:#f5f7fa; --card:#ffffff;
  --reserved:#1f4e79; --on-demand:#5b9bd5; --spot:#70ad47; --api:#ed7d31; --demand:#c00000; --plan:#1f4e79; --alt:#a5b4c3; }
* { box-sizing: border-box; }
pre { white-space: pre-wrap; word-break: break-all; background: var(--bg); border: 1px solid var(--line); padding: 0.5em; font-size: 0.85em; }
body { margin:0; background:var(--bg); color:var(--ink); font:14px/1.45 "Segoe UI", "Helvetica Neue", Arial, sans-serif; }
header { background:#17324d; color:#fff; padding:22px 36px 18px; }
header h1 { margin:0 0 4px; font-size:22px; font-weight:600; }
header p { margin:0; color:#c9d6e3; }
main { max-width:1180px; margin:0 auto; padding:20px 36px 40px; }
.cards { display:grid; grid-template-columns:repeat(auto-fit, minmax(180px, 1fr)); gap:12px; margin:4px 0 18px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:12px 14px; }
.card .label { color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.04em; }
.card .value { font-size:22px; font-weight:600; margin-top:2px; }
.card .note { color:var(--muted); font-size:12px; }
section { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:16px 18px; margin:0 0 16px; }
section h2 { margin:0 0 4px; font-size:16px; font-weight:600; }
section p.lead { margin:0 0 10px; color:var(--muted); }
.row { display:flex; flex-wrap:wrap; gap:16px; }
.row > div { flex:1 1 360px; }
h3 { font-size:13px; margin:6px 0 2px; font-weight:600; }
table { border-collapse:collapse; width:100%; font-variant-numeric:tabular-nums; }
th, td { padding:5px 8px; border-bottom:1px solid var(--line); text-align:right; white-space:nowrap; }
th:first-child, td:first-child { text-align:left; }
th { color:var(--muted); font-weight:600; font-size:12px; white-space:normal; vertical-align:bottom; }
.scroll { overflow-x:auto; }
tr.plan td { font-weight:600; }
.warn { background:#fff4e5; border:1px solid #f0b46a; border-radius:8px; padding:10px 14px; margin:0 0 16px; }
.miss { color:#c00000; font-weight:600; }
svg.chart { display:block; max-width:100%; height:auto; font-size:11px; }
svg .grid { stroke:#e6ebf0; stroke-width:1; fill:none; }
svg .axis, svg .tickmark { stroke:#7b8a99; stroke-width:1; fill:none; }
svg .tick { fill:#5b6b7b; }
svg .axis-title { fill:#3b4a59; font-size:12px; }
svg .rule-label, svg .bar-value { fill:#3b4a59; font-size:11px; }
svg .bar-label { fill:#1d2733; font-size:12px; }
.reserved { fill:var(--reserved); stroke:none; }
.on-demand { fill:var(--on-demand); stroke:none; }
.spot { fill:var(--spot); stroke:none; }
.api { fill:var(--api); stroke:none; }
.alt { fill:var(--alt); stroke:none; }
.plan-bar { fill:var(--plan); stroke:none; }
.demand { fill:none; stroke:var(--demand); stroke-width:1.6; }
.demand.swatch { fill:var(--demand); }
.limit { stroke:var(--demand); stroke-width:1.4; stroke-dasharray:5 3; fill:none; }
.target { stroke:#7b8a99; stroke-width:1; stroke-dasharray:2 3; fill:none; }
.breakeven { fill:#8c8c8c; fill-opacity:.14; stroke:#6b6b6b; stroke-width:1; stroke-dasharray:4 3; }
.breakeven.swatch { fill-opacity:.45; stroke-dasharray:none; }
.breakeven.unsettled { fill:#c0392b; fill-opacity:.05; stroke:#c0392b; stroke-dasharray:2 3; }
.breakeven.unsettled.swatch { fill-opacity:.3; }
.probe { stroke:none; fill:none; } .probe.dot, .probe.swatch { fill:#fff; stroke:#1d2733; stroke-width:1.2; }
.idle { fill:var(--reserved); fill-opacity:.22; stroke:none; }
.in-use { fill:none; stroke:#1d2733; stroke-width:1.6; }
.in-use.swatch { fill:#1d2733; }
.series0 { stroke:#1f4e79; fill:none; stroke-width:2; } .series0.dot, .series0.swatch { fill:#1f4e79; }
.series1 { stroke:#ed7d31; fill:none; stroke-width:2; } .series1.dot, .series1.swatch { fill:#ed7d31; }
.series2 { stroke:#70ad47; fill:none; stroke-width:2; } .series2.dot, .series2.swatch { fill:#70ad47; }
.series3 { stroke:#7030a0; fill:none; stroke-width:2; } .series3.dot, .series3.swatch { fill:#7030a0; }
.series4 { stroke:#5b9bd5; fill:none; stroke-width:2; } .series4.dot, .series4.swatch { fill:#5b9bd5; }
.series5 { stroke:#c00000; fill:none; stroke-width:2; } .series5.dot, .series5.swatch { fill:#c00000; }
.model0 { fill:#1f4e79; stroke:none; } .model1 { fill:#ed7d31; stroke:none; } .model2 { fill:#70ad47; stroke:none; }
.model3 { fill:#7030a0; stroke:none; } .model4 { fill:#5b9bd5; stroke:none; } .model5 { fill:#c00000; stroke:none; }
.reserved-line { stroke:#1d2733; stroke-dasharray:4 3; fill:none; }
.legend { display:flex; flex-wrap:wrap; gap:14px; color:var(--muted); font-size:12px; margin:4px 0 0 64px; }
.legend span { display:inline-flex; align-items:center; gap:5px; }
footer { color:var(--muted); font-size:12px; margin-top:10px; }
"#;

/// Runs once the page is parsed: every `svg.chart` must hold a `<path>`
/// with a non-empty outline; the result goes into `data-chart-check` on
/// `<body>` (`ok N`, or `fail` with the charts that did not draw), and any
/// script error into `data-script-errors`.
const CHECK: &str = r#"<script>
(function () {
  var errors = [];
  window.addEventListener("error", function (e) { errors.push(String(e.message)); });
  try {
    var charts = document.querySelectorAll("svg.chart"), failed = [];
    for (var i = 0; i < charts.length; i++) {
      var paths = charts[i].querySelectorAll("path"), drawn = 0;
      for (var j = 0; j < paths.length; j++) {
        var d = paths[j].getAttribute("d") || "", box = paths[j].getBBox();
        if (d.length > 1 && (box.width > 0 || box.height > 0)) { drawn++; }
      }
      if (drawn === 0) { failed.push(charts[i].id); }
    }
    document.body.setAttribute("data-chart-check",
      charts.length > 0 && failed.length === 0 ? "ok " + charts.length : "fail " + failed.join(" "));
  } catch (e) { errors.push(String(e)); }
  document.body.setAttribute("data-script-errors", errors.join("; "));
})();
</script>"#;

/// A whole page: `title`, a subtitle line, and the body's HTML.
pub fn page(title: &str, subtitle: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{t}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<header><h1>{t}</h1><p>{s}</p></header>\n<main>\n{body}\n<footer>Generated by planner {v}. Prices are the scenario's inputs with their sources, not live quotes. Self-contained: no network, no external files.</footer>\n</main>\n{CHECK}\n</body>\n</html>\n",
        t = esc(title),
        s = esc(subtitle),
        v = env!("CARGO_PKG_VERSION"),
    )
}

/// A key-figure card.
pub fn card(label: &str, value: &str, note: &str) -> String {
    format!(
        "<div class=\"card\"><div class=\"label\">{}</div><div class=\"value\">{}</div><div class=\"note\">{}</div></div>",
        esc(label),
        esc(value),
        esc(note)
    )
}

/// A table from a header row and body rows (cells are escaped).
pub fn table(
    header: &[String],
    rows: &[Vec<String>],
    highlight_first_cell: Option<&str>,
) -> String {
    let mut o = String::from("<div class=\"scroll\"><table><thead><tr>");
    for h in header {
        let _ = write!(o, "<th>{}</th>", esc(h));
    }
    o.push_str("</tr></thead><tbody>");
    for r in rows {
        let class = match (highlight_first_cell, r.first()) {
            (Some(h), Some(first)) if first == h => " class=\"plan\"",
            _ => "",
        };
        let _ = write!(o, "<tr{class}>");
        for c in r {
            let _ = write!(o, "<td>{}</td>", esc(c));
        }
        o.push_str("</tr>");
    }
    o.push_str("</tbody></table></div>");
    o
}
