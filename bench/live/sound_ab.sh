#!/usr/bin/env bash
# What a live source's sound costs (issue 16, item 3): the same show (the tone page, 720p,
# one MPEG-TS file) with sound (captured, mixed, AAC) and with --no-audio, alternated A B A B
# ..., CPU seconds of the whole process tree (pagereel, its browsers, its pulseaudio: all
# reaped children) per second of show. Run alone, under the build lock.
#
#   bench/live/sound_ab.sh PAGEREEL OUT_DIR [SECONDS] [ROUNDS] [FPS]
set -euo pipefail
bin=$1 out=$2 seconds=${3:-20} rounds=${4:-3} fps=${5:-25}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
run() {  # $1: name, $2...: extra flags. Prints CPU seconds per show second.
  local name=$1
  shift
  rm -f "$out/$name.ts"
  /usr/bin/time -f '%U %S' -o "$out/$name.time" "$bin" live --source "$here/pages/tone.html" --size 1280x720 \
    --fps "$fps" --output "$out/$name.ts" --duration "$seconds" --status-every 0 --control none "$@" \
    2>"$out/$name.log" || { echo "$name: pagereel failed" >&2; tail -5 "$out/$name.log" >&2; return 1; }
  python3 -c "u,s=open('$out/$name.time').read().split()[:2]; print(round((float(u)+float(s))/$seconds, 3))"
}
for r in $(seq "$rounds"); do
  a=$(run "with-$r")
  b=$(run "without-$r" --no-audio)
  echo "round $r: with sound $a cores, without $b cores, ratio $(python3 -c "print(round($a/$b, 3))")"
  grep -h "sound:" "$out/with-$r.log" | head -1
done
