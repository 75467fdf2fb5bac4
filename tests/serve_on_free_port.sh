# Sourced by the smoke tests that run a real `gangway serve`: starts it on a free loopback port,
# removes the server and the work folder however the test ends, and stops it the way a deploy
# does (SIGTERM, then the exit status must be 0).
#   start_serve GANGWAY_BINARY [SERVE_ARGS...]  sets $work (a fresh folder), $server_pid, $port;
#                                                the server's stderr goes to $work/server.log
#   stop_serve                                   SIGTERM; fails, printing the log, unless it exits 0
#   fail_with_server_log MESSAGE                 prints MESSAGE and the log, exits 1
work=$(mktemp -d)
server_pid=""
cleanup_serve() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then kill -KILL "$server_pid"; fi
  rm -rf "$work"
}
trap cleanup_serve EXIT

fail_with_server_log() {
  echo "$1" >&2
  cat "$work/server.log" >&2
  exit 1
}

start_serve() {
  local gangway=$1
  shift
  "$gangway" serve "$@" --port 0 --port-file "$work/port" 2>"$work/server.log" &
  server_pid=$!
  for _ in $(seq 1 200); do
    [[ -s "$work/port" ]] && break
    sleep 0.05
  done
  [[ -s "$work/port" ]] || fail_with_server_log "the server did not start:"
  port=$(cat "$work/port")
}

stop_serve() {
  kill -TERM "$server_pid"
  local status=0
  wait "$server_pid" || status=$?
  server_pid=""
  [[ $status -eq 0 ]] || fail_with_server_log "gangway serve exited $status after SIGTERM (expected 0)"
}
