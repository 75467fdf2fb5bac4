#!/usr/bin/env bash
# Runs clang-tidy (config: .clang-tidy) on the scheduler core's and the batching model's sources.
# Needs a build folder with compile_commands.json (any `make` target makes one; default
# build/test).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/test}
files=$(git ls-files 'src/core/*.cc' 'src/model/*.cc' 'src/kv/*.cc' 'src/sched/*.cc' \
        'src/sched/policies/*.cc' 'src/sched/admission/*.cc' 'src/sched/routers/*.cc' \
        'src/batching/*.cc' |
        grep -v '_test\.cc$')
# Files in parallel, a few per process (one clang-tidy per file costs little more; a single
# process for all of them ran alone for three minutes at the end of a CI test pass). xargs exits
# non-zero if any process found something.
printf '%s\n' $files | xargs -P "$(nproc)" -n 4 clang-tidy -p "$build" --quiet
