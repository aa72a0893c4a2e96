#!/usr/bin/env bash
# x264 preset and CRF against CPU, size and quality, for choosing what pagereel's --quality
# maps to (src/encode/stream.cc: CrfForQuality and the preset). Each reference (a lossless
# film or image sequence, e.g. from `pagereel render PAGE -o dir/%05d.png --alpha`) is first
# converted once to yuv420p the way stream.cc converts (swscale bilinear + accurate rounding,
# BT.709 limited range), so the figures are x264's loss alone, not chroma subsampling's.
# Then every preset x CRF is encoded with the ffmpeg CLI (the same libavcodec and libx264
# the library links) with stream.cc's settings: GOP 2 s, BT.709 tags, CRF rate control.
#   CPU ms/frame: user + sys of the encoding ffmpeg, less the same ffmpeg reading the
#                 reference into a null output (printed above the table), over the frames.
#   kbit/s:       the MP4's size over the film's duration.
#   SSIM:         ffmpeg's ssim filter against the converted reference, all planes (Y 4/6,
#                 U and V 1/6 each), and the same as dB (-10 log10(1 - SSIM)).
#   PSNR:         ffmpeg's psnr filter, all planes.
# One encode at a time; each (with its comparison) runs under flock on $LOCK so other work
# on the machine can get in between. Prints a Markdown table on stdout (progress on
# stderr); CSV=FILE also writes the rows as CSV.
# Usage: [FRAMES=150] [FPS=30] [THREADS=2] [PRESETS="ultrafast ... medium"]
#   [CRFS="10 12 14 17 20 23 26 30"] [LOCK=/tmp/pagereel-build.lock] [CSV=rows.csv]
#   bench/x264_presets.sh [NAME=]REFERENCE...
# A REFERENCE with a % in it is an image sequence read at FPS; NAME defaults to the file's
# name, or for a sequence its folder's.
#   bench/x264_presets.sh --summary rows.csv...
# reads rows written with CSV= (several runs may be given) and prints the comparison at
# equal quality: for each clip and each CRF veryfast was run at (labelled with the highest
# --quality that CrfForQuality maps to it), the SSIM dB veryfast reached, and for every
# preset the CRF that reaches the same SSIM dB (linear between measured CRFs), the CPU and
# kbit/s there (CPU linear, kbit/s log-linear), and the kbit/s as a multiple of veryfast's.
# "-" where the preset's measured CRFs do not reach that SSIM.
set -euo pipefail
frames=${FRAMES:-150}
fps=${FPS:-30}
threads=${THREADS:-2}
presets=${PRESETS:-ultrafast superfast veryfast faster fast medium}
crfs=${CRFS:-10 12 14 17 20 23 26 30}
lock=${LOCK:-/tmp/pagereel-build.lock}
csv=${CSV:-}
if [ "${1:-}" = --summary ]; then
  shift
  exec python3 - "$@" <<'PY'
import csv, math, sys
rows = [r for f in sys.argv[1:] for r in csv.DictReader(open(f))]
order = ['ultrafast', 'superfast', 'veryfast', 'faster', 'fast', 'medium', 'slow']
clips, data = [], {}
for r in rows:
    if r['clip'] not in data: clips.append(r['clip']); data[r['clip']] = {}
    data[r['clip']].setdefault(r['preset'], {})[int(r['crf'])] = (
        float(r['cpu_ms_per_frame']), float(r['kbps']), float(r['ssim_db']))
