#!/usr/bin/env python3
"""The serve part of bench/house_ab.sh (python3 standard library only).

  house_ab_serve.py SIDE SERVICE PAGES CAPTURES CLIPS LOG   one round: prints one JSON line
  house_ab_serve.py table RESULTS.jsonl                     the Markdown table, A against B

A round: CAPTURES static 1280x720 PNG screenshots, 4 at once (captures/s over the whole
batch); then CLIPS MP4 clips and CLIPS GIF clips of the Chart.js page one at a time
(640x360, 2 s at 10 fps), whose total_ms and encode_ms are read from the service's own log
lines (one JSON object per capture).
"""
import concurrent.futures
import json
import statistics
import sys
import time
import urllib.parse
import urllib.request


def get(url):
    with urllib.request.urlopen(url, timeout=120) as r:
        return r.status, r.read()


def capture_url(service, route, **params):
    return f"{service}/v1/{route}?" + urllib.parse.urlencode(params)


def log_lines(path, route):
    lines = []
    with open(path) as f:
        for line in f:
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if d.get("route") == route and d.get("status") == 200:
                lines.append(d)
    return lines


def round_(side, service, pages, captures, clips, log):
    static = capture_url(service, "screenshot", url=f"{pages}/static.html", width=1280, height=720)
    get(static)  # Warm-up: the first capture starts the browser's renderer.
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        codes = list(pool.map(lambda _: get(static)[0], range(captures)))
    seconds = time.monotonic() - start
    sizes = {}
    for route, fmt in (("clip", "mp4"), ("gif", None)):
        params = dict(url=f"{pages}/chart.html", width=640, height=360, duration=2, fps=10)
        if fmt:
            params["format"] = fmt
        for _ in range(clips):
            status, body = get(capture_url(service, route, **params))
            if status == 200:
                sizes.setdefault(route, []).append(len(body))
    time.sleep(0.5)  # The last log line.
    out = {"side": side, "static_ok": codes.count(200), "static_per_s": captures / seconds}
    for route in ("clip", "gif"):
        lines = log_lines(log, route)
        out[route] = {
            "n": len(lines),
            "total_ms": statistics.median(d["total_ms"] for d in lines) if lines else None,
            "encode_ms": statistics.median(d["encode_ms"] for d in lines) if lines else None,
            "frames_ms": statistics.median(d["frames_ms"] for d in lines) if lines else None,
            "bytes": statistics.median(sizes.get(route, [0])),
        }
    print(json.dumps(out))


def table(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    by = {"a": [r for r in rows if r["side"] == "a"], "b": [r for r in rows if r["side"] == "b"]}

    def med(side, f):
        values = [f(r) for r in by[side] if f(r) is not None]
        return statistics.median(values) if values else float("nan")

    def line(what, f, fmt="{:.2f}"):
        a, b = med("a", f), med("b", f)
        runs = lambda s: ", ".join(fmt.format(f(r)) for r in by[s] if f(r) is not None)
        print(f"| {what} | {fmt.format(a)} ({runs('a')}) | {fmt.format(b)} ({runs('b')}) | "
              f"{b / a:.2f} |")

    print("| measure (median of rounds) | A (rounds) | B (rounds) | B / A |")
    print("|---|---|---|---|")
    line("static PNG captures/s, 4 at once", lambda r: r["static_per_s"])
    for route, name in (("clip", "MP4 clip"), ("gif", "GIF")):
        line(f"{name}: total ms", lambda r, k=route: r[k]["total_ms"], "{:.0f}")
        line(f"{name}: stepping the page, ms", lambda r, k=route: r[k]["frames_ms"], "{:.0f}")
        line(f"{name}: decode + encode ms", lambda r, k=route: r[k]["encode_ms"], "{:.0f}")
        line(f"{name}: bytes", lambda r, k=route: r[k]["bytes"], "{:.0f}")


if __name__ == "__main__":
    if sys.argv[1] == "table":
        table(sys.argv[2])
    else:
        side, service, pages, captures, clips, log = sys.argv[1:7]
        round_(side, service, pages, int(captures), int(clips), log)
