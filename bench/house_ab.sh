#!/usr/bin/env bash
# Before and after a change that must not change behaviour, output bytes or speed: runs two
# builds of pagereel one after the other, alternating, on the same machine, and prints
# Markdown tables for bench/RESULTS.md.
#   render  the light and heavy compositions to MP4 (1 and 2 lanes), a PNG sequence and a
#           GIF: fps from the render's own summary, and whether the two builds' outputs are
#           the same bytes;
#   serve   `pagereel serve` with its defaults: static 1280x720 PNGs, CAPTURES of them 4 at
#           a time (captures/s), then clips of the Chart.js page one at a time, CLIPS each of
#           MP4 and GIF (640x360, 2 s at 10 fps): median total and encode milliseconds from
#           the service's own log lines, and the clips' sizes.
# Every measurement alternates A, B, A, B (ROUNDS times), so drift on a noisy machine hits
# both. Run alone (no build or test meanwhile), from the repository root:
#   flock /tmp/pagereel-build.lock bench/house_ab.sh OLD_PAGEREEL NEW_PAGEREEL [PARTS]
# PARTS: "render serve" (default). Settings: ROUNDS=2 CAPTURES=40 CLIPS=8 OUT_DIR.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
a=$(realpath "$1")
b=$(realpath "$2")
parts=${3:-render serve}
rounds=${ROUNDS:-2}
out=${OUT_DIR:-$(mktemp -d -t house-ab.XXXXXX)}
mkdir -p "$out"
log() { echo "house_ab: $*" >&2; }

field() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d$2)" "$1"; }

# digest PATH: md5 of a file, or of every file of a sequence folder in name order.
digest() {
  if [ -d "$1" ]; then (cd "$1" && cat $(ls | sort) | md5sum | cut -c1-12); else md5sum "$1" | cut -c1-12; fi
}

render_part() {
  echo "| film | lanes | A fps (runs) | B fps (runs) | B / A | same bytes |"
  echo "|---|---|---|---|---|---|"
  # name comp size frames lanes output
  while read -r name comp size frames lanes output; do
    [ -n "$name" ] || continue
    local url="file://$here/compositions/$comp/index.html"
    local fa=() fb=() da="" db=""
    for r in $(seq "$rounds"); do
      for side in a b; do
        local bin=${!side} dir="$out/$side-$name"
        rm -rf "$dir"; mkdir -p "$dir"
        if ! "$bin" render "$url" -o "$dir/$output" --size "$size" --frames "$frames" \
               --lanes "$lanes" --progress json 2>"$out/log" >/dev/null; then
          log "$side failed on $name:"; cat "$out/log" >&2; continue
        fi
        local done_line fps
        done_line=$(grep '"event":"done"' "$out/log")
        fps=$(field "$done_line" "['fps']")
        local d
        if [[ $output == *%* ]]; then d=$(digest "$dir"); else d=$(digest "$dir/$output"); fi
        if [ "$side" = a ]; then fa+=("$fps"); da=$d; else fb+=("$fps"); db=$d; fi
      done
    done
    python3 - "$name" "$lanes" "$da" "$db" "${fa[*]}" "${fb[*]}" <<'PY'
import statistics, sys
name, lanes, da, db, fa, fb = sys.argv[1:7]
fa = [float(x) for x in fa.split()]; fb = [float(x) for x in fb.split()]
ma, mb = statistics.median(fa), statistics.median(fb)
runs = lambda v: ", ".join(f"{x:.1f}" for x in v)
same = "yes" if da == db and da else f"no ({da} / {db})"
print(f"| {name} | {lanes} | {ma:.1f} ({runs(fa)}) | {mb:.1f} ({runs(fb)}) | {mb / ma:.2f} | {same} |")
PY
  done <<EOF
light-720p-mp4 light 1280x720 300 1 film.mp4
light-720p-mp4 light 1280x720 300 2 film.mp4
heavy-720p-mp4 heavy 1280x720 150 1 film.mp4
light-720p-png light 1280x720 90 1 %05d.png
light-360p-gif light 640x360 60 1 film.gif
EOF
}

# serve_round SIDE BIN: one service's static captures and clips; appends JSON lines.
serve_round() {
  local side=$1 bin=$2 port=8480
  local pages_port=8491
  "$bin" serve --listen "127.0.0.1:$port" --allow "http://127.0.0.1:$pages_port" \
    >"$out/serve-$side.log" 2>&1 &
  local pid=$!
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.3; done
  python3 "$here/house_ab_serve.py" "$side" "http://127.0.0.1:$port" \
    "http://127.0.0.1:$pages_port" "${CAPTURES:-40}" "${CLIPS:-8}" "$out/serve-$side.log" \
    >>"$out/serve.jsonl"
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
}

serve_part() {
  if [ ! -d "$here/serve/pages/node_modules" ]; then
    (cd "$here/serve/pages" && npm ci --no-audit --no-fund --loglevel=error >&2)
  fi
  node "$here/serve/pages/server.mjs" --port 8491 2>"$out/pages.log" &
  pages_pid=$!
  trap 'kill "${pages_pid:-}" 2>/dev/null || true' EXIT
  sleep 1
  : >"$out/serve.jsonl"
  for r in $(seq "$rounds"); do
    serve_round a "$a"
    serve_round b "$b"
  done
  kill "$pages_pid" 2>/dev/null || true
  python3 "$here/house_ab_serve.py" table "$out/serve.jsonl"
}

for part in $parts; do
  log "$part (A = $a, B = $b)"
  "${part}_part"
  echo
done
log "raw results and logs: $out"
