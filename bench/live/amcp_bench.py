#!/usr/bin/env python3
"""AMCP round trips on the example show (examples/show.toml), as a controller sees them.

Runs `pagereel live` on a copy of examples/ with AMCP on a free port and no control server,
then over one connection: VERSION (no browser involved: the baseline), CG UPDATE of the
score bug (one update() in its page), CG INVOKE (a call with a value back), and CG ADD of
the ticker (load the page anew, wait for its load event, update, show, play). Prints the
median, 95th percentile and maximum of each in ms, and the show's summary (new pictures per
second of each source while it was driven).

    python3 bench/live/amcp_bench.py BUILD/src/cli/pagereel [rounds]
"""
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Client:
    def __init__(self, port):
        deadline = time.time() + 60
        while True:
            try:
                self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
        self.buffer = b""

    def line(self):
        while b"\r\n" not in self.buffer:
            data = self.sock.recv(65536)
            if not data:
                raise EOFError("closed")
            self.buffer += data
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line.decode()

    def command(self, text):
        self.sock.sendall(text.encode() + b"\r\n")
        first = self.line()
        code = first[:3]
        if code in ("201", "400"):
            self.line()
        elif code == "200":
            while self.line() != "":
                pass
        return first


def timed(client, text, rounds):
    times = []
    for i in range(rounds):
        start = time.perf_counter()
        reply = client.command(text.replace("{i}", str(i)))
        times.append((time.perf_counter() - start) * 1000)
        if not reply.startswith("20"):
            raise RuntimeError(f"{text}: {reply}")
    times.sort()
    return (statistics.median(times), times[int(len(times) * 0.95) - 1 if len(times) > 1 else 0],
            times[-1])


def main():
    binary = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    work = tempfile.mkdtemp(prefix="pagereel-amcp-bench-")
    shutil.copytree(os.path.join(ROOT, "examples"), os.path.join(work, "examples"))
    port = free_port()
    show = subprocess.Popen(
        [binary, "live", os.path.join(work, "examples", "show.toml"), "--control", "none",
         "--amcp", f"127.0.0.1:{port}", "--status-every", "0"],
        stderr=subprocess.PIPE, text=True)
    lines = []
    # Until the show says AMCP answers (it is bound before the browsers start, served after).
    for line in show.stderr:
        lines.append(line)
        if "AMCP (CasparCG) on" in line:
            break
    else:
        sys.exit("the show ended before AMCP answered:\n" + "".join(lines))
    try:
        client = Client(port)
        client.command("VERSION")
        results = {
            "VERSION (baseline)": timed(client, "VERSION", rounds),
            "CG 1-20 UPDATE (score)": timed(
                client, 'CG 1-20 UPDATE 1 "{\\"homeScore\\":{i}}"', rounds),
            "CG 1-20 INVOKE next()": timed(client, 'CG 1-20 INVOKE 1 "next()"', rounds),
            "CG 1-30 ADD (ticker anew)": timed(
                client, 'CG 1-30 ADD 1 "live/ticker" 1 "{\\"items\\":\\"a|b|{i}\\"}"',
                max(5, rounds // 10)),
        }
    finally:
        show.terminate()
        _, err = show.communicate(timeout=60)
        err = "".join(lines) + err
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'command':28} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for name, (p50, p95, worst) in results.items():
        print(f"{name:28} {p50:8.2f} {p95:8.2f} {worst:8.2f}")
    print()
    for line in err.splitlines():
        if line.strip().startswith(("source ", "show ended", "output ")):
            print(line.strip())


if __name__ == "__main__":
    main()
