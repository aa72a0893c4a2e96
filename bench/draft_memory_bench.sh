#!/usr/bin/env bash
# Two figures for bench/RESULTS.md, from one command:
#   draft   --draft against the default render of the same film (wall time, size, frames)
#   memory  pagereel's own peak RSS on the heaviest frames it handles: ProRes 4444 with alpha
#           at 1920x1080 (PNG screenshots, 4 MB each), 2 lanes
# Usage: [FRAMES=300] bench/draft_memory_bench.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
bin=$build/src/cli/pagereel
frames=${FRAMES:-300}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
field() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d$2)" "$1"; }

echo "| run | size | wall s | fps | browser s | encode s | file | peak RSS pagereel | peak RSS browsers |"
echo "|---|---|---|---|---|---|---|---|---|"
run() {  # NAME OUTPUT ARGS...
  local name=$1 output=$2
  shift 2
  "$bin" render "$@" -o "$output" --progress json 2>"$out/log" >/dev/null ||
    { cat "$out/log" >&2; exit 1; }
  local d
  d=$(grep '"event":"done"' "$out/log")
  printf '| %s | %s | %.1f | %.1f | %.1f | %.1f | %d KB | %d MB | %d MB |\n' "$name" \
    "$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=s=x:p=0 "$output")" \
    "$(field "$d" "['wall_s']")" "$(field "$d" "['fps']")" "$(field "$d" "['browser_s']")" \
    "$(field "$d" "['encode_s']")" "$(( $(stat -c %s "$output") / 1024 ))" \
    "$(( $(field "$d" "['peak_rss_self_bytes']") >> 20 ))" "$(( $(field "$d" "['peak_rss_browsers_bytes']") >> 20 ))"
}
for comp in light heavy; do
  page="$here/compositions/$comp/index.html"
  n=$frames; [ "$comp" = heavy ] && n=$(( frames / 4 ))
  run "$comp, default, $n frames" "$out/final.mp4" "$page" --size 1920x1080 --frames "$n"
  run "$comp, --draft, $n frames" "$out/draft.mp4" "$page" --size 1920x1080 --frames "$n" --draft
done
run "light, ProRes 4444 --alpha, 2 lanes, $frames frames" "$out/alpha.mov" \
  "$here/compositions/light/index.html" --size 1920x1080 --frames "$frames" --alpha --lanes 2
