#!/usr/bin/env bash
# Drives the pagereel binary as a user would: bad input must give a clear message and a
# non-zero exit and leave no output; a good render must produce a decodable film.
# Usage: cli_test.sh PAGEREEL_BINARY SOURCE_DIR
set -u
bin=$1
src=$2
. "$src/tests/integration/loopback_server.sh"
work=$(mktemp -d)
trap 'umount "$work/full" 2>/dev/null; rm -rf "$work"' EXIT
failures=0
passes=0

# expect_failure NAME EXIT_CODE TEXT -- ARGS...: runs pagereel, checks exit code and message.
expect_failure() {
  local name=$1 code=$2 text=$3
  shift 4
  local out rc
  out=$("$bin" "$@" 2>&1 >/dev/null)
  rc=$?
  if [ "$rc" -ne "$code" ]; then
    echo "FAIL $name: exit $rc, wanted $code: $out"; failures=$((failures + 1)); return
  fi
  if ! grep -qF -- "$text" <<<"$out"; then
    echo "FAIL $name: message lacks '$text': $out"; failures=$((failures + 1)); return
  fi
  if [ -n "$(ls -A "$work/out" 2>/dev/null)" ]; then
    echo "FAIL $name: left files behind: $(ls -A "$work/out")"; failures=$((failures + 1))
    rm -rf "$work/out"/* "$work/out"/.[!.]*; return
  fi
  passes=$((passes + 1))
}

mkdir -p "$work/out" "$work/tmp"
page="$src/tests/pages/timecode.html"
o="$work/out/film.mp4"
expect_failure missing-input 2 "does not exist" -- render "$work/nope.html" -o "$o" --frames 3
expect_failure unknown-extension 2 ".mp4 (H.264)" -- render "$page" -o "$work/out/film.avi" --frames 3
expect_failure alpha-mp4 2 "--alpha needs" -- render "$page" -o "$o" --alpha --frames 3
expect_failure missing-folder 2 "does not exist" -- render "$page" -o "$work/none/film.mp4" --frames 3
expect_failure zero-size 2 "between 16 and 8192" -- render "$page" -o "$o" --size 0x720 --frames 3
expect_failure huge-size 2 "between 16 and 8192" -- render "$page" -o "$o" --size 100000x720 --frames 3
# Refused before the browser is even looked for, naming the size and one that works.
expect_failure odd-mp4-size 2 "--size 641x360 does not fit $o: a .mp4 film (H.264, colour at half resolution) needs an even width and height, not 641x360: make it 642x360" -- render "$page" -o "$o" --size 641x360 --frames 3 --browser /nonexistent/chrome
expect_failure bad-rate 2 "bad frame rate '0'" -- render "$page" -o "$o" --fps 0 --frames 3
expect_failure negative-rate 2 "bad frame rate '-5'" -- render "$page" -o "$o" --fps=-5 --frames 3
expect_failure absurd-rate 2 "more than 1000" -- render "$page" -o "$o" --fps 5000 --frames 3
expect_failure no-duration 2 "--duration" -- render "$page" -o "$o"
expect_failure zero-frames 2 "--frames must be" -- render "$page" -o "$o" --frames 0
expect_failure both-durations 2 "excludes" -- render "$page" -o "$o" --frames 3 --duration 1
expect_failure unknown-flag 2 "--bogus" -- render "$page" -o "$o" --bogus
expect_failure no-browser 1 "apt-get install chromium-headless-shell" -- render "$page" -o "$o" --frames 3 --browser /nonexistent/chrome
expect_failure ready-rejects 1 "data feed unavailable" -- render "$src/tests/pages/ready-rejects.html" -o "$o" --frames 3
expect_failure ready-never 1 "window.pagereel.ready" -- render "$src/tests/pages/ready-never.html" -o "$o" --frames 3 --timeout 1
expect_failure navigates-away 1 "navigated away" -- render "$src/tests/pages/navigates-away.html" -o "$o" --frames 30
expect_failure closes-itself 1 "window.close()" -- render "$src/tests/pages/closes-itself.html" -o "$o" --frames 30
expect_failure infinite-duration 2 "window.pagereel.duration" -- render "$src/tests/pages/duration-infinite.html" -o "$o"
expect_failure wide-pattern 2 "at most two digits" -- render "$page" -o "$work/out/f%999999999d.png" --frames 3
expect_failure huge-rate-fraction 2 "too fine" -- render "$page" -o "$o" --fps 4000000001/4000000000 --frames 3
expect_failure unreachable-url 1 "could not load" -- render "http://127.0.0.1:9/" -o "$o" --frames 3
expect_failure bad-preroll 2 "--preroll" -- render "$page" -o "$o" --frames 3 --preroll teleport
expect_failure jpeg-into-lossless 2 "lossless ffv1-mkv film" -- render "$page" -o "$work/out/film.mkv" --frames 3 --screenshots jpeg
expect_failure jpeg-with-alpha 2 "JPEG has no transparency" -- render "$page" -o "$work/out/film.mov" --frames 3 --alpha --screenshots jpeg
expect_failure bad-screenshots 2 "--screenshots" -- render "$page" -o "$o" --frames 3 --screenshots bmp
expect_failure bad-shard 2 "bad --shard '3/3'" -- render "$page" -o "$o" --frames 3 --shard 3/3 --work-dir "$work/shards"
expect_failure shard-needs-work-dir 2 "--shard needs --work-dir" -- render "$page" -o "$o" --frames 3 --shard 0/2
expect_failure bad-segment-frames 2 "--segment-frames must be" -- render "$page" -o "$o" --frames 3 --segment-frames 0
expect_failure concat-not-a-folder 2 "is not a folder of segments" -- concat "$work/nothing" -o "$o"
expect_failure concat-no-manifest 2 "not a pagereel work folder" -- concat "$work/tmp" -o "$o"
expect_failure bad-timezone 2 "unknown time zone 'Mars/Olympus'" -- render "$page" -o "$o" --frames 3 --timezone Mars/Olympus
expect_failure bad-locale 2 "unknown locale" -- render "$page" -o "$o" --frames 3 --locale not_a-locale!
expect_failure strict 1 "reported an error while it loaded" -- render "$src/tests/pages/reports-errors.html" -o "$o" --frames 6 --strict
expect_failure strict-dialog 1 "opened a dialog at frame 29: alert(\"Hello from frame 29\"), dismissed; a film has nobody to answer it" -- render "$src/tests/pages/dialogs.html" -o "$o" --frames 40 --size 320x180 --strict --timeout 5
# Segments 0-9 and 10-19 are finished when frame 29 ends the render: the same command would
# end the same way, so nothing is kept for it.
expect_failure strict-after-segments 1 "opened a dialog at frame 29" -- render "$src/tests/pages/dialogs.html" -o "$o" --frames 40 --size 320x180 --strict --timeout 5 --lanes 1 --segment-frames 10
expect_failure busy-script 1 "its script was busy" -- render "$src/tests/pages/busy.html" -o "$o" --frames 30 --timeout 2

# Without --strict, a page that reports errors renders, and the summary lists them.
"$bin" render "$src/tests/pages/reports-errors.html" -o "$work/out/errors.mp4" --frames 6 --size 320x180 --progress plain >/dev/null 2>"$work/log"
rc=$?
if [ "$rc" -eq 0 ] && grep -q "the page reported 3 errors" "$work/log" &&
   grep -q "failed load, while loading:.*no-such-script.js" "$work/log" &&
   grep -q "console error, while loading: the data feed is stale" "$work/log" &&
   grep -q "uncaught exception, frame 3: .*undefinedFunctionCall is not defined" "$work/log"; then
  passes=$((passes + 1))
else
  echo "FAIL page-errors-listed: rc=$rc"; cat "$work/log"; failures=$((failures + 1))
fi
rm -f "$work/out/errors.mp4"

# Dialogs are dismissed at once (a short --timeout: one left open would fail the render)
# and listed with their frames.
"$bin" render "$src/tests/pages/dialogs.html" -o "$work/out/dialogs.mp4" --frames 50 --size 320x180 --timeout 5 --progress plain >/dev/null 2>"$work/log"
rc=$?
if [ "$rc" -eq 0 ] && grep -q "the page reported 4 errors or dialogs" "$work/log" &&
   grep -qF 'dialog, frame 29: alert("Hello from frame 29"), dismissed' "$work/log" &&
   grep -qF 'dialog, frame 31: confirm("Go on?"), dismissed (it returned false)' "$work/log" &&
   grep -qF 'dialog, frame 33: prompt("Your name?"), dismissed (it returned null)' "$work/log" &&
   grep -qF "dialog, frame 45: alert(\"A timer's alert\"), dismissed" "$work/log"; then
  passes=$((passes + 1))
else
  echo "FAIL dialogs-listed: rc=$rc"; cat "$work/log"; failures=$((failures + 1))
fi
rm -f "$work/out/dialogs.mp4"

# An image sequence never mixes with an older one: refused, or replaced whole with
# --overwrite (the old frames beyond the new film are gone).
mkdir -p "$work/seq"
"$bin" render "$page" -o "$work/seq/f%03d.png" --frames 8 --size 640x360 --progress none >/dev/null 2>&1
out=$("$bin" render "$page" -o "$work/seq/f%03d.png" --frames 4 --size 640x360 --progress none 2>&1 >/dev/null)
rc=$?
if [ "$rc" -eq 2 ] && grep -q "already has 8 frame files" <<<"$out" && grep -q -- "--overwrite" <<<"$out" &&
   [ "$(ls "$work/seq" | wc -l)" -eq 8 ]; then
  passes=$((passes + 1))
else
  echo "FAIL sequence-refused: rc=$rc files=$(ls "$work/seq" | wc -l): $out"; failures=$((failures + 1))
fi
"$bin" render "$page" -o "$work/seq/f%03d.png" --frames 4 --size 640x360 --progress none --overwrite >/dev/null 2>&1
rc=$?
if [ "$rc" -eq 0 ] && [ "$(ls -A "$work/seq" | tr '\n' ' ')" = "f000.png f001.png f002.png f003.png " ]; then
  passes=$((passes + 1))
else
  echo "FAIL sequence-overwrite: rc=$rc files='$(ls -A "$work/seq")'"; failures=$((failures + 1))
fi

# A render killed with SIGKILL at about half keeps its finished segments; the same command
# run again makes only the rest, and the film is the one an uninterrupted render makes.
# The partial file of the segment it was writing is removed.
rm -rf "$work/seq"; mkdir -p "$work/seq"
args=(render "$page" --frames 120 --segment-frames 20 --size 320x180 --lanes 1 --progress plain)
"$bin" "${args[@]}" -o "$work/seq/clean.mp4" >/dev/null 2>&1
"$bin" "${args[@]}" -o "$work/seq/film.mp4" >/dev/null 2>"$work/log" &
pid=$!
for _ in $(seq 300); do
  [ "$(ls "$work/seq/.film.mp4.pagereel" 2>/dev/null | grep -c '^seg-[0-9]*\.json$')" -ge 3 ] && break
  sleep 0.1
done
kill -KILL "$pid"; wait "$pid" 2>/dev/null
kept=$(ls "$work/seq/.film.mp4.pagereel" | grep -c '^seg-[0-9]*\.json$')
"$bin" "${args[@]}" -o "$work/seq/film.mp4" >/dev/null 2>"$work/log"
rc=$?
same=$(cmp -s "$work/seq/clean.mp4" "$work/seq/film.mp4" && echo yes)
if [ "$kept" -ge 3 ] && [ "$kept" -lt 6 ] && [ "$rc" -eq 0 ] && [ "$same" = yes ] &&
   grep -q "resuming: $kept of 6 segments" "$work/log" && [ "$(ls -A "$work/seq")" = "$(printf 'clean.mp4\nfilm.mp4')" ]; then
  passes=$((passes + 1))
else
  echo "FAIL resume-after-kill: kept=$kept rc=$rc same=$same files='$(ls -A "$work/seq")'"; cat "$work/log"
  failures=$((failures + 1))
fi

# A work folder made for another film is refused (exit 2), naming what changed.
"$bin" render "$page" -o "$work/seq/other.mp4" --work-dir "$work/kept" --frames 3 --size 320x180 --keep-segments >/dev/null 2>&1
expect_failure changed-film 2 "quality: was 90, now 50" -- render "$page" -o "$work/seq/other.mp4" --work-dir "$work/kept" --frames 3 --size 320x180 --quality 50
rm -rf "$work/kept" "$work/seq/other.mp4"

# Shards into one folder, then concat: the same film; concat of an incomplete folder names
# what is missing and writes nothing.
for i in 2 0; do
  "$bin" "${args[@]}" -o "$work/seq/sharded.mp4" --shard $i/3 --work-dir "$work/shards" >/dev/null 2>&1
done
out=$("$bin" concat "$work/shards" -o "$work/seq/sharded.mp4" 2>&1 >/dev/null)
rc=$?
if [ "$rc" -eq 1 ] && grep -q "2 of 6 segments are not finished" <<<"$out" &&
   grep -q "segment 2 (frames 40-59)" <<<"$out" && [ ! -e "$work/seq/sharded.mp4" ]; then
  passes=$((passes + 1))
else
  echo "FAIL concat-incomplete: rc=$rc: $out"; failures=$((failures + 1))
fi
"$bin" "${args[@]}" -o "$work/seq/sharded.mp4" --shard 1/3 --work-dir "$work/shards" >/dev/null 2>&1
printed=$("$bin" concat "$work/shards" -o "$work/seq/sharded.mp4" 2>"$work/log")
rc=$?
if [ "$rc" -eq 0 ] && [ "$printed" = "$work/seq/sharded.mp4" ] && cmp -s "$work/seq/clean.mp4" "$work/seq/sharded.mp4" &&
   [ ! -e "$work/shards" ]; then
  passes=$((passes + 1))
else
  echo "FAIL shards-concat: rc=$rc printed='$printed'"; cat "$work/log"; failures=$((failures + 1))
fi
rm -rf "$work/seq" "$work/tmp"/* "$work/shards"

# Over HTTP, from a server on loopback: a page renders, a missing one names the status.
start_loopback_server "$src/tests/pages"
expect_failure http-404 1 "HTTP 404" -- render "http://127.0.0.1:$port/missing.html" -o "$o" --frames 3
printed=$("$bin" render "http://127.0.0.1:$port/ready-late.html" -o "$work/out/http.mp4" --size 640x360 --progress none 2>"$work/log")
rc=$?
frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$work/out/http.mp4" 2>/dev/null)
if [ "$rc" -eq 0 ] && [ "$frames" = "15" ]; then
  passes=$((passes + 1))
else
  echo "FAIL http-render: rc=$rc frames='$frames'"; cat "$work/log"; failures=$((failures + 1))
fi
rm -f "$work/out/http.mp4"
kill "$server"

# Unwritable output folder (root can write anywhere, so only check when not root).
if [ "$(id -u)" -ne 0 ]; then
  mkdir -p "$work/ro" && chmod 555 "$work/ro"
  expect_failure unwritable 2 "cannot write" -- render "$page" -o "$work/ro/film.mp4" --frames 3
fi

# Disk full while writing: a 64 KB tmpfs as the output folder (root only; skipped where
# mounting is not allowed). The error must say so and nothing may be left on it.
full="$work/full"
mkdir -p "$full"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=64k tmpfs "$full" 2>/dev/null; then
  for target in film.mp4 'seq_%04d.png'; do
    out=$("$bin" render "$src/examples/lower-third" -o "$full/$target" --frames 60 --progress none 2>&1 >/dev/null)
    rc=$?
    if [ "$rc" -eq 1 ] && grep -q "No space left on device" <<<"$out" && [ -z "$(ls -A "$full")" ]; then
      passes=$((passes + 1))
    else
      echo "FAIL disk-full $target: rc=$rc files='$(ls -A "$full" | head -3)': $out"
      failures=$((failures + 1))
    fi
  done
  umount "$full"
else
  echo "note: disk-full check skipped (needs root and tmpfs mounts)"
fi

# A good render: the film exists, is complete, and the path is printed on stdout.
printed=$("$bin" render "$page" -o "$o" --frames 12 --size 640x360 --progress json 2>"$work/log")
rc=$?
frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$o" 2>/dev/null)
if [ "$rc" -eq 0 ] && [ "$printed" = "$o" ] && [ "$frames" = "12" ] && grep -q '"event":"done"' "$work/log"; then
  passes=$((passes + 1))
else
  echo "FAIL good-render: rc=$rc printed='$printed' frames='$frames'"; cat "$work/log"; failures=$((failures + 1))
fi

# A composition on disk is one piece (docs/page-contract.md, Loading): over file:// its
# module scripts, script-URL workers and XHR load, and a canvas that drew its own image
# stays readable. Each check paints one 16 px strip green (red or blue if refused).
mkdir -p "$work/own/frames"
echo 'export const x = 1;' >"$work/own/m.js"
echo 'onmessage = () => postMessage(1);' >"$work/own/w.js"
echo '{"a": 1}' >"$work/own/d.json"
echo '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4" fill="#0f0"/></svg>' >"$work/own/i.svg"
cat >"$work/own/page.html" <<'HTML'
<!doctype html>
<body style="margin:0">
<div id="m" style="height:16px;background:#00f"></div><div id="w" style="height:16px;background:#00f"></div>
<div id="x" style="height:16px;background:#00f"></div><div id="i" style="height:16px;background:#00f"></div>
<script type="module">import { x } from './m.js'; document.getElementById('m').style.background = x === 1 ? '#0f0' : '#f00';</script>
<script>
  const paint = (id, ok) => { document.getElementById(id).style.background = ok ? '#0f0' : '#f00'; };
  try { const w = new Worker('w.js'); w.onmessage = () => paint('w', true); w.postMessage(0); } catch (e) { paint('w', false); }
  try { const r = new XMLHttpRequest(); r.open('GET', 'd.json', false); r.send(); paint('x', r.responseText.includes('"a"')); } catch (e) { paint('x', false); }
  const img = new Image();
  img.onload = () => {
    const c = document.createElement('canvas').getContext('2d');
    c.drawImage(img, 0, 0);
    try { paint('i', c.getImageData(1, 1, 1, 1).data[1] === 255); } catch (e) { paint('i', false); }
  };
  img.src = 'i.svg';
</script>
HTML
"$bin" render "$work/own/page.html" -o "$work/own/frames/f%02d.png" --frames 3 --fps 10 --size 64x64 --progress none >"$work/own/log" 2>&1
rc=$?
strips=$(ffmpeg -v error -i "$work/own/frames/f02.png" -f rawvideo -pix_fmt rgb24 - 2>/dev/null |
  python3 -c 'import sys; d = sys.stdin.buffer.read(); print(" ".join("%d,%d,%d" % tuple(d[(y * 64 + 32) * 3:(y * 64 + 32) * 3 + 3]) for y in (8, 24, 40, 56)))')
if [ "$rc" -eq 0 ] && [ "$strips" = "0,255,0 0,255,0 0,255,0 0,255,0" ]; then
  passes=$((passes + 1))
else
  echo "FAIL own-files: rc=$rc strips (module, worker, XHR, image) '$strips'"; cat "$work/own/log"; failures=$((failures + 1))
fi

# Ctrl-C: exit 130, no output, no browser left behind.
rm -f "$o"
# Its own TMPDIR, so its browsers' profile folders are told apart from other tests'.
mkdir -p "$work/tmp"
TMPDIR="$work/tmp" "$bin" render "$page" -o "$o" --frames 3000 --segment-frames 3000 --size 640x360 --progress none &
pid=$!
sleep 3
kill -INT "$pid"
wait "$pid"
rc=$?
sleep 0.5
left=$(pgrep -f "$work/tmp/pagereel-profile" | wc -l)
if [ "$rc" -eq 130 ] && [ -z "$(ls -A "$work/out")" ] && [ "$left" -eq 0 ] &&
   [ -z "$(ls -A "$work/tmp")" ]; then
  passes=$((passes + 1))
else
  echo "FAIL interrupt: rc=$rc files='$(ls -A "$work/out")' browsers left=$left" \
       "profiles left='$(ls -A "$work/tmp")'"
  failures=$((failures + 1))
fi

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
