#!/usr/bin/env bash
# A page's sound through everything that cuts a render up, driven as a user would: the film
# of tests/pages/sound (a tone paused and resumed, a beep from a timer) must have the same
# decoded sound with 1 and 3 lanes, as 3 shards joined by `pagereel concat`, after a SIGKILL
# and the same command again, and in a second run; its track exactly as long as its
# pictures. Then what the summary, --strict and --help say of sounds left out.
# Usage: sound_cli_test.sh PAGEREEL_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
. "$src/tests/integration/loopback_server.sh"
work=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
failures=0
passes=0
check() {  # check NAME CONDITION-RESULT DETAIL
  if [ "$2" = yes ]; then passes=$((passes + 1)); else echo "FAIL $1: $3"; failures=$((failures + 1)); fi
}

# The page and its media, served over loopback (media is fetched through the page's browser).
mkdir -p "$work/site" "$work/out"
cp "$src/tests/pages/sound/"*.html "$work/site/"
ffmpeg -v error -f lavfi -i "sine=frequency=440:duration=5:sample_rate=44100" -ac 1 "$work/site/tone.wav"
ffmpeg -v error -f lavfi -i "sine=frequency=1000:duration=0.3:sample_rate=48000" -ac 2 "$work/site/beep.wav"
start_loopback_server "$work/site"
url="http://127.0.0.1:$port"

# The decoded sound of a film, as a hash of its float samples.
pcm() { ffmpeg -v error -i "$1" -map 0:a:0 -f f32le -ac 2 -ar 48000 - | md5sum | cut -d' ' -f1; }
# Stated stream durations, video then audio, in seconds.
durations() {
  ffprobe -v error -show_entries stream=codec_type,duration -of csv=p=0 "$1" | sort | tr '\n' ' '
}
# The loudest sample of FILE from FROM for SECONDS, in dB.
loudest() {
  ffmpeg -v info -ss "$2" -t "$3" -i "$1" -map 0:a:0 -af volumedetect -f null - 2>&1 |
    sed -n 's/.*max_volume: \(.*\) dB/\1/p'
}
# "yes" when FILE has the reference's sound, and audio and video are both stated 4 s long
# (120 frames at 30 fps: 192,000 samples).
same_sound() {
  [ "$(pcm "$1")" = "$reference" ] && [ "$(durations "$1")" = "audio,4.000000 video,4.000000 " ] && echo yes
}

# 120 frames at 30 fps in 6 segments of 20.
args=(render "$url/index.html" --frames 120 --segment-frames 20 --size 320x180 --progress plain)
out="$work/out"
"$bin" "${args[@]}" --lanes 1 -o "$out/one.mp4" >/dev/null 2>"$out/one.log"
rc=$?
reference=$(pcm "$out/one.mp4")
# Sound where the page played it (the tone -18 dB, the beep over it), silence while the
# tone is paused (frames 75-90).
playing=$(loudest "$out/one.mp4" 0.1 1.3)
paused=$(loudest "$out/one.mp4" 2.55 0.4)
check one-lane "$([ "$rc" -eq 0 ] && [ "$(same_sound "$out/one.mp4")" = yes ] &&
                 awk "BEGIN { exit !($playing > -20 && $paused < -80) }" && echo yes)" \
  "rc=$rc durations='$(durations "$out/one.mp4")' loudest playing=$playing paused=$paused; $(cat "$out/one.log")"
check summary-lists-sounds "$(grep -q "sound: 2 sounds mixed: <audio src=tone.wav>, <audio src=beep.wav>" "$out/one.log" && echo yes)" \
  "$(grep sound "$out/one.log")"

"$bin" "${args[@]}" --lanes 3 -o "$out/three.mp4" >/dev/null 2>"$out/three.log"
check three-lanes "$(same_sound "$out/three.mp4")" "the sound differs from 1 lane's"

"$bin" "${args[@]}" --lanes 1 -o "$out/again.mp4" >/dev/null 2>&1
check second-run "$(same_sound "$out/again.mp4")" "the sound differs run to run"

# Shards, joined by concat (the track is made once from the shards' timelines).
for i in 2 0 1; do
  "$bin" "${args[@]}" --lanes 1 -o "$out/sharded.mp4" --shard $i/3 --work-dir "$work/shards" >/dev/null 2>&1
