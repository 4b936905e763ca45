#!/usr/bin/env bash
# Renders planner's HTML reports (a plan and a sweep of scenarios/peak.toml,
# and a plan over a growing 12-month term, benches/chat-8b-growth.toml)
# in headless Chromium and checks that every chart drew: the page's inline
# check marks <body> with data-chart-check="ok N" when each of its N charts
# holds a drawn SVG path, and data-script-errors="" when no script failed.
# Also writes a PNG of each page. Usage: scripts/check-html.sh [OUT_DIR]
# PLANNER_BIN names the planner executable to use (the test suite passes the
# one it built); without it the release build is made first.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-target/html-check}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
  echo "check-html: chromium is missing; scripts/prereqs.sh installs it" >&2
  exit 1
fi
if [ -n "${PLANNER_BIN:-}" ]; then
  planner="$PLANNER_BIN"
else
  cargo build --release --quiet
  planner=target/release/planner
fi
# A plan whose replay misses a target still renders (exit 5 is the miss).
"$planner" solve scenarios/peak.toml --quiet --accept-miss --format html --out "$out/plan.html"
"$planner" sweep scenarios/peak.toml --quiet --format html --out "$out/sweep.html" \
  --set demand[1].scale=2,3,4,5 --bisect 2 --set simulation.verify=sample-only --accept-miss
"$planner" solve benches/chat-8b-growth.toml --quiet --accept-miss --format html --out "$out/growth.html" \
  --set simulation.verify=sample-only

flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --enable-logging=stderr --v=0)
status=0
for page in plan sweep growth; do
  url="file://$out/$page.html"
  profile="$(mktemp -d)"
  timeout 120 "$browser" "${flags[@]}" --user-data-dir="$profile" --dump-dom "$url" \
    >"$out/$page.dom" 2>"$out/$page.log" || true
  rm -rf "$profile"
  profile="$(mktemp -d)"
  timeout 120 "$browser" "${flags[@]}" --user-data-dir="$profile" --hide-scrollbars \
    --window-size=1280,2600 --screenshot="$out/$page.png" "$url" >>"$out/$page.log" 2>&1 || true
  rm -rf "$profile"
  check="$(grep -o 'data-chart-check="[^"]*"' "$out/$page.dom" || true)"
  errors="$(grep -o 'data-script-errors="[^"]*"' "$out/$page.dom" || true)"
  charts="$(grep -o '<svg class="chart"' "$out/$page.html" | wc -l)"
  if [[ "$check" != "data-chart-check=\"ok $charts\"" ]]; then
    echo "check-html: $page: not every chart drew ($check, $charts charts in the page)" >&2
    status=1
  fi
  if [[ "$errors" != 'data-script-errors=""' ]] || grep -qi "uncaught" "$out/$page.log"; then
    echo "check-html: $page: script errors: $errors $(grep -i uncaught "$out/$page.log" | head -3)" >&2
    status=1
  fi
  if [ ! -s "$out/$page.png" ] || [ "$(wc -c <"$out/$page.png")" -lt 20000 ]; then
    echo "check-html: $page: no screenshot, or an empty one" >&2
    status=1
  fi
  [ $status -eq 0 ] && echo "check-html: $page: $charts charts drew, no script errors; $out/$page.png"
done
exit $status
