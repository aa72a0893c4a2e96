#!/usr/bin/env bash
# The sampler's own CPU cost at 100 and 1000 samples per second: the sampling thread's CPU
# time (from its own --json report) and the whole process's (user + sys, from GNU time),
# over a run of DURATION seconds (default 30).
#   bench/probe/sampler_cost.sh [PAGEREEL] [DURATION]
set -euo pipefail
pagereel=${1:-build/src/cli/pagereel}
duration=${2:-30}
printf '| rate (/s) | samples | sampler thread CPU | whole process CPU (user+sys) | wake delay p50 / p99 (us) |\n'
printf '|---|---|---|---|---|\n'
for rate in 100 1000; do
  json=$(mktemp)
  times=$(mktemp)
  /usr/bin/time -f '%U %S' -o "$times" "$pagereel" probe --rate "$rate" --duration "$duration" --json >"$json"
  read -r user sys <"$times"
  jq -r --arg user "$user" --arg sys "$sys" --arg d "$duration" '
    "| \(.sampler.rate_hz) | \(.sampler.samples) | \(.sampler.cpu_seconds * 1000 | round) ms = \(.sampler.cpu_share * 100 * 1000 | round / 1000)% of a CPU | \((($user|tonumber) + ($sys|tonumber)) * 1000 | round) ms = \((($user|tonumber) + ($sys|tonumber)) / ($d|tonumber) * 100 * 1000 | round / 1000)% | \(.sampler.wake_delay_us.p50 | round) / \(.sampler.wake_delay_us.p99 | round) |"' "$json"
  rm -f "$json" "$times"
done
