#!/usr/bin/env bash
# ctest's serve_survives_an_invalid_byte: a real `gangway serve` gets requests with a byte that is
# not UTF-8 in the path and in each scheduling header, answers each with an error, and still
# serves /health and a completion afterwards.
# Usage: invalid_byte_smoke_test.sh GANGWAY_BINARY
set -euo pipefail
gangway=$1
# shellcheck source=SCRIPTDIR/../serve_on_free_port.sh
source "$(dirname "$0")/../serve_on_free_port.sh"
start_serve "$gangway" --log-level warn

# Sends raw bytes on a fresh connection and prints the status line of the answer.
exchange() {
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf "$1" >&3
  local status
  IFS= read -r -t 10 status <&3 || true
  exec 3<&- 3>&-
  printf '%s\n' "${status%$'\r'}"
}
body='{"model":"llama-3-8b","prompt":"x","max_tokens":1}'
post() {
  printf 'POST /v1/completions HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n%sContent-Length: %d\\r\\n\\r\\n%s' \
    "$1" "${#body}" "$body"
}

expect() {
  local got
  got=$(exchange "$2")
  if [[ "$got" != "HTTP/1.1 $1"* ]]; then
    fail_with_server_log "expected $1, got '$got' for: $2"
  fi
  kill -0 "$server_pid" || fail_with_server_log "the server stopped after: $2"
}

expect 404 'GET /\xff HTTP/1.1\r\nHost: x\r\n\r\n'
expect 404 'GET /v1/models/caf\xe9 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
expect 400 "$(post 'X-Gangway-Slo-Class: \xff\r\n')"
expect 400 "$(post 'X-Gangway-Tenant: \xff\r\n')"
expect 400 "$(post 'X-Gangway-Ttft-Deadline-Ms: 1\xff\r\n')"
expect 415 "$(post 'Content-Type: application/\xff\r\n')"
expect 200 'GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
expect 200 "$(post 'Content-Type: application/json\r\n')"
echo "invalid bytes answered; the server still serves"
stop_serve
