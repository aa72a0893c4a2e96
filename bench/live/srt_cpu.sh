#!/usr/bin/env bash
# What an SRT output costs pagereel (issue 19): a 1280x720 59.94 fps show of the freshness
# counter page (bench/live/pages/counter.html) to an ffmpeg SRT listener on 127.0.0.1 for
# SECONDS, CPU seconds (user + sys) of the pagereel process tree from /usr/bin/time, and the
# frames the receiver got; binaries A and B alternated A B A B. Run alone, under the build
# lock:
#   flock /tmp/pagereel-build.lock bench/live/srt_cpu.sh PAGEREEL_A PAGEREEL_B [SECONDS] [ROUNDS]
set -euo pipefail
a=$1 b=$2 seconds=${3:-20} rounds=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
for r in $(seq 1 "$rounds"); do
  for name in A B; do
    bin=$a; [ "$name" = B ] && bin=$b
    ffmpeg -hide_banner -loglevel fatal -y -i "srt://127.0.0.1:$port?mode=listener" -c copy "$work/got.ts" &
    rx=$!
    sleep 0.5
    /usr/bin/time -f "%U %S" -o "$work/time" "$bin" live --source "$here/pages/counter.html" \
      --output "srt://127.0.0.1:$port" --size 1280x720 --fps 59.94 --duration "$seconds" \
      --control none --status-every 0 > /dev/null 2>&1
    sleep 1.5
    kill -INT $rx 2>/dev/null || true
    wait $rx 2>/dev/null || true
    frames=$(ffprobe -v error -count_packets -select_streams v:0 -show_entries stream=nb_read_packets -of csv=p=0 "$work/got.ts" | head -1)
    read -r user sys < "$work/time"
    echo "$name round $r: cpu $(python3 -c "print(round($user + $sys, 2))") s, receiver frames $frames"
  done
done
