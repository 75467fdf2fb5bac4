#!/usr/bin/env bash
# Runs clang-tidy (config: .clang-tidy) on the scheduler core's and the batching model's sources.
# Needs a build folder with compile_commands.json (any `make` target makes one; default
# build/test).
#
#   scripts/clang-tidy.sh [BUILD]            the files whose inputs changed since the record
#                                            .ci/lint-clean (what ctest's clang_tidy_core runs)
#   scripts/clang-tidy.sh --all [BUILD]      every file
#   scripts/clang-tidy.sh --record [BUILD]   every file, then, if all are clean, the record
#
# A file's record holds a hash of the file, the project headers it includes, .clang-tidy, the
# compile options and the clang-tidy version (scripts/lint_cache.py): a recorded file cannot
# give another answer. Run --record on a clean tree before committing a change to the core, so
# that the check in CI has little left to do.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=changed
case "${1:-}" in
  --all) mode=all; shift ;;
  --record) mode=record; shift ;;
esac
build=${1:-build/test}
all_files=$(git ls-files 'src/core/*.cc' 'src/model/*.cc' 'src/kv/*.cc' 'src/sched/*.cc' \
            'src/sched/policies/*.cc' 'src/sched/admission/*.cc' 'src/sched/routers/*.cc' \
            'src/sched/request_level/*.cc' \
            'src/batching/*.cc' |
            grep -v '_test\.cc$')
if [[ $mode == changed ]]; then
  # shellcheck disable=SC2086
  files=$(python3 scripts/lint_cache.py stale $all_files)
  echo "clang-tidy: $(printf '%s\n' $files | grep -c . || true) of $(printf '%s\n' $all_files | wc -l) core files changed since .ci/lint-clean"
else
  files=$all_files
fi
if [[ -n $files ]]; then
  # Files in parallel, a few per process. xargs exits non-zero if any process found something.
  printf '%s\n' $files | xargs -P "$(nproc)" -n 4 clang-tidy -p "$build" --quiet
fi
if [[ $mode == record ]]; then
  # shellcheck disable=SC2086
  python3 scripts/lint_cache.py record $all_files
  echo "clang-tidy: recorded $(wc -l < .ci/lint-clean) clean files in .ci/lint-clean"
fi
