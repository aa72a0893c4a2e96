#!/usr/bin/env bash
# Capture-service figures for bench/RESULTS.md (issue 7): `pagereel serve` against the Node
# puppeteer-core service (bench/serve/node-service) and browserless
# (bench/serve/browserless), one service at a time, in one run, on the same local pages
# (bench/serve/pages, served on 127.0.0.1:PAGEPORT). For each service:
#   posted    1280x720 PNG of the dashboard posted as the HTML body (static.html with its
#             stylesheet inlined; issue 20's speed goal) at each concurrency: pagereel with
#             its default wait, the Node service with setContent(html, {waitUntil: 'load'});
#   load      1280x720 PNG of the static page and of the chart page at each concurrency
#             (hey, closed loop, DURATION s each): captures/s, p50/p99 of the 200s;
#   pdf       PDF of the 5-page document at each of PDF_CONCS;
#   overload  open-loop arrivals at OVERLOAD_FACTOR x the service's best static-PNG rate for
#             OVERLOAD_SECONDS: count of each status, p99 of the 200s, alive after;
#   soak      SOAK_N static-PNG captures in a row (SOAK_CONC at once), sampling the memory
#             of the service process and of its descendants (the browsers) every SOAK_EVERY.
# Then prints Markdown tables, with ratios against the Node service.
#
# Usage (from the repository root, under the shared lock; nothing else should run):
#   flock /tmp/pagereel-build.lock bench/serve/serve_bench.sh
# Settings (environment):
#   SERVICES="pagereel node browserless"   which services, in this order; node-cN is the
#                  Node service with N concurrent captures (default CAPACITY), e.g. node-c4;
#                  pagereel-<NAME> is pagereel started by SERVE_CMD_<NAME> (services.sh), and a
#                  service may come more than once (A and B alternated: the last table has
#                  one row per run)
#   SERVE_CMD      how to start pagereel; default
#                  "build/src/cli/pagereel serve --listen 127.0.0.1:$PAGEREEL_PORT --allow http://127.0.0.1:$PAGEPORT"
#   PAGEREEL_PORT=8080 NODE_PORT=8090 BROWSERLESS_PORT=3000 PAGEPORT=8091
#   CAPACITY=nproc QUEUE=100 QUEUE_WAIT_MS=20000   given to the Node service and browserless
#                  (pagereel uses its own defaults unless SERVE_CMD says otherwise)
#   STEPS="load pdf overload soak" (and posted)  CONCS="1 2 4 8"  DURATION=20  PDF_CONCS="1 2"  WARMUP=10
#   OVERLOAD_SECONDS=300 OVERLOAD_FACTOR=2 [OVERLOAD_RATE=captures/s, instead of the factor]
#   SOAK_N=10000 SOAK_EVERY=500 SOAK_CONC=2
#   OUT_DIR        where raw results, logs and hey CSVs go (default: a new temporary folder,
#                  kept and named at the end)
# A smoke run takes under a minute:
#   SERVICES=node CONCS="1 2" DURATION=3 PDF_CONCS=1 WARMUP=2 OVERLOAD_SECONDS=5 \
#     SOAK_N=20 SOAK_EVERY=10 bench/serve/serve_bench.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py="python3 $here/serve_bench.py"

services=${SERVICES:-pagereel node browserless}
steps=${STEPS:-load pdf overload soak}
concs=${CONCS:-1 2 4 8}
duration=${DURATION:-20}
pdf_concs=${PDF_CONCS:-1 2}
warmup=${WARMUP:-10}
overload_s=${OVERLOAD_SECONDS:-300}
overload_factor=${OVERLOAD_FACTOR:-2}
soak_n=${SOAK_N:-10000}
soak_every=${SOAK_EVERY:-500}
soak_conc=${SOAK_CONC:-2}
out=${OUT_DIR:-$(mktemp -d -t serve-bench.XXXXXX)}
mkdir -p "$out"
results=$out/results.jsonl
: >"$results"

log() { echo "serve_bench: $*" >&2; }
has_step() { [[ " $steps " == *" $1 "* ]]; }

if ! command -v hey >/dev/null; then
  log "hey is missing: apt-get install -y hey"; exit 2
fi

# shellcheck source=services.sh
. "$here/services.sh"
trap stop_all EXIT
trap 'exit 143' INT TERM
start_pages
posted=$out/posted.html
$py posted-page "$here/pages" "$pages" >"$posted"

