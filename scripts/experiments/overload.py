#!/usr/bin/env python3
"""Overload experiment for docs/overload.md (admission control and overload).

Runs the peak mixed scenario (examples/peak-mixed.yaml, 85 % of the node's capacity at rate
scale 1) at offered loads from 50 % to 300 % of capacity, Poisson and bursty (Gamma arrivals with
a coefficient of variation of 4), under gangway with admission control, the same policy with it
off (--no-admission), and baseline gang policies without it; the bursty case also on several
seeds at 50, 85 and 100 % (few large-model requests per window). Then a GPU-loss run, a replay of
the bursty Azure code trace at rate scales that overload the node, the time to recover after a
burst (from the simulator's time series, --series-ms), and a spillover study with several nodes
behind a router model (the scenario's cluster: section).

Writes docs/results/overload.{md,json} and the plots overload-goodput.png and
overload-recovery.png. Every number in docs/overload.md comes from here. Longer than most scripts because it is one
experiment: its parts share the scenarios and the summaries of a run, and the report page's
text sits beside the runs it describes.

    GANGWAY=build/release/src/cli/gangway /usr/bin/python3 scripts/experiments/overload.py \
        [--quick] [--out DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GANGWAY = os.environ.get("GANGWAY", os.path.join(ROOT, "build/release/src/cli/gangway"))
RESULTS = os.path.join(ROOT, "docs", "results")
PEAK = os.path.join(ROOT, "examples", "peak-mixed.yaml")
PEAK_LOAD = 0.85  # the peak scenario's offered load at rate scale 1 (docs/capacity.md)
DURATION_S = 15
WARMUP_S = 3
LOADS = [0.5, 0.85, 1.0, 2.0, 3.0]
RUNS = [  # (label, policy, admission)
    ("gangway", "gangway", True),
    ("gangway, no admission", "gangway", False),
    ("time-slice, no admission", "time-slice", False),
]
# The ladder's weight shift (admission.weight_shift, off by default): gangway with admission and
# the shift on, in the load sweeps only.
WEIGHT_SHIFT_LABEL = "gangway, weight shift"
# The 85 % target (>= 99 % of interactive requests with TTFT within 200 ms, small and large model
# apart) judged over several seeds rather than one: Poisson arrivals, TARGET_DURATION_S each.
TARGET_LOAD = 0.85
TARGET_SEEDS = list(range(1, 11))
TARGET_DURATION_S = 30
# The same judged on long runs: a 30 s window holds ~400 LM interactive requests, so one window's
# share moves by a quarter of a percent per request; ten minutes hold ~10,600.
TARGET_LONG_SEEDS = list(range(1, 6))
TARGET_LONG_DURATION_S = 600
# Bursty arrivals hold few large-model interactive requests per window (~70 at 50 % load), so
# one seed says little about that tier: these loads also run on several seeds.
BURSTY_SEED_LOADS = [0.5, 0.85, 1.0]
BURSTY_SEEDS = list(range(1, 9))


# Recovery after a burst: the peak load (85 %), lifted to BURST_LOADS of capacity for BURST_S
# seconds from BURST_START_S on (on_off arrivals: the "on" phase is the base rate, the "off"
# phase the burst), after 12 s of steady state.
BURST_LOADS = [2.0, 3.0]
# Recovery on one seed says little (one 1 s window below a criterion resets it): gangway with
# admission control also runs on these seeds, each with other arrivals.
RECOVERY_SEEDS = list(range(1, 9))
BURST_S = 3
BURST_START_S = 12
RECOVERY_DURATION_S = 22
SERIES_MS = 100
WINDOW_S = 1.0  # the sliding window of the recovery criteria
HOLD_S = 2.0  # ... which must then hold this long
# Spillover: nodes behind a router, the cluster offered AVERAGE_LOAD of its capacity, with
# PINNED_SHARE of all arrivals sent to node 0 first (a hot tenant): node 0 is overloaded.
CLUSTER_NODES = 4
AVERAGE_LOAD = 0.85
PINNED_SHARE = 0.5
CLUSTER_RUNS = [  # (label, router, spillover, admission, pinned share)
    ("round-robin, no skew", "round-robin", True, True, 0.0),
    ("round-robin", "round-robin", False, True, PINNED_SHARE),
    ("round-robin + spillover", "round-robin", True, True, PINNED_SHARE),
    ("least-loaded + spillover", "least-loaded", True, True, PINNED_SHARE),
    ("load-report", "load-report", False, True, PINNED_SHARE),
    ("load-report + spillover", "load-report", True, True, PINNED_SHARE),
    ("load-report + spillover, no admission", "load-report", True, False, PINNED_SHARE),
]


def scenario_file(bursty=False, faults=None, burst_load=None, cluster=None, weight_shift=False):
    with open(PEAK) as f:
        doc = yaml.safe_load(f)
    if weight_shift:
        doc.setdefault("admission", {})["weight_shift"] = {"enabled": True}
    doc["warmup_s"] = WARMUP_S
    doc["duration_s"] = DURATION_S
    doc["drain_s"] = 60
    if burst_load:
        doc["duration_s"] = RECOVERY_DURATION_S
        for stream in doc["workload"]["streams"]:
            rate = stream["arrival"]["rate_per_s"]
            stream["arrival"] = {"process": "on_off", "on_rate_per_s": rate,
                                 "off_rate_per_s": rate * burst_load / PEAK_LOAD,
                                 "on_s": BURST_START_S, "off_s": BURST_S}
    if cluster:
        doc["cluster"] = cluster
    if bursty:
        for stream in doc["workload"]["streams"]:
            stream["arrival"]["process"] = "gamma"
            stream["arrival"]["cv"] = 4.0
    if faults:
        doc["faults"] = faults
    # In the system's temporary folder, not beside the example: `make test` runs this script's
    # quick mode while another test loads every scenario under examples/.
    handle = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    yaml.safe_dump(doc, handle)
    handle.close()
    return handle.name


def recovery(run, burst_end_s, burst_start_s, arrivals_end_s):
    """Time to recover after a burst, from the run's series (bins of SERIES_MS).

    ttft: from the burst's end until the first 1 s window (sliding by one bin) of interactive
    arrivals whose TTFT p99 is within the target (>= 99 % of those that got a first token got it
    within 200 ms), provided every window starting in the next HOLD_S does too.
    queue: the same for the node's queue depth (sampled at each bin's end) returning to at most
    twice its mean over the 5 s before the burst (plus one request).
    service: the same for the share of interactive arrivals served on time (rejections count as
    misses) returning to within 2 points of its mean over the 8 s before the burst.
    None: not within the run's arrivals.
    """
    series = run["series"]
    width = series["bin_s"]
    inter = series["classes"]["interactive"]
    n = len(series["t_s"])
    per_window = max(1, round(WINDOW_S / width))
    hold = max(1, round(HOLD_S / width))
    end_bin = round(burst_end_s / width)
    start_bin = round(burst_start_s / width)

    def ttft_ok(i):
        got = sum(inter["first_token"][i:i + per_window])
        on = sum(inter["ttft_on_target"][i:i + per_window])
        return got == 0 or on >= 0.99 * got

    before = series["queued"][max(0, start_bin - round(5 / width)):start_bin]
    limit = 2 * sum(before) / max(1, len(before)) + 1

    def queue_ok(i):
        return all(q <= limit for q in series["queued"][i:i + per_window])

    last = min(n, round(arrivals_end_s / width)) - per_window - hold

    def on_time(i):
        arrived = sum(inter["arrived"][i:i + per_window])
        return sum(inter["slo_met"][i:i + per_window]) / arrived if arrived else 1.0

    pre_on_time = [on_time(i) for i in range(start_bin - round(8 / width), start_bin - per_window)]
    baseline = sum(pre_on_time) / max(1, len(pre_on_time))

    def service_ok(i):
        return on_time(i) >= baseline - 0.02

    def first(ok):
        for i in range(end_bin, last + 1):
            if all(ok(j) for j in range(i, i + hold + 1)):
                return round((i - end_bin) * width, 3)
        return None

    pre = range(start_bin - round(8 / width), start_bin - per_window)
    burst = slice(start_bin, end_bin)
    arrived = sum(inter["arrived"][burst])
    return {"ttft_recovery_s": first(ttft_ok), "queue_recovery_s": first(queue_ok),
            "service_recovery_s": first(service_ok), "pre_burst_on_time_fraction": baseline,
            "pre_burst_windows_within_target": sum(ttft_ok(i) for i in pre) / max(1, len(pre)),
            "pre_burst_mean_queued": sum(before) / max(1, len(before)),
            "peak_queued": max(series["queued_max"][start_bin:]),
            "burst_interactive_rejected_fraction": sum(inter["rejected"][burst]) / max(1, arrived),
            "burst_interactive_on_time_fraction": sum(inter["slo_met"][burst]) / max(1, arrived)}


def cluster_summary(run):
    row = summary(run)
    cluster = run["cluster"]
    row["spillover"] = cluster["spillover"]
    row["per_node"] = []
    for node in cluster["per_node"]:
        total = node["total"]
        row["per_node"].append({
            "first_choice": node["first_choice"], "retries_received": node["retries_received"],
            "submitted": total["arrived"], "rejected": total["rejected"],
            "slo_met": total["slo_met"], "final_level": node["admission"]["final_level"],
            "gpu_utilization": node["node"]["gpu_utilization"]})
    return row


def simulate(path, policy, admission, rate_scale, extra=()):
    cmd = [GANGWAY, "simulate", path, "--policy", policy, "--rate-scale", str(rate_scale), "--json"]
    if not admission:
        cmd.append("--no-admission")
    cmd += list(extra)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["runs"][0]


def summary(run):
    classes = run["classes"]
    window = run["sim"]["measured_s"]
    row = {"wall_s": run["sim"]["wall_s"]}
    for name, stats in classes.items():
        arrived = max(1, stats["arrived"])
        row[name] = {
            "goodput_rps": stats["goodput_rps"],
            "slo_attainment": stats["slo_attainment"],
            "rejected_fraction": stats["rejected"] / arrived,
            "ttft_p99_ms": stats["ttft_ms"]["p99"],
        }
    for model, by_class in run.get("model_classes", {}).items():
        if "interactive" in by_class:
            s = by_class["interactive"]
            row["interactive " + model] = {
                "goodput_rps": s["goodput_rps"],
                "on_time_fraction": s["goodput_rps"] * window / max(1, s["arrived"]),
                "ttft_on_time_fraction": s["ttft_attainment"] or 0,
                "ttft_p99_ms": s["ttft_ms"]["p99"],
            }
    total = run["total"]
    row["total_goodput_rps"] = total["goodput_rps"]
    row["rejected_fraction"] = total["rejected"] / max(1, total["arrived"])
    row["admission"] = run.get("admission", {})
    return row


def parse_args():
    """--out picks where the report goes; --quick (a smoke test of the script, run by `make
    test`) keeps every part but runs fewer seeds and shorter windows."""
    global RESULTS, BURSTY_SEEDS, TARGET_SEEDS, TARGET_LONG_SEEDS, TARGET_LONG_DURATION_S
    global DURATION_S, LOADS, BURSTY_SEED_LOADS, BURST_LOADS, TARGET_DURATION_S, RECOVERY_SEEDS
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer seeds, shorter windows")
    parser.add_argument("--out", default=RESULTS, help="where the report goes (docs/results)")
    args = parser.parse_args()
    RESULTS = args.out
    if args.quick:
        BURSTY_SEEDS, TARGET_SEEDS, TARGET_LONG_SEEDS = [1, 2], [1, 2], [1]
        TARGET_DURATION_S = TARGET_LONG_DURATION_S = 10
        DURATION_S, LOADS, BURSTY_SEED_LOADS, BURST_LOADS = 8, [0.85, 2.0], [0.85], [2.0]
        RECOVERY_SEEDS = [1, 2]


def main():
    parse_args()
    if not os.path.exists(GANGWAY):
        sys.exit(f"no gangway binary at {GANGWAY}; build it or set GANGWAY")
    os.makedirs(RESULTS, exist_ok=True)
    results = {"loads": LOADS, "duration_s": DURATION_S, "warmup_s": WARMUP_S, "sweeps": {}}
    files = []
    try:
        for bursty in (False, True):
            path = scenario_file(bursty=bursty)
            files.append(path)
            sweep = {}
            for label, policy, admission in RUNS:
                sweep[label] = []
                for load in LOADS:
                    run = simulate(path, policy, admission, load / PEAK_LOAD)
                    sweep[label].append(summary(run))
                    print(f"{'bursty' if bursty else 'poisson'} {label} load {load}: "
                          f"interactive goodput {sweep[label][-1]['interactive']['goodput_rps']:.1f}",
                          file=sys.stderr)
            shifted = scenario_file(bursty=bursty, weight_shift=True)
            files.append(shifted)
            sweep[WEIGHT_SHIFT_LABEL] = []
            for load in LOADS:
                sweep[WEIGHT_SHIFT_LABEL].append(summary(simulate(shifted, "gangway", True,
                                                                  load / PEAK_LOAD)))
                row = sweep[WEIGHT_SHIFT_LABEL][-1]
                print(f"{'bursty' if bursty else 'poisson'} {WEIGHT_SHIFT_LABEL} load {load}: "
                      f"interactive goodput {row['interactive']['goodput_rps']:.1f}, LM on time "
                      f"{row.get('interactive llama-3-70b', {}).get('on_time_fraction', 0):.1%}",
                      file=sys.stderr)
            results["sweeps"]["bursty" if bursty else "poisson"] = sweep
        # Bursty arrivals over seeds (gangway with admission control).
        path = scenario_file(bursty=True)
        files.append(path)
        results["bursty_seeds"] = {"seeds": BURSTY_SEEDS, "loads": {}}
        for load in BURSTY_SEED_LOADS:
            results["bursty_seeds"]["loads"][f"{load:.2f}"] = [
                summary(simulate(path, "gangway", True, load / PEAK_LOAD, ["--seed", str(seed)]))
                for seed in BURSTY_SEEDS]
        # The 85 % target over seeds.
        path = scenario_file()
        files.append(path)
        results["target_85"] = {"load": TARGET_LOAD, "duration_s": TARGET_DURATION_S, "seeds": {}}
        for seed in TARGET_SEEDS:
            run = simulate(path, "gangway", True, TARGET_LOAD / PEAK_LOAD,
                           ["--seed", str(seed), "--duration", str(TARGET_DURATION_S)])
            results["target_85"]["seeds"][str(seed)] = summary(run)
        results["target_85_long"] = {"load": TARGET_LOAD, "duration_s": TARGET_LONG_DURATION_S,
                                      "seeds": {}}
        for seed in TARGET_LONG_SEEDS:
            run = simulate(path, "gangway", True, TARGET_LOAD / PEAK_LOAD,
                           ["--seed", str(seed), "--duration", str(TARGET_LONG_DURATION_S)])
            results["target_85_long"]["seeds"][str(seed)] = summary(run)
        # A GPU lost for 6 s in the middle of the window, at the peak load.
        loss = [{"kind": "gpu_loss", "gpu": 3, "at_s": 8, "duration_s": 6}]
        path = scenario_file(faults=loss)
        files.append(path)
        results["gpu_loss"] = {"fault": loss, "with": summary(simulate(path, "gangway", True, 1.0))}
        # The no-fault reference for the same window.
        path = scenario_file()
        files.append(path)
        results["gpu_loss"]["without"] = summary(simulate(path, "gangway", True, 1.0))
        # Azure code trace (bursty), mapped by the scenario's trace mapping, overloading the node.
        trace = os.path.join(ROOT, "data", "traces", "AzureLLMInferenceTrace_code.csv")
        results["azure_code"] = {}
        for scale in (16, 32):
            row = {}
            for label, policy, admission in RUNS[:2]:
                row[label] = summary(simulate(path, policy, admission, scale,
                                              ["--trace", trace, "--duration", "30"]))
            results["azure_code"][str(scale)] = row
        # Recovery after a burst.
        results["recovery"] = {"burst_s": BURST_S, "burst_start_s": BURST_START_S,
                               "series_ms": SERIES_MS, "window_s": WINDOW_S, "hold_s": HOLD_S,
                               "runs": {}}
        for burst_load in BURST_LOADS:
            path = scenario_file(burst_load=burst_load)
            files.append(path)
            rows = {}
            for label, policy, admission in RUNS:
                run = simulate(path, policy, admission, 1.0, ["--series-ms", str(SERIES_MS)])
                rows[label] = {"recovery": recovery(run, BURST_START_S + BURST_S, BURST_START_S,
                                                    RECOVERY_DURATION_S),
                               "series": {k: run["series"][k] for k in ("bin_s", "t_s", "queued")},
                               "interactive_series": run["series"]["classes"]["interactive"]}
                print(f"burst {burst_load} {label}: {rows[label]['recovery']}", file=sys.stderr)
            results["recovery"]["runs"][f"{burst_load:.0%}"] = rows
            seeded = []
            for seed in RECOVERY_SEEDS:
                run = simulate(path, "gangway", True, 1.0,
                               ["--series-ms", str(SERIES_MS), "--seed", str(seed)])
                seeded.append(recovery(run, BURST_START_S + BURST_S, BURST_START_S,
                                       RECOVERY_DURATION_S))
            results["recovery"].setdefault("seeded", {})[f"{burst_load:.0%}"] = {
                "seeds": RECOVERY_SEEDS, "runs": seeded}
        # Spillover between nodes.
        results["spillover"] = {"nodes": CLUSTER_NODES, "average_load": AVERAGE_LOAD,
                                "pinned_share": PINNED_SHARE, "runs": {}}
        for label, router, spill, admission, pinned in CLUSTER_RUNS:
            path = scenario_file(cluster={"nodes": CLUSTER_NODES, "router": router,
                                          "spillover": spill, "pinned_share": pinned})
            files.append(path)
            run = simulate(path, "gangway", admission, CLUSTER_NODES * AVERAGE_LOAD / PEAK_LOAD)
            results["spillover"]["runs"][label] = cluster_summary(run)
            print(f"cluster {label}: interactive goodput "
                  f"{results['spillover']['runs'][label]['interactive']['goodput_rps']:.0f}",
                  file=sys.stderr)
    finally:
        for path in files:
            os.unlink(path)
    with open(os.path.join(RESULTS, "overload.json"), "w") as f:
        json.dump(results, f, indent=1, sort_keys=True)
    write_markdown(results)
    plot(results)


def write_markdown(results):
    lines = ["# Overload experiment results",
             "",
             "Generated by `scripts/experiments/overload.py` (do not edit by hand). Peak mixed "
             f"scenario, {results['duration_s']} s windows after {results['warmup_s']} s warm-up; "
             "load is the offered load as a fraction of the node's capacity.",
             ""]
    for arrivals, sweep in results["sweeps"].items():
        lines += [f"## {arrivals.capitalize()} arrivals", "",
                  "Interactive goodput (requests/s on time) and, in brackets, the fraction of all "
                  "requests rejected:", "",
                  "| run | " + " | ".join(f"{l:.0%}" for l in results["loads"]) + " |",
                  "|---|" + "---|" * len(results["loads"])]
        for label, rows in sweep.items():
            cells = [f"{r['interactive']['goodput_rps']:.0f} ({r['rejected_fraction']:.0%})" for r in rows]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines += ["", "Goodput per class with admission control (gangway):", "",
                  "Interactive SM/LM: the share of arrivals that met the whole SLO (TTFT and TPOT), "
                  "and that got their first token within the TTFT target (rejections count as "
                  "misses).", "",
                  "| load | interactive | standard | batch | interactive SM on time | interactive LM on time | "
                  "SM TTFT on time | LM TTFT on time | SM TTFT p99 ms | LM TTFT p99 ms |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for load, r in zip(results["loads"], sweep["gangway"]):
            sm = r.get("interactive llama-3-8b", {})
            lm = r.get("interactive llama-3-70b", {})
            lines.append(f"| {load:.0%} | {r['interactive']['goodput_rps']:.0f} | "
                         f"{r['standard']['goodput_rps']:.0f} | {r['batch']['goodput_rps']:.0f} | "
                         f"{sm.get('on_time_fraction', 0):.1%} | {lm.get('on_time_fraction', 0):.1%} | "
                         f"{sm.get('ttft_on_time_fraction', 0):.1%} | "
                         f"{lm.get('ttft_on_time_fraction', 0):.1%} | "
                         f"{sm.get('ttft_p99_ms', 0):.0f} | {lm.get('ttft_p99_ms', 0):.0f} |")
        if WEIGHT_SHIFT_LABEL in sweep:
            lines += ["", "The ladder's weight shift (admission.weight_shift on) against the same "
                      "policy with it off (gangway with admission control):", "",
                      "| load | LM interactive on time, off / on | SM interactive goodput, off / on | "
                      "total goodput, off / on | weight factor at the end (peak) | time shifted toward the LM s |",
                      "|---|---|---|---|---|---|"]
            for load, off, on in zip(results["loads"], sweep["gangway"], sweep[WEIGHT_SHIFT_LABEL]):
                lm_off = off.get("interactive llama-3-70b", {}).get("on_time_fraction", 0)
                lm_on = on.get("interactive llama-3-70b", {}).get("on_time_fraction", 0)
                sm_off = off.get("interactive llama-3-8b", {}).get("goodput_rps", 0)
                sm_on = on.get("interactive llama-3-8b", {}).get("goodput_rps", 0)
                shift = on["admission"].get("weight_shift", {})
                lines.append(f"| {load:.0%} | {lm_off:.1%} / {lm_on:.1%} | {sm_off:.0f} / {sm_on:.0f} | "
                             f"{off['total_goodput_rps']:.0f} / {on['total_goodput_rps']:.0f} | "
                             f"{shift.get('final_factor', 1):.2f} ({shift.get('peak_factor', 1):.2f}) | "
                             f"{shift.get('time_toward_large_s', 0):.1f} |")
        lines.append("")
    bursty = results["bursty_seeds"]
    lines += ["## Bursty arrivals over seeds", "",
              f"Gangway with admission control on seeds {bursty['seeds'][0]}-{bursty['seeds'][-1]}, "
              "one window each: the share of interactive arrivals that met the whole SLO "
              "(rejections count as misses), mean over the seeds and the worst seed, and total "
              "goodput (requests/s on time, mean):", "",
              "| load | LM interactive SLO met, mean | worst seed | LM TTFT on time, mean | "
              "SM interactive SLO met, mean | worst seed | total goodput |",
              "|---|---|---|---|---|---|---|"]
    def mean(values):
        return sum(values) / len(values)
    for load, rows in bursty["loads"].items():
        lm = [r["interactive llama-3-70b"] for r in rows]
        sm = [r["interactive llama-3-8b"] for r in rows]
        lines.append(f"| {float(load):.0%} | {mean([r['on_time_fraction'] for r in lm]):.1%} | "
                     f"{min(r['on_time_fraction'] for r in lm):.1%} | "
                     f"{mean([r['ttft_on_time_fraction'] for r in lm]):.1%} | "
                     f"{mean([r['on_time_fraction'] for r in sm]):.2%} | "
                     f"{min(r['on_time_fraction'] for r in sm):.2%} | "
                     f"{mean([r['total_goodput_rps'] for r in rows]):.1f} |")
    lines.append("")
    lines += ["## The 85 % target over seeds", ""]
    for key, heading in (("target_85", "Short windows"), ("target_85_long", "Ten-minute runs")):
        target = results[key]
        lines += [f"{heading}: Poisson arrivals at {target['load']:.0%} load, gangway with "
                  f"admission control, {len(target['seeds'])} seeds of {target['duration_s']} s "
                  "each. Share of interactive arrivals with their first token within 200 ms "
                  "(rejections count as misses), and with the whole SLO met (TTFT and TPOT):", "",
                  "| model | TTFT on time, mean | TTFT on time, worst seed | seeds under 99 % | "
                  "SLO met, mean | SLO met, worst seed |", "|---|---|---|---|---|---|"]
        for model, tier in (("llama-3-8b", "SM"), ("llama-3-70b", "LM")):
            rows = [r[f"interactive {model}"] for r in target["seeds"].values()]
            ttft = [r["ttft_on_time_fraction"] for r in rows]
            slo = [r["on_time_fraction"] for r in rows]
            lines.append(f"| {tier} ({model}) | {sum(ttft) / len(ttft):.2%} | {min(ttft):.2%} | "
                         f"{sum(t < 0.99 for t in ttft)} | {sum(slo) / len(slo):.1%} | "
                         f"{min(slo):.1%} |")
        lines.append("")
    loss = results["gpu_loss"]
    lines += ["## GPU loss", "",
              f"GPU 3 lost at 8 s for 6 s (peak load, gangway with admission): "
              f"total goodput {loss['with']['total_goodput_rps']:.0f}/s against "
              f"{loss['without']['total_goodput_rps']:.0f}/s without the fault; rejected "
              f"{loss['with']['rejected_fraction']:.1%} of requests (no_capacity: "
              f"{loss['with']['admission'].get('decisions', {}).get('no_capacity', 0)}).", ""]
    lines += ["## Azure code trace", "",
              "| rate scale | run | interactive goodput | rejected | SM TTFT p99 ms |", "|---|---|---|---|---|"]
    for scale, row in results["azure_code"].items():
        for label, r in row.items():
            sm = r.get("interactive llama-3-8b", {})
            lines.append(f"| {scale}x | {label} | {r['interactive']['goodput_rps']:.1f} | "
                         f"{r['rejected_fraction']:.0%} | {sm.get('ttft_p99_ms', 0):.0f} |")
    lines.append("")
    rec = results["recovery"]
    lines += ["## Recovery after a burst", "",
              f"Peak load (85 %) plus a burst to the given load for {rec['burst_s']} s from "
              f"{rec['burst_start_s']} s, after 12 s of steady state. Time series in "
              f"{rec['series_ms']} ms bins (`--series-ms`). **TTFT recovery**: from the burst's end "
              f"until the first {rec['window_s']:.0f} s window of interactive arrivals with TTFT p99 "
              f"within 200 ms (>= 99 % of first tokens on time), every window in the "
              f"{rec['hold_s']:.0f} s after it too. **Queue recovery**: the same for the queue "
              "depth returning to at most twice its pre-burst mean (+1). **Service recovery**: the "
              "same for the share of interactive arrivals on time (rejections count as misses) "
              "returning to within 2 points of its pre-burst mean. `never`: not before arrivals "
              "stop, 7 s after the burst. Pre-burst: share of 1 s windows in the 8 s before the "
              "burst that met the TTFT criterion, and the on-time share.", "",
              "| burst to | run | TTFT recovery s | queue recovery s | service recovery s | "
              "pre-burst TTFT windows ok / on time | queue before / peak | "
              "interactive rejected in burst | interactive on time in burst |",
              "|---|---|---|---|---|---|---|---|---|"]

    def secs(value):
        return "never" if value is None else f"{value:.1f}"
    for load, rows in rec["runs"].items():
        for label, row in rows.items():
            r = row["recovery"]
            lines.append(f"| {load} | {label} | {secs(r['ttft_recovery_s'])} | "
                         f"{secs(r['queue_recovery_s'])} | {secs(r['service_recovery_s'])} | "
                         f"{r['pre_burst_windows_within_target']:.0%} / "
                         f"{r['pre_burst_on_time_fraction']:.0%} | "
                         f"{r['pre_burst_mean_queued']:.0f} / {r['peak_queued']} | "
                         f"{r['burst_interactive_rejected_fraction']:.0%} | "
                         f"{r['burst_interactive_on_time_fraction']:.0%} |")
    lines.append("")
    lines += [f"gangway with admission control on seeds {RECOVERY_SEEDS[0]}-{RECOVERY_SEEDS[-1]} "
              "(other arrivals each): how many seeds recover on each measure before arrivals "
              "stop, and the median and largest time among those that do.", "",
              "| burst to | measure | seeds recovered | median s | largest s |",
              "|---|---|---|---|---|"]
    for load, seeded in rec.get("seeded", {}).items():
        for key, measure in (("ttft_recovery_s", "TTFT"), ("queue_recovery_s", "queue"),
                             ("service_recovery_s", "service")):
            times = sorted(r[key] for r in seeded["runs"] if r[key] is not None)
            median = f"{times[len(times) // 2]:.1f}" if times else "—"
            largest = f"{times[-1]:.1f}" if times else "—"
            lines.append(f"| {load} | {measure} | {len(times)} of {len(seeded['runs'])} | "
                         f"{median} | {largest} |")
    lines.append("")
    sp = results["spillover"]
    lines += ["## Spillover between nodes", "",
              f"{sp['nodes']} nodes (each the peak scenario's node, gangway policy) behind a router "
              f"model, offered {sp['average_load']:.0%} of the cluster's capacity; in the skewed "
              f"runs {sp['pinned_share']:.0%} of all arrivals go to node 0 first whatever the "
              "router says (node 0 then gets at least "
              f"{sp['pinned_share'] * sp['nodes'] * sp['average_load']:.0%} of its capacity). "
              "Spillover: a request rejected with a retry-elsewhere reason is sent once to "
              "another node. Cluster-wide figures count each request once.", "",
              "| run | interactive goodput/s | total goodput/s | rejected | retried | "
              "admitted elsewhere | node 0 submitted / rejected | other nodes rejected |",
              "|---|---|---|---|---|---|---|---|"]
    for label, r in sp["runs"].items():
        nodes = r["per_node"]
        others = sum(n["rejected"] for n in nodes[1:])
        lines.append(f"| {label} | {r['interactive']['goodput_rps']:.0f} | "
                     f"{r['total_goodput_rps']:.0f} | {r['rejected_fraction']:.1%} | "
                     f"{r['spillover']['retried']} | {r['spillover']['admitted_elsewhere']} | "
                     f"{nodes[0]['submitted']} / {nodes[0]['rejected']} | {others} |")
    lines.append("")
    with open(os.path.join(RESULTS, "overload.md"), "w") as f:
        f.write("\n".join(lines))


def plot(results):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot", file=sys.stderr)
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, (arrivals, sweep) in zip(axes, results["sweeps"].items()):
        for label, rows in sweep.items():
            ax.plot([100 * l for l in results["loads"]],
                    [r["interactive"]["goodput_rps"] for r in rows], marker="o", label=label)
        ax.set_title(f"{arrivals} arrivals")
        ax.set_xlabel("offered load, % of capacity")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("interactive goodput, requests/s")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, "overload-goodput.png"), dpi=110)
    plt.close(fig)

    rec = results["recovery"]
    fig, axes = plt.subplots(2, len(rec["runs"]), figsize=(11, 6), sharex=True, squeeze=False)
    for col, (load, rows) in enumerate(rec["runs"].items()):
        for label, row in rows.items():
            t = row["series"]["t_s"]
            inter = row["interactive_series"]
            per_window = max(1, round(rec["window_s"] / row["series"]["bin_s"]))
            frac = []
            for i in range(len(t)):
                got = sum(inter["first_token"][i:i + per_window])
                frac.append(sum(inter["ttft_on_target"][i:i + per_window]) / got if got else None)
            axes[0][col].plot(t, frac, label=label)
            axes[1][col].plot(t, row["series"]["queued"], label=label)
        for ax in axes[:, col]:
            ax.axvspan(rec["burst_start_s"], rec["burst_start_s"] + rec["burst_s"], color="grey",
                       alpha=0.2)
            ax.set_xlim(rec["burst_start_s"] - 4, rec["burst_start_s"] + rec["burst_s"] + 10)
            ax.grid(alpha=0.3)
        axes[0][col].axhline(0.99, color="black", lw=0.8, ls="--")
        axes[0][col].set_title(f"burst to {load} of capacity")
        axes[0][col].set_ylim(0, 1.02)
        axes[1][col].set_yscale("symlog")
        axes[1][col].set_xlabel("time, s (burst shaded)")
    axes[0][0].set_ylabel("interactive TTFT on time\n(1 s window, admitted)")
    axes[1][0].set_ylabel("queued requests")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, "overload-recovery.png"), dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
