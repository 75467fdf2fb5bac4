#!/usr/bin/env bash
# The server benchmark: starts `gangway serve` on a free loopback port, drives it with
# `gangway load` (same machine), samples the server's memory every second, optionally profiles it
# with perf, and prints a summary. Not a test: bench/README.md ("gangway serve") has the figures.
#
#   bench/server/run_server_bench.sh [--rate-scale X] [--duration S] [--stream-interval N]
#                                    [--scheduler-thread own|shared] [--perf] [--out DIR]
#                                    [--scenario FILE]
#
# Uses build/release/src/cli/gangway (make release) unless GANGWAY points at another binary.
# PERF_CALLGRAPH replaces --perf's `-g` (frame pointers, which a Release build omits), e.g.
# PERF_CALLGRAPH="--call-graph dwarf,16384" for callers through libc and the inlined code.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
gangway=${GANGWAY:-$root/build/release/src/cli/gangway}
scenario=$here/emulated-1600.yaml
rate_scale=1
duration=60
profile=0
serve_flags=()
out=$(mktemp -d /tmp/gangway-server-bench.XXXXXX)
while [[ $# -gt 0 ]]; do
  case $1 in
    --rate-scale) rate_scale=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --perf) profile=1; shift ;;
    --out) out=$2; mkdir -p "$out"; shift 2 ;;
    --scenario) scenario=$2; shift 2 ;;
    --stream-interval) serve_flags+=(--stream-interval "$2"); shift 2 ;;
    --scheduler-thread) serve_flags+=(--scheduler-thread "$2"); shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x $gangway ]] || { echo "no gangway binary at $gangway (make release)" >&2; exit 2; }

"$gangway" serve "$scenario" --port 0 --port-file "$out/port" --log-level warn "${serve_flags[@]}" \
  2>"$out/server.log" &
server=$!
trap 'kill -KILL $server 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [[ -s $out/port ]] && break; sleep 0.05; done
port=$(cat "$out/port")

# Memory: RSS of the server once a second.
(
  echo "t_s,rss_kib"
  start=$(date +%s.%N)
  while kill -0 $server 2>/dev/null; do
    rss=$(awk '/^VmRSS/ {print $2}' /proc/$server/status 2>/dev/null || true)
    [[ -n $rss ]] && echo "$(echo "$(date +%s.%N) - $start" | bc),$rss"
    sleep 1
  done
) >"$out/rss.csv" &
sampler=$!

cpu_ticks() { awk '{print $14 + $15}' /proc/$server/stat; }
ticks_before=$(cpu_ticks)
if [[ $profile == 1 ]]; then
  perf record -F 499 ${PERF_CALLGRAPH:--g} -p $server -o "$out/perf.data" -- sleep "$duration" >/dev/null 2>&1 &
  perf_pid=$!
fi
"$gangway" load --url "http://127.0.0.1:$port" "$scenario" --rate-scale "$rate_scale" \
  --duration "$duration" --json --no-progress >"$out/load.json"
ticks_after=$(cpu_ticks)
[[ $profile == 1 ]] && wait $perf_pid || true
curl -s "http://127.0.0.1:$port/metrics" >"$out/metrics.txt"
for task in /proc/$server/task/*; do
  echo "$(cat "$task/comm") $(awk '{print $14 + $15}' "$task/stat")"
done >"$out/threads.txt"
kill -TERM $server
wait $server || true
kill $sampler 2>/dev/null || true
trap - EXIT

hz=$(getconf CLK_TCK)
python3 - "$out" "$hz" "$ticks_before" "$ticks_after" <<'PY'
import json, sys
out, hz, before, after = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
doc = json.load(open(f"{out}/load.json"))
run = doc["runs"][0]
load, total = run["load"], run["total"]
rss = [int(line.split(",")[1]) for line in open(f"{out}/rss.csv").read().split("\n")[1:] if line]
metrics = {}
for line in open(f"{out}/metrics.txt"):
    if line and not line.startswith("#"):
        name, _, value = line.rpartition(" ")
        metrics[name] = float(value)
window = load["measured_s"]
print(f"out dir                {out}")
print(f"sent                   {load['sent']} in {window:.0f} s = {load['sent_rps']:.1f} req/s "
      f"(send lag p99 {load['send_lag_ms']['p99']:.2f} ms)")
print(f"completed              {total['completed']} / {total['arrived']}  rejected {total['rejected']}"
      f"  failed {total['failed']}  cancelled {total['cancelled']}")
print(f"client TTFT ms         p50 {total['ttft_ms']['p50']:.2f}  p99 {total['ttft_ms']['p99']:.2f}")
sa = load["server_added_ttft_ms"]
print(f"server-added TTFT ms   p50 {sa['p50']:.3f}  p90 {sa['p90']:.3f}  p99 {sa['p99']:.3f}  max {sa['max']:.2f}")
print(f"engine TTFT share ms   p50 {load['engine_ttft_ms']['p50']:.2f}  p99 {load['engine_ttft_ms']['p99']:.2f}")
print(f"TPOT ms                p50 {total['tpot_ms']['p50']:.2f}  p99 {total['tpot_ms']['p99']:.2f}")
print(f"peak connections       {load['peak_connections']}")
if rss:
    # Samples are a second apart: start (idle), 10 s in (warmed up), the middle, the end of the
    # arrival window, and the last one (after the drain).
    at = lambda i: rss[min(max(i, 0), len(rss) - 1)] / 1024
    print(f"server RSS MiB         start {at(0):.1f}  10 s {at(10):.1f}  middle {at(int(window / 2)):.1f}"
          f"  end of window {at(int(window) - 1):.1f}  max {max(rss)/1024:.1f}  last {rss[-1]/1024:.1f}")
print(f"server CPU             {(after - before) / hz:.1f} s over the run "
      f"({100.0 * (after - before) / hz / max(window, 1e-9):.0f} % of one core)")
print(f"server CPU per request {1e6 * (after - before) / hz / max(total['completed'], 1):.0f} us "
      f"(user + sys over the run / completed requests)")
writes = metrics.get("gangway_client_writes_total", 0)
if writes:
    print(f"writes per request     {writes / max(total['completed'], 1):.1f} "
          f"({metrics.get('gangway_client_writes_waited_total', 0):.0f} waited for a slow reader)")
busy = metrics.get("gangway_scheduler_loop_busy_seconds_total", 0)
core = metrics.get("gangway_scheduler_core_seconds_total", 0)
iterations = metrics.get("gangway_emulated_iterations_total", 0)
late = metrics.get("gangway_emulated_timer_late_seconds_total", 0)
print(f"scheduler thread busy  {busy:.1f} s (core {core:.1f} s); iterations {iterations:.0f}, "
      f"timer late mean {1e6 * late / max(iterations, 1):.0f} us")
for line in open(f"{out}/threads.txt"):
    name, ticks = line.rsplit(" ", 1)
    print(f"  thread {name:<16} {int(ticks) / hz:.1f} s CPU")
PY
if [[ $profile == 1 ]]; then
  perf report -i "$out/perf.data" --stdio --no-children --sort dso,symbol --percent-limit 1.5 \
    2>/dev/null | grep -v '^$' | grep -v '^#' | grep '%' | head -40 >"$out/profile.txt" || true
  echo "profile (self time, top symbols): $out/profile.txt"
fi
