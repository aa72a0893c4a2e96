#!/usr/bin/env python3
"""Wait strategies, measured: how long a capture took to come back and whether it shows
the page finished (issue 7, "Waiting for the page").

For each wait page (bench/serve/pages/wait/) it first takes REFERENCE captures with a long
fixed wait (two of them, which must agree, or the page is reported as unsettled), then for
each wait value REPEAT captures, each timed from request to last byte and compared pixel by
pixel with the reference. A capture "shows the finished state" when at most MAX_DIFF of its
pixels differ from the reference by more than TOLERANCE levels in a channel.

Any service with `GET /v1/screenshot?url=&type=png&width=&height=&wait=` works (pagereel
serve, bench/serve/node-service). A wait of `auto` sends no wait parameter (the service's
default); a service that answers 400 to a wait value has it reported as unsupported.

  wait_bench.py --service http://127.0.0.1:8090 --pages http://127.0.0.1:8091 \
      [--waits auto,load,networkidle,quiet,500,1000,2000] [--repeat 3] \
      [--reference-wait 4000] [--out DIR] [--json FILE]

PNGs are decoded by ffmpeg (Debian's, already a pagereel dependency) to raw RGB.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

PAGES = [
    ('chart', 'wait/chart.html'),
    ('late images', 'wait/late-images.html'),
    ('fonts', 'wait/fonts.html'),
    ('signal: pagereel.ready', 'wait/signal.html?via=ready'),
    ('signal: triggerCapture()', 'wait/signal.html?via=trigger'),
]
WIDTH, HEIGHT = 1280, 720


def capture(service, page_url, wait, timeout):
    """Returns (status, seconds, body)."""
    query = {'url': page_url, 'type': 'png', 'width': WIDTH, 'height': HEIGHT}
    if wait != 'auto':
        query['wait'] = wait
    url = f'{service}/v1/screenshot?{urllib.parse.urlencode(query)}'
    start = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            body = resp.read()
            status = resp.status
    except urllib.error.HTTPError as err:
        body, status = err.read(), err.code
    return status, time.monotonic() - start, body


def decode(png_bytes):
    """Raw RGB24 bytes of a PNG, or None when it is not a WIDTHxHEIGHT image."""
    proc = subprocess.run(['ffmpeg', '-v', 'error', '-i', 'pipe:0', '-f', 'rawvideo',
                           '-pix_fmt', 'rgb24', 'pipe:1'],
                          input=png_bytes, capture_output=True, check=False)
    if proc.returncode != 0 or len(proc.stdout) != WIDTH * HEIGHT * 3:
        return None
    return proc.stdout


def diff_fraction(a, b, tolerance):
    """Fraction of pixels whose largest channel difference exceeds tolerance. Rows that
    are byte-identical are skipped in C, so a near-match costs little."""
    row = WIDTH * 3
    differing = 0
    for y in range(HEIGHT):
        ra, rb = a[y * row:(y + 1) * row], b[y * row:(y + 1) * row]
        if ra == rb:
            continue
        for x in range(0, row, 3):
            if (abs(ra[x] - rb[x]) > tolerance or abs(ra[x + 1] - rb[x + 1]) > tolerance
                    or abs(ra[x + 2] - rb[x + 2]) > tolerance):
                differing += 1
    return differing / (WIDTH * HEIGHT)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--service', required=True, help='base URL of the capture service')
    ap.add_argument('--pages', required=True, help='base URL of bench/serve/pages')
    ap.add_argument('--waits', default='auto,load,networkidle,quiet,500,1000,2000')
    ap.add_argument('--repeat', type=int, default=3)
    ap.add_argument('--reference-wait', default='4000', help='fixed wait (ms) of the reference')
    ap.add_argument('--tolerance', type=int, default=16, help='levels per channel')
    ap.add_argument('--max-diff', type=float, default=0.001, help='fraction of pixels')
    ap.add_argument('--timeout', type=float, default=60)
    ap.add_argument('--only', help='comma-separated page names (see PAGES) to run')
    ap.add_argument('--out', help='keep every PNG here')
    ap.add_argument('--json', help='write the raw figures here')
    args = ap.parse_args()
    waits = args.waits.split(',')
    pages = [p for p in PAGES if not args.only or p[0] in args.only.split(',')]
    if args.out:
        os.makedirs(args.out, exist_ok=True)

    def keep(name, body):
        if args.out:
            with open(os.path.join(args.out, name), 'wb') as f:
                f.write(body)

    rows = []
    for label, path in pages:
        page_url = f'{args.pages}/{path}'
        slug = path.replace('/', '_').replace('?', '_').replace('=', '-')
        refs = []
        for i in range(2):
            status, _, body = capture(args.service, page_url, args.reference_wait, args.timeout)
            if status != 200:
                sys.exit(f'wait_bench: the reference capture of {path} (wait={args.reference_wait}) '
                         f'answered {status}: {body[:200]!r}')
            keep(f'{slug}.reference{i}.png', body)
            refs.append(decode(body))
        if refs[0] is None:
            sys.exit(f'wait_bench: the reference of {path} is not a {WIDTH}x{HEIGHT} PNG')
        ref_noise = diff_fraction(refs[0], refs[1], args.tolerance) if refs[1] else 1.0
        for wait in waits:
            times, diffs, codes = [], [], []
            for i in range(args.repeat):
                status, seconds, body = capture(args.service, page_url, wait, args.timeout)
                codes.append(status)
                if status != 200:
                    continue
                keep(f'{slug}.wait-{wait}.{i}.png', body)
                raw = decode(body)
                times.append(seconds)
                diffs.append(diff_fraction(refs[0], raw, args.tolerance) if raw else 1.0)
            row = {'page': label, 'path': path, 'wait': wait, 'codes': codes,
                   'reference_noise': ref_noise,
                   'seconds': times, 'diff': diffs,
                   'finished': sum(1 for d in diffs if d <= args.max_diff)}
            rows.append(row)
            print(f'wait_bench: {label} wait={wait}: {codes} '
                  f'{[round(t * 1000) for t in times]} ms, diff {[f"{d:.2%}" for d in diffs]}',
                  file=sys.stderr)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(rows, f, indent=1)

    print(f'| page | wait | median ms to the image | shows the finished page | median pixels off |')
    print('|---|---|---|---|---|')
    for r in rows:
        wait = 'auto (no parameter)' if r['wait'] == 'auto' else r['wait']
        if not r['seconds']:
            answer = 'unsupported (400)' if 400 in r['codes'] else f"failed {sorted(set(r['codes']))}"
            print(f"| {r['page']} | {wait} | - | {answer} | - |")
            continue
        noise = ' (reference unsettled)' if r['reference_noise'] > args.max_diff else ''
        print(f"| {r['page']} | {wait} | {statistics.median(r['seconds']) * 1000:.0f} | "
              f"{r['finished']} of {len(r['codes'])}{noise} | {statistics.median(r['diff']):.2%} |")


if __name__ == '__main__':
    main()
