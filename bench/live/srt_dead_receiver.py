#!/usr/bin/env python3
# How long an SRT output takes to notice a receiver that dies without a word (issue 19,
# item 4): an ffmpeg SRT listener on 127.0.0.1 receives a 640x360 25 fps show of the test
# card; 4 s in it is killed (SIGKILL); measured is the wall time from the kill to the
# as-run log's "output ... failed" line, and the frames the output counted as sent in
# between. Binaries alternate A B A B ... (A: a build before pagereel's own SRT socket, B:
# after). Run alone, under the build lock:
#   flock /tmp/pagereel-build.lock bench/live/srt_dead_receiver.py PAGEREEL_A PAGEREEL_B [ROUNDS]
import datetime, json, os, signal, socket, subprocess, sys, tempfile, time, urllib.request

binaries = {"A": sys.argv[1], "B": sys.argv[2]}
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
here = os.path.dirname(os.path.abspath(__file__))
page = os.path.join(here, "..", "..", "tests", "pages", "test-card.html")


def free_port(kind):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def status(control):
    with urllib.request.urlopen("http://%s/status" % control, timeout=2) as r:
        return json.load(r)


def one(binary):
    folder = tempfile.mkdtemp(prefix="srt-dead-")
    port = free_port(socket.SOCK_DGRAM)
    control = "127.0.0.1:%d" % free_port(socket.SOCK_STREAM)
    receiver = subprocess.Popen(["ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-i",
                                 "srt://127.0.0.1:%d?mode=listener" % port, "-c", "copy",
                                 os.path.join(folder, "got.ts")])
    time.sleep(0.5)
    asrun = os.path.join(folder, "asrun.log")
    show = subprocess.Popen([binary, "live", "--source", page, "--output", "srt://127.0.0.1:%d" % port,
                             "--size", "640x360", "--fps", "25", "--duration", "12", "--control", control,
                             "--status-every", "0", "--as-run", asrun],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(4)
    before = status(control)["outputs"][0]["frames"]
    killed = time.time()
    receiver.send_signal(signal.SIGKILL)
    receiver.wait()
    noticed = None
    frames = None
    while show.poll() is None and noticed is None:
        time.sleep(0.02)
        out = status(control)["outputs"][0]
        if not out["connected"]:
            frames = out["frames"]
            for line in open(asrun):
                if " failed: " in line and "output" in line:
                    stamp = datetime.datetime.strptime(line[:23], "%Y-%m-%dT%H:%M:%S.%f")
                    noticed = stamp.replace(tzinfo=datetime.timezone.utc).timestamp()
                    break
    show.wait()
    return (noticed - killed if noticed else float("nan")), (frames - before if frames is not None else -1)


results = {"A": [], "B": []}
for r in range(rounds):
    for name in ("A", "B"):
        seconds, frames = one(binaries[name])
        results[name].append((seconds, frames))
        print("%s round %d: noticed %.2f s after the kill, %d frames counted as sent since" % (name, r + 1, seconds, frames),
              flush=True)
for name in ("A", "B"):
    s = sorted(x for x, _ in results[name])
    print("%s: median %.2f s (%.2f-%.2f), frames after the kill %s" %
          (name, s[len(s) // 2], s[0], s[-1], [f for _, f in results[name]]))
