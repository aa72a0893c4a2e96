#!/usr/bin/env bash
# What Web Audio costs a film, for bench/RESULTS.md: SECONDS_OF_FILM (30) of 640x360
# H.264 at 30 fps, one lane, of a page without sound (web_audio/silent.html, A) and of the
# same pictures with a Web Audio graph playing music, read by an AnalyserNode every frame
# (web_audio/graph.html, B), served over loopback HTTP; alternating A and B, RUNS pairs.
# Wall seconds per film second, CPU seconds (pagereel and its browsers) and peak RSS of
# pagereel's own process.
#   [SECONDS_OF_FILM=30] [RUNS=3] bench/web_audio_bench.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
bin=$build/src/cli/pagereel
film_s=${SECONDS_OF_FILM:-30}
runs=${RUNS:-3}
out=$(mktemp -d)
port=$((20000 + RANDOM % 20000))
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$here/web_audio" >/dev/null 2>&1 &
server=$!
trap 'kill $server; rm -rf "$out"' EXIT
sleep 1

step() {  # LABEL PAGE: wall s per film s, CPU s, max RSS MB
  local label=$1 page=$2
  /usr/bin/time -f "%e %U %S %M" -o "$out/time" "$bin" render "http://127.0.0.1:$port/$page" \
    -o "$out/$page.mp4" --duration "$film_s" --size 640x360 --lanes 1 >/dev/null 2>"$out/log"
  read -r wall user sys rss <"$out/time"
  printf '| %s | %.2f | %.3f | %.1f | %.0f |\n' "$label" "$wall" "$(echo "$wall / $film_s" | bc -l)" \
    "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)"
}

echo "| film (in the order run) | wall s | wall s per film s | CPU s | pagereel peak RSS MB |"
echo "|---|---|---|---|---|"
for ((i = 1; i <= runs; i++)); do
  step "A, no sound" silent.html
  step "B, Web Audio graph" graph.html
done
grep "sound:" "$out/log" | sed 's/^ */last B: /'
ffprobe -v error -show_entries stream=codec_name,duration -of csv=p=0 "$out/graph.html.mp4" | sed 's/^/B film: /'
