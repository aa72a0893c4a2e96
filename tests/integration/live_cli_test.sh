#!/usr/bin/env bash
# Drives `pagereel live` as an operator would: bad flags and bad show files give a clear
# message naming the problem and exit 2; a show started from a show file runs until SIGTERM,
# exits 0 with its recording complete and playable, and leaves no browser behind.
# Usage: live_cli_test.sh PAGEREEL_BINARY
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
  out=$(timeout 60 "$bin" live "$@" 2>&1 </dev/null)
  rc=$?
  [ "$rc" -eq 2 ] || { fail "$name: exit $rc, wanted 2: $out"; return; }
  grep -qF -- "$text" <<<"$out" || fail "$name: message lacks '$text': $out"
}

echo '<body style="background:rgb(0,0,200)">on air</body>' >"$work/page.html"

expect_usage nothing "give a show file" 
expect_usage no-output "no outputs" --source "$work/page.html"
expect_usage missing-page "does not exist" --source "$work/nope.html" --output "$work/a.mp4"
expect_usage bad-size "bad size" --source "$work/page.html" --output "$work/a.mp4" --size big
expect_usage odd-size "must be even" --source "$work/page.html" --output "$work/a.mp4" --size 641x360
expect_usage bad-rate "bad frame rate" --source "$work/page.html" --output "$work/a.mp4" --fps zero
expect_usage bad-output "udp://, srt:// or rtmp://" --source "$work/page.html" --output "$work/a.avi"
expect_usage bad-scheme "sends to udp://" --source "$work/page.html" --output "http://127.0.0.1:9/x"
expect_usage no-folder "does not exist" --source "$work/page.html" --output "$work/none/a.mp4"
expect_usage both "either the file or" "$work/show.toml" --source "$work/page.html"
expect_usage no-show-file "cannot read show file" "$work/missing.toml"
expect_usage short-duration "shorter than one frame at 25 fps" --source "$work/page.html" \
  --output "$work/a.mp4" --duration 0.001 --control none
# A server nobody runs: refused at start, naming the source (nothing listens on a port the
# kernel just gave back).
free_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
expect_usage unreachable-http "source 'source1': cannot load http://127.0.0.1:$free_port/" \
  --source "http://127.0.0.1:$free_port/" --output "$work/a.mp4" --control none

cat >"$work/bad-key.toml" <<TOML
[format]
size = "640x360"
speed = 2

[[sources]]
id = "page"
url = "page.html"

[[outputs]]
to = "out.mp4"
TOML
expect_usage unknown-key "bad-key.toml:3: format.speed: unknown key" "$work/bad-key.toml"

cat >"$work/bad-rate.toml" <<TOML
[format]
fps = "-25"
[[sources]]
id = "page"
url = "page.html"
[[outputs]]
to = "out.mp4"
TOML
expect_usage bad-rate-file "bad-rate.toml:2: format.fps" "$work/bad-rate.toml"

cat >"$work/ports.toml" <<TOML
[[sources]]
id = "page"
url = "page.html"
[[outputs]]
to = "udp://127.0.0.1:7000"
[[outputs]]
to = "srt://127.0.0.1:7000"
TOML
expect_usage overlapping-ports "ports.toml:7: outputs[1].to: port 127.0.0.1:7000 is already used" "$work/ports.toml"

cat >"$work/unreachable.toml" <<TOML
[[sources]]
id = "page"
url = "missing/page.html"
[[outputs]]
to = "out.mp4"
TOML
expect_usage unreachable-source "unreachable.toml:3: sources[0].url" "$work/unreachable.toml"

# A show from a show file, ended by SIGTERM.
cat >"$work/show.toml" <<TOML
as_run = "asrun.log"
[format]
size = "320x180"
fps = 25
[[sources]]
id = "page"
url = "page.html"
amcp_layer = 10
[[outputs]]
id = "recording"
to = "program.mp4"
[control]
listen = "127.0.0.1:0"
[amcp]
listen = "127.0.0.1:0"
TOML
"$bin" live "$work/show.toml" --status-every 1 >"$work/out" 2>"$work/err" &
pid=$!
for _ in $(seq 1 300); do
  grep -q "on air" "$work/err" && break
  sleep 0.1
done
grep -q "on air" "$work/err" || fail "show did not go on air: $(cat "$work/err")"
# A CasparCG controller on the AMCP port the show prints.
amcp_port=$(sed -n 's/.*AMCP (CasparCG) on 127\.0\.0\.1:\([0-9]*\): 1-10 page.*/\1/p' "$work/err")
if [ -z "$amcp_port" ]; then
  fail "no AMCP address printed: $(cat "$work/err")"
else
  replies=$(python3 - "$amcp_port" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
s.sendall(b"VERSION\r\nSTOP 1-10\r\nPLAY 1-10\r\n")
data = b""
while data.count(b"\r\n") < 4:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
print(data.decode().replace("\r\n", "|"))
PY
)
  [ "$replies" = "201 VERSION OK|2.3.0 pagereel|202 STOP OK|202 PLAY OK|" ] ||
    fail "AMCP replies: '$replies'"
fi
sleep 3
kill -TERM "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 0 ] || fail "SIGTERM: exit $rc, wanted 0: $(cat "$work/err")"
grep -q "show ended after" "$work/err" || fail "no summary: $(cat "$work/err")"
frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames \
  -of csv=p=0 "$work/program.mp4" 2>&1)
[ "${frames:-0}" -ge 50 ] 2>/dev/null || fail "recording has '$frames' frames"
grep -q "show started" "$work/asrun.log" || fail "as-run log lacks the start: $(cat "$work/asrun.log")"
grep -q "show ended" "$work/asrun.log" || fail "as-run log lacks the end"
sleep 0.5
if pgrep -f "user-data-dir=.*pagereel" >/dev/null && pgrep -P "$pid" >/dev/null 2>&1; then
  fail "a browser outlived the show"
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "all live command-line checks passed"
