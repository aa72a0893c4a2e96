#!/usr/bin/env python3
"""Helpers for bench/serve/serve_bench.sh (python3 standard library only).

  serve_bench.py hey-stats CSV                  figures of one `hey -o csv` run, as JSON
  serve_bench.py openloop --rate R --seconds S --url U [--method M] [--body B]
                 [--header 'K: V']... [--timeout S]  open-loop load: requests start at a
                                                fixed rate whatever the answers; JSON figures
  serve_bench.py mem PID                        RSS of PID, RSS and PSS of its descendants
  serve_bench.py posted-page PAGES_DIR BASE_URL  the dashboard (static.html) as one document
                                                to POST: its stylesheet inlined, its image
                                                from BASE_URL
  serve_bench.py table RESULTS.jsonl            the Markdown tables for bench/RESULTS.md

Latencies are in milliseconds; percentiles are of the 200 answers only (nearest rank).
"""
import argparse
import http.client
import json
import math
import os
import sys
import threading
import time
import urllib.parse


def percentile(sorted_values, p):
    if not sorted_values:
        return None
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def summarize(rows):
    """rows: (start_s, latency_s, status) with start relative to the run's start.
    Status 0 is a request that got no HTTP answer (refused, reset, timed out)."""
    codes = {}
    for _, _, status in rows:
        codes[str(status)] = codes.get(str(status), 0) + 1
    ok = sorted(lat for _, lat, status in rows if status == 200)
    # The run's length: from its first start to its last completion.
    end = max((start + lat for start, lat, _ in rows), default=0.0)
    begin = min((start for start, _, _ in rows), default=0.0)
    span = max(end - begin, 1e-9)
    return {
        'requests': len(rows),
        'codes': codes,
        'ok': len(ok),
        'seconds': round(span, 3),
        'ok_per_s': round(len(ok) / span, 3) if rows else 0.0,
        'p50_ms': round(percentile(ok, 50) * 1000, 1) if ok else None,
        'p99_ms': round(percentile(ok, 99) * 1000, 1) if ok else None,
        'max_ms': round(ok[-1] * 1000, 1) if ok else None,
    }


def hey_stats(path):
    rows = []
    with open(path) as f:
        header = f.readline().strip().split(',')
        i_lat, i_status, i_off = (header.index('response-time'), header.index('status-code'),
                                  header.index('offset'))
        for line in f:
            cells = line.strip().split(',')
            if len(cells) != len(header):
                continue
            rows.append((float(cells[i_off]), float(cells[i_lat]), int(cells[i_status])))
    return summarize(rows)


def openloop(args):
    """Starts one request every 1/rate seconds for `seconds`, each on its own thread and
    connection, so a slow answer never delays the next start (unlike a closed-loop tool,
    which would offer less load exactly when the service slows down)."""
    u = urllib.parse.urlsplit(args.url)
    target = u.path + ('?' + u.query if u.query else '')
    headers = dict(h.split(': ', 1) for h in args.header)
    body = args.body.encode() if args.body is not None else None
    rows, lock = [], threading.Lock()
    t0 = time.monotonic()

    def one(start):
        status = 0
        try:
            conn = http.client.HTTPConnection(u.hostname, u.port, timeout=args.timeout)
            conn.request(args.method, target, body=body, headers=headers)
            resp = conn.getresponse()
            resp.read()
            status = resp.status
            conn.close()
        except (OSError, http.client.HTTPException):
            pass
        with lock:
            rows.append((start - t0, time.monotonic() - start, status))

    threads = []
    n = int(args.rate * args.seconds)
    for i in range(n):
        due = t0 + i / args.rate
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        t = threading.Thread(target=one, args=(time.monotonic(),), daemon=True)
        t.start()
        threads.append(t)
        if len(threads) > 256:
            threads = [t for t in threads if t.is_alive()]
    for t in threads:
        t.join(args.timeout + 5)
    result = summarize(rows)
    result['offered_per_s'] = args.rate
    return result