def crf_for_quality(q): return min(max(10 + (100 - q) * 2 // 5, 0), 51)
def at(points, target):  # points: crf -> (ms, kbps, ssim_db); ssim_db falls with crf
    pts = sorted(points.items())
    for (c0, (m0, k0, q0)), (c1, (m1, k1, q1)) in zip(pts, pts[1:]):
        if q0 >= target >= q1:
            t = 0.0 if q0 == q1 else (q0 - target) / (q0 - q1)
            return (c0 + t * (c1 - c0), m0 + t * (m1 - m0),
                    math.exp(math.log(k0) + t * (math.log(k1) - math.log(k0))))
    return None
for clip in clips:
    presets = [p for p in order if p in data[clip]]
    print(f'\n{clip}, {rows[[r["clip"] for r in rows].index(clip)]["size"]}: each cell is CRF, '
          'CPU ms/frame, kbit/s (x veryfast) at the SSIM veryfast reaches at that --quality\n')
    print('| --quality (veryfast CRF) | SSIM dB | ' + ' | '.join(presets) + ' |')
    print('|---|---|' + '---|' * len(presets))
    for crf, (vm, vk, vq) in sorted(data[clip].get('veryfast', {}).items()):
        qs = [q for q in range(1, 101) if crf_for_quality(q) == crf]
        label = f'{max(qs)} ({crf})' if qs else f'- ({crf})'
        cells = []
        for p in presets:
            hit = at(data[clip][p], vq) if p != 'veryfast' else (crf, vm, vk)
            cells.append('-' if hit is None else
                         f'{hit[0]:.1f}: {hit[1]:.0f} ms, {hit[2]:.0f} ({hit[2] / vk:.2f}x)')
        print(f'| {label} | {vq:.2f} | ' + ' | '.join(cells) + ' |')
PY
fi
if [ $# -eq 0 ]; then
  echo "usage: bench/x264_presets.sh [NAME=]REFERENCE... (see the comment at the top)" >&2
  exit 2
fi
for tool in ffmpeg ffprobe flock /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "x264_presets.sh: $tool is needed" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# user + sys seconds of a command (already under the lock).
cpu_of() {
  /usr/bin/time -f '%U %S' -o "$work/time" "$@" >/dev/null 2>"$work/err" || {
    cat "$work/err" >&2
    return 1
  }
  awk '{ printf "%.3f", $1 + $2 }' "$work/time"
}

# One encode and its comparison with the reference, held under the lock together: writes
# "CPU_SECONDS BYTES" to $work/enc and the ssim and psnr filters' summaries to $work/q.
encode_and_compare() {
  local yuv=$1 preset=$2 crf=$3 mp4=$work/out.mp4
  cpu_of ffmpeg -nostdin -v error -y -i "$yuv" -c:v libx264 -preset "$preset" -crf "$crf" \
    -g $((fps * 2)) -threads "$threads" -pix_fmt yuv420p \
    -color_primaries bt709 -color_trc bt709 -colorspace bt709 -color_range tv "$mp4" >"$work/enc"
  echo " $(stat -c %s "$mp4")" >>"$work/enc"
  ffmpeg -nostdin -hide_banner -i "$mp4" -i "$yuv" -filter_complex \
    "[0:v]split[a][b];[1:v]split[c][d];[a][c]ssim;[b][d]psnr" -f null - 2>"$work/q"
}
export -f cpu_of encode_and_compare
export work fps threads

[ -n "$csv" ] && echo "clip,size,preset,crf,cpu_ms_per_frame,kbps,ssim,ssim_db,psnr_db" >"$csv"
header_done=0
for arg in "$@"; do
  ref=${arg#*=}
  if [ "$ref" != "$arg" ]; then name=${arg%%=*}; elif [[ $ref == *%* ]]; then
    name=$(basename "$(dirname "$ref")"); else name=$(basename "${ref%.*}"); fi
  in_opts=()
  [[ $ref == *%* ]] && in_opts=(-framerate "$fps")
  yuv=$work/$name.y4m
  flock "$lock" ffmpeg -nostdin -v error -y "${in_opts[@]}" -i "$ref" -frames:v "$frames" \
    -vf "scale=out_color_matrix=bt709:out_range=tv:flags=bilinear+accurate_rnd,format=yuv420p" \
    -r "$fps" -strict -1 "$yuv"
  size=$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=s=x:p=0 "$yuv")
  got=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames \
    -of csv=p=0 "$yuv")
  base=$(flock "$lock" bash -c 'cpu_of "$@"' _ ffmpeg -nostdin -v error -i "$yuv" -f null -)
  echo "$name: $size, $got frames, reading alone ${base} s CPU" >&2
  if [ $header_done -eq 0 ]; then
    echo "| clip | size | preset | CRF | CPU ms/frame | kbit/s | SSIM | SSIM dB | PSNR dB |"
    echo "|---|---|---|---|---|---|---|---|---|"
    header_done=1
  fi
  for preset in $presets; do
    for crf in $crfs; do
      flock "$lock" bash -c 'encode_and_compare "$@"' _ "$yuv" "$preset" "$crf"
      read -r cpu bytes <"$work/enc"
      ssim=$(grep -o 'SSIM Y:.*' "$work/q" | sed -E 's/.* All:([0-9.]+) \(([0-9.inf]+)\).*/\1 \2/')
      psnr=$(grep -o 'PSNR y:.*' "$work/q" | sed -E 's/.* average:([0-9.inf]+).*/\1/')
      row=$(awk -v c="$cpu" -v b="$base" -v n="$got" -v by="$bytes" -v f="$fps" \
        -v s="$ssim" -v p="$psnr" 'BEGIN {
          split(s, q, " ");
          printf "%.2f %.0f %.5f %.2f %.2f", (c - b) * 1000 / n, by * 8 / (n / f) / 1000, q[1], q[2], p }')
      read -r ms kbps s_all s_db p_db <<<"$row"
      echo "| $name | $size | $preset | $crf | $ms | $kbps | $s_all | $s_db | $p_db |"
      [ -n "$csv" ] && echo "$name,$size,$preset,$crf,$ms,$kbps,$s_all,$s_db,$p_db" >>"$csv"
      echo "  $name $preset crf $crf: $ms ms/frame, $kbps kbit/s, SSIM $s_all, PSNR $p_db" >&2
    done
  done
done
