#!/usr/bin/env python3
# Gaps in a live output's tone (bench/live/pages/tone.html: 997 Hz at half scale): decodes
# the file's first sound track and finds the stretches, between the tone's first and last
# millisecond, where it is not heard (level under half the tone's, 1 ms blocks); silences
# less than 20 ms apart are one gap. Prints "gaps N, silent MS ms" and then one line per gap
# (its start in the track and its silent ms).
# Usage: tone_gaps.py FILE [HZ]
import math, struct, subprocess, sys

path = sys.argv[1]
hz = float(sys.argv[2]) if len(sys.argv) > 2 else 997.0
rate, block = 48000, 48
pcm = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:a:0", "-af", "pan=mono|c0=c0",
                      "-ar", str(rate), "-f", "f32le", "-"], stdout=subprocess.PIPE, check=True).stdout
x = struct.unpack("<%df" % (len(pcm) // 4), pcm)
levels = []
for start in range(0, len(x) - block + 1, block):
    i = q = 0.0
    for k in range(start, start + block):
        a = 2 * math.pi * hz * k / rate
        i += x[k] * math.cos(a)
        q += x[k] * math.sin(a)
    levels.append(2 * math.hypot(i, q) / block)
loud = [lv > 0.125 for lv in levels]  # Half the tone's 0.25 (0.5 peak, one channel of two).
if not any(loud):
    print("gaps 0, silent 0 ms (no tone)")
    sys.exit(0)
first = loud.index(True)
last = len(loud) - 1 - loud[::-1].index(True)
gaps, at = [], None
for b in range(first, last + 1):
    if not loud[b] and at is None:
        at = b
    elif loud[b] and at is not None:
        if gaps and at - (gaps[-1][0] + gaps[-1][1]) < 20:  # Heard as one (GapFinder::kJoin).
            gaps[-1] = (gaps[-1][0], gaps[-1][1] + b - at)
        else:
            gaps.append((at, b - at))
        at = None
print("gaps %d, silent %d ms (tone heard %d..%d ms)" % (len(gaps), sum(n for _, n in gaps), first, last))
for at, n in gaps:
    print("  at %d ms: %d ms" % (at, n))
