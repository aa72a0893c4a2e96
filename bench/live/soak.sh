#!/usr/bin/env bash
# The soak of issue 19 ("Done when"): a 720p50 show of examples/show.toml's graphics (ticker,
# score bug, clock, as the issue asks: no backdrop; each a transparent overlay, as over a
# backdrop) to an MPEG-TS file and to an SRT receiver (ffmpeg listening on
# 127.0.0.1), with a score update every 2 s over the control API, for SECONDS (default 1800).
# Then bench/live/soak_check.py reads the file and the receiver's recording and says: frames
# against ticks, the ticker's freshness (a new picture every tick), how many ticks each
# update took to reach air, and pagereel's output counters against what the receiver got.
# Run alone (no build or other benchmark meanwhile); see bench/RESULTS.md "live soak".
#
#   bench/live/soak.sh PAGEREEL OUT_DIR [SECONDS]
set -euo pipefail
bin=$(realpath "$1") out=$2 seconds=${3:-1800}
here=$(cd "$(dirname "$0")" && pwd)
examples=$(cd "$here/../../examples" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/program.ts "$out"/received.ts "$out"/asrun.log "$out"/calls.jsonl
srt_port=$((20000 + RANDOM % 20000))
control_port=$((40000 + RANDOM % 20000))
cat >"$out/show.toml" <<TOML
as_run = "$out/asrun.log"
[format]
size = "1280x720"
fps = 50
background = "#000000"
[[sources]]
id = "scoreboard"
transparent = true
url = "$examples/live/scoreboard/index.html"
x = 40
y = 30
width = 480
height = 100
[[sources]]
id = "ticker"
transparent = true
url = "$examples/live/ticker/index.html"
x = 0
y = 640
width = 1280
height = 80
[[sources]]
id = "clock"
transparent = true
url = "$examples/live/clock/index.html"
x = 1060
y = 30
width = 180
height = 70
[[outputs]]
id = "file"
to = "$out/program.ts"
[[outputs]]
id = "srt"
to = "srt://127.0.0.1:$srt_port"
[control]
listen = "127.0.0.1:$control_port"
TOML
ffmpeg -v error -y -i "srt://127.0.0.1:$srt_port?mode=listener" -c copy -f mpegts "$out/received.ts" \
  2>"$out/receiver.log" &
receiver=$!
"$bin" live "$out/show.toml" --duration "$seconds" --status-every 60 2>"$out/pagereel.log" &
show=$!
# A score update every 2 s once the show is on air; each call's send and answer times (Unix
# ms) go to calls.jsonl.
python3 - "$control_port" "$out/calls.jsonl" "$show" <<'PY' &
import json, os, sys, time, urllib.request
port, path, show = sys.argv[1], sys.argv[2], int(sys.argv[3])
def alive():
    try:
        os.kill(show, 0)
        return True
    except OSError:
        return False
url = f"http://127.0.0.1:{port}/sources/scoreboard/call"
deadline = time.time() + 120
while alive() and time.time() < deadline:
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=2).read()
        break
    except Exception:
        time.sleep(0.5)
time.sleep(3)
n = 0
with open(path, "w") as log:
    next_at = time.time()
    while alive():
        n += 1
        body = json.dumps({"function": "update", "args": [{"homeScore": n % 100, "awayScore": (n // 100) % 100}]}).encode()
        sent = time.time() * 1000
        try:
            answer = urllib.request.urlopen(urllib.request.Request(url, data=body, method="POST"), timeout=5)
            status = answer.status
        except Exception as e:
            status = str(e)
        log.write(json.dumps({"n": n, "sent_ms": sent, "answered_ms": time.time() * 1000, "status": status}) + "\n")
        log.flush()
        next_at += 2
        time.sleep(max(0, next_at - time.time()))
PY
driver=$!
wait "$show" || echo "pagereel live exited with $?"
wait "$driver" || true
sleep 2
kill "$receiver" 2>/dev/null || true
wait "$receiver" 2>/dev/null || true
python3 "$here/soak_check.py" "$out"
