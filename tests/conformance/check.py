#!/usr/bin/env python3
"""The conformance suite: renders pages written with real animation libraries with pagereel
and checks what they paint (python3 standard library, ffmpeg, the pagereel binary).

Each page paints the clocks it reads as rows of binary codes (see README.md); this reads
them back from the pixels of every rendered frame (cell b of row r is white when the pixel
at x = b*32+16, y = r*40+20 has R > 128), compares them with what manifest.json expects, and
compares the films of different lane counts and transports frame by frame.

  tests/conformance/check.py gsap --suite            # what ctest runs for each page
  tests/conformance/check.py gsap                    # render over file:// and check
  tests/conformance/check.py gsap --http             # over a loopback HTTP server it starts
  tests/conformance/check.py gsap --lanes 3 --show 0,1,15,30
  tests/conformance/check.py gsap --no-render --out /tmp/conf/gsap   # check frames already there
  tests/conformance/check.py all --matrix            # every page: file:// and HTTP, 1 and 3 lanes
  tests/conformance/check.py video --http --no-ranges --expect-error "cannot seek"

--suite renders with 1 lane twice, then with 3 lanes (each lane gets a segment and pre-rolls to it)
over file:// where the page allows it and over HTTP, checks every film against the manifest,
requires the page to report no errors, and requires all films to be identical (across
transports too, unless the manifest says the page shows something else over file://).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BITS, CELL_W, CELL_H = 20, 32, 40


def parse_fps(text):
    if "/" in text:
        num, den = text.split("/")
        return int(num), int(den)
    if "." in text:  # 29.97 means 30000/1001, as pagereel reads it.
        f = Fraction(text)
        if f.denominator != 1:
            return round(float(f) + 0.5) * 1000, 1001
    return int(text), 1


def frame_time_ms(n, fps):
    """pagereel's FrameTimeMillis (src/base/rational.cc)."""
    num, den = fps
    if n <= 0:
        return 0
    numer, denom = n * den * 1000, num
    if den == 1001 and num % 1000 == 0:
        numer, denom = n * 1_000_000_000, num * 999
    if den * 1000 <= num:
        return (numer + denom - 1) // denom
    return numer // denom + 1


def expected(expect, n, fps):
    """The value row `expect` must read at frame n, or None when only lanes are compared."""
    t = frame_time_ms(n, fps)
    if expect == "t":
        return t
    if expect == "n":
        return n
    # A clock started while the page loaded: pagereel's clocks read -lead then, where
    # lead is t(1), at most 100 ms (capture/page.cc, kMaxLoadLeadMs).
    lead = min(frame_time_ms(1, fps), 100)
    if expect == "t_load":
        return t + lead
    if isinstance(expect, dict) and "n_plus" in expect:
        return n + expect["n_plus"]
    if isinstance(expect, dict) and "since_load" in expect:
        # A delay counted from the page's load, a lead before frame 0.
        return max(0, t + lead - expect["since_load"])
    if expect == "any":
        return None
    if isinstance(expect, int):
        return expect
    if isinstance(expect, str) and expect.startswith("bits:"):
        return (1 << int(expect[5:])) - 1
    if isinstance(expect, dict) and "since" in expect:
        k = 0
        while frame_time_ms(k, fps) < expect["since"]:
            k += 1
        return 0 if n < k else t - frame_time_ms(k, fps)
    if isinstance(expect, dict) and "video_fps" in expect:
        frame = (t * expect["video_fps"]) // 1000
        return frame % expect["loop_frames"] if "loop_frames" in expect else frame
    if isinstance(expect, dict) and "t_mod" in expect:
        return t % expect["t_mod"]
    raise ValueError("unknown expectation %r" % (expect,))


