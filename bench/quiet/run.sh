#!/usr/bin/env bash
# The decision-path and server benchmarks on a quiet machine, pinned to two CPUs so that the
# figures stand for the 2-core node of the targets without the noise of a shared VM (bench/README.md,
# "quiet host"). Builds a Release tree from source, then runs:
#   1. gangway_bench's decision-path benchmarks (8 GPUs busy, 10k queued, full prefix indexes),
#      and the same under callgrind for exact instruction counts where valgrind exists;
#   2. scripts/server_rate_sweep.py: gangway serve + gangway load on the same two CPUs;
#   3. the simulator's one-hour peak run (wall time and max RSS).
# Usage: bench/quiet/run.sh OUT_DIR [CPUS (default 0,1)] [SERVER_RATES (default 400,800,1600)]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: bench/quiet/run.sh OUT_DIR [CPUS] [SERVER_RATES]}
cpus=${2:-0,1}
rates=${3:-400,800,1600}
mkdir -p "$out"
exec > >(tee "$out/run.log") 2>&1

echo "== machine"
date -u
uname -a
nproc
grep -m1 'model name' /proc/cpuinfo
uptime

echo "== build (Release, benchmarks on, tests off)"
build=build/quiet
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGANGWAY_BUILD_TESTS=OFF \
  -DGANGWAY_BUILD_BENCHMARKS=ON -Wno-dev >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
cmake --build "$build" -j"$(nproc)" --target gangway gangway_bench -- -k 0 >"$out/build.log" 2>&1 ||
  { grep -E 'error:' "$out/build.log" | sort -u | head -30; exit 1; }
pin="taskset -c $cpus"

echo "== decision path"
$pin "$build/bench/gangway_bench" \
  --benchmark_filter='IterationDone|Arrival|Rejection' \
  --benchmark_out="$out/decision.json" --benchmark_out_format=json

echo "== simulator: one simulated hour of the peak scenario"
/usr/bin/time -f '%e s wall, max RSS %M KB' $pin "$build/src/cli/gangway" simulate \
  examples/peak-mixed.yaml --policy gangway --duration 3600 --json >/dev/null

echo "== server rate sweep on CPUs $cpus"
GANGWAY="$build/src/cli/gangway" $pin python3 scripts/server_rate_sweep.py --rates "$rates" \
  --duration 20 || echo "server sweep failed: $?"
echo "== done"