def read_kb(path, key):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def mem(pid):
    children = {}
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/stat') as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(')') + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    tree, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop()
        tree.append(p)
        todo.extend(children.get(p, []))
    return {
        'self_rss_kb': read_kb(f'/proc/{pid}/status', 'VmRSS:'),
        'self_pss_kb': read_kb(f'/proc/{pid}/smaps_rollup', 'Pss:'),
        'tree_rss_kb': sum(read_kb(f'/proc/{p}/status', 'VmRSS:') for p in tree),
        'tree_pss_kb': sum(read_kb(f'/proc/{p}/smaps_rollup', 'Pss:') for p in tree),
        'tree_procs': len(tree),
    }


# ---------------------------------------------------------------------------------------
# The tables.

def mb(kb):
    return f'{kb / 1024:.0f}'


def growth(first, last):
    return f'{(last - first) / first:+.0%}' if first else '-'


def posted_page(pages_dir, base_url):
    """static.html as a client would post it: the stylesheet in a <style> element (a posted
    document has no base URL for a relative link), the image by its absolute URL."""
    html = open(os.path.join(pages_dir, 'static.html')).read()
    css = open(os.path.join(pages_dir, 'static.css')).read()
    link = '<link rel="stylesheet" href="static.css">'
    assert link in html and 'src="img/' in html
    html = html.replace(link, '<style>\n' + css + '</style>')
    return html.replace('src="img/', f'src="{base_url.rstrip("/")}/img/')


def runs(path):
    """One row per closed-loop result in the order run, for runs that alternate builds or
    settings of one service (SERVICES="pagereel-A node-c4 pagereel-B pagereel-A ..."): the
    ratio is against the mean of the Node service's rows of the same test and concurrency."""
    results = [json.loads(line) for line in open(path) if line.strip()]
    load = [r for r in results if 'conc' in r and 'ok_per_s' in r]
    print('| service | capture | concurrency | captures/s | p50 / p99 ms | peak RSS of the tree, MB '
          '| against node |')
    print('|---|---|---|---|---|---|---|')
    for r in load:
        node = [n['ok_per_s'] for n in load if n['service'].startswith('node')
                and n['test'] == r['test'] and n['conc'] == r['conc']]
        ratio = (f"{r['ok_per_s'] / (sum(node) / len(node)):.2f}x"
                 if node and not r['service'].startswith('node') else '-')
        codes = '' if set(r['codes']) <= {'200'} else f" ({r['codes']})"
        print(f"| {r['service']} | {r['test']} | {r['conc']} | {r['ok_per_s']:.2f}{codes} "
              f"| {r['p50_ms']:.0f} / {r['p99_ms']:.0f} | {r.get('peak_tree_rss_mb', '-')} "
              f"| {ratio} |")