# request KIND PAGE: sets req_url, req_method and req_body for one capture by the service
# just started (svc_kind).
# KIND png: 1280x720 PNG; posted: the same of the document in $posted, POSTed as the body
# (PAGE unused); pdf: A4 PDF with backgrounds. The Node service and browserless
# both wait for network idle (puppeteer's networkidle0); pagereel uses its default wait.
request() {
  local target="$pages/${2:-}"
  req_method=GET; req_body=""; req_body_file=""
  case $svc_kind:$1 in
    pagereel:posted|node:posted)
      req_url="$svc_base/v1/screenshot?type=png&width=1280&height=720"
      req_method=POST; req_body_file=$posted ;;
    pagereel:png|node:png)
      req_url="$svc_base/v1/screenshot?url=$target&type=png&width=1280&height=720" ;;
    pagereel:pdf|node:pdf)
      req_url="$svc_base/v1/pdf?url=$target" ;;
    browserless:png)
      req_url="$svc_base/screenshot"; req_method=POST
      req_body="{\"url\":\"$target\",\"viewport\":{\"width\":1280,\"height\":720},\"options\":{\"type\":\"png\"},\"gotoOptions\":{\"waitUntil\":\"networkidle0\"}}" ;;
    browserless:pdf)
      req_url="$svc_base/pdf"; req_method=POST
      req_body="{\"url\":\"$target\",\"options\":{\"format\":\"A4\",\"printBackground\":true},\"gotoOptions\":{\"waitUntil\":\"networkidle0\"}}" ;;
  esac
}

# hey_run CSV ARGS...: one hey run for the current request, its per-request CSV in CSV.
hey_run() {
  local csv=$1; shift
  local extra=()
  if [ -n "$req_body_file" ]; then extra=(-m POST -T text/html -D "$req_body_file")
  elif [ "$req_method" = POST ]; then extra=(-m POST -T application/json -d "$req_body"); fi
  hey "$@" -t 120 -o csv "${extra[@]}" "$req_url" >"$csv"
}

record() {  # JSON_FIGURES KEY=VALUE...: one line of results.jsonl
  python3 - "$@" >>"$results" <<'EOF'
import json, sys
d = json.loads(sys.argv[1])
for kv in sys.argv[2:]:
    k, v = kv.split('=', 1)
    d[k] = json.loads(v) if v[:1] in '[{' or v.replace('.', '', 1).isdigit() or v in ('true', 'false') else v
print(json.dumps(d))
EOF
}

alive() { kill -0 "$svc_pid" 2>/dev/null && curl -sf -o /dev/null -m 10 "$svc_ready"; }

closed_loop() {  # SERVICE TEST CONCS: the current request, DURATION s at each concurrency
  local c tag
  for c in $3; do
    tag="$1-$2-c$c"
    log "$tag: $duration s"
    # The service's whole process tree's memory, sampled every 2 s while hey runs: the
    # peak goes with the figures (what more captures at once cost).
    ( while :; do $py mem "$svc_pid" 2>/dev/null; sleep 2; done ) >"$out/$tag.mem" &
    local sampler=$!
    hey_run "$out/$tag.csv" -z "${duration}s" -c "$c"
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
    local peak
    peak=$(python3 -c "import json,sys; print(max([json.loads(l)['tree_rss_kb'] for l in open(sys.argv[1]) if l.strip()] or [0]) // 1024)" "$out/$tag.mem")
    record "$($py hey-stats "$out/$tag.csv")" service="$1" test="$2" conc="$c" peak_tree_rss_mb="$peak"
  done
}

