#!/usr/bin/env bash
# Live benchmarks on this machine (see bench/RESULTS.md, "live"). Run alone: no build or
# other benchmark at the same time.
#
#   bench/live/live_bench.sh soak PAGEREEL SECONDS OUT_DIR
#     1280x720 at 30 fps: the bundled lower third (opaque, bottom) and a transparent score
#     bug above it, on two workers; one x264 output to an MP4 file and one to an SRT
#     listener (ffmpeg, started here). Prints pagereel's summary, the CPU each component
#     used, and the frames the file and the receiver hold.
#   bench/live/live_bench.sh stagger PAGEREEL SECONDS OUT_DIR
#     4 workers of small 60 fps windows, with stagger and with --no-stagger, each measured
#     by `pagereel probe --fps 60` meanwhile: fold peak, floor, width at half height,
#     threads waiting for a CPU, PSI.
set -euo pipefail
mode=$1 bin=$2 seconds=$3 out=$4
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mkdir -p "$out"

# CPU seconds (user+system) of every thread of PID, summed by thread name, and of the
# browser processes below it.
cpu_report() {
  local pid=$1 hz
  hz=$(getconf CLK_TCK)
  for t in /proc/"$pid"/task/*; do
    printf '%s %s\n' "$(tr ' ' _ <"$t/comm")" "$(awk '{print $14+$15}' "$t/stat")"
  done | awk -v hz="$hz" '{c[$1]+=$2} END {for (k in c) printf "  pagereel thread %-16s %7.1f s\n", k, c[k]/hz}' | sort
  local kids
  kids=$(pgrep -g "$(pgrep -P "$pid" | head -1 | xargs -r ps -o pgid= -p | tr -d ' ')" 2>/dev/null || true)
  local total=0
  for b in $(pgrep -f chromium-headless-shell); do
    total=$((total + $(awk '{print $14+$15}' /proc/"$b"/stat 2>/dev/null || echo 0)))
  done
  awk -v t="$total" -v hz="$hz" 'BEGIN {printf "  browsers (all processes)      %7.1f s\n", t/hz}'
}

frames_of() {
  ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames \
    -of csv=p=0 "$1" 2>/dev/null || echo "unreadable"
}

case "$mode" in
soak)
  port=$((20000 + RANDOM % 20000))
  ffmpeg -hide_banner -loglevel error -y -probesize 65536 -analyzeduration 500000 \
    -i "srt://127.0.0.1:$port?mode=listener" -c copy "$out/received.ts" &
  receiver=$!
  sleep 1
  cat >"$out/show.toml" <<TOML
as_run = "$out/asrun.log"
[format]
size = "1280x720"
fps = 30
[[sources]]
id = "lower-third"
url = "$root/examples/lower-third"
[[sources]]
id = "scorebug"
url = "$here/pages/scorebug.html"
transparent = true
[[outputs]]
id = "file"
to = "$out/program.mp4"
[[outputs]]
id = "srt"
to = "srt://127.0.0.1:$port?mode=caller"
[control]
listen = "127.0.0.1:0"
TOML
  "$bin" live "$out/show.toml" --duration "$seconds" --status-every 60 2>"$out/pagereel.log" &
  pid=$!
  sleep $((seconds - 5 > 5 ? seconds - 5 : 5))
  echo "CPU used by the show (at $((seconds - 5)) s):"
  cpu_report "$pid" | tee "$out/cpu.txt"
  wait "$pid"
  sleep 2
  kill -INT "$receiver" 2>/dev/null || true
  wait "$receiver" 2>/dev/null || true
  sed -n '/show ended/,$p' "$out/pagereel.log"
  echo "file frames: $(frames_of "$out/program.mp4") (expected $((seconds * 30)))"
  echo "received over SRT: $(frames_of "$out/received.ts")"
  echo "late-tick lines in the as-run log: $(grep -c 'late tick' "$out/asrun.log" || true)"
  ;;
stagger)
  for variant in stagger no-stagger; do
    extra=()
    [ "$variant" = no-stagger ] && extra=(--no-stagger)
    cat >"$out/$variant.toml" <<TOML
[format]
size = "640x360"
fps = 60
$(for k in 0 1 2 3; do printf '[[sources]]\nid = "w%d"\nurl = "%s"\nworker = %d\nx = %d\ny = %d\nwidth = 320\nheight = 180\n' \
    "$k" "$here/pages/scorebug.html" "$k" $(((k % 2) * 320)) $(((k / 2) * 180)); done)
[[outputs]]
to = "$out/$variant.ts"
[control]
listen = "127.0.0.1:0"
TOML
    "$bin" live "$out/$variant.toml" --duration "$seconds" --status-every 0 "${extra[@]}" \
      2>"$out/$variant.log" &
    pid=$!
    sleep 8  # Browsers up, pages loaded, ticking.
    "$bin" probe --fps 60 --duration "$((seconds - 12))" --json >"$out/$variant-probe.json"
    wait "$pid"
    python3 - "$out/$variant-probe.json" "$variant" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["fold"]
r = d.get("runnable", {})
psi = d.get("psi", {})
print(f"{sys.argv[2]}: fold peak {f['peak']:.2f}, floor {f['floor']:.2f}, width at half "
      f"height {f['half_height_width_ns'] / 1e6:.2f} ms of {f['period_ns'] / 1e6:.2f} ms; "
      f"runnable {json.dumps(r)}; psi {json.dumps(psi)}")
PY
    grep -E "clock:|source w" "$out/$variant.log" | sed 's/^/  /'
  done
  ;;
*)
  echo "usage: $0 soak|stagger PAGEREEL SECONDS OUT_DIR" >&2
  exit 2
  ;;
esac
