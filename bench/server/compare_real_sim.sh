#!/usr/bin/env bash
# A real run next to a simulated run of the same workload (docs/server.md, "How close a real run
# is to a simulated one"): starts `gangway serve SCENARIO` on a free loopback port, sends the
# scenario's workload with `gangway load --json`, runs `gangway simulate --json` on the same
# scenario and flags, and prints per-class and per-model TTFT, TPOT and end-to-end latency side by
# side (both documents are in the simulator's STATS shape).
#
#   bench/server/compare_real_sim.sh [--scenario FILE] [--duration S] [--rate-scale X] [--out DIR]
#
# Default: examples/serve.yaml for 20 s. Uses build/release/src/cli/gangway unless GANGWAY points
# at another binary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
gangway=${GANGWAY:-$root/build/release/src/cli/gangway}
scenario=$root/examples/serve.yaml
duration=20
rate_scale=1
out=$(mktemp -d /tmp/gangway-real-vs-sim.XXXXXX)
while [[ $# -gt 0 ]]; do
  case $1 in
    --scenario) scenario=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --rate-scale) rate_scale=$2; shift 2 ;;
    --out) out=$2; mkdir -p "$out"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x $gangway ]] || { echo "no gangway binary at $gangway (make release)" >&2; exit 2; }

"$gangway" serve "$scenario" --port 0 --port-file "$out/port" --log-level warn 2>"$out/server.log" &
server=$!
trap 'kill -KILL $server 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [[ -s $out/port ]] && break; sleep 0.05; done
port=$(cat "$out/port")
"$gangway" load --url "http://127.0.0.1:$port" "$scenario" --duration "$duration" \
  --rate-scale "$rate_scale" --json --no-progress >"$out/real.json"
kill -TERM $server
wait $server
trap - EXIT
"$gangway" simulate "$scenario" --duration "$duration" --rate-scale "$rate_scale" --json \
  >"$out/sim.json"

python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
real = json.load(open(f"{out}/real.json"))["runs"][0]
sim = json.load(open(f"{out}/sim.json"))["runs"][0]
load = real["load"]
print(f"out dir {out}")
print(f"real: sent {load['sent']} ({load['sent_rps']:.1f}/s), send lag p99 "
      f"{load['send_lag_ms']['p99']:.2f} ms, server-added TTFT p50 "
      f"{load['server_added_ttft_ms']['p50']:.2f} p99 {load['server_added_ttft_ms']['p99']:.2f} ms")
print(f"{'':<24}{'arrived':>9}{'done':>7}  {'TTFT mean':>17}  {'TTFT p50':>15}  {'TTFT p99':>15}"
      f"  {'TPOT p50':>13}  {'e2e p50':>15}")
print(f"{'':<24}{'real/sim':>9}{'':>7}  {'real / sim':>17}  {'real / sim':>15}  {'real / sim':>15}"
      f"  {'real / sim':>13}  {'real / sim':>15}")
def row(name, r, s):
    if r["arrived"] == 0 and s["arrived"] == 0:
        return
    f = lambda key, q: f"{r[key][q]:7.1f} / {s[key][q]:<6.1f}"
    print(f"{name:<24}{r['arrived']:>5}/{s['arrived']:<4}{r['completed']:>6}  "
          f"{f('ttft_ms', 'mean'):>17}  {f('ttft_ms', 'p50'):>15}  {f('ttft_ms', 'p99'):>15}  "
          f"{r['tpot_ms']['p50']:5.1f} / {s['tpot_ms']['p50']:<5.1f}  {f('e2e_ms', 'p50'):>15}")
for group in ("classes", "models"):
    for name in real[group]:
        row(f"{group[:-2] if group == 'classes' else 'model'} {name}", real[group][name],
            sim[group][name])
row("total", real["total"], sim["total"])
PY
