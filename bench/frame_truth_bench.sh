#!/usr/bin/env bash
# What the default pre-roll (exact, every frame drawn) costs against the one it replaced
# (auto, with noDisplayUpdates frames), for bench/RESULTS.md "frame truth (issue 18)".
# Each film is rendered in one run by: the baseline binary with its default pre-roll on
# LANES lanes, this build with its default on LANES lanes, and this build on 1 lane (no
# pre-roll at all). Wall seconds from the renders' own summaries, ratios within the row.
# Films: the light and heavy compositions (1280x720, 300 and 150 frames) and a long one
# (3000 frames of the light composition at LONG_SIZE).
# Usage: [LANES=2] [LONG_SIZE=640x360] bench/frame_truth_bench.sh BUILD_DIR BASELINE_PAGEREEL
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:?build folder}
baseline=${2:?baseline pagereel binary}
bin=$build/src/cli/pagereel
lanes=${LANES:-2}
long_size=${LONG_SIZE:-640x360}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

field() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d$2)" "$1"; }
md5s() { ffmpeg -v error -i "$1" -f framemd5 - | grep -v '^#' | awk -F, '{print $NF}' | md5sum | cut -c1-12; }
# render NAME BINARY PAGE SIZE FRAMES LANES: sets wall, preroll, frames_run, sum.
render() {
  "$2" render "$root/$3" -o "$out/$1.mp4" --size "$4" --frames "$5" --lanes "$6" \
    --progress json 2>"$out/log" >/dev/null ||
    { echo "frame_truth_bench: $1 failed" >&2; cat "$out/log" >&2; exit 1; }
  local done_line
  done_line=$(grep '"event":"done"' "$out/log")
  wall=$(field "$done_line" "['wall_s']")
  preroll=$(field "$done_line" "['preroll']")
  frames_run=$(field "$done_line" "['preroll_frames']")
  sum=$(md5s "$out/$1.mp4")
}

echo "| film | size | frames | baseline default, $lanes lanes: s (pre-roll) | this default, $lanes lanes: s (pre-roll frames) | this / baseline | 1 lane s | this $lanes lanes / 1 lane | films = 1 lane (baseline, this) |"
echo "|---|---|---|---|---|---|---|---|---|"
for film in "light bench/compositions/light 1280x720 300" "heavy bench/compositions/heavy 1280x720 150" \
            "long bench/compositions/light $long_size 3000"; do
  read -r name page size frames <<<"$film"
  render "$name-1" "$bin" "$page" "$size" "$frames" 1
  one_wall=$wall; one_sum=$sum
  render "$name-base" "$baseline" "$page" "$size" "$frames" "$lanes"
  base_wall=$wall; base_pre=$preroll; base_sum=$sum
  render "$name-new" "$bin" "$page" "$size" "$frames" "$lanes"
  new_wall=$wall; new_frames=$frames_run; new_sum=$sum
  same() { [ "$1" = "$one_sum" ] && echo yes || echo NO; }
  printf '| %s | %s | %s | %.1f (%s) | %.1f (%s) | %.2f | %.1f | %.2f | %s, %s |\n' "$name" "$size" \
    "$frames" "$base_wall" "${base_pre%% (*}" "$new_wall" "$new_frames" \
    "$(python3 -c "print($new_wall / $base_wall)")" "$one_wall" \
    "$(python3 -c "print($new_wall / $one_wall)")" "$(same "$base_sum")" "$(same "$new_sum")"
done
