#!/usr/bin/env bash
# Wait strategies against fixed waits (issue 7, "Waiting for the page"): starts the page
# server and one capture service on 127.0.0.1, then runs wait_bench.py against it and prints
# its Markdown table.
# Usage (from the repository root, under the shared lock):
#   flock /tmp/pagereel-build.lock bench/serve/wait_bench.sh [pagereel|node]
# Settings: WAITS=auto,load,networkidle,quiet,500,1000,2000 REPEAT=3 REFERENCE_WAIT=4000
#   ONLY="chart,fonts" (page names, see wait_bench.py) OUT_DIR (keeps every PNG)
#   and those of services.sh (ports, SERVE_CMD).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
service=${1:-pagereel}
out=${OUT_DIR:-$(mktemp -d -t wait-bench.XXXXXX)}
mkdir -p "$out"
log() { echo "wait_bench: $*" >&2; }
# shellcheck source=services.sh
. "$here/services.sh"
trap stop_all EXIT
trap 'exit 143' INT TERM
start_pages
start_service "$service"
python3 "$here/wait_bench.py" --service "$svc_base" --pages "$pages" \
  --waits "${WAITS:-auto,load,networkidle,quiet,500,1000,2000}" --repeat "${REPEAT:-3}" \
  --reference-wait "${REFERENCE_WAIT:-4000}" ${ONLY:+--only "$ONLY"} \
  --out "$out/png" --json "$out/wait.json"
log "PNGs and raw figures: $out"
