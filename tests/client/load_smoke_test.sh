#!/usr/bin/env bash
# ctest's load_json_smoke: `gangway load --json` against a real `gangway serve` prints one JSON
# document in the simulator's STATS shape, with every request completed.
# Usage: load_smoke_test.sh GANGWAY_BINARY
set -euo pipefail
gangway=$1
here=$(cd "$(dirname "$0")" && pwd)
scenario=$here/../../examples/serve.yaml
# shellcheck source=SCRIPTDIR/../serve_on_free_port.sh
source "$here/../serve_on_free_port.sh"
start_serve "$gangway" "$scenario" --log-level warn
"$gangway" load --url "http://127.0.0.1:$port" "$scenario" --duration 2 --rate-scale 0.1 --json \
  >"$work/load.json"
"$gangway" simulate "$scenario" --duration 2 --rate-scale 0.1 --json >"$work/sim.json"
python3 - "$work/load.json" "$work/sim.json" <<'PY'
import json, sys
load, sim = (json.load(open(path)) for path in sys.argv[1:3])
run, sim_run = load["runs"][0], sim["runs"][0]
assert run["mode"] == "real-time", run["mode"]
stats_keys = set(sim_run["total"].keys())
for group in ("classes", "models"):
    assert set(run[group]) == set(sim_run[group]), (group, run[group].keys())
    for name, stats in run[group].items():
        assert set(stats) == stats_keys, (group, name, set(stats) ^ stats_keys)
total = run["total"]
assert total["arrived"] == sim_run["total"]["arrived"] > 0, (total["arrived"], sim_run["total"]["arrived"])
assert total["completed"] == total["arrived"], total
assert run["load"]["server_added_ttft_ms"]["count"] == total["completed"]
print(f"load --json ok: {total['arrived']} requests, the simulator's STATS keys")
PY
stop_serve