def decode(out_dir, count, rows, width=640, height=360):
    """Row values of frames 0..count-1 (files %04d.png in out_dir)."""
    raw = subprocess.run(
        ["ffmpeg", "-v", "error", "-start_number", "0", "-i", os.path.join(out_dir, "%04d.png"),
         "-frames:v", str(count), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
        check=True, stdout=subprocess.PIPE).stdout
    size = width * height * 3
    return [decode_one(raw[i * size:(i + 1) * size], rows, width) for i in range(len(raw) // size)]


def decode_one(img, rows, width=640):
    """Row values of one rgb24 frame."""
    values = []
    for r in range(rows):
        v = 0
        for b in range(BITS):
            x, y = b * CELL_W + CELL_W // 2, r * CELL_H + CELL_H // 2
            v = (v << 1) | (1 if img[(y * width + x) * 3] > 128 else 0)
        values.append(v)
    return values


def frame_digests(out_dir, count):
    """One MD5 per decoded frame, so films compare by pixels rather than by PNG bytes."""
    text = subprocess.run(
        ["ffmpeg", "-v", "error", "-start_number", "0", "-i", os.path.join(out_dir, "%04d.png"),
         "-frames:v", str(count), "-f", "framemd5", "-"],
        check=True, stdout=subprocess.PIPE, text=True).stdout
    return [line.split(",")[-1].strip() for line in text.splitlines() if line and not line.startswith("#")]


def describe_difference(dir_a, dir_b, n, rows, width=640, height=360):
    """Where frame n of two films differs: the rows that read differently and the box of
    changed pixels, so a failure seen once (in CI) says what moved."""
    def frame(d):
        return subprocess.run(
            ["ffmpeg", "-v", "error", "-i", os.path.join(d, "%04d.png" % n),
             "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
            check=True, stdout=subprocess.PIPE).stdout
    a, b = frame(dir_a), frame(dir_b)
    if len(a) != len(b):
        return "frame %d: sizes differ" % n
    xs, ys, count = [], [], 0
    for i in range(0, len(a), 3):
        if a[i:i + 3] != b[i:i + 3]:
            count += 1
            xs.append((i // 3) % width)
            ys.append((i // 3) // width)
    box = "x %d-%d, y %d-%d" % (min(xs), max(xs), min(ys), max(ys)) if count else "none"
    va = decode_one(a, rows, width)
    vb = decode_one(b, rows, width)
    changed = ["row %d: %d vs %d" % (r, va[r], vb[r]) for r in range(rows) if va[r] != vb[r]]
    return "frame %d: %d pixels differ (%s); %s" % (
        n, count, box, "; ".join(changed) if changed else "the rows read the same")


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_with_ranges(port, root):
    """A loopback HTTP server like `python3 -m http.server` that also answers Range requests."""
    import http.server
    import io
    import re

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/ws-hang":
                # Takes the connection and never answers it (pages/websocket-silent): a
                # WebSocket that never opens. Held until the browser lets go.
                self.close_connection = True
                self.rfile.read()
            elif self.path in ("/ws", "/ws-silent", "/ws-ping") and self.headers.get("Upgrade", "").lower() == "websocket":
                self.websocket(self.path[4:] or "answer")
            else:
                super().do_GET()

        def websocket(self, mode):
            """A loopback WebSocket (RFC 6455, text frames) for pages/websocket: answers each
            message "N" with "N*2+1", so what arrives depends only on what the page sent.
            "silent" (pages/websocket-silent) answers nothing; "ping" answers "hello" with
            "ping" and nothing else (the page's "pong" gets no answer)."""
            import base64
            import hashlib
            import struct
            key = self.headers.get("Sec-WebSocket-Key", "")
            accept = base64.b64encode(hashlib.sha1(
                (key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
            self.send_response(101)
            self.send_header("Upgrade", "websocket")
            self.send_header("Connection", "Upgrade")
            self.send_header("Sec-WebSocket-Accept", accept)
            super().end_headers()
            self.wfile.flush()
            self.close_connection = True
            for _ in range(1000):  # Bounded: a page sends a few messages.
                head = self.rfile.read(2)
                if len(head) < 2 or head[0] & 0x0F == 8:  # Closed, or a close frame.
                    return
                size = head[1] & 0x7F
                if size == 126:
                    size = struct.unpack(">H", self.rfile.read(2))[0]
                elif size == 127:
                    size = struct.unpack(">Q", self.rfile.read(8))[0]
                mask = self.rfile.read(4) if head[1] & 0x80 else b"\0\0\0\0"
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(size)))
                if head[0] & 0x0F != 1 or mode == "silent":
                    continue
                if mode == "ping":
                    if data != b"hello":
                        continue
                    answer = b"ping"
                else:
                    try:
                        answer = str(int(data.decode()) * 2 + 1).encode()
                    except ValueError:
                        answer = b"?"
                self.wfile.write(bytes([0x81, len(answer)]) + answer)
                self.wfile.flush()

        def send_head(self):
            path = self.translate_path(self.path)
            m = re.match(r"bytes=(\d*)-(\d*)$", self.headers.get("Range", ""))
            if not m or not os.path.isfile(path) or not (m.group(1) or m.group(2)):
                return super().send_head()
            size = os.path.getsize(path)
            if m.group(1):
                start, end = int(m.group(1)), int(m.group(2)) if m.group(2) else size - 1
            else:
                start, end = max(0, size - int(m.group(2))), size - 1
            end = min(end, size - 1)
            with open(path, "rb") as f:
                f.seek(start)
                body = f.read(max(0, end - start + 1))
            self.send_response(206)
            self.send_header("Content-Type", self.guess_type(path))
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, size))
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return io.BytesIO(body)

        def end_headers(self):
            self.send_header("Accept-Ranges", "bytes")
            super().end_headers()

        def log_message(self, *args):
            pass

    os.chdir(root)
    http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def start_server(ranges):
    """A loopback HTTP server over tests/conformance; returns (process, port)."""
    port = free_port()
    cmd = ([sys.executable, os.path.abspath(__file__), "--serve-ranges", str(port)] if ranges else
           [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", HERE])
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import socket
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    return server, port


def render(page, out, frames, lanes, http_port, pagereel, segment_frames=None):
    """Renders `page` into out/%04d.png; returns (pagereel's output, page errors listed)."""
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.endswith(".png"):
            os.remove(os.path.join(out, f))
    if http_port:
        url = "http://127.0.0.1:%d/pages/%s" % (http_port, page["path"])
    else:
        url = os.path.join(HERE, "pages", page["path"])
    cmd = [pagereel, "render", url, "-o", os.path.join(out, "%04d.png"),
           "--frames", str(frames), "--fps", page.get("fps", "30"), "--size", "640x360",
           "--lanes", str(lanes), "--progress", "plain"]
    if segment_frames:
        cmd += ["--segment-frames", str(segment_frames)]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    text = "\n".join(l for l in r.stdout.splitlines() if not (l.startswith("pagereel: ") and "frames," in l))
    if r.returncode != 0:
        raise RuntimeError("render failed (%d):\n%s" % (r.returncode, text))
    lines = text.splitlines()
    errors = []
    for i, l in enumerate(lines):
        if "the page reported" in l:
            errors = [x.strip() for x in lines[i + 1:] if x.startswith("    ")]
    return text, errors


def check(page, values, fps, quiet=False):
    bad = 0
    for spec in page["rows"]:
        for n, v in enumerate(values):
            want = expected(spec["expect"], n, fps)
            if want is not None and v[spec["row"]] != want:
                if bad < 20 and not quiet:
                    print("  frame %d row %d (%s): read %d, want %d" % (n, spec["row"], spec["what"][:40], v[spec["row"]], want))
                bad += 1
    return bad


def runs_for(page, args):
    """The (transport, lanes, run) renders to make, first the reference. A second one-lane
    render (run 2) shows the film does not change from run to run."""
    transports = (["file"] if page.get("file", True) else []) + ["http"]
    if args.suite:
        return [(transports[0], 1, 1), (transports[0], 1, 2)] + [(t, 3, 1) for t in transports]
    if args.matrix:
        return [(t, l, 1) for t in transports for l in (1, 3)]
    return [("http" if args.http else "file", args.lanes, 1)]


def run_label(key):
    return "%s lanes=%d%s" % (key[0], key[1], "" if key[2] == 1 else " (run %d)" % key[2])


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--serve-ranges":
        serve_with_ranges(int(sys.argv[2]), HERE)
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("page", nargs="+", help="page names, or 'all'")
    ap.add_argument("--suite", action="store_true",
                    help="the test: 1 lane twice, then 3 lanes over every transport the page allows; every film checked, "
                         "identical, and no page errors")
    ap.add_argument("--matrix", action="store_true", help="1 and 3 lanes over every transport the page allows")
    ap.add_argument("--http", action="store_true", help="render over a loopback HTTP server")
    ap.add_argument("--no-ranges", action="store_true",
                    help="serve with python3 -m http.server, which does not answer Range requests")
    ap.add_argument("--expect-error", metavar="TEXT", help="require a page error containing TEXT")
    ap.add_argument("--lanes", type=int, default=1)
    ap.add_argument("--frames", type=int, help="default: the manifest's")
    ap.add_argument("--segment-frames", type=int, default=30,
                    help="pagereel's --segment-frames with more than one lane (default 30, so each of 3 lanes "
                         "gets a segment of a 90-frame film and reaches it by pre-roll: auto, the default)")
    ap.add_argument("--out", help="frame folder (default: a temporary one, removed on success)")
    ap.add_argument("--no-render", action="store_true")
    ap.add_argument("--show", default="0,1,15,30", help="frames whose values to print")
    ap.add_argument("--pagereel", default=os.environ.get("PAGEREEL", os.path.join(ROOT, "build/src/cli/pagereel")))
    ap.add_argument("--manifest", default="manifest.json",
                    help="the pages' list, in tests/conformance")
    args = ap.parse_args()

    if not os.path.isdir(os.path.join(HERE, "node_modules")):
        sys.exit("tests/conformance/node_modules is missing: run 'npm ci' in tests/conformance (ctest's "
                 "conformance.setup does it)")
    manifest = json.load(open(os.path.join(HERE, args.manifest)))
    names = [p["name"] for p in manifest["pages"]] if args.page == ["all"] else args.page
    server = None
    failed = 0
    try:
        for name in names:
            page = next((p for p in manifest["pages"] if p["name"] == name), None)
            if page is None:
                sys.exit("no page %r in manifest.json" % name)
            fps = parse_fps(page.get("fps", "30"))
            frames = args.frames or page["frames"]
            rows = max(r["row"] for r in page["rows"]) + 1
            base = args.out or tempfile.mkdtemp(prefix="conf-%s-" % name)
            digests, out_dirs = {}, {}
            page_failed = 0
            for transport, lanes, run in runs_for(page, args):
                out = os.path.join(base, "%s-%d" % (transport, lanes) + ("" if run == 1 else "-%d" % run))
                port = None
                if transport == "http":
                    if server is None:
                        server, server_port = start_server(ranges=not args.no_ranges)
                    port = server_port
                errors = []
                if not args.no_render:
                    try:
                        _, errors = render(page, out, frames, lanes, port, args.pagereel,
                                           args.segment_frames if lanes > 1 else None)
                    except RuntimeError as e:
                        print("%s %s lanes=%d: %s" % (name, transport, lanes, e))
                        page_failed += 1
                        continue
                values = decode(out, frames, rows)
                digests[(transport, lanes, run)] = frame_digests(out, frames)
                out_dirs[(transport, lanes, run)] = out
                print("%s %s lanes=%d: %d frames in %s; page errors: %s" % (
                    name, transport, lanes, len(values), out, "; ".join(errors) if errors else "none"))
                # A render expected to report a problem is checked for the report, not its rows.
                bad = 0 if args.expect_error else check(page, values, fps)
                if len(values) != frames:
                    print("  %d frames, want %d" % (len(values), frames))
                    bad += 1
                if args.expect_error:
                    if not any(args.expect_error in e for e in errors):
                        print("  no page error mentions %r" % args.expect_error)
                        bad += 1
                elif page.get("errors") and (args.suite or args.matrix):
                    # A page made to report a problem: it must, and nothing else.
                    wanted = [e for e in errors if page["errors"] in e]
                    if not wanted or len(wanted) != len(errors):
                        print("  the page must report %r and nothing else" % page["errors"])
                        bad += 1
                elif errors and (args.suite or args.matrix):
                    print("  the page must render without errors")
                    bad += 1
                for n in [int(x) for x in args.show.split(",") if x]:
                    if n < len(values):
                        print("  frame %3d: %s" % (n, " ".join(str(x) for x in values[n])))
                print("  %d mismatches" % bad)
                page_failed += bool(bad)
            # Films that must be identical: every lane count within a transport, and across
            # transports unless the page shows something else over file://.
            ref_key = next(iter(digests), None)
            for key, d in digests.items():
                if key == ref_key:
                    continue
                comparable = key[0] == ref_key[0] or not page.get("file_differs", False)
                if not comparable:
                    same_transport = [k for k in digests if k[0] == key[0] and k != key]
                    if not same_transport:
                        continue
                    ref = digests[same_transport[0]]
                    label = "%s vs %s" % (run_label(key), run_label(same_transport[0]))
                else:
                    ref = digests[ref_key]
                    label = "%s vs %s" % (run_label(key), run_label(ref_key))
                diff = [n for n, (a, b) in enumerate(zip(ref, d)) if a != b]
                if diff or len(ref) != len(d):
                    print("  %s: DIFFER at frames %s" % (label, diff[:20]))
                    ref_dir = out_dirs[ref_key if comparable else same_transport[0]]
                    for n in diff[:3]:
                        print("    " + describe_difference(ref_dir, out_dirs[key], n, rows))
                    page_failed += 1
                else:
                    print("  %s: identical" % label)
            failed += bool(page_failed)
            if not page_failed and not args.out:
                shutil.rmtree(base, ignore_errors=True)
    finally:
        if server:
            server.terminate()
            server.wait()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
