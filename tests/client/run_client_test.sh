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
# shellcheck source=SCRIPTDIR/../serve_on_free_port.sh
source "$here/../serve_on_free_port.sh"
start_serve "$gangway" "$here/../../examples/peak-mixed.yaml" --drain-grace 5 --log-level warn
node "$here/streaming_chat.mjs" "http://127.0.0.1:$port"

stop_serve
echo "gangway serve drained and exited 0 after SIGTERM"