run_service() {
  local name=$1
  log "$name: starting"
  start_service "$name" || return 0
  request png static.html
  hey_run "$out/$name-warmup.csv" -n "$(( warmup > 2 ? warmup : 2 ))" -c 2

  if has_step posted; then
    request posted
    closed_loop "$name" png-posted "$concs"
  fi
  if has_step load; then
    for page in static chart; do
      request png "$page.html"
      closed_loop "$name" "png-$page" "$concs"
    done
  fi
  if has_step pdf; then
    request pdf doc.html
    closed_loop "$name" pdf-doc "$pdf_concs"
  fi
  if { has_step overload || has_step soak; } && ! alive; then
    log "$name is not alive or not ready after the load steps: overload and soak skipped"
  fi
  if has_step overload && alive; then
    local rate=${OVERLOAD_RATE:-}
    if [ -z "$rate" ]; then
      rate=$(python3 -c "
import json, sys
best = [json.loads(l)['ok_per_s'] for l in open(sys.argv[1])
        if json.loads(l)['service'] == sys.argv[2] and json.loads(l)['test'] == 'png-static']
print(f'{max(best) * float(sys.argv[3]):.3f}' if best else '')" "$results" "$name" "$overload_factor")
    fi
    if [ -z "$rate" ]; then
      log "$name: no static PNG rate measured (STEPS without load): set OVERLOAD_RATE"
    else
      request png static.html
      log "$name-overload: $rate captures/s offered for $overload_s s"
      local args=(--rate "$rate" --seconds "$overload_s" --url "$req_url" --method "$req_method")
      if [ "$req_method" = POST ]; then args+=(--body "$req_body" --header "Content-Type: application/json"); fi
      local fig
      fig=$($py openloop "${args[@]}")
      local ok=false; alive && ok=true
      record "$fig" service="$name" test=overload refusal_code="$refusal" alive="$ok"
    fi
  fi
  if has_step soak && alive; then
    request png static.html
    log "$name-soak: $soak_n captures, $soak_conc at once, memory every $soak_every"
    # Each sample also goes to a file at once, so a soak cut short keeps its figures.
    local samples="[" done_n=0 n t0 t1 sample
    sample=$(record_mem 0); samples+=$sample; echo "$sample" >"$out/$name-soak-samples.jsonl"
    t0=$(date +%s.%N)
    : >"$out/$name-soak.csv"
    while [ "$done_n" -lt "$soak_n" ]; do
      n=$(( soak_n - done_n < soak_every ? soak_n - done_n : soak_every ))
      hey_run "$out/$name-soak-batch.csv" -n "$n" -c "$(( soak_conc < n ? soak_conc : n ))"
      tail -n +2 "$out/$name-soak-batch.csv" >>"$out/$name-soak.csv"
      done_n=$(( done_n + n ))
      kill -0 "$svc_pid" 2>/dev/null || { log "$name died during the soak"; break; }
      sample=$(record_mem "$done_n"); samples+=",$sample"; echo "$sample" >>"$out/$name-soak-samples.jsonl"
    done
    t1=$(date +%s.%N)
    samples+="]"
    python3 - "$out/$name-soak.csv" "$t0" "$t1" "$samples" "$name" >>"$results" <<'EOF'
import json, sys
codes, ok = {}, 0
for line in open(sys.argv[1]):
    cells = line.strip().split(',')
    if len(cells) < 7:
        continue
    codes[cells[6]] = codes.get(cells[6], 0) + 1
seconds = float(sys.argv[3]) - float(sys.argv[2])
n = sum(codes.values())
print(json.dumps({'service': sys.argv[5], 'test': 'soak', 'requests': n, 'codes': codes,
                  'seconds': round(seconds, 1),
                  'ok_per_s': round(codes.get('200', 0) / seconds, 3),
                  'samples': json.loads(sys.argv[4])}))
EOF
  fi
  stop_pid "$svc_pid"; svc_pid=""
  log "$name: done"
}

record_mem() {  # AFTER: one memory sample of the service and its process tree, as JSON
  $py mem "$svc_pid" | python3 -c "import json,sys; d=json.load(sys.stdin); d['after']=$1; print(json.dumps(d))"
}

for s in $services; do run_service "$s"; done

# ---- the report ------------------------------------------------------------------------
browser=$(/usr/lib/chromium/chromium-headless-shell --version 2>/dev/null || echo unknown)
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "Measured $(date -u +%Y-%m-%d) at commit \`$commit\` on $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), $browser."
echo "Settings: SERVICES=\"$services\" CAPACITY=$capacity QUEUE=$queue QUEUE_WAIT_MS=$queue_wait_ms CONCS=\"$concs\" DURATION=$duration PDF_CONCS=\"$pdf_concs\" OVERLOAD_SECONDS=$overload_s OVERLOAD_FACTOR=$overload_factor SOAK_N=$soak_n SOAK_EVERY=$soak_every SOAK_CONC=$soak_conc"
echo
$py table "$results"
echo
$py runs "$results"
log "raw results, logs and CSVs: $out (${SECONDS} s in all)"
