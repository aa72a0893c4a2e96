#!/usr/bin/env bash
# How often a live source's page reaches air with a new picture (issue 19, item 1). Run
# alone (no build or other benchmark meanwhile); see bench/RESULTS.md "live freshness".
#
#   bench/live/freshness.sh PAGEREEL OUT_DIR [SECONDS] [CASES...]
#
# Each case is PAGE:SIZE:FPS:OUTPUTS (PAGE counter or ticker, from bench/live/pages; OUTPUTS
# 1 or 2: an MP4 file, and a second MPEG-TS file). Default cases: counter and ticker at
# 720p25, 720p30, 720p50, 720p59.94 and 1080p25 with one output, and 720p25/720p50 with two.
# For every case it prints what the file holds (bench/live/frame_codes.py: new pictures per
# tick, steps of exactly one period, latency) and pagereel's own source line.
# LIVE_ARGS adds options to every `pagereel live` (LIVE_ARGS=--no-audio: pictures only).
set -euo pipefail
bin=$1 out=$2 seconds=${3:-20}
shift $(($# < 3 ? $# : 3))
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
  cases=(counter:1280x720:25:1 counter:1280x720:30:1 counter:1280x720:50:1
         counter:1280x720:60000/1001:1 counter:1920x1080:25:1
         ticker:1280x720:25:1 ticker:1280x720:50:1 ticker:1920x1080:25:1
         counter:1280x720:25:2 counter:1280x720:50:2 ticker:1280x720:50:2)
fi
for c in "${cases[@]}"; do
  IFS=: read -r page size fps outputs <<<"$c"
  name="$page-$size-${fps//\//_}-$outputs"
  transparent=false
  [ "$page" = ticker ] && transparent=true
  period=$(python3 -c "from fractions import Fraction as F; print(float(1000 / F('$fps')))")
  {
    printf '[format]\nsize = "%s"\nfps = "%s"\n' "$size" "$fps"
    printf '[[sources]]\nid = "%s"\nurl = "%s"\ntransparent = %s\n' "$page" "$here/pages/$page.html" "$transparent"
    printf '[[outputs]]\nid = "file"\nto = "%s"\n' "$out/$name.mp4"
    [ "$outputs" -ge 2 ] && printf '[[outputs]]\nid = "second"\nto = "%s"\n' "$out/$name.ts"
  } >"$out/$name.toml"
  rm -f "$out/$name.asrun" "$out/$name.mp4" "$out/$name.ts"
  "$bin" live "$out/$name.toml" ${LIVE_ARGS:-} --duration "$seconds" --as-run "$out/$name.asrun" \
    --status-every 0 --control none 2>"$out/$name.log" || { echo "$name: pagereel failed"; tail -5 "$out/$name.log"; continue; }
  tick0=$(sed -n 's/.*tick 0 at \([0-9.]*\) ms.*/\1/p' "$out/$name.asrun" | tail -1)
  skip=$(python3 -c "from fractions import Fraction as F; print(round(F('$fps')))")
  echo "$name: $(python3 "$here/frame_codes.py" "$out/$name.mp4" --tick0-ms "$tick0" --period-ms "$period" --skip "$skip")"
  grep -E "^ *source|^ *clock|^ *output" "$out/$name.log" | sed 's/^/    /' || true
done