def table(path):
    results = [json.loads(line) for line in open(path) if line.strip()]
    services = []
    for r in results:
        if r['service'] not in services:
            services.append(r['service'])
    others = [s for s in services if s != 'node']
    out = []

    def ms(v):
        return '-' if v is None else f'{v:.0f}'

    load = [r for r in results if r['test'] in ('png-posted', 'png-static', 'png-chart', 'pdf-doc')]
    # Ratios are against the Node service: `node`, else the first `node-cN` of the run.
    base = 'node' if 'node' in services else next((s for s in services if s.startswith('node-')), None)
    keys = []
    for r in load:
        if (r['test'], r['conc']) not in keys:
            keys.append((r['test'], r['conc']))
    if keys:
        head = ['capture', 'concurrency']
        for s in services:
            head += [f'{s} captures/s', f'{s} p50 / p99 ms']
            if base and s != base:
                head.append(f'{s} / {base}')
        out.append('| ' + ' | '.join(head) + ' |')
        out.append('|' + '---|' * len(head))
        for test, conc in keys:
            row = [test, str(conc)]
            by = {r['service']: r for r in load if r['test'] == test and r['conc'] == conc}
            for s in services:
                r = by.get(s)
                if not r:
                    row += ['-', '-'] + (['-'] if base and s != base else [])
                    continue
                bad = {c: n for c, n in r['codes'].items() if c != '200'}
                rate = f"{r['ok_per_s']:.2f}" + (f" ({bad} not 200)" if bad else '')
                row += [rate, f"{ms(r['p50_ms'])} / {ms(r['p99_ms'])}"]
                if base and s != base:
                    n = by.get(base)
                    row.append(f"{r['ok_per_s'] / n['ok_per_s']:.2f}x" if n and n['ok_per_s'] else '-')
            out.append('| ' + ' | '.join(row) + ' |')
        out.append('')

    over = [r for r in results if r['test'] == 'overload']
    if over:
        out.append('| service | offered /s | seconds | 200 | refused (503) | other answers | p50 / p99 of the 200s ms | alive after |')
        out.append('|---|---|---|---|---|---|---|---|')
        for r in over:
            refusal = str(r.get('refusal_code', '503'))
            other = {c: n for c, n in r['codes'].items() if c not in ('200', refusal)}
            refused = r['codes'].get(refusal, 0)
            refused_cell = f'{refused}' if refusal == '503' else f'{refused} (as {refusal})'
            out.append(f"| {r['service']} | {r['offered_per_s']:.2f} | {r['seconds']:.0f} | "
                       f"{r['codes'].get('200', 0)} | {refused_cell} | "
                       f"{', '.join(f'{c}: {n}' for c, n in sorted(other.items())) or 'none'} | "
                       f"{ms(r['p50_ms'])} / {ms(r['p99_ms'])} | {'yes' if r['alive'] else 'NO'} |")
        out.append('')

    soak = [r for r in results if r['test'] == 'soak']
    if soak:
        out.append('| service | captures | not 200 | captures/s | service RSS MB, first -> last sample (max) | browsers RSS MB (sum) | browsers PSS MB | last vs first |')
        out.append('|---|---|---|---|---|---|---|---|')
        for r in soak:
            s = r['samples']
            first, last = s[0], s[-1]

            def span(key):
                return (f"{mb(first[key])} -> {mb(last[key])} "
                        f"({mb(max(x[key] for x in s))})")
            bad = sum(n for c, n in r['codes'].items() if c != '200')
            out.append(
                f"| {r['service']} | {r['requests']} | {bad} | {r['ok_per_s']:.2f} | "
                f"{span('self_rss_kb')} | {span('tree_rss_kb')} | {span('tree_pss_kb')} | "
                f"self {growth(first['self_rss_kb'], last['self_rss_kb'])}, "
                f"browsers PSS {growth(first['tree_pss_kb'], last['tree_pss_kb'])} |")
        out.append('')
        out.append('Samples (after N captures: service RSS / browsers PSS, MB):')
        out.append('')
        for r in soak:
            series = ', '.join(f"{x['after']}: {mb(x['self_rss_kb'])}/{mb(x['tree_pss_kb'])}"
                               for x in r['samples'])
            out.append(f"- {r['service']}: {series}")
        out.append('')
    print('\n'.join(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('hey-stats')
    p.add_argument('csv')
    p = sub.add_parser('openloop')
    p.add_argument('--rate', type=float, required=True)
    p.add_argument('--seconds', type=float, required=True)
    p.add_argument('--url', required=True)
    p.add_argument('--method', default='GET')
    p.add_argument('--body')
    p.add_argument('--header', action='append', default=[])
    p.add_argument('--timeout', type=float, default=120)
    p = sub.add_parser('mem')
    p.add_argument('pid', type=int)
    p = sub.add_parser('posted-page')
    p.add_argument('pages_dir')
    p.add_argument('base_url')
    p = sub.add_parser('table')
    p.add_argument('results')
    p = sub.add_parser('runs')
    p.add_argument('results')
    args = ap.parse_args()
    if args.cmd == 'hey-stats':
        print(json.dumps(hey_stats(args.csv)))
    elif args.cmd == 'openloop':
        print(json.dumps(openloop(args)))
    elif args.cmd == 'mem':
        print(json.dumps(mem(args.pid)))
    elif args.cmd == 'posted-page':
        sys.stdout.write(posted_page(args.pages_dir, args.base_url))
    elif args.cmd == 'table':
        table(args.results)
    elif args.cmd == 'runs':
        runs(args.results)


if __name__ == '__main__':
    sys.exit(main())
