#!/usr/bin/python3
"""Three `gangway serve` nodes behind HAProxy on loopback, one of them hot: interactive goodput
and SLO attainment with agent-check weights against plain round robin (same nodes, same
arrivals) and against the cluster without the hot node, at 1x, 2x and 3x the cluster's
capacity; and the same runs in the simulator (`cluster: {router: agent-check}`), to hold its
router model against the real one.

    make release
    GANGWAY=build/release/src/cli/gangway /usr/bin/python3 scripts/experiments/cluster.py \
        [--quick] [--out DIR]

Writes DIR/cluster.md (default docs/results) and prints the figures as JSON. About fifteen minutes
(eighteen real runs of half a minute, their simulations, and the node's capacity); --quick runs one
real run at 1x for a few seconds (a smoke test of the script, not in CI: the cluster tests
cover the same path).

The nodes: two emulated H100s each, running Llama-3-8B, with the GPUs' bandwidth and compute cut
tenfold and every SLO target raised tenfold (interactive TTFT 2 s), so that an iteration takes
tens of milliseconds and three nodes, HAProxy and the load generator fit beside each other on a
small machine while the ratio of target to iteration time stays an H100's. The traffic: 40 %
interactive, 30 % standard, 30 % batch; a third of it comes from the tenant `hot`, which
HAProxy pins to node 1 (`use-server` on the tenant header; its 503s still go elsewhere). The
cluster's capacity is three times a node's (capacity.py's rule: the highest rate whose
queueing delay p99 stays under 1 s).
"""

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import types

import yaml

sys.path.insert(0, os.path.dirname(__file__))
import capacity as capacity_search  # noqa: E402
import cluster_report as report  # noqa: E402
import cluster_loopback as loopback  # noqa: E402
import gangway_experiments as gx  # noqa: E402

NODES = 3
HOT_SHARE = 1.0 / 3
CLASS_SHARES = {"interactive": 0.4, "standard": 0.3, "batch": 0.3}
LOADS = (1.0, 2.0, 3.0)
SLO_SCALE = 10
AGENT_INTERVAL_MS = 250
RETRIES = 3
# HAProxy's connection limit: queued batch requests hold their connections for tens of seconds
# at 3x, and thousands may be open at once.
MAXCONN = 8000
# Seeds of the simulation-only table.
SIM_SEEDS = 8
# The load at which the real runs are repeated with other arrivals (seeds 1 to REAL_SEEDS): the
# goal's hardest point, where one run's arrivals move the attainment by several points.
SEEDED_LOAD = 2.0
REAL_SEEDS = 4
# (warm-up, end of arrivals, drain limit) in seconds for each run.
WINDOW = (3, 23, 30)
CONFIGURATIONS = (  # (label, HAProxy with agent checks, hot tenant pinned to node 1)
    ("agent-check", True, True),
    ("round-robin", False, True),
    ("agent-check, no hot node", True, False),
)


def node_scenario(total_rate):
    streams = []
    for tenant, share in (("default", 1 - HOT_SHARE), ("hot", HOT_SHARE)):
        for slo_class, class_share in CLASS_SHARES.items():
            streams.append({
                "name": f"{tenant}-{slo_class}", "model": "llama-3-8b", "class": slo_class,
                "tenant": tenant,
                "arrival": {"process": "poisson", "rate_per_s": total_rate * share * class_share},
                "prompt_tokens": {"dist": "lognormal", "mean": 128, "p99": 640, "max": 2048},
                "output_tokens": {"dist": "geometric", "mean": 16, "max": 128},
                "max_tokens": 128})
    warmup, end, drain = WINDOW
    return {
        "name": "cluster-node", "seed": 1, "warmup_s": warmup, "duration_s": end,
        "drain_s": drain,
        "node": {"gpus": 2, "hardware": {"preset": "h100-sxm-80gb", "hbm_tb_per_s": 0.335,
                                         "bf16_tflops": 98.9}},
        "models": [{"name": "llama-3-8b", "tier": "small", "shape": "llama-3-8b", "gpus": "all"}],
        "slo_classes": [
            {"name": "interactive", "ttft_ms": 200 * SLO_SCALE, "tpot_ms": 50 * SLO_SCALE,
             "weight": 4},
            {"name": "standard", "ttft_ms": 2000 * SLO_SCALE, "weight": 2,
             "downgrade_to": "batch"},
            {"name": "batch", "weight": 1}],
        "tenants": ["default", "hot"],
        "policy": "fcfs",
        "workload": {"streams": streams},
        "server": {"log_level": "warn", "drain_grace_s": 30},
    }


def write(path, scenario):
    with open(path, "w") as f:
        yaml.safe_dump(scenario, f, sort_keys=False)
    return path


