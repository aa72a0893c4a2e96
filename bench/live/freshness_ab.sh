#!/usr/bin/env bash
# Freshness of two pagereel builds, case by case, alternating (A then B for each case), so
# both see the same machine. Run alone; see bench/RESULTS.md "live freshness".
#
#   bench/live/freshness_ab.sh A_PAGEREEL B_PAGEREEL OUT_DIR SECONDS [hog] -- CASES...
#
# With "hog", one CPU hog (a shell loop at nice 0) runs beside both. Prints, per case and
# build, the share of output frames with a new page frame, the share that moved by exactly
# one period and the share of new pictures at the most common step (bench/live/frame_codes.py).
set -euo pipefail
a=$1 b=$2 out=$3 seconds=$4
shift 4
hog=""
if [ "${1:-}" = hog ]; then hog=1; shift; fi
[ "${1:-}" = -- ] && shift
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "$hog" ]; then
  sh -c 'while :; do :; done' &
  hog_pid=$!
  trap 'kill $hog_pid 2>/dev/null || true' EXIT
fi
for c in "$@"; do
  for side in A B; do
    bin=$a
    [ "$side" = B ] && bin=$b
    line=$("$here/freshness.sh" "$bin" "$out/$side" "$seconds" "$c" | head -1)
    python3 - "$side" "$line" <<'PY'
import json, sys
side, line = sys.argv[1], sys.argv[2]
name, _, rest = line.partition(": ")
try:
    d = json.loads(rest)
    print(f"{name} {side}: new {d['new']:.4f}, exact steps {d['exact_steps']:.4f}, "
          f"even {d['even']:.4f} (every {d['even_step']}), latency p50 {d['latency_ms_p50']:.1f} ms")
except ValueError:
    print(f"{name} {side}: {rest}")
PY
  done
done
