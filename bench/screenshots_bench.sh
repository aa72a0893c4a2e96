#!/usr/bin/env bash
# What JPEG screenshots cost and save, for bench/RESULTS.md ("frame truth (issue 18)").
# For each page, a reference film of the exact frames (--screenshots png into FFV1), then
# .mp4 films at several --quality values, once with JPEG screenshots and once with PNG:
# PSNR and SSIM of each against the reference (decoded, compared in RGB), and the render's
# speed; and .mov (ProRes, which --quality does not change) both ways. If OLD (a pagereel binary from before exact screenshots) is given, the lossless
# kinds (.mkv, .png sequence) are timed with it too, in the same run: what exactness costs
# a user of those kinds.
# Usage: [FRAMES=90] [SIZE=1280x720] [QUALITIES="50 75 90 100"] \
#          bench/screenshots_bench.sh [BUILD_DIR] [OLD_BINARY]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
old=${2:-}
bin=$build/src/cli/pagereel
frames=${FRAMES:-90}
size=${SIZE:-1280x720}
qualities=${QUALITIES:-50 75 90 100}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

field() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print(d$2)" "$1"; }
# render BINARY OUTPUT ARGS...: prints frames per second of wall time.
render() {
  local b=$1 o=$2
  shift 2
  "$b" render "$page_path" -o "$o" --frames "$frames" --size "$size" --lanes 1 \
    --progress json "$@" 2>"$out/log" >/dev/null ||
    { echo "screenshots_bench: $page $o $* failed" >&2; cat "$out/log" >&2; exit 1; }
  local done_line
  done_line=$(grep '"event":"done"' "$out/log" | tail -1)
  python3 -c "import json,sys; d=json.loads(sys.argv[1]); print('%.1f' % (d['frames_rendered']/d['wall_s']))" "$done_line"
}
# compare FILM REFERENCE: "PSNR SSIM" over all frames, in RGB.
compare() {
  local psnr ssim
  psnr=$(ffmpeg -v info -i "$1" -i "$2" -lavfi "[0:v]format=gbrp[a];[1:v]format=gbrp[b];[a][b]psnr" \
    -f null - 2>&1 | sed -n 's/.*PSNR .*average:\([0-9.inf]*\).*/\1/p' | tail -1)
  ssim=$(ffmpeg -v info -i "$1" -i "$2" -lavfi "[0:v]format=gbrp[a];[1:v]format=gbrp[b];[a][b]ssim" \
    -f null - 2>&1 | sed -n 's/.*SSIM .*All:\([0-9.]*\).*/\1/p' | tail -1)
  echo "$psnr $ssim"
}

echo "### quality: .mp4 against the exact frames ($frames frames, $size, one lane)"
echo
echo "| page | --quality | screenshots | fps | PSNR dB | SSIM |"
echo "|---|---|---|---|---|---|"
speed_rows=()
for page in examples/lower-third bench/compositions/light bench/compositions/heavy \
            tests/pages/test-card.html; do
  page_path=$root/$page
  render "$bin" "$out/ref.mkv" --screenshots png >/dev/null
  for q in $qualities; do
    for shots in jpeg png; do
      [ "$q" = 100 ] && [ "$shots" = jpeg ] && continue
      fps=$(render "$bin" "$out/q.mp4" --quality "$q" --screenshots "$shots")
      read -r psnr ssim < <(compare "$out/q.mp4" "$out/ref.mkv")
      echo "| $page | $q | $shots | $fps | $psnr | $ssim |"
    done
  done
  for shots in jpeg png; do
    fps=$(render "$bin" "$out/q.mov" --screenshots "$shots")
    read -r psnr ssim < <(compare "$out/q.mov" "$out/ref.mkv")
    echo "| $page | .mov (ProRes 422 HQ) | $shots | $fps | $psnr | $ssim |"
  done
  if [ -n "$old" ]; then
    mkdir -p "$out/seq"
    new_mkv=$(render "$bin" "$out/a.mkv")
    old_mkv=$(render "$old" "$out/b.mkv")
    new_png=$(render "$bin" "$out/seq/%05d.png" --overwrite)
    old_png=$(render "$old" "$out/seq/%05d.png" --overwrite)
    speed_rows+=("| $page | $old_mkv | $new_mkv | $old_png | $new_png |")
  fi
done
if [ -n "$old" ]; then
  echo
  echo "### lossless kinds: JPEG screenshots (before) against PNG (now), fps, same run"
  echo
  echo "| page | .mkv before | .mkv now | .png sequence before | .png sequence now |"
  echo "|---|---|---|---|---|"
  printf '%s\n' "${speed_rows[@]}"
fi