def node_capacity(quick, workdir):
    """One node's capacity by capacity.py's rule (`gangway capacity --measure queue-p99`: the
    highest rate whose queueing delay p99 stays under 1 s, fcfs, admission control off), the
    mean over its seeds."""
    settings = capacity_search.QUICK if quick else capacity_search.FULL
    warmup, duration, drain = settings["window"]
    path = write(os.path.join(workdir, "capacity.yaml"), node_scenario(10.0))
    command = [gx.binary(), "capacity", path, "--json", "--no-progress",
               "--measure", "queue-p99", "--queue-p99-ms", str(capacity_search.QUEUE_P99_LIMIT_MS),
               "--policy", "fcfs", "--set", "admission.enabled=false",
               "--set", "admission.queue_order=arrival", "--set", f"warmup_s={warmup}",
               "--duration", str(duration), "--drain", str(drain),
               "--seeds", str(settings["seeds"]), "--tolerance", str(settings["tolerance"]),
               "--search", "small"]
    out = subprocess.run(command, check=True, capture_output=True, text=True, cwd=gx.ROOT)
    return json.loads(out.stdout)["results"][0]["capacity_rps"]["mean"]


def simulate(scenario, agent, hot, seed=None):
    variant = copy.deepcopy(scenario)
    if seed is not None:
        variant["seed"] = seed
    variant["cluster"] = {"nodes": NODES, "router": "agent-check" if agent else "round-robin",
                          "retries": RETRIES, "agent_interval_ms": AGENT_INTERVAL_MS}
    if hot:
        variant["cluster"]["pinned_tenant"] = "hot"
    run = gx.simulate(variant, [scenario["policy"]])["runs"][0]
    per_node = [node["total"]["arrived"] for node in run["cluster"]["per_node"]]
    return summary(run["classes"], run["cluster"]["spillover"]["retried"], per_node, None)


def summary(classes, retried, per_node, weights):
    total = sum(per_node) or 1
    interactive = classes["interactive"]
    return {
        "interactive_goodput_rps": interactive["goodput_rps"],
        "interactive_slo_attainment": interactive["slo_attainment"],
        "ttft_p99_ms": {name: stats["ttft_ms"]["p99"] for name, stats in classes.items()},
        "ttft_count": {name: stats["ttft_ms"].get("count", stats["completed"])
                       for name, stats in classes.items()},
        "completed": sum(stats["completed"] for stats in classes.values()),
        "arrived": sum(stats["arrived"] for stats in classes.values()),
        "spillover": retried,
        "node_share": [n / total for n in per_node],
        "mean_weight": weights,
    }


def node_arrivals(nodes):
    return [loopback.prometheus_sum(n.metrics(), "gangway_requests_arrived_total") for n in nodes]


def iteration_lateness_ms(nodes):
    """How late the nodes' emulated iterations ended on average (the scheduler thread waiting
    for a CPU): the real run's departure from the simulator's timing."""
    late = iterations = 0.0
    for node in nodes:
        text = node.metrics()
        late += loopback.prometheus_sum(text, "gangway_emulated_timer_late_seconds_total")
        iterations += loopback.prometheus_sum(text, "gangway_emulated_iterations_total")
    return 1e3 * late / iterations if iterations else 0.0


