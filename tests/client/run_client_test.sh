#!/usr/bin/env bash
# ctest's client_openai_node: starts `gangway serve` on a free loopback port, runs the official
# OpenAI Node client against it (streaming_chat.mjs), then sends SIGTERM and checks that the
# server drains and exits 0. Usage: run_client_test.sh GANGWAY_BINARY
# Exit 77 (skipped) when node is not installed; fails when node_modules is missing (make setup
# runs npm ci).
set -euo pipefail
gangway=$1
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null; then
  echo "node is not installed: skipping the OpenAI Node client test"
  exit 77
fi
if [[ ! -d "$here/node_modules/openai" ]]; then
  echo "tests/client/node_modules is missing: run 'make setup' (npm ci in tests/client)" >&2
  exit 1
fi
work=$(mktemp -d)
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then kill -KILL "$server_pid"; fi
  rm -rf "$work"
}
trap cleanup EXIT

"$gangway" serve "$here/../../examples/peak-mixed.yaml" --port 0 --port-file "$work/port" \
  --drain-grace 5 --log-level warn 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 1 100); do
  [[ -s "$work/port" ]] && break
  sleep 0.05
done
if [[ ! -s "$work/port" ]]; then
  echo "the server did not start:" >&2
  cat "$work/server.log" >&2
  exit 1
fi
port=$(cat "$work/port")
node "$here/streaming_chat.mjs" "http://127.0.0.1:$port"

kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=""
if [[ $status -ne 0 ]]; then
  echo "gangway serve exited $status after SIGTERM (expected 0)" >&2
  cat "$work/server.log" >&2
  exit 1
fi
echo "gangway serve drained and exited 0 after SIGTERM"
