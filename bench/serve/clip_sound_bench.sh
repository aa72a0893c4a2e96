#!/usr/bin/env bash
# What sound costs one /v1/clip, for bench/RESULTS.md: the light composition
# (bench/compositions/light) as a CLIP_S-long MP4 clip at SIZE, 30 fps, with a music track
# playing from frame 0 (<audio autoplay>, a CLIP_S-long 192 kb/s MP3 made here by ffmpeg),
# against the same page with the element muted (the same pictures; no sound: nothing
# fetched, mixed or muxed), and the music page with audio=false; alternated in one run
# (muted, music&audio=false, music; RUNS rounds) on one `pagereel serve` with one browser,
# after one clip of each to warm up. Page and media are served over loopback. Per clip: the
# client's wall time, the service log line's frames_ms, encode_ms and sound_ms, the sounds
# mixed (Pagereel-Sounds-Mixed) and the clip's size. Under the shared lock:
#   flock /tmp/pagereel-build.lock bench/serve/clip_sound_bench.sh [BUILD_DIR]
# Settings: RUNS=5 CLIP_S=10 SIZE=640x360 PAGEREEL_PORT=8093.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/integration/loopback_server.sh"
build=${1:-$root/build}
bin=$build/src/cli/pagereel
runs=${RUNS:-5}
seconds=${CLIP_S:-10}
size=${SIZE:-640x360}
svc_port=${PAGEREEL_PORT:-8093}
out=$(mktemp -d)
server=
svc=
trap '[ -n "$svc" ] && kill "$svc" 2>/dev/null; [ -n "$server" ] && kill "$server"; wait 2>/dev/null; rm -rf "$out"' EXIT

# The site: the light composition twice (with music, muted), beside the fonts it names.
site=$out/site
mkdir -p "$site/bench/compositions/light"
ln -s "$root/examples" "$site/examples"
page=$root/bench/compositions/light/index.html
sed 's|<body>|<body><audio autoplay src="music.mp3"></audio>|' "$page" >"$site/bench/compositions/light/music.html"
sed 's|<body>|<body><audio autoplay muted src="music.mp3"></audio>|' "$page" >"$site/bench/compositions/light/muted.html"
# Music: as bench/sound_film_bench.sh.
ffmpeg -nostdin -v error -f lavfi -i "aevalsrc=0.2*sin(2*PI*220*t)*(1+0.5*sin(2*PI*0.5*t))+0.15*sin(2*PI*277.2*t)+0.1*sin(2*PI*329.6*t+sin(2*PI*3*t))+0.3*exp(-20*mod(t\,0.5))*sin(2*PI*60*t)|0.2*sin(2*PI*221*t)+0.15*sin(2*PI*330*t):s=44100:d=$seconds" \
  -c:a libmp3lame -b:a 192k "$site/bench/compositions/light/music.mp3"
start_loopback_server "$site"

"$bin" serve --listen "127.0.0.1:$svc_port" --browsers 1 --per-browser 1 \
  --allow "http://127.0.0.1:$port" >/dev/null 2>"$out/log" &
svc=$!
until curl -sf -o /dev/null "http://127.0.0.1:$svc_port/readyz"; do
  kill -0 "$svc" 2>/dev/null || { cat "$out/log" >&2; exit 1; }
  sleep 0.3
done

w=${size%x*}
h=${size#*x}
clip() {  # NAME PAGE [MORE]: one clip, one table row (NAME "-": warm-up, no row)
  local name=$1 more=${3:-}
  local url="http://127.0.0.1:$svc_port/v1/clip?width=$w&height=$h&fps=30&duration=$seconds$more"
  local wall
  wall=$(curl -sf -D "$out/headers" -o "$out/clip.mp4" -w '%{time_total}' -G "$url" \
    --data-urlencode "url=http://127.0.0.1:$port/bench/compositions/light/$2") ||
    { tail -3 "$out/log" >&2; exit 1; }
  [ "$name" = - ] && return
  local line mixed
  line=$(grep '"route":"clip"' "$out/log" | tail -1)
  mixed=$(tr -d '\r' <"$out/headers" | sed -n 's/^[Pp]agereel-[Ss]ounds-[Mm]ixed: //p')
  python3 - "$name" "$wall" "$line" "${mixed:--}" "$(stat -c %s "$out/clip.mp4")" <<'EOF'
import json, sys
name, wall, line, mixed, size = sys.argv[1:]
d = json.loads(line)
print(f"| {name} | {float(wall):.2f} | {d['frames_ms']} | {d['encode_ms']} | "
      f"{d.get('sound_ms', '-')} | {mixed} | {int(size) / 1048576:.2f} |")
EOF
}
clip - muted.html
clip - music.html
echo "| clip | wall s | frames_ms | encode_ms | sound_ms | sounds mixed | MB |"
echo "|---|---|---|---|---|---|---|"
for ((i = 1; i <= runs; i++)); do
  clip "muted $i" muted.html
  clip "music, audio=false $i" music.html "&audio=false"
  clip "music $i" music.html
done
ffprobe -v error -show_entries stream=codec_name,duration -of csv=p=0 "$out/clip.mp4" | sed 's/^/last clip: /'
