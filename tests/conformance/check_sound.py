#!/usr/bin/env python3
"""Sound libraries under pagereel (README.md, "Sound pages"): renders a page that plays
sound through a library from npm, with 1 and 3 lanes over loopback HTTP, decodes the
film's sound with ffmpeg and checks that every onset lands within 1 ms of its film time,
that the sound is the same in both films, and that it is as long as the pictures.

  check_sound.py NAME --pagereel PATH     (NAME: a key of PAGES)
"""
import argparse
import os
import struct
import subprocess
import sys
import tempfile

import check  # start_server: a loopback HTTP server over tests/conformance.

RATE = 48000
# Page -> (frames at 30 fps, film times of its onsets in seconds).
PAGES = {
    "sound-tone": (60, [0.6, 1.1]),     # Transport at 0.5 s and 1 s, plus Tone's 0.1 s lookAhead.
    "sound-howler": (45, [0.75]),       # Played at 0.7 s, its click 50 ms into the WAV.
    "sound-howler-html5": (45, [0.45, 1.25]),  # HTML5 Audio mode, played at 0.4 s and 1.2 s.
    # Started by a GSAP timeline at its 0.5 s and 1.0 s: GSAP's clock starts at load, a lead
    # (t(1), 1/30 s) before frame 0 (manifest.json, gsap), so at film time 0.4667 and 0.9667.
    "sound-gsap": (45, [0.5 - 1 / 30 + 0.05, 1.0 - 1 / 30 + 0.05]),
}


def decode(film):
    """The film's first channel of sound as floats, and the pictures' duration in seconds."""
    pcm = subprocess.run(["ffmpeg", "-v", "error", "-i", film, "-map", "0:a:0", "-af", "pan=mono|c0=c0",
                          "-f", "f32le", "-ar", str(RATE), "-"], stdout=subprocess.PIPE, check=True).stdout
    duration = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                               "stream=duration", "-of", "csv=p=0", film],
                              stdout=subprocess.PIPE, text=True, check=True).stdout.strip()
    return struct.unpack("<%df" % (len(pcm) // 4), pcm), float(duration)


def onsets(samples, threshold=0.3, quiet=2400):
    """First samples above `threshold` after `quiet` samples below it (as audio/test_sounds.h)."""
    out, last = [], -quiet - 1
    for i, v in enumerate(samples):
        if abs(v) <= threshold:
            continue
        if i - last > quiet:
            out.append(i)
        last = i
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("name", choices=sorted(PAGES))
    parser.add_argument("--pagereel", required=True)
    args = parser.parse_args()
    frames, expected = PAGES[args.name]
    server, port = check.start_server(False)
    failed = []
    try:
        with tempfile.TemporaryDirectory() as out:
            heard = {}
            for lanes in (1, 3):
                film = os.path.join(out, "film%d.mp4" % lanes)
                r = subprocess.run([args.pagereel, "render", "http://127.0.0.1:%d/pages/%s/index.html" % (port, args.name),
                                    "-o", film, "--frames", str(frames), "--size", "320x180", "--lanes", str(lanes),
                                    "--segment-frames", "15"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                if r.returncode != 0:
                    failed.append("render with %d lanes failed:\n%s" % (lanes, r.stdout))
                    continue
                try:
                    samples, duration = decode(film)
                except subprocess.CalledProcessError:
                    failed.append("%d lanes: the film has no sound track" % lanes)
                    continue
                heard[lanes] = samples
                found = onsets(samples)
                print("%s, %d lanes: onsets at %s s (expected %s)" %
                      (args.name, lanes, [round(o / RATE, 5) for o in found], expected))
                if len(found) != len(expected) or any(abs(f - e * RATE) > RATE / 1000 for f, e in zip(found, expected)):
                    failed.append("%d lanes: onsets %s, not within 1 ms of %s" % (lanes, found, expected))
                # AAC decodes its last frame whole (audio/README.md): the stated length is checked
                # by the C++ tests; here the sound must not be shorter than the pictures.
                if len(samples) < round(duration * RATE):
                    failed.append("%d lanes: %d samples of sound for %.3f s of pictures" % (lanes, len(samples), duration))
            if len(heard) == 2 and heard[1] != heard[3]:
                failed.append("the sound differs between 1 and 3 lanes")
    finally:
        server.kill()
    for f in failed:
        print("FAIL: " + f)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
