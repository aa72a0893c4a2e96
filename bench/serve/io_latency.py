#!/usr/bin/env python3
"""How long pagereel serve's I/O thread keeps a cheap request waiting while captures run.

A probe client sends GET /healthz every 20 ms on one keep-alive connection and times each
answer (the issue's measure: if GIF quantization or clip encoding ran on the I/O thread,
the probes would wait for it). Three phases, each PHASE_SECONDS long:
  idle   nothing else runs (the floor: loopback, Python, the kernel);
  gif    CAPTURES clients ask for GIFs back to back (640x360, 5 s at 10 fps, the chart
         page), so palette building and GIF encoding run all the time;
  clip   the same with MP4 clips.
Prints one JSON line per phase: probes, p50/p90/p99/max ms, captures made, and the
service's own view: its HTTP thread's 20 ms heartbeat, how late it ran (from /metrics, to
the resolution of the histogram's buckets). The probes include the client's own wake-up
and scheduling on a busy machine; the heartbeat excludes the client.

Usage: io_latency.py SERVICE_BASE PAGE_URL [PHASE_SECONDS] [CAPTURES]
"""
import http.client
import json
import sys
import threading
import time
import urllib.parse

base = urllib.parse.urlsplit(sys.argv[1])
page = sys.argv[2]
phase_seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 30
captures = int(sys.argv[4]) if len(sys.argv) > 4 else 2


def connect():
    return http.client.HTTPConnection(base.hostname, base.port, timeout=120)


def percentile(values, p):
    values = sorted(values)
    if not values:
        return None
    k = min(len(values) - 1, max(0, int(round(p / 100 * (len(values) - 1)))))
    return values[k]


def load(route, stop, made, failed):
    conn = connect()
    query = urllib.parse.urlencode(
        {"url": page, "width": 640, "height": 360, "fps": 10, "duration": 5})
    while not stop.is_set():
        try:
            conn.request("GET", f"/v1/{route}?{query}")
            response = conn.getresponse()
            response_body = response.read()
            if response.status == 200 and len(response_body) > 0:
                made.append(1)
            else:
                failed.append(response.status)
        except OSError:
            failed.append(0)
            conn = connect()


def lag_buckets():
    """The service's own view: its HTTP thread's heartbeat lag histogram (cumulative)."""
    conn = connect()
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    buckets = {}
    for line in text.splitlines():
        if line.startswith("pagereel_http_thread_lag_seconds_bucket"):
            bound = line.split('le="')[1].split('"')[0]
            buckets[float("inf") if bound == "+Inf" else float(bound)] = int(line.split()[-1])
    return buckets


def lag_summary(before, after):
    delta = {b: after[b] - before.get(b, 0) for b in after}
    total = delta.get(float("inf"), 0)
    if total == 0:
        return {}
    bounds = sorted(delta)
    def bound_for(p):  # the smallest bucket bound holding p % of the beats
        for b in bounds:
            if delta[b] >= p / 100 * total:
                return b * 1000
        return None
    return {"beats": total,
            "beats_over_1ms": total - delta.get(0.001, 0),
            "p50_le_ms": bound_for(50), "p90_le_ms": bound_for(90), "p99_le_ms": bound_for(99),
            "max_le_ms": bound_for(100)}


def phase(name, route):
    stop = threading.Event()
    made, failed = [], []
    workers = []
    if route:
        for _ in range(captures):
            t = threading.Thread(target=load, args=(route, stop, made, failed), daemon=True)
            t.start()
            workers.append(t)
        time.sleep(2)  # Let the first captures get past their page load.
    lag_before = lag_buckets()
    conn = connect()
    latencies = []
    end = time.monotonic() + phase_seconds
    next_probe = time.monotonic()
    while time.monotonic() < end:
        start = time.perf_counter()
        conn.request("GET", "/healthz")
        response = conn.getresponse()
        response.read()
        latencies.append((time.perf_counter() - start) * 1000)
        next_probe += 0.020
        time.sleep(max(0, next_probe - time.monotonic()))
    lag = lag_summary(lag_before, lag_buckets())
    stop.set()
    for t in workers:
        t.join()
    ms = lambda v: round(v, 3) if v is not None else None
    print(json.dumps({"phase": name, "probes": len(latencies),
                      "p50_ms": ms(percentile(latencies, 50)),
                      "p90_ms": ms(percentile(latencies, 90)),
                      "p99_ms": ms(percentile(latencies, 99)),
                      "max_ms": ms(max(latencies)),
                      "over_1ms": sum(1 for v in latencies if v > 1),
                      "captures": len(made), "failed": failed[:5],
                      "service_http_thread_lag": lag}), flush=True)


phase("idle", None)
phase("gif", "gif")
phase("clip", "clip")
