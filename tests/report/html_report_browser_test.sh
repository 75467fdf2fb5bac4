#!/usr/bin/env bash
# ctest's html_report_in_browser: the HTML reports of `gangway simulate --report` and `gangway
# capacity --report` open in a real browser (Debian's headless chromium, no network, a fresh
# profile) without errors, and show their plots: every <svg class="plot"> has a size and marks.
# The page's own script writes what it counted into <body>'s data attributes; --dump-dom prints
# the DOM after the page has loaded.
# Usage: html_report_browser_test.sh GANGWAY_BINARY
set -euo pipefail
gangway=$1
here=$(cd "$(dirname "$0")" && pwd)
scenario=$here/../../examples/peak-mixed.yaml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
browser=$(command -v chromium || true)
if [[ -z "$browser" ]]; then
  echo "chromium is not installed (scripts/setup.sh installs it)" >&2
  exit 1
fi

"$gangway" simulate "$scenario" --duration 3 --set warmup_s=1 --drain 5 --policy gangway \
  --policy fcfs --report "$work/simulate.html" >/dev/null
"$gangway" capacity "$scenario" --duration 3 --set warmup_s=1 --drain 5 --seeds 2 --search mix \
  --search large --policy gangway --policy time-slice --tolerance 0.3 --no-progress \
  --report "$work/capacity.html" >/dev/null

check() {
  local page=$1 least=$2
  local profile
  profile=$(mktemp -d "$work/profile.XXXXXX")
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --enable-logging=stderr --v=0 --user-data-dir="$profile" --dump-dom "file://$page" \
    >"$page.dom" 2>"$page.log"
  local body
  body=$(grep -o '<body[^>]*>' "$page.dom" | head -n 1)
  echo "$(basename "$page"): $body"
  local plots drawn errors
  plots=$(sed -n 's/.*data-plots="\([0-9]*\)".*/\1/p' <<<"$body")
  drawn=$(sed -n 's/.*data-drawn="\([0-9]*\)".*/\1/p' <<<"$body")
  errors=$(sed -n 's/.*data-errors="\([0-9]*\)".*/\1/p' <<<"$body")
  if [[ -z "$plots" || -z "$drawn" || -z "$errors" ]]; then
    echo "the page's script did not run" >&2
    exit 1
  fi
  if ((plots < least || drawn != plots || errors != 0)); then
    echo "expected at least $least plots, all drawn, no errors" >&2
    exit 1
  fi
  # Console errors (an exception, a blocked load) are logged as CONSOLE lines.
  if grep -E 'CONSOLE.*(Uncaught|Refused|Error)' "$page.log" >&2; then
    echo "the browser logged errors on the page" >&2
    exit 1
  fi
}
# simulate: 3 comparison bars + per policy 2 CDFs, GPU time, phases, queues, KV (x2 policies).
check "$work/simulate.html" 15
# capacity: per search, the capacity bars and attainment against load.
check "$work/capacity.html" 4
echo "ok"
