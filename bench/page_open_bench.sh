#!/usr/bin/env bash
# What waiting for a page to be ready costs at the start of a render, and what holding
# page time for WebSockets costs, for bench/RESULTS.md "loading and sockets (issue 18)".
# Two binaries, alternated ROUNDS times on each case; wall seconds from the renders' own
# summaries (--progress json), medians and the ratio this / baseline.
# Cases: the test card, 1 frame (a render that is all page opening); the light
# composition, 60 frames at 1280x720 on 1 lane; the conformance WebSocket page (3 sockets,
# 60 frames at 640x360) and Rive page (wasm and .riv loaded after the load event, 60
# frames), over the conformance suite's loopback server (needs its npm ci and setup).
# SET=timers measures, for RESULTS "timers", what ending page time's grants where timers
# set in animation frames are due costs: the test card, the light composition, the
# conformance timers page (a chain, an interval and timers set in every frame), and
# compositions/timers (a 1 ms interval: 33 stops a frame), 60 frames each.
# SET=video measures, for RESULTS "video pictures", what waiting for a sought video's
# picture to reach drawImage(video) costs: the conformance video-canvas and video pages.
# Usage: [ROUNDS=7] [SET=open|timers|video] bench/page_open_bench.sh BASELINE_PAGEREEL THIS_PAGEREEL
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
baseline=${1:?baseline pagereel binary}
this=${2:?this pagereel binary}
rounds=${ROUNDS:-7}
out=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 "$root/tests/conformance/check.py" --serve-ranges "$port" >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$out"' EXIT
sleep 1

# wall BINARY URL SIZE FRAMES: prints the render's wall seconds.
wall() {
  "$1" render "$2" -o "$out/film.mp4" --size "$3" --frames "$4" --lanes 1 --progress json \
    2>"$out/log" >/dev/null || { echo "page_open_bench: $2 failed" >&2; cat "$out/log" >&2; exit 1; }
  grep '"event":"done"' "$out/log" | python3 -c 'import json,sys; print(json.load(sys.stdin)["wall_s"])'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

echo "| case | baseline s (median of $rounds) | this s | this / baseline |"
echo "|---|---|---|---|"
cases=("test card, 1 frame|$root/tests/pages/test-card.html|640x360|1"
       "light, 60 frames 720p|$root/bench/compositions/light/index.html|1280x720|60")
case ${SET:-open} in
  open) cases+=("websocket page, 60 frames|http://127.0.0.1:$port/pages/websocket/index.html|640x360|60"
                "rive page, 60 frames|http://127.0.0.1:$port/pages/rive/index.html|640x360|60") ;;
  timers) cases+=("conformance timers page, 60 frames|$root/tests/conformance/pages/timers/index.html|640x360|60"
                  "1 ms interval, 60 frames 720p|$root/bench/compositions/timers/index.html|1280x720|60") ;;
  video) cases+=("conformance video-canvas page, 135 frames|$root/tests/conformance/pages/video-canvas/index.html|640x360|135"
                 "conformance video page, 135 frames|$root/tests/conformance/pages/video/index.html|640x360|135") ;;
  *) echo "page_open_bench: SET is open, timers or video" >&2; exit 2 ;;
esac
for case in "${cases[@]}"; do
  IFS='|' read -r name url size frames <<<"$case"
  : >"$out/a"
  : >"$out/b"
  for _ in $(seq "$rounds"); do
    wall "$baseline" "$url" "$size" "$frames" >>"$out/a"
    wall "$this" "$url" "$size" "$frames" >>"$out/b"
  done
  a=$(median <"$out/a")
  b=$(median <"$out/b")
  python3 -c "print(f'| $name | {$a:.3f} | {$b:.3f} | {$b / $a:.2f}x |')"
done
