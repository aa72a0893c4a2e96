#!/usr/bin/env python3
"""Reads the page-frame code (bench/live/pages/slots.html: the wall-clock ms at which the
page frame shown began) from every frame of a video whose frame i is at W0 + i*P on the
wall clock, and says how the content moved against the output: duplicated page frames
(the same one twice in a row), missing ones (the content jumped by more than 1.5 periods),
the content's step jitter, and latency (an output frame's time minus its page frame's).

  frame_codes.py VIDEO --tick0-ms W0 --period-ms P
"""
import argparse
import json
import statistics
import subprocess

W, H = 640, 360


def codes(video):
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", video, "-f", "rawvideo", "-pix_fmt",
                          "gray", "-s", f"{W}x{H}", "-"], check=True, capture_output=True).stdout
    size = W * H
    for i in range(len(raw) // size):
        frame = raw[i * size:(i + 1) * size]
        yield sum(1 << b for b in range(16) if frame[30 * W + b * 40 + 20] > 128)


def quantile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("video")
    p.add_argument("--tick0-ms", type=float)
    p.add_argument("--period-ms", type=float)
    a = p.parse_args()
    found = list(codes(a.video))
    walls = [a.tick0_ms + i * a.period_ms for i in range(len(found))]
    # The page frame's wall time: the latest ms with this code not after the output frame
    # (plus a little, for clocks read on either side of it).
    content = []
    for code, wall in zip(found, walls):
        top = int(wall) + 5
        content.append(top - ((top - code) % 65536))
    skip = min(len(found), 25)  # The first second is warm-up for both pipelines.
    content, walls = content[skip:], walls[skip:]
    latency = [w - c for c, w in zip(content, walls)]
    steps = [b - a for a, b in zip(content, content[1:])]
    print(json.dumps({
        "frames": len(content),
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
