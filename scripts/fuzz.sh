#!/usr/bin/env bash
# Long fuzzing campaigns for the libFuzzer targets in fuzz/ (docs/reliability.md).
#
#   scripts/fuzz.sh [--seconds S | --minutes M] [--jobs J] [TARGET...]
#
# Builds build/fuzz (make fuzz-build) and runs each TARGET (default: all) for S seconds (or M
# minutes; default 15 minutes) at nice 10, J processes at a time (default 1). New inputs go to
# build/fuzz/campaign/TARGET (the committed corpus fuzz/corpus/TARGET is read, never written);
# crashes, leaks and timeouts go to build/fuzz/campaign/TARGET-artifacts/. At the end each
# target's executions and coverage (libFuzzer's cov: edges and ft: features) are printed, one
# line per target, as docs/reliability.md reports them. To keep an input that found something
# new, copy it into fuzz/corpus/TARGET (and make a regression test of any crash).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
seconds=900
jobs=1
targets=()
while (($#)); do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --minutes) seconds=$(($2 * 60)); shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
all=(scenario_yaml_fuzzer trace_azure_fuzzer trace_mooncake_fuzzer trace_burstgpt_fuzzer
     http_request_fuzzer openai_request_fuzzer sse_stream_fuzzer engine_response_fuzzer
     load_answer_fuzzer)
((${#targets[@]})) || targets=("${all[@]}")

make -C "$here" fuzz-build >/dev/null
campaign=$here/build/fuzz/campaign
mkdir -p "$campaign"

run_one() {
  local target=$1
  local binary=$here/build/fuzz/fuzz/$target
  local dictionary=()
  [[ -f $here/fuzz/$target.dict ]] && dictionary=(-dict="$here/fuzz/$target.dict")
  mkdir -p "$campaign/$target" "$campaign/$target-artifacts"
  nice -n 10 "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$campaign/$target-artifacts/" "${dictionary[@]}" \
    "$campaign/$target" "$here/fuzz/corpus/$target" >"$campaign/$target.log" 2>&1 || true
}

running=0
for target in "${targets[@]}"; do
  run_one "$target" &
  running=$((running + 1))
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

printf '%-24s %14s %10s %10s %8s %s\n' target executions exec/s cov ft crashes
for target in "${targets[@]}"; do
  log=$campaign/$target.log
  runs=$(awk '/stat::number_of_executed_units:/ {print $2}' "$log" | tail -1)
  rate=$(awk '/stat::average_exec_per_sec:/ {print $2}' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  crashes=$(find "$campaign/$target-artifacts" -type f | wc -l)
  printf '%-24s %14s %10s %10s %8s %s\n' "$target" "${runs:-?}" "${rate:-?}" "${cov:-?}" \
    "${ft:-?}" "$crashes"
done
