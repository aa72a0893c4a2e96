#!/usr/bin/env bash
# What --preroll auto chooses, and what each mode costs and gets right, for bench/RESULTS.md.
# Each page is rendered with LANES lanes three times (exact, jump, auto); the table gives
# the wall time, what auto chose, and whether the jump and auto films are the exact film
# (ffmpeg framemd5 of every frame).
# Pages: the bundled example, the two bench compositions, the GSAP conformance page (GSAP
# timelines at load and a tween a timer starts) and tests/pages/timecode.html (a count kept
# per animation frame).
# Usage: [FRAMES=300] [SIZE=640x360] [LANES=2] bench/preroll_bench.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
bin=$build/src/cli/pagereel
frames=${FRAMES:-300}
size=${SIZE:-640x360}
lanes=${LANES:-2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if [ ! -d "$root/tests/conformance/node_modules/gsap" ]; then
  (cd "$root/tests/conformance" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

field() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d$2)" "$1"; }
md5s() { ffmpeg -v error -i "$1" -f framemd5 - | grep -v '^#' | awk -F, '{print $NF}' | md5sum | cut -c1-12; }

echo "| page | exact s | jump s | auto s | auto chose | jump film = exact film | auto film = exact film |"
echo "|---|---|---|---|---|---|---|"
for page in examples/lower-third bench/compositions/light bench/compositions/heavy \
            tests/conformance/pages/gsap tests/pages/timecode.html; do
  declare -A wall=() sum=()
  chose=""
  for mode in exact jump auto; do
    "$bin" render "$root/$page" -o "$out/$mode.mp4" --frames "$frames" --size "$size" \
      --lanes "$lanes" --preroll "$mode" --progress json 2>"$out/log" >/dev/null ||
      { echo "preroll_bench: $page $mode failed" >&2; cat "$out/log" >&2; exit 1; }
    done_line=$(grep '"event":"done"' "$out/log")
    wall[$mode]=$(field "$done_line" "['wall_s']")
    sum[$mode]=$(md5s "$out/$mode.mp4")
    [ "$mode" = auto ] && chose=$(field "$done_line" "['preroll']")
  done
  same() { [ "${sum[$1]}" = "${sum[exact]}" ] && echo yes || echo NO; }
  printf '| %s | %.1f | %.1f | %.1f | %s | %s | %s |\n' "$page" "${wall[exact]}" "${wall[jump]}" \
    "${wall[auto]}" "${chose%% (*}" "$(same jump)" "$(same auto)"
done
