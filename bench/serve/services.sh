# Sourced by serve_bench.sh and wait_bench.sh: starts and stops the local page server and
# the capture services on 127.0.0.1. The caller sets `here` (this folder), `root` (the
# repository), `out` (a folder for logs) and defines `log MESSAGE`.
# Settings (environment), with their defaults:
#   PAGEPORT=8091 PAGEREEL_PORT=8080 NODE_PORT=8090 BROWSERLESS_PORT=3000
#   CAPACITY=nproc QUEUE=100 QUEUE_WAIT_MS=20000   given to the Node service and browserless
#   SERVE_CMD="build/src/cli/pagereel serve --listen 127.0.0.1:$PAGEREEL_PORT --allow http://127.0.0.1:$PAGEPORT"
#   SERVE_CMD_<NAME>   how to start the service named pagereel-<NAME> (letters, digits and _),
#                  so that two builds or settings of pagereel alternate in one run, e.g.
#                  SERVICES="pagereel-A node-c4 pagereel-B pagereel-A pagereel-B"

pageport=${PAGEPORT:-8091}
pagereel_port=${PAGEREEL_PORT:-8080}
node_port=${NODE_PORT:-8090}
browserless_port=${BROWSERLESS_PORT:-3000}
capacity=${CAPACITY:-$(nproc)}
queue=${QUEUE:-100}
queue_wait_ms=${QUEUE_WAIT_MS:-20000}
serve_cmd=${SERVE_CMD:-$root/build/src/cli/pagereel serve --listen 127.0.0.1:$pagereel_port --allow http://127.0.0.1:$pageport}
pages_pid=""
svc_pid=""

for dir in pages node-service; do
  if [ ! -d "$here/$dir/node_modules" ]; then
    (cd "$here/$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
  fi
done

descendants() {  # every descendant of $1, deepest first
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    descendants "$child"; echo "$child"
  done
}

stop_pid() {  # SIGTERM, up to 15 s, then SIGKILL; then any descendant left behind
  local pid=$1 left
  [ -n "$pid" ] || return 0
  left=$(descendants "$pid")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  for p in $left; do kill -KILL "$p" 2>/dev/null || true; done
}

stop_all() { stop_pid "$svc_pid"; svc_pid=""; stop_pid "$pages_pid"; pages_pid=""; }

wait_ready() {  # URL SECONDS [PID]: gives up early when PID exits
  local deadline=$((SECONDS + $2))
  while [ $SECONDS -lt "$deadline" ]; do
    curl -sf -o /dev/null -m 2 "$1" && return 0
    if [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null; then return 1; fi
    sleep 0.3
  done
  return 1
}

# start_pages: the page server on 127.0.0.1:$pageport; sets pages_pid and pages (its base URL).
start_pages() {
  node "$here/pages/server.mjs" --port "$pageport" 2>"$out/pages.log" &
  pages_pid=$!
  pages="http://127.0.0.1:$pageport"
  wait_ready "$pages/static.html" 10 || { log "the page server did not start"; return 1; }
}

# start_service NAME: starts pagereel, pagereel-<NAME> (SERVE_CMD_<NAME>), node, node-cN (the Node service with N concurrent
# captures instead of CAPACITY) or browserless; sets svc_pid, svc_kind (pagereel, node or
# browserless), svc_base, svc_ready (a URL that answers 2xx when it can take work) and
# refusal (its overload code).
start_service() {
  svc_kind=${1%%-c*}
  case $1 in
    pagereel)
      svc_base="http://127.0.0.1:$pagereel_port"; svc_ready="$svc_base/readyz"; refusal=503
      bash -c "exec $serve_cmd" >"$out/$1.log" 2>&1 & ;;
    pagereel-*)
      local var="SERVE_CMD_${1#pagereel-}"
      if [ -z "${!var:-}" ]; then log "service '$1' needs $var: how to start it"; return 1; fi
      svc_kind=pagereel
      svc_base="http://127.0.0.1:$pagereel_port"; svc_ready="$svc_base/readyz"; refusal=503
      bash -c "exec ${!var}" >"$out/$1-$SECONDS.log" 2>&1 & ;;
    node|node-c[0-9]*)
      local conc=$capacity
      [ "$1" = node ] || conc=${1#node-c}
      svc_base="http://127.0.0.1:$node_port"; svc_ready="$svc_base/healthz"; refusal=503
      PORT=$node_port CONCURRENCY=$conc QUEUE_MAX=$queue QUEUE_MAX_WAIT_MS=$queue_wait_ms \
        node "$here/node-service/server.mjs" >"$out/$1.log" 2>&1 & ;;
    browserless)
      # browserless answers 429 when its queue is full.
      svc_base="http://127.0.0.1:$browserless_port"; svc_ready="$svc_base/active"; refusal=429
      PORT=$browserless_port CONCURRENT=$capacity QUEUED=$queue \
        "$here/browserless/start.sh" >"$out/$1.log" 2>&1 & ;;
    *) log "unknown service '$1' (pagereel, node, node-cN or browserless)"; return 1 ;;
  esac
  svc_pid=$!
  if ! wait_ready "$svc_ready" 120 "$svc_pid"; then
    log "$1 did not become ready; its log:"; tail -20 "$out/$1.log" >&2
    stop_pid "$svc_pid"; svc_pid=""; return 1
  fi
}