def real_run(binary, scenario_path, agent, hot, workdir):
    pins = [("hot", 1)] if hot else []
    with loopback.loopback_cluster(binary, scenario_path, NODES, agent=agent,
                                   check_interval="1s",
                                   agent_interval=f"{AGENT_INTERVAL_MS}ms", retries=RETRIES,
                                   pins=pins, keep=workdir,
                                   maxconn=MAXCONN) as (nodes, balancer):
        marks = {}
        weights = {}
        stop = threading.Event()

        def watch():
            # The nodes' counters and HAProxy's retries when the measured window opens; HAProxy's
            # weights every 100 ms inside it.
            start = time.monotonic()
            stop.wait(WINDOW[0])
            if stop.is_set():
                return
            marks["arrived"] = node_arrivals(nodes)
            marks["retries"] = int(balancer.backend()["wretr"] or 0)
            while not stop.is_set() and time.monotonic() - start < WINDOW[1]:
                for name, row in balancer.servers().items():
                    weights.setdefault(name, []).append(int(row["weight"] or 0))
                stop.wait(0.1)
        watcher = threading.Thread(target=watch, daemon=True)
        load_before = os.getloadavg()[0]
        watcher.start()
        try:
            document = loopback.run_load(binary, scenario_path, balancer.url,
                                         timeout_s=WINDOW[1] + WINDOW[2] + 60)
        finally:
            stop.set()
            watcher.join(timeout=10)
        arrived = node_arrivals(nodes)
        retries = int(balancer.backend()["wretr"] or 0)
        lateness = iteration_lateness_ms(nodes)
        load_after = os.getloadavg()[0]
    run = document["runs"][0]
    if "arrived" not in marks:
        raise RuntimeError("the load ended before its warm-up did")
    per_node = [a - b for a, b in zip(arrived, marks["arrived"])]
    mean_weight = [sum(w) / len(w) for _, w in sorted(weights.items())] if agent else None
    result = summary(run["classes"], retries - marks["retries"], per_node, mean_weight)
    # The weights' mean over the first and the second half of the window: a node's weight
    # follows its queue, which builds up over seconds.
    result["half_weights"] = ([[sum(w[:len(w) // 2]) / max(1, len(w) // 2),
                                sum(w[len(w) // 2:]) / max(1, len(w) - len(w) // 2)]
                               for _, w in sorted(weights.items())] if agent else None)
    result["transport_errors"] = sum(run["load"]["transport_errors"].values())
    result["failed"] = run["total"]["failed"]
    result["send_lag_p99_ms"] = run["load"]["send_lag_ms"]["p99"]
    result["server_added_ttft_p99_ms"] = run["load"]["server_added_ttft_ms"]["p99"]
    result["peak_connections"] = run["load"]["peak_connections"]
    result["iteration_late_ms"] = lateness
    result["load_average"] = [load_before, load_after]
    return result


def slug(label):
    return "".join(c if c.isalnum() else "-" for c in label)


def settings():
    """The set-up the results page states (after --quick has changed it)."""
    return types.SimpleNamespace(
        nodes=NODES, class_shares=CLASS_SHARES, slo_scale=SLO_SCALE,
        agent_interval_ms=AGENT_INTERVAL_MS, retries=RETRIES, seeded_load=SEEDED_LOAD,
        real_seeds=REAL_SEEDS, window=WINDOW, configurations=CONFIGURATIONS)


def main():
    global LOADS, WINDOW, SIM_SEEDS, REAL_SEEDS
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true",
                        help="one real run at 1x for a few seconds (a smoke test of the script)")
    parser.add_argument("--out", default=os.path.join(gx.ROOT, "docs", "results"),
                        help="where cluster.md goes (default: docs/results)")
    args = parser.parse_args()
    if not loopback.haproxy_binary():
        print("cluster.py: haproxy is not installed (scripts/setup.sh installs it)",
              file=sys.stderr)
        return 2
    configurations = CONFIGURATIONS
    if args.quick:
        LOADS, WINDOW, SIM_SEEDS, REAL_SEEDS = (1.0,), (1, 4, 10), 2, 1
        configurations = CONFIGURATIONS[:1]
    binary = gx.binary()
    results = []
    with tempfile.TemporaryDirectory(prefix="gangway-cluster-experiment-") as workdir:
        capacity = node_capacity(args.quick, workdir)
        print(f"node capacity {capacity:.1f} requests/s", file=sys.stderr)
        started = time.monotonic()
        for load in LOADS:
            scenario = node_scenario(load * NODES * capacity)
            path = write(os.path.join(workdir, f"load{load:.0f}.yaml"), scenario)
            for label, agent, hot in configurations:
                real = real_run(binary, path, agent, hot,
                                os.path.join(workdir, f"{load:.0f}x-{slug(label)}"))
                sim = simulate(scenario, agent, hot)
                for source, result in (("real", real), ("sim", sim)):
                    results.append({"load": load, "label": label, "source": source, **result})
                print(f"{load:.0f}x {label}: attainment real "
                      f"{report.pct(real['interactive_slo_attainment'])} sim "
                      f"{report.pct(sim['interactive_slo_attainment'])}, sent on "
                      f"{real['spillover']} / {sim['spillover']}", file=sys.stderr)
        # The seeded load again with other arrivals: seed 1 is the run above.
        real_seeds = {label: [r for r in results if r["source"] == "real"
                              and r["load"] == SEEDED_LOAD and r["label"] == label]
                      for label, _, _ in configurations}
        if SEEDED_LOAD in LOADS:
            for seed in range(2, REAL_SEEDS + 1):
                scenario = node_scenario(SEEDED_LOAD * NODES * capacity)
                scenario["seed"] = seed
                path = write(os.path.join(workdir, f"seed{seed}.yaml"), scenario)
                for label, agent, hot in configurations:
                    real = real_run(binary, path, agent, hot, os.path.join(
                        workdir, f"seed{seed}-{slug(label)}"))
                    real_seeds[label].append(real)
                    print(f"{SEEDED_LOAD:.0f}x seed {seed} {label}: attainment real "
                          f"{report.pct(real['interactive_slo_attainment'])}", file=sys.stderr)
    elapsed = time.monotonic() - started
    seeds = {}
    for load in LOADS:
        scenario = node_scenario(load * NODES * capacity)
        for label, agent, hot in configurations:
            seeds.setdefault(load, {})[label] = [
                {key: run[key] for key in ("interactive_slo_attainment", "spillover")}
                for run in (simulate(scenario, agent, hot, seed)
                            for seed in range(1, SIM_SEEDS + 1))]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "cluster.md"), "w") as f:
        f.write(report.page(results, capacity, args.quick, elapsed, seeds, real_seeds,
                            settings()))
    print(json.dumps({"node_capacity_rps": capacity, "runs": results, "simulated_seeds": seeds,
                      "real_seeds": {SEEDED_LOAD: real_seeds}}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
