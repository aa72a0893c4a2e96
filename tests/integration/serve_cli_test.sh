#!/usr/bin/env bash
# Drives `pagereel serve` as an operator would: bad flags give a clear message and exit 2;
# a good start answers over HTTP, takes its settings from the environment, and stops
# cleanly with exit 0 on SIGTERM, leaving no browser behind.
# Usage: serve_cli_test.sh PAGEREEL_BINARY
set -u
bin=$1
work=$(mktemp -d)
trap 'kill -9 "$pid" 2>/dev/null; rm -rf "$work"' EXIT
pid=
failures=0

fail() { echo "FAIL $*"; failures=$((failures + 1)); }

# expect_usage NAME TEXT ARGS...: exit 2 and TEXT in the message.
expect_usage() {
  local name=$1 text=$2
  shift 2
  local out rc
  out=$(timeout 30 "$bin" serve "$@" 2>&1 </dev/null)
  rc=$?
  [ "$rc" -eq 2 ] || { fail "$name: exit $rc, wanted 2: $out"; return; }
  grep -qF -- "$text" <<<"$out" || fail "$name: message lacks '$text': $out"
}

expect_usage browsers-word "--browsers" --browsers many
expect_usage browsers-negative "--browsers must be" --browsers -1
expect_usage listen-no-port "has no port" --listen 127.0.0.1
expect_usage listen-name "numeric IP address" --listen localhost:8080
expect_usage listen-port-range "not HOST:PORT" --listen 127.0.0.1:70000
expect_usage bad-allow "10.0.0.1/8" --listen 127.0.0.1:0 --allow 10.0.0.1/8
expect_usage timeout-over-max "--timeout must be" --timeout 500 --max-timeout 100
expect_usage unknown-flag "--colour" --colour
expect_usage renderer-memory-low "--renderer-memory-mb must be 0 (no limit) or from 64" --renderer-memory-mb 10
expect_usage renderer-memory-word "--renderer-memory-mb" --renderer-memory-mb lots
"$bin" serve --help 2>&1 | grep -qF -- "--renderer-memory-mb" || fail "help: no --renderer-memory-mb"
expect_usage clip-media-zero "--max-clip-media-mb must be from 1 to 1024, not 0" --max-clip-media-mb 0
"$bin" serve --help 2>&1 | grep -qF -- "--max-clip-media-mb" || fail "help: no --max-clip-media-mb"
PAGEREEL_QUEUE=-3 expect_usage env-queue "--queue must be"

# A real start, configured from the environment, on a port the kernel picks.
PAGEREEL_LISTEN=127.0.0.1:0 PAGEREEL_BROWSERS=1 PAGEREEL_PER_BROWSER=1 \
  "$bin" serve --renderer-memory-mb 300 >"$work/out" 2>"$work/err" &
pid=$!
port=
for _ in $(seq 100); do
  port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/err")
  [ -n "$port" ] && break
  sleep 0.1
done
if [ -z "$port" ]; then
  fail "start: no 'listening on' line: $(cat "$work/err")"
else
  grep -qF "1 browser x 1 captures" "$work/err" || fail "start: environment not read: $(cat "$work/err")"
  code=$(curl -s -o "$work/shot.png" -w '%{http_code}' -H 'Content-Type: text/html' \
    --data-binary '<h1>hi</h1>' "http://127.0.0.1:$port/v1/screenshot?width=320&height=200")
  [ "$code" = 200 ] || fail "screenshot: HTTP $code"
  [ "$(head -c 4 "$work/shot.png" | od -An -tx1 | tr -d ' ')" = 89504e47 ] || fail "screenshot: not a PNG"
  # --renderer-memory-mb: a page that grows to 1.2 GB is stopped at 300 MiB (502).
  code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Content-Type: text/html' --data-binary \
    '<script>const held = []; const grow = () => { if (held.length < 20) { held.push(new Uint8Array(60 << 20).fill(1)); setTimeout(grow, 20); } }; grow();</script>' \
    "http://127.0.0.1:$port/v1/screenshot?wait=3000&width=64&height=64")
  [ "$code" = 502 ] || fail "renderer memory: HTTP $code, wanted 502"
  grep -qF "more than the 300 MiB a page may use" "$work/err" || fail "renderer memory: no warning naming 300 MiB"
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v1/screenshot?url=http://127.0.0.1:1/")
  [ "$code" = 403 ] || fail "loopback url: HTTP $code, wanted 403"
  # Issue 20: each of these ended the process (a 64 KiB trailer field; bytes that are not
  # UTF-8 in a value an error quotes). Each must be answered, and /healthz after it.
  out=$(timeout 60 python3 - "$port" <<'PY' 2>&1
import socket, sys
port = int(sys.argv[1])
requests = [
    b'POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: ' +
    b'a' * 65536 + b'\r\n\r\n',
    b'POST /v1/screenshot HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: ' +
    b'a' * 65536 + b'\r\n\r\n',
    b'GET /v1/screenshot?url=http://a/&type=%FF HTTP/1.1\r\nHost: x\r\n\r\n',
    b'GET /\xff HTTP/1.1\r\nHost: x\r\n\r\n',
    b'GET /v1/screenshot?url=http://a/&type=x' + b'%C3%A9' * 40 + b' HTTP/1.1\r\nHost: x\r\n\r\n',
]
def exchange(data):
    s = socket.create_connection(('127.0.0.1', port), timeout=30)
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    reply = b''
    while True:
        part = s.recv(65536)
        if not part:
            return reply
        reply += part
for data in requests:
    status = exchange(data)[9:12].decode()
    health = exchange(b'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')[9:12].decode()
    print(status, health)
PY
)
  want=$'405 200\n431 200\n400 200\n404 200\n400 200'
  [ "$out" = "$want" ] || fail "requests that ended the service: got '$out', wanted '$want'"
  kill -0 "$pid" 2>/dev/null || fail "the service is gone: $(tail -3 "$work/err")"
fi
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 0 ] || fail "SIGTERM: exit $rc, wanted 0: $(tail -3 "$work/err")"
grep -qF "stopped" "$work/err" || fail "SIGTERM: no 'stopped' line"
grep -q '"status":200' "$work/err" || fail "log: no JSON line for the capture"
pid=

if [ "$failures" -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "all passed"
