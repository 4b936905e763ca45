#!/usr/bin/env bash
# The meeting's what-ifs, timed: for each shipped scenario, a first solve
# (which fills the capacity and replay caches), then each question of a
# fixed list asked after it, one solve each, wall-clock seconds.
#
#   benches/what-ifs.sh [PLANNER] [SCENARIO-NAME...]    (default: every one below)
#
# Prints one tab-separated line per solve: scenario, question, seconds,
# exit status, total cost in USD. A status of 5 is a plan whose own replay
# missed a target (`--accept-miss` is not passed, so it shows).
set -u
planner=${1:-target/release/planner}
shift || true
cd "$(dirname "$0")/.."

# name|question|--set arguments (space-separated KEY=VALUE)
list() {
cat <<'LIST'
peak|API price 0.6|api.usd_per_million_input_tokens=0.6
peak|H100 reserved 1.5|gpus[0].reserved_usd_per_gpu_hour=1.5
peak|MI300X on-demand x1.2|gpus[3].on_demand_usd_per_gpu_hour=2.22
peak|MI300X cap 16|gpus[3].max_gpus=16
peak|interactive TTFT 600|tiers[0].ttft_ms=600
peak|interactive TPOT 30|tiers[0].tpot_ms=30
peak|standard demand x1.5|demand[1].scale=6
peak|standard refused the API|tiers[1].api_allowed=false
peak|12-month term, 3% growth|commitment.term_months=12 commitment.monthly_growth=0.03
api-vs-reserved|API price x2|api.usd_per_million_input_tokens=0.4 api.usd_per_million_output_tokens=0.4
api-vs-reserved|H100 reserved 1.5|gpus[0].reserved_usd_per_gpu_hour=1.5
api-vs-reserved|H100 on-demand 2.5|gpus[0].on_demand_usd_per_gpu_hour=2.5
api-vs-reserved|H100 cap 2|gpus[0].max_gpus=2
api-vs-reserved|TTFT 500|tiers[0].ttft_ms=500
api-vs-reserved|TPOT 30|tiers[0].tpot_ms=30
api-vs-reserved|demand x1.5|demand[0].scale=1.5
api-vs-reserved|refused the API|tiers[0].api_allowed=false
api-vs-reserved|12-month term, 3% growth|commitment.term_months=12 commitment.monthly_growth=0.03
moe|API price x2|api.usd_per_million_input_tokens=0.7 api.usd_per_million_output_tokens=1.5
moe|B200 reserved 3.0|gpus[1].reserved_usd_per_gpu_hour=3.0
moe|B200 on-demand 6.0|gpus[1].on_demand_usd_per_gpu_hour=6.0
moe|B200 cap 1|gpus[1].max_gpus=1
moe|chat TTFT 1500|tiers[0].ttft_ms=1500
moe|chat TPOT 20|tiers[0].tpot_ms=20
moe|standard demand x1.5|demand[1].scale=6
moe|standard refused the API|tiers[1].api_allowed=false
moe|12-month term, 3% growth|commitment.term_months=12 commitment.monthly_growth=0.03
disaggregated|H200 reserved 3.0|gpus[0].reserved_usd_per_gpu_hour=3.0
disaggregated|H200 on-demand 5.0|gpus[0].on_demand_usd_per_gpu_hour=5.0
disaggregated|H200 cap 24|gpus[0].max_gpus=24
disaggregated|code TTFT 1500|tiers[0].ttft_ms=1500
disaggregated|code TPOT 40|tiers[0].tpot_ms=40
disaggregated|chat demand x1.5|demand[1].scale=1.5
disaggregated|chat TPOT 60|tiers[1].tpot_ms=60
disaggregated|12-month term, 3% growth|commitment.term_months=12 commitment.monthly_growth=0.03
overnight-batch|L40S reserved 1.0|gpus[1].reserved_usd_per_gpu_hour=1.0
overnight-batch|L4 on-demand 0.6|gpus[0].on_demand_usd_per_gpu_hour=0.6
overnight-batch|L40S cap 2|gpus[1].max_gpus=2
overnight-batch|chat TTFT 1000|tiers[0].ttft_ms=1000
overnight-batch|chat TPOT 50|tiers[0].tpot_ms=50
overnight-batch|bulk demand x1.5|demand[1].scale=4.5
overnight-batch|chat demand x1.5|demand[0].scale=1.5
overnight-batch|12-month term, 3% growth|commitment.term_months=12 commitment.monthly_growth=0.03
overnight-deadline|L4 reserved 0.35|gpus[0].reserved_usd_per_gpu_hour=0.35
overnight-deadline|L40S on-demand 2.2|gpus[1].on_demand_usd_per_gpu_hour=2.2
overnight-deadline|L4 cap 24|gpus[0].max_gpus=24
overnight-deadline|chat TTFT 1000|tiers[0].ttft_ms=1000
overnight-deadline|chat TPOT 50|tiers[0].tpot_ms=50
overnight-deadline|bulk demand x1.5|demand[1].scale=4.5
overnight-deadline|bulk deadline 4 h|tiers[1].deadline_hours=4
overnight-deadline|3% growth|commitment.monthly_growth=0.03
fleet|chat-70b API price x2|models[0].api.usd_per_million_input_tokens=1.76 models[0].api.usd_per_million_output_tokens=1.76
fleet|H100 reserved 1.5|gpus[0].reserved_usd_per_gpu_hour=1.5
fleet|B200 on-demand 6.0|gpus[2].on_demand_usd_per_gpu_hour=6.0
fleet|B200 cap 1|gpus[2].max_gpus=1
fleet|chat TTFT 600|tiers[0].ttft_ms=600
fleet|chat TPOT 30|tiers[0].tpot_ms=30
fleet|assistant demand x1.5|demand[1].scale=3
fleet|assistant refused the API|tiers[1].api_allowed=false
fleet|12-month term, 3% growth|commitment.term_months=12 commitment.monthly_growth=0.03
LIST
}

want=" $* "
solve() { # scenario question args...
    local name=$1 question=$2; shift 2
    local sets=()
    for kv in "$@"; do sets+=(--set "$kv"); done
    local out start end rc usd
    out=$(mktemp)
    start=$(date +%s.%N)
    "$planner" solve "scenarios/$name.toml" "${sets[@]}" -q --format json > "$out" 2> /dev/null
    rc=$?
    end=$(date +%s.%N)
    usd=$(grep -m1 '^  "total_cost_usd"' "$out" | tr -dc '0-9.')
    rm -f "$out"
    printf '%s\t%s\t%.2f\t%s\t%s\n' "$name" "$question" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "$rc" "${usd:-}"
}

done_first=" "
while IFS='|' read -r name question args; do
    [[ "$want" != "  " && "$want" != *" $name "* ]] && continue
    if [[ "$done_first" != *" $name "* ]]; then
        solve "$name" "first solve (caches filled)"
        done_first+="$name "
    fi
    # shellcheck disable=SC2086
    solve "$name" "$question" $args
done < <(list)
