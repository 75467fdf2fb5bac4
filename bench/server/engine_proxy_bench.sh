#!/usr/bin/env bash
# What gangway serve adds in front of an engine: one `gangway engine` (the test engine) serving
# bench/server/engine-proxy.yaml's workload, measured by `gangway load` once directly and once
# through `gangway serve` attached to the same engine process; prints TTFT and inter-token
# latency (TPOT) of both and their ratios, from one run each, and the CPU time gangway serve
# spent per relayed request and per relayed token (user + system, over the proxied run).
#
#   bench/server/engine_proxy_bench.sh [--duration S] [--rate REQUESTS_PER_S]
#
# Uses build/release/src/cli/gangway unless GANGWAY points at another binary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
gangway=${GANGWAY:-$root/build/release/src/cli/gangway}
duration=20
rate=
while [[ $# -gt 0 ]]; do
  case $1 in
    --duration) duration=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x $gangway ]] || { echo "no gangway binary at $gangway (make release)" >&2; exit 2; }
out=$(mktemp -d /tmp/gangway-engine-proxy.XXXXXX)
scenario=$here/engine-proxy.yaml
rate_args=()
[[ -n $rate ]] && rate_args=(--set "workload.streams[chat].arrival.rate_per_s=$rate")

"$gangway" engine --model llama-3-8b --port 0 --port-file "$out/engine-port" \
  --gpu-memory-utilization 0.9 2>"$out/engine.log" &
engine=$!
server=
trap 'kill -KILL $engine $server 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [[ -s $out/engine-port ]] && break; sleep 0.05; done
engine_port=$(cat "$out/engine-port")

"$gangway" load --url "http://127.0.0.1:$engine_port" "$scenario" --duration "$duration" \
  "${rate_args[@]}" --json --no-progress >"$out/direct.json"

cp "$scenario" "$out/proxy.yaml"
cat >>"$out/proxy.yaml" <<YAML
server:
  log_level: warn
  engines:
    llama-3-8b: {kind: vllm, urls: [http://127.0.0.1:$engine_port]}
YAML
"$gangway" serve "$out/proxy.yaml" --port 0 --port-file "$out/port" 2>"$out/server.log" &
server=$!
for _ in $(seq 1 100); do [[ -s $out/port ]] && break; sleep 0.05; done
cpu_ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
ticks_before=$(cpu_ticks)
"$gangway" load --url "http://127.0.0.1:$(cat "$out/port")" "$scenario" --duration "$duration" \
  "${rate_args[@]}" --json --no-progress >"$out/proxy.json"
ticks_after=$(cpu_ticks)
kill -TERM $server
wait $server || true
server=

/usr/bin/python3 - "$out/direct.json" "$out/proxy.json" "$((ticks_after - ticks_before))" \
  "$(getconf CLK_TCK)" <<'PY'
import json, sys
direct, proxy = (json.load(open(p))["runs"][0]["total"] for p in sys.argv[1:3])
cpu_s = int(sys.argv[3]) / int(sys.argv[4])
completed = max(1, proxy["completed"])
tokens = max(1, proxy["output_tokens"])
print(f"gangway serve CPU: {cpu_s:.2f} s, {cpu_s / completed * 1e6:.0f} us per request, "
      f"{cpu_s / tokens * 1e6:.1f} us per relayed token")
print(f"completed: direct {direct['completed']} / {direct['arrived']}, "
      f"through gangway {proxy['completed']} / {proxy['arrived']}")
print(f"{'measure':<22}{'direct':>10}{'gangway':>10}{'ratio':>8}")
for key, label in (("ttft_ms", "TTFT"), ("tpot_ms", "inter-token (TPOT)")):
    for q in ("p50", "p90", "p99"):
        a, b = direct[key][q], proxy[key][q]
        print(f"{label + ' ' + q + ' ms':<22}{a:>10.2f}{b:>10.2f}{b / a if a else float('nan'):>8.2f}")
PY
echo "files: $out"
