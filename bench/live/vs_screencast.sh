#!/usr/bin/env bash
# pagereel live against what people do today to stream a page: puppeteer-core with
# Page.startScreencast piped to ffmpeg (bench/naive/screencast.mjs). Same page
# (bench/live/pages/slots.html: each page frame's wall-clock time painted as a code), same
# size, 25 fps, H.264, one after the other in one command. Output frame i is at W0 + i x 40
# ms (pagereel: tick 0 from its as-run log; ffmpeg: wall-clock stamps made constant-rate,
# from the first frame's arrival). Each output frame's code says which page frame it
# shows: duplicated and missing page frames, content jitter and latency.
#
#   bench/live/vs_screencast.sh PAGEREEL SECONDS OUT_DIR
set -euo pipefail
bin=$1 seconds=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
page="$here/pages/slots.html"
if [ ! -d "$here/../naive/node_modules" ]; then
  (cd "$here/../naive" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

"$bin" live --source "$page" --size 640x360 --fps 25 --output "$out/pagereel.mp4" \
  --duration "$seconds" --as-run "$out/asrun.log" --control none --status-every 0 \
  2>"$out/pagereel.log"
tick0=$(sed -n 's/.*tick 0 at \([0-9.]*\) ms.*/\1/p' "$out/asrun.log" | tail -1)
echo "pagereel live:   $(python3 "$here/frame_codes.py" "$out/pagereel.mp4" --tick0-ms "$tick0" --period-ms 40)"

node "$here/../naive/screencast.mjs" "file://$page" \
  "$out/screencast.mp4" 640 360 "$seconds" 25 >/dev/null
first=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[0])" "$out/screencast.mp4.arrivals.json")
echo "screencast+ffmpeg: $(python3 "$here/frame_codes.py" "$out/screencast.mp4" --tick0-ms "$first" --period-ms 40)"
