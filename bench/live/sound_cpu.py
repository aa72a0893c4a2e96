#!/usr/bin/env python3
# What a live source's sound costs, per process (issue 16): the tone page (720p, one MPEG-TS
# file) on air with sound (A: captured, mixed, AAC) and with --no-audio (B), alternated
# A B A B ...; CPU seconds per minute of show of pagereel itself, of its browsers (every
# process below it that is not pagereel or pulseaudio) and of its pulseaudio daemons,
# sampled from /proc between the show's 5th second and half a second before its end (so
# start-up is left out). Run alone, under the build lock:
#   flock /tmp/pagereel-build.lock bench/live/sound_cpu.py PAGEREEL [SECONDS] [ROUNDS] [FPS]
import os, subprocess, sys, tempfile, time

binary = sys.argv[1]
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 30
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
fps = sys.argv[4] if len(sys.argv) > 4 else "25"
page = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pages", "tone.html")
tick = os.sysconf("SC_CLK_TCK")


def tree_cpu(root):
    """CPU seconds so far of root and everything below it, by kind."""
    stats = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            raw = open("/proc/%s/stat" % name).read()
        except OSError:
            continue
        comm = raw[raw.index("(") + 1:raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2:].split()
        stats[int(name)] = (comm, int(fields[1]), (int(fields[11]) + int(fields[12])) / tick)
    kinds = {"pagereel": 0.0, "browser": 0.0, "pulseaudio": 0.0}
    for pid, (comm, _, cpu) in stats.items():
        p, inside = pid, False
        while p in stats and p > 1:
            if p == root:
                inside = True
                break
            p = stats[p][1]
        if not inside:
            continue
        kind = "pagereel" if pid == root else "pulseaudio" if comm.startswith("pulseaudio") else "browser"
        kinds[kind] += cpu
    return kinds


def run(sound, out):
    args = [binary, "live", "--source", page, "--size", "1280x720", "--fps", fps, "--output", out,
            "--duration", str(seconds), "--status-every", "0", "--control", "none"]
    if not sound:
        args.append("--no-audio")
    proc = subprocess.Popen(args, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    time.sleep(5)
    t0, a = time.monotonic(), tree_cpu(proc.pid)
    time.sleep(seconds - 5.5)
    t1, b = time.monotonic(), tree_cpu(proc.pid)
    if proc.wait() != 0:
        sys.exit("pagereel failed")
    return {k: (b[k] - a[k]) * 60 / (t1 - t0) for k in a}


with tempfile.TemporaryDirectory() as tmp:
    for r in range(1, rounds + 1):
        a = run(True, os.path.join(tmp, "a.ts"))
        b = run(False, os.path.join(tmp, "b.ts"))
        print("round %d, CPU s per minute, with sound / without: pagereel %.1f / %.1f (x%.2f), browser %.1f / %.1f (x%.2f), pulseaudio %.1f"
              % (r, a["pagereel"], b["pagereel"], a["pagereel"] / b["pagereel"], a["browser"], b["browser"],
                 a["browser"] / b["browser"], a["pulseaudio"]))
