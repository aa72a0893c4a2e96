#!/usr/bin/env bash
# Gaps in a live source's sound beside two CPU hogs (issue 16): the tone page on air to a
# Matroska file, its browser's PulseAudio buffer at 32 ms (A: about what Chromium asks for
# itself, tlength 32 ms) and at pagereel's 100 ms (B: SoundServer::kBrowserLatencyMs),
# alternated A B A B ...; for each run the file's gaps (tone_gaps.py) and the gaps the show
# counted (its summary). Starts the hogs itself and ends them (by pid). Run under the lock:
#   flock /tmp/pagereel-build.lock bench/live/sound_gaps.sh PAGEREEL OUT_DIR [SECONDS] [ROUNDS] [FPS]
set -euo pipefail
bin=$1 out=$2 seconds=${3:-30} rounds=${4:-4} fps=${5:-30000/1001}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
hogs=()
for i in 1 2; do timeout 3600 sh -c 'while :; do :; done' & hogs+=($!); done
trap 'kill "${hogs[@]}" 2>/dev/null || true' EXIT
run() {  # $1: name, $2: buffer ms. Prints the file's gaps and the counted ones.
  local name=$1
  PULSE_LATENCY_MSEC=$2 "$bin" live --source "$here/pages/tone.html" --size 640x360 --fps "$fps" \
    --output "$out/$name.mkv" --duration "$seconds" --status-every 0 --control none 2>"$out/$name.log" \
    || { echo "$name: pagereel failed" >&2; tail -5 "$out/$name.log" >&2; return 1; }
  local file counted
  python3 "$here/tone_gaps.py" "$out/$name.mkv" >"$out/$name.gaps"
  file=$(head -1 "$out/$name.gaps")
  counted=$(grep -o "its sound: [0-9]* gaps ([0-9]* samples" "$out/$name.log" | grep -o "[0-9]*" | tr '\n' ' ' || true)
  echo "$name: file: $file; counted: ${counted:-0 0} (gaps, samples)"
}
for r in $(seq "$rounds"); do
  run "a32-$r" 32
  run "b100-$r" 100
done
