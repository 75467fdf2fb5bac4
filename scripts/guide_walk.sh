#!/usr/bin/env bash
# Times docs/guide.md from a fresh clone: clones this repository into DIR, runs `make release`,
# then every `gangway` command of the guide's shell blocks as written, in order
# (tests/guide/guide_commands_test.py --full), and prints each step's wall time.
#
#   scripts/guide_walk.sh DIR
#
# The build uses a compiler cache only if the environment sets one up
# (CMAKE_CXX_COMPILER_LAUNCHER=ccache); without it, it is the cold build of a newcomer.
set -euo pipefail
if [[ $# -ne 1 ]]; then
  echo "usage: scripts/guide_walk.sh DIR" >&2
  exit 2
fi
repo="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$1"
dir="$(cd "$1" && pwd)/gangway"
if [[ -e "$dir" ]]; then
  echo "guide_walk.sh: $dir exists; give an empty folder" >&2
  exit 2
fi
step() {
  local label="$1"
  shift
  local start=$EPOCHREALTIME
  "$@"
  awk -v start="$start" -v end="$EPOCHREALTIME" -v label="$label" \
    'BEGIN { printf "TIME %7.2f s  %s\n", end - start, label }'
}
step "git clone" git clone -q "$repo" "$dir"
cd "$dir"
step "make release" bash -c 'make release >"$1" 2>&1' make-release "$dir.make-release.log"
echo "(make release's output: $dir.make-release.log)"
/usr/bin/python3 tests/guide/guide_commands_test.py --full build/release/src/cli/gangway |
  grep -E '^(TIME|ok|FAIL)'
