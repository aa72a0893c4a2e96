#!/usr/bin/env bash
# The I/O thread while GIFs and clips are made (issue 7: "an I/O thread is never blocked
# for more than a millisecond by capture work"): starts the page server and pagereel serve
# on 127.0.0.1, then io_latency.py probes /healthz every 20 ms, idle and while clients ask
# for GIFs and MP4 clips back to back.
# Usage (from the repository root, under the shared lock):
#   flock /tmp/pagereel-build.lock bench/serve/io_latency.sh
# Settings: PHASE_SECONDS=30 CAPTURES=(the service's capacity: 4 by default) OUT_DIR,
#   and those of services.sh (ports, SERVE_CMD).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${OUT_DIR:-$(mktemp -d -t io-latency.XXXXXX)}
mkdir -p "$out"
log() { echo "io_latency: $*" >&2; }
# shellcheck source=services.sh
. "$here/services.sh"
trap stop_all EXIT
trap 'exit 143' INT TERM
start_pages
start_service pagereel
python3 "$here/io_latency.py" "$svc_base" "$pages/chart.html" "${PHASE_SECONDS:-30}" "${CAPTURES:-4}" \
  | tee "$out/io_latency.jsonl"
log "service log: $out"
