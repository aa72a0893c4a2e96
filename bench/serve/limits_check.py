#!/usr/bin/env python3
"""Issue 20, items 2-3: what one client can make `pagereel serve` hold or say, probed on one
binary over loopback, for a before/after comparison in bench/RESULTS.md.

    python3 bench/serve/limits_check.py PAGEREEL_BINARY [PORT]

Each probe prints one line: what was asked, what came back. The service runs with
`ulimit -n 1024` (as the issue's attack did) and --token s3cret; it is stopped with SIGTERM
at the end, while a capture is in flight, to see whether new connections are refused.
"""
import json
import os
import resource
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.parse

BINARY = sys.argv[1]
PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 18431
TOKEN = "s3cret"


def exchange(raw, timeout=150.0):
    # The sending side stays open: the service takes a client that closes it as one that
    # left, and stops its capture.
    s = socket.create_connection(("127.0.0.1", PORT), timeout=timeout)
    s.sendall(raw)
    out = b""
    try:
        while True:
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            out += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    return out


def request(method, target, body=b"", ctype="", auth="Bearer " + TOKEN, timeout=150.0):
    head = f"{method} {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
    if auth:
        head += f"Authorization: {auth}\r\n"
    if ctype:
        head += f"Content-Type: {ctype}\r\n"
    head += f"Content-Length: {len(body)}\r\n\r\n"
    reply = exchange(head.encode() + body, timeout)
    status = int(reply[9:12]) if reply.startswith(b"HTTP/1.1 ") else 0
    return status, reply.split(b"\r\n\r\n", 1)[-1]


def png_size(data):
    if data[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", data[16:24])


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def report(name, value):
    print(f"{name:48s} {value}", flush=True)


def main():
    env = dict(os.environ, PAGEREEL_TOKEN=TOKEN)
    limit = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
    service = subprocess.Popen([BINARY, "serve", "--listen", f"127.0.0.1:{PORT}", "--browsers", "1",
                                "--per-browser", "2", "--grace", "10"],
                               env=env, preexec_fn=limit, stderr=subprocess.PIPE, text=True)
    log = []
    threading.Thread(target=lambda: log.extend(service.stderr), daemon=True).start()
    for _ in range(300):
        try:
            if request("GET", "/healthz", auth="")[0] == 200:
                break
        except OSError:
            pass
        time.sleep(0.1)

    smuggle = exchange(b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"
                       b"GET /smuggled HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 5)
    report("Transfer-Encoding: gzip (then a request)",
           " ".join(l.decode()[9:12] for l in smuggle.split(b"\r\n") if l.startswith(b"HTTP/1.1 ")))
    nohost = exchange(b"GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n", 5)
    report("HTTP/1.1 without Host", nohost[9:12].decode())
    report("lowercase bearer", request("GET", "/metrics", auth="bearer " + TOKEN)[0])
    status, body = request("POST", "/v1/screenshot",
                           json.dumps({"html": "<p>x</p>", "wait": "load"}).encode().replace(
                               b'"wait"', b'"width": 640.0, "wait"'), "application/json")
    report('{"width": 640.0}', f"{status} {png_size(body) if status == 200 else body[:80]}")
    t = time.time()
    status, body = request("POST", "/v1/screenshot?wait=load&timeout=8000&width=64&height=64",
                           b"<script>alert('a');confirm('b');prompt('c')</script>", "text/html")
    report("alert/confirm/prompt (timeout 8 s)", f"{status} in {time.time() - t:.1f} s")
    tall = b"<body style='margin:0'><div style='height:70000px;background:linear-gradient(red,blue)'>"
    t = time.time()
    status, body = request("POST", "/v1/screenshot?fullPage=true&scale=4&wait=load", tall,
                           "text/html")
    size = png_size(body) if status == 200 else None
    report("fullPage=true&scale=4, 70000 px tall",
           f"{status} {size} {size[0] * size[1] / 1e6 if size else 0:.1f} Mpx in {time.time() - t:.1f} s")
    status, body = request("POST", "/v1/gif?width=64&height=64",
                           b"<script>window.pagereel={duration:1e300}</script>", "text/html")
    report("window.pagereel.duration = 1e300", f"{status} {body[:90]}")
    status, body = request("GET", "/v1/gif?fps=1/1000000&width=64&height=64&html=x")
    report("fps=1/1000000", f"{status} {body[:160]}")

    # A client that leaves while its page's script is busy.
    busy = urllib.parse.quote("<p>busy</p><script>onload=()=>setTimeout(()=>{for(;;){}},50)</script>")
    s = socket.create_connection(("127.0.0.1", PORT))
    s.sendall(f"GET /v1/screenshot?timeout=60000&html={busy} HTTP/1.1\r\nHost: x\r\n"
              f"Authorization: Bearer {TOKEN}\r\n\r\n".encode())
    time.sleep(2)
    s.close()
    left = time.time()
    logged = None
    while time.time() - left < 70 and logged is None:
        for line in list(log):
            if '"status":499' in line:
                logged = time.time() - left
        time.sleep(0.1)
    report("client left a busy page: 499 logged after", f"{logged:.1f} s" if logged else "never (70 s)")

    # 1,100 idle connections at ulimit -n 1024: the service's CPU over 5 s, and /healthz.
    idle = []
    for _ in range(1100):
        try:
            idle.append(socket.create_connection(("127.0.0.1", PORT), timeout=2))
        except OSError:
            break
    time.sleep(1)
    cpu = cpu_seconds(service.pid)
    time.sleep(5)
    cpu = cpu_seconds(service.pid) - cpu
    try:
        health = request("GET", "/healthz", auth="", timeout=5)[0]
    except OSError as e:
        health = type(e).__name__
    report("1,100 idle connections: service CPU, /healthz", f"{cpu / 5 * 100:.0f} % of a core, {health}")
    for c in idle:
        c.close()
    time.sleep(1)

    # SIGTERM while a capture runs: are new connections refused during the grace?
    slow = threading.Thread(target=lambda: request("GET", "/v1/screenshot?wait=5000&html=x"))
    slow.start()
    time.sleep(1.5)
    service.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    try:
        c = socket.create_connection(("127.0.0.1", PORT), timeout=2)
        c.settimeout(3)
        c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        got = c.recv(100)
        outcome = f"accepted, then {'answered ' + got[9:12].decode() if got else 'closed'}"
    except ConnectionRefusedError:
        outcome = "refused"
    except ConnectionResetError:
        outcome = "accepted, then reset"
    except socket.timeout:
        outcome = "accepted, never answered"
    report("a new connection during the SIGTERM grace", outcome)
    slow.join()
    service.wait(timeout=60)


if __name__ == "__main__":
    main()
