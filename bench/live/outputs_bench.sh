#!/usr/bin/env bash
# Outputs of `pagereel live` against the program rate (issue 19, item 2): frames each
# output lost and the CPU the show used, for 1, 2 and 4 outputs with the same encoder
# settings (x264 veryfast zerolatency, to MPEG-TS and Matroska files), at 720p59.94,
# 1080p25 and 1080p59.94, quiet and with one CPU hog (`sh -c 'while :; do :; done'`) beside
# it. One source: bench/live/pages/scorebug.html, full frame. Run alone (under the build
# lock); results in bench/RESULTS.md.
#
#   bench/live/outputs_bench.sh SECONDS OUT_DIR NAME=PAGEREEL [NAME=PAGEREEL ...]
#
# Environment: PAGE (default bench/live/pages/scorebug.html), FORMATS (default
# "1280x720@59.94 1920x1080@25 1920x1080@59.94"), COUNTS ("1 2 4"), LOADS ("quiet hog").
#
# Prints one line per run: binary, format, outputs, load, ticks, per-output frames lost
# (min-max, % of ticks), CPU seconds per wall second (pagereel and its browsers).
set -euo pipefail
seconds=$1 out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
printf '%-8s %-14s %-7s %-5s %6s %-22s %s\n' binary format outputs load ticks "lost per output" "CPU (cores)"
page=${PAGE:-$here/pages/scorebug.html}
for format in ${FORMATS:-1280x720@59.94 1920x1080@25 1920x1080@59.94}; do
  size=${format%@*} fps=${format#*@}
  for outputs in ${COUNTS:-1 2 4}; do
    for load in ${LOADS:-quiet hog}; do
      for named in "$@"; do
        name=${named%%=*} bin=${named#*=}
        tag="$name-$size-$fps-$outputs-$load"
        args=()
        for k in $(seq 1 "$outputs"); do
          ext=ts
          [ $((k % 2)) -eq 0 ] && ext=mkv
          args+=(--output "$out/$tag-$k.$ext")
        done
        hog=
        if [ "$load" = hog ]; then
          sh -c 'while :; do :; done' &
          hog=$!
        fi
        /usr/bin/time -f '%e %U %S' -o "$out/$tag.time" "$bin" live --source "$page" \
          --size "$size" --fps "$fps" --duration "$seconds" --status-every 0 --control none \
          "${args[@]}" 2>"$out/$tag.log" || true
        [ -n "$hog" ] && kill "$hog" && wait "$hog" 2>/dev/null || true
        ticks=$(sed -n 's/^show ended after \([0-9]*\) ticks.*/\1/p' "$out/$tag.log")
        lost=$(sed -n 's/^  output .*: \([0-9]*\) frames, \([0-9]*\) dropped.*/\2/p' "$out/$tag.log" | sort -n | tr '\n' ' ')
        python3 - "$name" "$format" "$outputs" "$load" "$ticks" "$lost" "$(cat "$out/$tag.time")" <<'PY'
import sys
name, fmt, outputs, load, ticks, lost, timing = sys.argv[1:]
ticks = int(ticks or 0)
lost = [int(x) for x in lost.split()]
wall, user, sys_ = (float(x) for x in timing.split()[-3:])
span = f"{min(lost)}-{max(lost)}" if lost else "?"
pct = f"{100 * min(lost) / ticks:.1f}-{100 * max(lost) / ticks:.1f} %" if lost and ticks else ""
print(f"{name:<8} {fmt:<14} {outputs:<7} {load:<5} {ticks:6d} {span + ' (' + pct + ')':<22} {(user + sys_) / wall:.2f}")
PY
        rm -f "$out/$tag"-*.ts "$out/$tag"-*.mkv
      done
    done
  done
done
