# Sourced by the scripts that serve pages to pagereel as a user's server would.
# start_loopback_server DIR: serves DIR over HTTP on 127.0.0.1 (python3 -m http.server) at
# a random port; sets $port and $server (its pid) and returns once it takes connections.
start_loopback_server() {
  port=$(( 20000 + RANDOM % 20000 ))
  python3 -m http.server "$port" --bind 127.0.0.1 --directory "$1" >/dev/null 2>&1 &
  server=$!
  for _ in $(seq 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.1
  done
}
