#!/usr/bin/env python3
"""Checks a soak made by bench/live/soak.sh (issue 19, "Done when"):

  soak_check.py OUT_DIR

- every tick a frame: the file's frames against the ticks the show ran;
- the ticker's freshness: the share of frames (after the first 2 s) whose ticker band differs
  from the frame before (it crawls one step per frame);
- each score update: ticks from the call's answer to the first frame whose score bug changed;
- pagereel's counters (frames per output) against what the file and the receiver hold.
Prints one JSON object.
"""
import json
import math
import re
import subprocess
import sys

W, H, PERIOD_MS = 1280, 720, 20.0
# Regions (x, y, w, h) as placed by soak.sh: the score bug and the ticker band.
SCORE = (40, 30, 480, 100)
TICKER = (150, 650, 1130, 70)  # The crawl, right of the label.


def packets(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_packets",
                          "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", path],
                         capture_output=True, text=True).stdout.split()
    return int(out[0]) if out and out[0].isdigit() else None


def bands(path):
    """Yields (score band bytes, ticker band bytes) per frame, in gray."""
    sx, sy, sw, sh = SCORE
    tx, ty, tw, th = TICKER
    graph = (f"[0:v]format=gray,split[a][b];[a]crop={sw}:{sh}:{sx}:{sy}[s];"
             f"[b]crop={tw}:{th}:{tx}:{ty},pad={sw if sw > tw else tw}:{th}[t];"
             f"[s]pad={max(sw, tw)}:{sh}[s2];[s2][t]vstack[o]")
    width = max(sw, tw)
    size = width * (sh + th)
    p = subprocess.Popen(["ffmpeg", "-v", "error", "-i", path, "-filter_complex", graph, "-map", "[o]",
                          "-f", "rawvideo", "-"], stdout=subprocess.PIPE)
    while True:
        frame = p.stdout.read(size)
        if len(frame) < size:
            break
        yield frame[:width * sh], frame[width * sh:]
    p.wait()


def main():
    out = sys.argv[1]
    asrun = open(f"{out}/asrun.log").read()
    tick0 = float(re.search(r"tick 0 at ([0-9.]+) ms", asrun).group(1))
    log = open(f"{out}/pagereel.log").read()
    ticks = int(re.search(r"show ended after (\d+) ticks", log).group(1))
    counted = {m.group(1): int(m.group(2)) for m in re.finditer(r"output (\w+) -> .*?: (\d+) frames", log)}
    sources = {m.group(1): m.group(2) for m in re.finditer(r"source (\w+) .*?\(([0-9.]+/s, [0-9.]+ % of ticks)\)", log)}
    calls = [json.loads(line) for line in open(f"{out}/calls.jsonl")]

    score_changes, ticker_new, ticker_frames, frames = [], 0, 0, 0
    last = None
    for i, (score, ticker) in enumerate(bands(f"{out}/program.ts")):
        if last is not None:
            if score != last[0]:
                score_changes.append(i)
            if i >= 100:
                ticker_frames += 1
                ticker_new += ticker != last[1]
        last = (score, ticker)
        frames = i + 1

    # For each answered call: the first frame at or after the call was sent whose score bug
    # changed, in ticks after the answer (the answer's instant in ticks, rounded up: the
    # first tick that could show it).
    delays, missing = [], 0
    j = 0
    for c in calls:
        if c["status"] != 200:
            missing += 1
            continue
        sent_tick = (c["sent_ms"] - tick0) / PERIOD_MS
        answer_tick = math.ceil((c["answered_ms"] - tick0) / PERIOD_MS)
        while j < len(score_changes) and score_changes[j] < math.floor(sent_tick):
            j += 1
        if j == len(score_changes) or score_changes[j] > answer_tick + 50:
            if answer_tick < frames - 50:
                missing += 1
            continue
        delays.append(score_changes[j] - answer_tick)
    delays.sort()
    q = lambda f: delays[min(len(delays) - 1, int(f * len(delays)))] if delays else None
    received = packets(f"{out}/received.ts")
    print(json.dumps({
        "ticks": ticks,
        "file_frames": frames,
        "file_packets": packets(f"{out}/program.ts"),
        "pagereel_counted": counted,
        "receiver_frames": received,
        "sources": sources,
        "ticker_new_share": round(ticker_new / ticker_frames, 5) if ticker_frames else None,
        "updates": len(calls),
        "updates_not_seen": missing,
        "update_ticks_after_answer": {"p50": q(0.5), "p99": q(0.99), "max": delays[-1] if delays else None,
                                      "within_2": sum(d <= 2 for d in delays)},
    }, indent=1))


if __name__ == "__main__":
    main()
