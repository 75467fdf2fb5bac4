#!/usr/bin/env python3
"""Overload experiment for docs/overload.md (issue: admission control and overload).

Runs the peak mixed scenario (examples/peak-mixed.yaml, 85 % of the node's capacity at rate
scale 1) at offered loads from 50 % to 300 % of capacity, Poisson and bursty (Gamma arrivals with
a coefficient of variation of 4), under gangway with admission control, the same policy with it
off (--no-admission), and baseline gang policies without it. Then a GPU-loss run and a replay of
the bursty Azure code trace at rate scales that overload the node.

Writes docs/results/overload.{md,json,png}. Every number in docs/overload.md comes from here.

    GANGWAY=build/release/src/cli/gangway /usr/bin/python3 scripts/experiments/overload.py
"""
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


def scenario_file(bursty=False, faults=None):
    with open(PEAK) as f:
        doc = yaml.safe_load(f)
    doc["warmup_s"] = WARMUP_S
    doc["duration_s"] = DURATION_S
    doc["drain_s"] = 60
    if bursty:
        for stream in doc["workload"]["streams"]:
            stream["arrival"]["process"] = "gamma"
            stream["arrival"]["cv"] = 4.0
    if faults:
        doc["faults"] = faults
    handle = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False, dir=os.path.dirname(PEAK))
    yaml.safe_dump(doc, handle)
    handle.close()
    return handle.name


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
                "ttft_p99_ms": s["ttft_ms"]["p99"],
            }
    total = run["total"]
    row["total_goodput_rps"] = total["goodput_rps"]
    row["rejected_fraction"] = total["rejected"] / max(1, total["arrived"])
    row["admission"] = run.get("admission", {})
    return row


def main():
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
            results["sweeps"]["bursty" if bursty else "poisson"] = sweep
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
                  "| load | interactive | standard | batch | interactive SM on time | interactive LM on time | SM TTFT p99 ms | LM TTFT p99 ms |",
                  "|---|---|---|---|---|---|---|---|"]
        for load, r in zip(results["loads"], sweep["gangway"]):
            sm = r.get("interactive llama-3-8b", {})
            lm = r.get("interactive llama-3-70b", {})
            lines.append(f"| {load:.0%} | {r['interactive']['goodput_rps']:.0f} | "
                         f"{r['standard']['goodput_rps']:.0f} | {r['batch']['goodput_rps']:.0f} | "
                         f"{sm.get('on_time_fraction', 0):.1%} | {lm.get('on_time_fraction', 0):.1%} | "
                         f"{sm.get('ttft_p99_ms', 0):.0f} | {lm.get('ttft_p99_ms', 0):.0f} |")
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


if __name__ == "__main__":
    main()
