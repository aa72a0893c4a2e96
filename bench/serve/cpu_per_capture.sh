#!/usr/bin/env bash
# CPU of `pagereel serve`'s whole process tree (service, browser, zygotes, renderers, GPU and
# utility processes, the dead ones through their parents' cutime) per capture of the posted
# dashboard (serve_bench.sh's "posted" request), N captures at CONC at once after 8 to warm
# up; then the process kinds still running. Under the shared lock, from the repository root:
#   flock /tmp/pagereel-build.lock bench/serve/cpu_per_capture.sh [PAGEREEL_BINARY]
# Settings: N=120 CONC=4 PAGEPORT=8091 PAGEREEL_PORT=8080; PAGEREEL_BROWSER as for serve.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/src/cli/pagereel}
n=${N:-120}; conc=${CONC:-4}; pageport=${PAGEPORT:-8091}; port=${PAGEREEL_PORT:-8080}
posted=$(mktemp -t posted.XXXXXX.html)
node "$here/pages/server.mjs" --port "$pageport" 2>/dev/null & pages_pid=$!
"$bin" serve --listen "127.0.0.1:$port" --allow "http://127.0.0.1:$pageport" >"$posted.log" 2>&1 &
svc_pid=$!
trap 'kill $svc_pid $pages_pid 2>/dev/null; wait $svc_pid 2>/dev/null; rm -f "$posted" "$posted.log"' EXIT
until curl -sf -o /dev/null "http://127.0.0.1:$pageport/static.html"; do sleep 0.3; done
python3 "$here/serve_bench.py" posted-page "$here/pages" "http://127.0.0.1:$pageport" >"$posted"
until curl -sf -o /dev/null "http://127.0.0.1:$port/readyz"; do
  kill -0 $svc_pid 2>/dev/null || { cat "$posted.log" >&2; exit 1; }; sleep 0.3
done
desc() { local c; for c in $(ps -o pid= --ppid "$1"); do echo "$c"; desc "$c"; done; }
tree_ticks() {  # utime+stime+cutime+cstime of $1 and all its descendants
  local p t=0
  for p in $1 $(desc "$1"); do
    t=$((t + $(awk '{print $14+$15+$16+$17}' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo $t
}
url="http://127.0.0.1:$port/v1/screenshot?type=png&width=1280&height=720"
hey -n 8 -c "$conc" -m POST -T text/html -D "$posted" "$url" >/dev/null
t0=$(tree_ticks $svc_pid)
hey -n "$n" -c "$conc" -m POST -T text/html -D "$posted" "$url" | grep -E "Requests/sec|^ *\[[0-9]{3}\]"
t1=$(tree_ticks $svc_pid)
echo "CPU per capture, whole tree: $(( (t1 - t0) * 1000 / $(getconf CLK_TCK) / n )) ms"
echo -n "processes:"
for p in $(desc $svc_pid); do
  # Chromium's children rewrite their command line as one string (setproctitle).
  tr '\0' ' ' <"/proc/$p/cmdline" | grep -m1 -o -- '--type=[a-z-]*' || echo browser
done | sort | uniq -c | tr '\n' ' '
echo
