#!/bin/bash
# What reading a video page's frames back with a second beginFrame costs (issue 18): renders
# the conformance video page (two <video> elements, 640x360, 135 frames at 30 fps, one
# lane) with a baseline binary and this one, alternated, and prints each wall time.
#   bench/video_readback_bench.sh BASELINE_PAGEREEL NEW_PAGEREEL [ROUNDS] [SIZE]
set -euo pipefail
base=$1 new=$2 rounds=${3:-3} size=${4:-640x360}
here=$(cd "$(dirname "$0")/.." && pwd)
page=$here/tests/conformance/pages/video/index.html
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq 1 "$rounds"); do
  for which in base new; do
    bin=$base; [ $which = new ] && bin=$new
    start=$(date +%s.%N)
    "$bin" render "$page" -o "$out/$which.mp4" --frames 135 --size "$size" --lanes 1 --progress none >/dev/null 2>&1
    end=$(date +%s.%N)
    printf '%s round %d: %.2f s\n' "$which" "$r" "$(echo "$end - $start" | bc)"
  done
done
