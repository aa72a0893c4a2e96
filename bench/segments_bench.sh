#!/usr/bin/env bash
# A long film, for bench/RESULTS.md: what segments cost and save, measured in one run.
#   one piece    pagereel render, LANES lanes, for each --preroll mode (auto, exact, jump)
#   shards       SHARDS shards run one after another into one work folder, then concat:
#                the sum against one piece is sharding's overhead (page loads, pre-roll,
#                the join)
#   resume       the one-piece auto render killed with SIGKILL at half its frames, then the
#                same command again: the time lost to the kill is
#                (killed run + resumed run) - uninterrupted run
# Every film is checked against the first: the same frames (ffmpeg framemd5).
# Prints a Markdown table. Usage:
#   [SECONDS_OF_FILM=600] [SIZE=640x360] [FPS=30] [LANES=2] [SHARDS=3] [COMP=light]
#   [PARTS="modes shards resume"] bench/segments_bench.sh [BUILD_DIR]
# (the resume part renders the uninterrupted film again itself, so its ratio is from one run)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
bin=$build/src/cli/pagereel
film_s=${SECONDS_OF_FILM:-600}
size=${SIZE:-640x360}
fps=${FPS:-30}
lanes=${LANES:-2}
shards=${SHARDS:-3}
comp=${COMP:-light}
parts=${PARTS:-modes shards resume}
has() { [[ " $parts " == *" $1 "* ]]; }
page="$here/compositions/$comp/index.html"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
common=(--duration "$film_s" --size "$size" --fps "$fps" --progress json)

field() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d$2)" "$1"; }
now() { date +%s.%N; }
md5s() { ffmpeg -v error -i "$1" -f framemd5 - | grep -v '^#' | awk -F, '{print $NF}' | md5sum | cut -c1-12; }

echo "| run | wall s | fps | frames rendered | pre-roll | page loads | browser s | frames md5 |"
echo "|---|---|---|---|---|---|---|---|"

row() {  # NAME WALL DONE_JSON FILM
  local name=$1 wall=$2 done=$3 film=$4
  printf '| %s | %.1f | %.1f | %s | %s | %s | %.0f | %s |\n' "$name" "$wall" \
    "$(python3 -c "print($(field "$done" "['frames_rendered']") / $wall)")" \
    "$(field "$done" "['frames_rendered']")" "$(field "$done" "['preroll']") ($(field "$done" "['preroll_frames']") run, $(field "$done" "['jumps']") jumps)" \
    "$(field "$done" "['page_loads']")" "$(field "$done" "['browser_s']")" \
    "$([ "$film" = - ] && echo - || md5s "$film")"
}

one_piece_wall=""
if has modes; then
for mode in auto exact jump; do
  t0=$(now)
  "$bin" render "$page" -o "$out/$mode.mp4" --lanes "$lanes" --preroll "$mode" "${common[@]}" \
    2>"$out/log" >/dev/null || { cat "$out/log" >&2; exit 1; }
  wall=$(python3 -c "print($(now) - $t0)")
  row "one piece, $lanes lanes, --preroll $mode" "$wall" "$(grep '"event":"done"' "$out/log")" "$out/$mode.mp4"
  [ "$mode" = auto ] && one_piece_wall=$wall
done

fi

if has shards; then
# Shards one after another, each with the lanes one machine would give it.
sum=0
t_all=$(now)
for ((i = 0; i < shards; i++)); do
  t0=$(now)
  "$bin" render "$page" -o "$out/sharded.mp4" --lanes "$lanes" --shard "$i/$shards" \
    --work-dir "$out/work" "${common[@]}" 2>"$out/log" >/dev/null || { cat "$out/log" >&2; exit 1; }
  wall=$(python3 -c "print($(now) - $t0)")
  row "shard $i/$shards" "$wall" "$(grep '"event":"done"' "$out/log")" -
done
t0=$(now)
"$bin" concat "$out/work" -o "$out/sharded.mp4" --progress none >/dev/null
concat_wall=$(python3 -c "print($(now) - $t0)")
total=$(python3 -c "print($(now) - $t_all)")
printf '| %d shards in sequence + concat (%.1f s) | %.1f | %.1f | | | | | %s |\n' "$shards" "$concat_wall" \
  "$total" "$(python3 -c "print($film_s * $fps / $total)")" "$(md5s "$out/sharded.mp4")"
fi

# Resume: the uninterrupted film, then SIGKILL at half the frames and the same command.
if has resume; then
  t0=$(now)
  "$bin" render "$page" -o "$out/whole.mp4" --lanes "$lanes" "${common[@]}" 2>"$out/log" >/dev/null
  one_piece_wall=$(python3 -c "print($(now) - $t0)")
  row "uninterrupted, $lanes lanes" "$one_piece_wall" "$(grep '"event":"done"' "$out/log")" "$out/whole.mp4"
  "$bin" render "$page" -o "$out/resumed.mp4" --lanes "$lanes" "${common[@]}" 2>"$out/log" >/dev/null &
  pid=$!
  t0=$(now)
  half=$(( film_s * fps / 2 ))
  done_frames=""
  while kill -0 "$pid" 2>/dev/null; do
    done_frames=$( (grep -o '"frames_done":[0-9]*' "$out/log" || true) | tail -1 | cut -d: -f2)
    [ -n "$done_frames" ] && [ "$done_frames" -ge "$half" ] && break
    sleep 0.5
  done
  kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
  killed_wall=$(python3 -c "print($(now) - $t0)")
  sleep 1  # The killed render's browsers die with it (PR_SET_PDEATHSIG).
  t0=$(now)
  "$bin" render "$page" -o "$out/resumed.mp4" --lanes "$lanes" "${common[@]}" 2>"$out/log" >/dev/null
  resumed_wall=$(python3 -c "print($(now) - $t0)")
  row "resumed after SIGKILL at ${done_frames:-?} frames (killed run ${killed_wall%.*} s)" "$resumed_wall" \
    "$(grep '"event":"done"' "$out/log")" "$out/resumed.mp4"
  python3 -c "
k, r, o = $killed_wall, $resumed_wall, $one_piece_wall
print(f'\nTime lost to the kill: {k + r - o:.1f} s ({(k + r - o) / o:.1%} of the uninterrupted {o:.1f} s render)')"
fi
