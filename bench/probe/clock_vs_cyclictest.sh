#!/usr/bin/env bash
# `pagereel probe clock` against cyclictest (Debian's rt-tests) in the same run: both at the
# same period and SCHED_FIFO priority, started together, unpinned, for DURATION seconds
# (default 30). Needs root (or CAP_SYS_NICE) for SCHED_FIFO.
#   bench/probe/clock_vs_cyclictest.sh [PAGEREEL] [DURATION] [PRIO] [FPS]
# cyclictest's interval is whole microseconds: 16667 us for 60 fps, against the probe's
# exact 16666666.67 ns. cyclictest also locks its memory (-m); the probe does not.
set -euo pipefail
pagereel=${1:-build/src/cli/pagereel}
duration=${2:-30}
prio=${3:-80}
fps=${4:-60}
interval_us=$(awk -v f="$fps" 'BEGIN { printf "%d", 1e6 / f + 0.5 }')
loops=$(awk -v f="$fps" -v d="$duration" 'BEGIN { printf "%d", f * d }')
hist=$(mktemp)
probe_json=$(mktemp)
cyclictest -m -q -p "$prio" -i "$interval_us" -l "$loops" -h 20000 >"$hist" &
cyclic_pid=$!
"$pagereel" probe clock --fps "$fps" --duration "$duration" --fifo "$prio" --json >"$probe_json" 2>/dev/null
wait "$cyclic_pid"

# cyclictest's histogram: one line per microsecond of latency, "usec count".
read -r c_n c_p50 c_p99 c_p999 c_max c_late < <(awk '
  /^[0-9]/ { us = $1 + 0; n = $2 + 0; if (n > 0) { cnt[us] = n; total += n; if (us > max) max = us; if (us > 500) late += n } }
  /^# Max Latencies/ { reported_max = $4 + 0 }
  END {
    q[1] = 0.5; q[2] = 0.99; q[3] = 0.999;
    for (k = 1; k <= 3; k++) { want = q[k] * total; acc = 0; for (us = 0; us <= max; us++) { acc += cnt[us]; if (acc >= want) { p[k] = us; break } } }
    if (reported_max > max) max = reported_max;
    printf "%d %d %d %d %d %d\n", total, p[1], p[2], p[3], max, late
  }' "$hist")
read -r p_n p_p50 p_p99 p_p999 p_max p_late < <(jq -r '"\(.ticks) \(.phase_us.p50) \(.phase_us.p99) \(.phase_us.p99_9) \(.phase_us.max) \(.late)"' "$probe_json")
echo "| tool | ticks | p50 (us) | p99 (us) | p99.9 (us) | max (us) | late > 500 us |"
echo "|---|---|---|---|---|---|---|"
printf '| pagereel probe clock (%s fps, exact ns period) | %s | %.1f | %.1f | %.1f | %.1f | %s |\n' "$fps" "$p_n" "$p_p50" "$p_p99" "$p_p999" "$p_max" "$p_late"
printf '| cyclictest -m -p %s -i %s (1 us buckets) | %s | %s | %s | %s | %s | %s |\n' "$prio" "$interval_us" "$c_n" "$c_p50" "$c_p99" "$c_p999" "$c_max" "$c_late"
echo
echo "probe clock log2 histogram (lower bound us: ticks):"
jq -r '[.histogram[] | select(.count > 0) | "\(.lower_us): \(.count)"] | join(", ")' "$probe_json"
echo "cyclictest buckets (us: ticks, non-empty):"
awk '/^[0-9]/ && $2 > 0 { printf "%s%d: %d", sep, $1, $2; sep = ", " } END { print "" }' "$hist"
rm -f "$hist" "$probe_json"
