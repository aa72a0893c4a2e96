#!/usr/bin/env bash
# What sound costs a whole `pagereel render`, for bench/RESULTS.md: FILM_S (600) seconds at
# 30 fps of the light composition (bench/compositions/light) with a music track playing
# from frame 0 (<audio autoplay>, a FILM_S-long 192 kb/s MP3 made here by ffmpeg), against
# the same page with the element muted (no sound track: nothing fetched, mixed or encoded),
# alternated in one run (muted, music; RUNS pairs). The page and its media are served over
# loopback, as a user's would be. Per run: wall s, CPU s (pagereel and its browsers), join
# s, peak RSS of pagereel and of its browsers, file size.
#   [FILM_S=600] [RUNS=2] [SIZE=640x360] [LANES=2] bench/sound_film_bench.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
. "$root/tests/integration/loopback_server.sh"
build=${1:-$root/build}
bin=$build/src/cli/pagereel
film_s=${FILM_S:-600}
runs=${RUNS:-2}
size=${SIZE:-640x360}
lanes=${LANES:-2}
out=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill "$server"; rm -rf "$out"' EXIT
field() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d$2)" "$1"; }

# The site: the light composition twice (with music, muted), beside the fonts it names.
site=$out/site
mkdir -p "$site/bench/compositions/light"
ln -s "$root/examples" "$site/examples"
page=$here/compositions/light/index.html
sed 's|<body>|<body><audio autoplay src="music.mp3"></audio>|' "$page" >"$site/bench/compositions/light/music.html"
sed 's|<body>|<body><audio autoplay muted src="music.mp3"></audio>|' "$page" >"$site/bench/compositions/light/muted.html"
# Music: three detuned tones under a slow tremolo and a beat (as bench/sound_bench.sh).
ffmpeg -nostdin -v error -f lavfi -i "aevalsrc=0.2*sin(2*PI*220*t)*(1+0.5*sin(2*PI*0.5*t))+0.15*sin(2*PI*277.2*t)+0.1*sin(2*PI*329.6*t+sin(2*PI*3*t))+0.3*exp(-20*mod(t\,0.5))*sin(2*PI*60*t)|0.2*sin(2*PI*221*t)+0.15*sin(2*PI*330*t):s=44100:d=$film_s" \
  -c:a libmp3lame -b:a 192k "$site/bench/compositions/light/music.mp3"
start_loopback_server "$site"

echo "| run | wall s | CPU s | join s | peak RSS pagereel MB | peak RSS browsers MB | file MB | sounds |"
echo "|---|---|---|---|---|---|---|---|"
run() {  # NAME PAGE
  local name=$1 url="http://127.0.0.1:$port/bench/compositions/light/$2"
  /usr/bin/time -f "%e %U %S" -o "$out/time" "$bin" render "$url" -o "$out/film.mp4" \
    --duration "$film_s" --size "$size" --lanes "$lanes" --progress json 2>"$out/log" >/dev/null ||
    { cat "$out/log" >&2; exit 1; }
  local d wall user sys
  d=$(grep '"event":"done"' "$out/log")
  read -r wall user sys <"$out/time"
  printf '| %s | %.1f | %.1f | %.1f | %d | %d | %.1f | %s |\n' "$name" "$wall" \
    "$(echo "$user + $sys" | bc)" "$(field "$d" "['join_s']")" \
    "$(( $(field "$d" "['peak_rss_self_bytes']") >> 20 ))" \
    "$(( $(field "$d" "['peak_rss_browsers_bytes']") >> 20 ))" \
    "$(echo "scale=1; $(stat -c %s "$out/film.mp4") / 1048576" | bc)" "$(field "$d" "['sounds']")"
}
for ((i = 1; i <= runs; i++)); do
  run "muted $i" muted.html
  run "music $i" music.html
done
ffprobe -v error -show_entries stream=codec_name,duration -of csv=p=0 "$out/film.mp4" | sed 's/^/last film: /'
