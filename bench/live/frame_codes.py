#!/usr/bin/env python3
"""Reads the page-frame code (bench/live/pages/slots.html: the wall-clock ms at which the
page frame shown began) from every frame of a video whose frame i is at W0 + i*P on the
wall clock, and says how the content moved against the output: duplicated page frames
(the same one twice in a row), missing ones (the content jumped by more than 1.5 periods),
the content's step jitter, and latency (an output frame's time minus its page frame's).

  frame_codes.py VIDEO --tick0-ms W0 --period-ms P [--skip FRAMES]

Also: "new", the share of output frames (after the first) that show a page frame no earlier
output frame showed (a source's freshness as a receiver sees it), and "exact_steps", the
share whose content moved by one period (within 1.5 ms: the codes are whole milliseconds),
and "even", the share of new pictures that moved the content by the most common number of
periods and held it for as many output frames (1.0: motion at a steady rate, whether every
frame or every second one; mixed steps of one and two periods are judder).
The bars may be at any size: 1/16 of the width each, 1/6 of the height (pages/slots.html,
counter.html, ticker.html).
"""
import argparse
import json
import statistics
import subprocess

def size_of(video):
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                          "stream=width,height", "-of", "csv=p=0", video],
                         check=True, capture_output=True, text=True).stdout
    w, h = out.strip().split(",")[:2]
    return int(w), int(h)


def codes(video):
    # The bars are 1/16 of the width and 1/6 of the height: read the middle of each.
    w, h = size_of(video)
    # One picture per frame the file holds, at its own time: a file whose first frame is
    # stamped apart from the rest (an MP4 with AAC) must not get a duplicated frame.
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", video, "-fps_mode", "passthrough",
                          "-f", "rawvideo", "-pix_fmt",
                          "gray", "-"], check=True, capture_output=True).stdout
    size = w * h
    row = h // 12
    for i in range(len(raw) // size):
        frame = raw[i * size:(i + 1) * size]
        yield sum(1 << b for b in range(16)
                  if frame[row * w + (2 * b + 1) * w // 32] > 128)


def quantile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("video")
    p.add_argument("--tick0-ms", type=float)
    p.add_argument("--period-ms", type=float)
    p.add_argument("--skip", type=int, default=25)
    a = p.parse_args()
    found = list(codes(a.video))
    walls = [a.tick0_ms + i * a.period_ms for i in range(len(found))]
    # The page frame's wall time: the latest ms with this code not after the output frame
    # (plus a little, for clocks read on either side of it).
    content = []
    for code, wall in zip(found, walls):
        top = int(wall) + 5
        content.append(top - ((top - code) % 65536))
    skip = min(len(found), a.skip)  # Warm-up: the first second by default.
    content, walls = content[skip:], walls[skip:]
    latency = [w - c for c, w in zip(content, walls)]
    steps = [b - a for a, b in zip(content, content[1:])]
    # Each new picture: (periods its content moved, output frames since the last new one).
    moves, last_new = [], None
    for i in range(1, len(content)):
        if content[i] > content[i - 1]:
            if last_new is not None:
                moves.append((round((content[i] - content[last_new]) / a.period_ms), i - last_new))
            last_new = i
    mode = max(set(moves), key=moves.count) if moves else (0, 0)
    print(json.dumps({
        "frames": len(content),
        "new": round(sum(1 for s in steps if s > 0) / max(1, len(steps)), 4),
        "exact_steps": round(sum(1 for s in steps if abs(s - a.period_ms) <= 1.5)
                             / max(1, len(steps)), 4),
        "even": round(moves.count(mode) / max(1, len(moves)), 4),
        "even_step": mode[0],
        "duplicated": sum(1 for s in steps if s == 0),
        "missing": sum(round(s / a.period_ms) - 1 for s in steps if s > 1.5 * a.period_ms),
        "backwards": sum(1 for s in steps if s < 0),
        "content_step_ms_p50": quantile(steps, 0.5),
        "content_step_ms_p99": quantile(steps, 0.99),
        "content_step_ms_stdev": round(statistics.pstdev(steps), 2) if steps else 0,
        "latency_ms_p50": quantile(latency, 0.5),
        "latency_ms_p99": quantile(latency, 0.99),
    }))


if __name__ == "__main__":
    main()