done
"$bin" concat "$work/shards" -o "$out/sharded.mp4" >/dev/null 2>"$out/concat.log"
rc=$?
check shards-concat "$([ "$rc" -eq 0 ] && [ "$(same_sound "$out/sharded.mp4")" = yes ] &&
                      grep -q "sound: 2 sounds mixed" "$out/concat.log" && echo yes)" \
  "rc=$rc durations='$(durations "$out/sharded.mp4")'; $(cat "$out/concat.log")"

# SIGKILL once 3 segments are finished, then the same command: the sound is the same.
"$bin" "${args[@]}" --lanes 1 -o "$out/killed.mp4" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 600); do
  [ "$(ls "$out/.killed.mp4.pagereel" 2>/dev/null | grep -c '^seg-[0-9]*\.json$')" -ge 3 ] && break
  sleep 0.1
done
kill -KILL "$pid"; wait "$pid" 2>/dev/null
kept=$(ls "$out/.killed.mp4.pagereel" | grep -c '^seg-[0-9]*\.json$')
"$bin" "${args[@]}" --lanes 1 -o "$out/killed.mp4" >/dev/null 2>"$out/resumed.log"
rc=$?
check resume-after-kill "$([ "$kept" -ge 3 ] && [ "$kept" -lt 6 ] && [ "$rc" -eq 0 ] &&
                           grep -q "resuming: $kept of 6 segments" "$out/resumed.log" &&
                           [ "$(same_sound "$out/killed.mp4")" = yes ] && echo yes)" \
  "kept=$kept rc=$rc durations='$(durations "$out/killed.mp4")'; $(cat "$out/resumed.log")"

# Telling the user: a sound left out is listed with its frame; --strict fails (exit 1),
# writes nothing and keeps the segments, which concat joins without the sound (and refuses
# to with --strict).
left=(render "$url/left-out.html" --frames 30 --size 320x180 --progress plain)
"$bin" "${left[@]}" -o "$out/left.mp4" >/dev/null 2>"$out/left.log"
rc=$?
check left-out-listed "$([ "$rc" -eq 0 ] && grep -q "sound: 1 sound mixed: <audio src=tone.wav>" "$out/left.log" &&
                         grep -q "sound left out: <audio src=srcobject:MediaStream> at frame 10 (0.333 s): its srcObject is a MediaStream" "$out/left.log" &&
                         echo yes)" "rc=$rc; $(cat "$out/left.log")"
"$bin" "${left[@]}" --strict -o "$out/strict.mp4" >/dev/null 2>"$out/strict.log"
rc=$?
check strict-refuses "$([ "$rc" -eq 1 ] && [ ! -e "$out/strict.mp4" ] && [ -d "$out/.strict.mp4.pagereel" ] &&
                        grep -q "1 sound would be left out of $out/strict.mp4 (--strict): <audio src=srcobject:MediaStream> at frame 10" "$out/strict.log" &&
                        echo yes)" "rc=$rc; $(cat "$out/strict.log")"
"$bin" concat "$out/.strict.mp4.pagereel" -o "$out/strict.mp4" --strict >/dev/null 2>"$out/strict.log"
rc=$?
check concat-strict-refuses "$([ "$rc" -eq 1 ] && [ ! -e "$out/strict.mp4" ] && grep -q "would be left out" "$out/strict.log" &&
                               echo yes)" "rc=$rc; $(cat "$out/strict.log")"
"$bin" concat "$out/.strict.mp4.pagereel" -o "$out/strict.mp4" >/dev/null 2>"$out/strict.log"
rc=$?
check concat-without-it "$([ "$rc" -eq 0 ] && [ "$(pcm "$out/strict.mp4")" = "$(pcm "$out/left.mp4")" ] && echo yes)" \
  "rc=$rc; $(cat "$out/strict.log")"
check help-teaches-strict "$("$bin" render --help | tr -s ' \n' ' ' | grep -q "when a sound it plays cannot be in the film" &&
                             "$bin" concat --help | grep -q -- "--strict" && echo yes)" "render/concat --help lack --strict for sound"

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
