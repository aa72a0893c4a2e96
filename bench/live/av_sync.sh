#!/usr/bin/env bash
# A/V sync of a live source's sound (issue 16, item 3): a page that turns white and starts a
# 100 ms 1 kHz beep in the same animation frame, once a second, on air for DURATION s to an
# MP4 file, RUNS times; prints for each flash how far from its picture the beep is heard
# (positive: the sound is late). Usage, from the repository root, under the build lock:
#   flock /tmp/pagereel-build.lock bench/live/av_sync.sh [BINARY] [RUNS] [FPS] [DURATION]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-build/src/cli/pagereel}
runs=${2:-3}
fps=${3:-25}
duration=${4:-8}
out=$(mktemp -d -t av-sync.XXXXXX)
for r in $(seq "$runs"); do
  "$bin" live --source "$here/pages/flash-beep.html" --size 640x360 --fps "$fps" \
    --output "$out/run-$r.mp4" --duration "$duration" --status-every 0 --control none >/dev/null 2>&1
  echo "run $r: $(python3 "$here/av_offset.py" "$out/run-$r.mp4" "$fps" | tail -n +2 | tr '\n' ' ')"
done
rm -rf "$out"
