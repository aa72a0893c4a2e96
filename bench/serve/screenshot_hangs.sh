#!/usr/bin/env bash
# How often `pagereel serve` loses a screenshot to a Page.captureScreenshot that Chromium
# never answers (issue 20: about 1 in 300 captures, 504 after 30 s): N captures of the
# posted dashboard (serve_bench.sh's "posted" request) at CONC at once, each with a
# TIMEOUT_MS capture timeout so that a hang costs seconds, not half a minute; then the
# answers by status, the 504s that waited for the screenshot, and the service's
# screenshot-retry counter. Under the shared lock, from the repository root:
#   flock /tmp/pagereel-build.lock bench/serve/screenshot_hangs.sh [PAGEREEL_BINARY]
# Settings: N=1500 CONC=8 TIMEOUT_MS=8000 PAGEPORT=8091 PAGEREEL_PORT=8080; KEEP_LOG=FILE
# keeps the service's log.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/src/cli/pagereel}
n=${N:-1500}; conc=${CONC:-8}; timeout_ms=${TIMEOUT_MS:-8000}
pageport=${PAGEPORT:-8091}; port=${PAGEREEL_PORT:-8080}
posted=$(mktemp -t posted.XXXXXX.html)
node "$here/pages/server.mjs" --port "$pageport" 2>/dev/null & pages_pid=$!
"$bin" serve --listen "127.0.0.1:$port" --allow "http://127.0.0.1:$pageport" >"$posted.log" 2>&1 &
svc_pid=$!
cleanup() {
  kill $svc_pid $pages_pid 2>/dev/null; wait $svc_pid 2>/dev/null
  [ -n "${KEEP_LOG:-}" ] && cp "$posted.log" "$KEEP_LOG"
  rm -f "$posted" "$posted.log"
}
trap cleanup EXIT
until curl -sf -o /dev/null "http://127.0.0.1:$pageport/static.html"; do sleep 0.3; done
python3 "$here/serve_bench.py" posted-page "$here/pages" "http://127.0.0.1:$pageport" >"$posted"
until curl -sf -o /dev/null "http://127.0.0.1:$port/readyz"; do
  kill -0 $svc_pid 2>/dev/null || { cat "$posted.log" >&2; exit 1; }; sleep 0.3
done
url="http://127.0.0.1:$port/v1/screenshot?type=png&width=1280&height=720&timeout=$timeout_ms"
hey -n "$n" -c "$conc" -t 0 -m POST -T text/html -D "$posted" "$url" |
  grep -E "Requests/sec|^ *\[[0-9]{3}\]"
echo "504s waiting for the screenshot: $(grep -c '"status":504.*captureScreenshot\|captureScreenshot.*"status":504' "$posted.log" || true)"
echo "all 504s: $(grep -c '"status":504' "$posted.log" || true)"
curl -s "http://127.0.0.1:$port/metrics" | grep -E '^pagereel_screenshot_retries_total' || echo "pagereel_screenshot_retries_total: (not exported)"
