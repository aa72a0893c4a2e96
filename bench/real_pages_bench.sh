#!/usr/bin/env bash
# What rendering real pages exactly costs (issue 6), each figure against its baseline in the
# same run, for bench/RESULTS.md. Prints Markdown tables.
#  1. Chromium's begin-frame determinism switches (--disable-threaded-animation,
#     --disable-checker-imaging, --disable-image-animation-resync,
#     --disable-new-content-rendering-timeout): pagereel as it is, against the same binary
#     driving a browser whose wrapper drops those switches. Runs alternate, REPEAT times.
#     Then, for the heavy composition, which of its parts the cost comes from: the same A/B
#     on copies with one part removed (SECTIONS=attribution only runs this).
#  2. Frame-exact video: a 1280x720 page showing a 10 s video, seeked to every frame's time,
#     against the same page showing a still image of it, for an all-intra file and one
#     with a keyframe every 2 s.
# Usage: [REPEAT=2] [FRAMES=300] bench/real_pages_bench.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../build}
bin=$build/src/cli/pagereel
repeat=${REPEAT:-2}
frames=${FRAMES:-300}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/without-switches" <<'WRAP'
#!/usr/bin/env bash
keep=()
for a in "$@"; do
  case "$a" in
    --disable-threaded-animation|--disable-checker-imaging|--disable-image-animation-resync|\
    --disable-new-content-rendering-timeout) ;;
    *) keep+=("$a") ;;
  esac
done
exec "${REAL_BROWSER:-/usr/lib/chromium/chromium-headless-shell}" "${keep[@]}"
WRAP
chmod +x "$work/without-switches"

# render PAGE SIZE FRAMES [BROWSER]: prints "fps browser_s"
render() {
  local args=(render "$1" -o "$work/film.mp4" --size "$2" --frames "$3" --lanes 1 --progress json)
  [ -n "${4:-}" ] && args+=(--browser "$4")
  "$bin" "${args[@]}" 2>"$work/log" >/dev/null || { cat "$work/log" >&2; return 1; }
  python3 -c 'import json,sys
d = [json.loads(l) for l in open(sys.argv[1]) if "\"done\"" in l][0]
print("%.2f %.2f" % (d["fps"], d["browser_s"]))' "$work/log"
}

sections=${SECTIONS:-switches attribution video}
if [[ " $sections " == *" switches "* ]]; then
echo "### Determinism switches: $frames frames, 1 lane, best of $repeat alternating runs"
echo
echo "| composition | size | with switches fps | without fps | with / without | browser s with | browser s without |"
echo "|---|---|---|---|---|---|---|"
for comp in light heavy; do
  for size in 1280x720 1920x1080; do
    best_with=0; best_without=0; bw=0; bwo=0
    for _ in $(seq "$repeat"); do
      read -r f b < <(render "$here/compositions/$comp" "$size" "$frames")
      if python3 -c "import sys; sys.exit(not $f > $best_with)"; then best_with=$f; bw=$b; fi
      read -r f b < <(render "$here/compositions/$comp" "$size" "$frames" "$work/without-switches")
      if python3 -c "import sys; sys.exit(not $f > $best_without)"; then best_without=$f; bwo=$b; fi
    done
    ratio=$(python3 -c "print(f'{$best_with/$best_without:.0%}')")
    echo "| $comp | $size | $best_with | $best_without | $ratio | $bw | $bwo |"
  done
done
echo
fi

if [[ " $sections " == *" attribution "* ]]; then
# Copies of the heavy composition with one part taken out (the font path made absolute).
heavy=$here/compositions/heavy/index.html
fix="s|url(\"../../../examples|url(\"$here/../examples|"
sed "$fix" "$heavy" >"$work/heavy-whole.html"
sed "$fix; s/animation: orbit 7s ease-in-out infinite alternate;//" "$heavy" >"$work/heavy-lights-still.html"
sed "$fix; s/filter: blur(6vw);//" "$heavy" >"$work/heavy-lights-unblurred.html"
sed "$fix; s/animation: tilt 4s ease-in-out infinite alternate;//" "$heavy" >"$work/heavy-cards-still.html"
sed "$fix; s/backdrop-filter: blur(8px);//" "$heavy" >"$work/heavy-no-backdrop.html"
sed "$fix; s/opacity: .55; animation: orbit/opacity: .55; will-change: transform; animation: orbit/" \
  "$heavy" >"$work/heavy-lights-will-change.html"
aframes=$(( frames / 5 ))
echo "### Where the heavy composition's cost comes from: $aframes frames at 1280x720, 1 lane"
echo
echo "| variant | with switches fps | without fps | with / without |"
echo "|---|---|---|---|"
for v in whole lights-still lights-unblurred cards-still no-backdrop lights-will-change; do
  read -r f1 _ < <(render "$work/heavy-$v.html" 1280x720 "$aframes")
  read -r f2 _ < <(render "$work/heavy-$v.html" 1280x720 "$aframes" "$work/without-switches")
  echo "| $v | $f1 | $f2 | $(python3 -c "print(f'{$f1/$f2:.0%}')") |"
done
echo
fi

if [[ " $sections " == *" video "* ]]; then
# A 10 s 1280x720 test pattern as an all-intra file, with a keyframe every 2 s, and a still.
for g in 1 60; do
  ffmpeg -v error -y -f lavfi -i "testsrc2=s=1280x720:r=30:d=10" -c:v libx264 -preset veryfast \
    -g "$g" -pix_fmt yuv420p "$work/gop$g.mp4"
done
ffmpeg -v error -y -i "$work/gop1.mp4" -frames:v 1 "$work/still.png"
page() {  # page NAME ELEMENT
  printf '<!doctype html><html><head><style>html,body{margin:0;background:#000;overflow:hidden}
video,img{position:absolute;left:0;top:0;width:1280px;height:720px}</style></head><body>%s</body></html>\n' \
    "$2" >"$work/$1.html"
}
page still '<img src="still.png">'
page gop1 '<video src="gop1.mp4" autoplay muted loop playsinline></video>'
page gop60 '<video src="gop60.mp4" autoplay muted loop playsinline></video>'
vframes=150
echo "### Frame-exact video: $vframes frames at 1280x720, 1 lane"
echo
echo "| page | fps | ms per frame | ms per frame more than the still image |"
echo "|---|---|---|---|"
read -r still_fps _ < <(render "$work/still.html" 1280x720 "$vframes")
echo "| still image (baseline) | $still_fps | $(python3 -c "print(f'{1000/$still_fps:.1f}')") | - |"
for g in 1 60; do
  read -r fps _ < <(render "$work/gop$g.html" 1280x720 "$vframes")
  label=$([ "$g" = 1 ] && echo "video, all intra" || echo "video, keyframe every 2 s")
  echo "| $label | $fps | $(python3 -c "print(f'{1000/$fps:.1f}')") | $(python3 -c "print(f'{1000/$fps - 1000/$still_fps:.1f}')") |"
done
fi
