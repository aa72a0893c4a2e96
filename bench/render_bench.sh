#!/usr/bin/env bash
# End-to-end render figures for bench/RESULTS.md: pagereel against references measured in
# the same run, on the same machine:
#   naive      - the fair naive reference, the strongest simple thing a user could write
#                instead: one browser, two tabs on alternate frames, each frame's animations
#                paused and seeked to its time, Page.captureScreenshot (JPEG q90), piped in
#                film order to one ffmpeg (bench/naive/seek.mjs, puppeteer-core, Debian's
#                chromium-headless-shell). Right for CSS, Web Animations, GSAP and SMIL;
#                wrong for anything that reads a clock itself (rAF canvas), see seek.mjs.
#                Timed from launch, page loads included, as pagereel and floor are;
#   naive-1tab - the old loop (bench/naive/naive.mjs): one tab, real-time page, a screenshot
#                per frame, no time control, so its film is not the composition's timing;
#                timed from the first screenshot (launch and load not included);
#   floor      - the raw Chromium floor: beginFrame + screenshot under virtual time, bytes
#                dropped (bench/raw_floor.cc), with the same lane count as pagereel.
# The naive references run once per composition and size (they have no lanes).
# Prints a Markdown table. Usage: [FRAMES=300] [COMPS="light heavy"]
#   [SIZES="1280x720 1920x1080"] [LANES="1 2"] [NO_NAIVE=1] [NO_NAIVE_1TAB=1]
#   bench/render_bench.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
frames=${FRAMES:-300}
bin=$build/src/cli/pagereel
floor=$build/bench/raw_floor
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if [ ! -d "$here/naive/node_modules" ]; then
  (cd "$here/naive" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

field() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d$2)" "$1"; }

echo "| composition | size | lanes | pagereel fps | floor fps | pagereel / floor | naive fps | pagereel / naive | naive-1tab fps | browser s | decode+convert s | encode s | pre-roll frames (s) | peak RSS pagereel | peak RSS browsers |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for comp in ${COMPS:-light heavy}; do
  url="file://$here/compositions/$comp/index.html"
  for size in ${SIZES:-1280x720 1920x1080}; do
    w=${size%x*}; h=${size#*x}
    naive_fps=""; naive_cell="-"; naive1_cell="-"
    if [ -z "${NO_NAIVE:-}" ]; then
      naive=$(node "$here/naive/seek.mjs" "$url" "$out/naive.mp4" "$w" "$h" "$frames" 30 | tail -1)
      naive_fps=$(field "$naive" "['fps']")
      naive_cell=$(python3 -c "print(f'{$naive_fps:.1f}')")
    fi
    if [ -z "${NO_NAIVE_1TAB:-}" ]; then
      naive1=$(node "$here/naive/naive.mjs" "$url" "$out/naive.mp4" "$w" "$h" "$frames" 30 | tail -1)
      naive1_cell=$(python3 -c "print(f'{$(field "$naive1" "['fps']"):.1f}')")
    fi
    for lanes in ${LANES:-1 2}; do
      if ! "$bin" render "$url" -o "$out/film.mp4" --size "$size" --frames "$frames" \
             --lanes "$lanes" --progress json 2>"$out/log" >/dev/null; then
        echo "render_bench: pagereel failed on $comp $size lanes $lanes:" >&2; cat "$out/log" >&2
        continue
      fi
      done_line=$(grep '"event":"done"' "$out/log")
      if ! fl=$("$floor" "$url" "$w" "$h" "$frames" "$lanes" 2>"$out/log"); then
        echo "render_bench: raw_floor failed on $comp $size lanes $lanes:" >&2; cat "$out/log" >&2
        continue
      fi
      fps=$(field "$done_line" "['fps']")
      floor_fps=$(field "$fl" "['fps']")
      ratio_floor=$(python3 -c "print(f'{$fps/$floor_fps:.0%}')")
      if [ -n "$naive_fps" ]; then
        ratio_naive=$(python3 -c "print(f'{$fps/$naive_fps:.1f}x')")
      else
        ratio_naive="-"
      fi
      printf '| %s | %s | %d | %.1f | %.1f | %s | %s | %s | %s | %.1f | %.1f | %.1f | %d (%.1f) | %d MB | %d MB |\n' \
        "$comp" "$size" "$lanes" "$fps" "$floor_fps" "$ratio_floor" "$naive_cell" "$ratio_naive" \
        "$naive1_cell" \
        "$(field "$done_line" "['browser_s']")" "$(field "$done_line" "['decode_s']")" \
        "$(field "$done_line" "['encode_s']")" "$(field "$done_line" "['preroll_frames']")" \
        "$(field "$done_line" "['preroll_s']")" \
        "$(( $(field "$done_line" "['peak_rss_self_bytes']") >> 20 ))" \
        "$(( $(field "$done_line" "['peak_rss_browsers_bytes']") >> 20 ))"
    done
  done
done
