#!/usr/bin/env bash
# What sound costs a film, for bench/RESULTS.md: SECONDS_OF_FILM (600) of 640x360 H.264
# at 30 fps with a music track (MP3, made here by ffmpeg), against the same film without
# sound, measured in one run, alternating without and with (RUNS pairs). Two paths:
#   writer   one FilmWriter (a clip): pictures, or pictures and the mixed AAC track
#   join     ten-second segments joined (how render makes films): copy, or copy and the
#            sound mixed and encoded once at the join
# and the mix alone. Wall seconds, CPU seconds and peak RSS of each step's process.
#   [SECONDS_OF_FILM=600] [RUNS=2] bench/sound_bench.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
bin=$build/bench/sound_bench
film_s=${SECONDS_OF_FILM:-600}
runs=${RUNS:-2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Music: three detuned tones under a slow tremolo and a beat, 192 kb/s MP3.
ffmpeg -nostdin -v error -f lavfi -i "aevalsrc=0.2*sin(2*PI*220*t)*(1+0.5*sin(2*PI*0.5*t))+0.15*sin(2*PI*277.2*t)+0.1*sin(2*PI*329.6*t+sin(2*PI*3*t))+0.3*exp(-20*mod(t\,0.5))*sin(2*PI*60*t)|0.2*sin(2*PI*221*t)+0.15*sin(2*PI*330*t):s=44100:d=$film_s" \
  -c:a libmp3lame -b:a 192k "$out/music.mp3"
mkdir -p "$out/segs"
"$bin" segments "$out/segs" "$film_s" >/dev/null

step() {  # LABEL ARGS...: wall s, user+sys s, max RSS MB
  local label=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$out/time" "$bin" "$@" >/dev/null
  read -r wall user sys rss <"$out/time"
  printf '| %s | %.2f | %.2f | %.0f |\n' "$label" "$wall" "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)"
}

echo "| step | wall s | CPU s | peak RSS MB |"
echo "|---|---|---|---|"
for ((i = 1; i <= runs; i++)); do
  step "writer, pictures only" film-pictures "$out/a.mp4" "$film_s"
  step "writer, pictures + sound" film-sound "$out/b.mp4" "$film_s" "$out/music.mp3"
  step "join, pictures only" join-pictures "$out/segs" "$film_s" "$out/c.mp4"
  step "join, pictures + sound" join-sound "$out/segs" "$film_s" "$out/d.mp4" "$out/music.mp3"
  step "mix alone" mix "$film_s" "$out/music.mp3"
done
ffprobe -v error -show_entries stream=codec_name,duration -of csv=p=0 "$out/d.mp4" | sed 's/^/joined film: /'
