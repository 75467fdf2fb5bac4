#!/usr/bin/python3
"""What the H200 preset's measured cost-model defaults change for admitted requests: the peak mixed
scenario (examples/peak-mixed.yaml) on a node of eight H200s, with the models' roofline settings
either set explicitly to the H100 preset's vLLM-class values (`before`: compute 0.5 small / 0.4
large, bandwidth 0.85, 0.2 ms per iteration) or left to the H200 preset (`after`: bandwidth 0.57,
1.1 ms; compute unchanged).

Same absolute arrival rates for both: the scenario's rates times 0.5, 1.0 and 2.0 (its rates are
85 % of the default H100 node's capacity), seeds 1-5, the scenario's policy (gangway, lease).
A seed gives both settings the same arrivals, so the differences are paired by seed (95 %
intervals, Student's t). Reported per model and class, and over all requests:
P(SLO met | admitted) = admitted_slo_met / admitted, and attainment over all arrivals =
slo_met / arrived (the JSON's slo_attainment).

In the simulator the cost model is both the scheduler's prediction and the GPU, so `before` is an
H200 that runs (and is predicted to run) decode steps about 1.6x faster than the one measured,
and `after` the measured one. A second comparison keeps the GPU the same and changes only the
predictions: every iteration takes F times what the H100's values predict (an `overrun` fault of
factor F over the whole run; F = 1.32, the H200 fit's geomean over the 41 measured shapes, and
1.60, its geomean over the 18 decode shapes), and the scheduler predicts either with the H100's
values (`stale`: F times too fast) or exactly (`honest`: every roofline term, the TP all-reduce
included, scaled by F through the cost keys and node.hardware's all-reduce figures).

    make release     # or any Release build; GANGWAY=/path/to/gangway picks the binary
    /usr/bin/python3 scripts/experiments/h200_preset_effect.py [--quick] [--out DIR]

Writes docs/results/h200-preset-effect.{md,json} (with --out: DIR/h200-preset-effect.*).
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import gangway_experiments as gx  # noqa: E402

SCENARIO = "examples/peak-mixed.yaml"
HARDWARE = "h200-sxm-141gb"
SMALL, LARGE = "llama-3-8b", "llama-3-70b"
# The H100 preset's values (the large model's compute efficiency is 0.4 on every preset).
BEFORE = {
    SMALL: {"compute_efficiency": 0.5, "bandwidth_efficiency": 0.85, "launch_overhead_ms": 0.2},
    LARGE: {"compute_efficiency": 0.4, "bandwidth_efficiency": 0.85, "launch_overhead_ms": 0.2},
}
# The iteration-time factors of the second comparison (docs/calibration.md: fitted / H100-value
# predictions, geomean over all 41 measured shapes and over the 18 decode shapes).
FACTORS = [1.32, 1.60]
# The H200 preset's all-reduce figures (docs/scenario.md, node.hardware).
ALLREDUCE_LATENCY_US, ALLREDUCE_GB_PER_S = 33, 210
# An overrun over every GPU that lasts past any run.
WHOLE_RUN_S = 100000
SCALES = [0.5, 1.0, 2.0]
SEEDS = "1..5"
CLASSES = ["interactive", "standard", "batch"]


def cost_args(factor=1.0):
    """The H100's roofline values, every term scaled by `factor` (1: as they are)."""
    args = []
    for model, cost in BEFORE.items():
        scaled = {"compute_efficiency": cost["compute_efficiency"] / factor,
                  "bandwidth_efficiency": cost["bandwidth_efficiency"] / factor,
                  "launch_overhead_ms": cost["launch_overhead_ms"] * factor}
        for key, value in scaled.items():
            args += ["--set", f"models[{model}].cost.{key}={value:.17g}"]
    return args


def settings_args(variant):
    """`before`, `after`, or (`stale`|`honest`, F) of the second comparison."""
    if variant == "after":
        return ["--set", f"node.hardware={HARDWARE}"]
    if variant == "before":
        return ["--set", f"node.hardware={HARDWARE}"] + cost_args()
    kind, factor = variant
    overrun = (f"faults=[{{kind: overrun, at_s: 0, duration_s: {WHOLE_RUN_S}, "
               f"factor: {factor}}}]")
    if kind == "stale":
        return ["--set", f"node.hardware={HARDWARE}", "--set", overrun] + cost_args()
    # honest: no overrun; the cost model itself is F times the H100 values' (the all-reduce
    # through the hardware's figures), so the GPU is the stale run's and predicted exactly.
    return ["--set", f"node.hardware.preset={HARDWARE}",
            "--set", f"node.hardware.allreduce_latency_us={ALLREDUCE_LATENCY_US * factor:.17g}",
            "--set", f"node.hardware.allreduce_gb_per_s={ALLREDUCE_GB_PER_S / factor:.17g}",
            ] + cost_args(factor)


def run(variant, scale, seeds, duration):
    command = [gx.binary(), "simulate", SCENARIO, "--json", "--seeds", seeds,
               "--rate-scale", str(scale)] + settings_args(variant)
    if duration:
        command += ["--duration", str(duration)]
    out = subprocess.run(command, check=True, capture_output=True, text=True, cwd=gx.ROOT,
                         timeout=3600)
    document = json.loads(out.stdout)
    return {run_["seed"]: run_ for run_ in document["runs"]}, command


def counters(run_, model, slo_class):
    """(arrived, admitted, admitted_slo_met, slo_met) of one model and class, or the totals."""
    if model is None:
        part = run_["total"]
    else:
        part = run_["model_classes"].get(model, {}).get(slo_class, {})
    return tuple(part.get(k, 0) for k in ("arrived", "admitted", "admitted_slo_met", "slo_met"))


def ratio(numerator, denominator):
    return numerator / denominator if denominator else None


def figures(runs, model, slo_class):
    """Per seed: P(SLO met | admitted), attainment over all arrivals, admitted share."""
    out = {"p_met_admitted": [], "attainment": [], "admitted_share": []}
    for seed in sorted(runs):
        arrived, admitted, admitted_met, met = counters(runs[seed], model, slo_class)
        out["p_met_admitted"].append(ratio(admitted_met, admitted))
        out["attainment"].append(ratio(met, arrived))
        out["admitted_share"].append(ratio(admitted, arrived))
    return out


def mean(values):
    return sum(values) / len(values)


def pct(value):
    return f"{100 * value:.2f}"


def cell(before, after):
    """'before -> after (difference [low, high])' in percentage points."""
    if any(v is None for v in before + after):
        return "n/a"
    text = f"{pct(mean(before))} → {pct(mean(after))}"
    difference = gx.paired_difference(after, before)
    if difference is not None:
        d, low, high = (100 * x for x in difference)
        text += f" ({d:+.2f} [{low:+.2f}, {high:+.2f}])"
    return text


def compare(first, second, scales, seeds, duration, commands):
    """Rows of the per-model, per-class figures of `first` and `second` at each rate scale."""
    rows = []
    for scale in scales:
        runs = {}
        for name, variant in (("first", first), ("second", second)):
            runs[name], command = run(variant, scale, seeds, duration)
            commands.append(" ".join(command[1:]))
        groups = [(model, slo_class) for model in (SMALL, LARGE) for slo_class in CLASSES]
        groups.append((None, None))
        for model, slo_class in groups:
            rows.append({"rate_scale": scale, "model": model or "all", "class": slo_class or "all",
                         "first": figures(runs["first"], model, slo_class),
                         "second": figures(runs["second"], model, slo_class)})
    return rows


def markdown(rows):
    header = ["rate scale", "model", "class", "P(SLO met \\| admitted) %",
              "attainment over arrivals %", "admitted %"]
    table = [[row["rate_scale"], row["model"], row["class"]] +
             [cell(row["first"][k], row["second"][k])
              for k in ("p_met_admitted", "attainment", "admitted_share")]
             for row in rows]
    return gx.markdown_table(header, table)


def summary(predictions):
    """One row per factor and scale: all requests, and each model's interactive class."""
    header = ["iteration time / H100-value prediction", "rate scale",
              "P(SLO met \\| admitted) %, all", "attainment over arrivals %, all",
              f"P(SLO met \\| admitted) %, {SMALL} interactive",
              f"P(SLO met \\| admitted) %, {LARGE} interactive"]
    table = []
    for factor, rows in predictions.items():
        by_group = {(row["rate_scale"], row["model"], row["class"]): row for row in rows}
        for scale in sorted({row["rate_scale"] for row in rows}):
            picked = [(by_group[(scale, "all", "all")], "p_met_admitted"),
                      (by_group[(scale, "all", "all")], "attainment"),
                      (by_group[(scale, SMALL, "interactive")], "p_met_admitted"),
                      (by_group[(scale, LARGE, "interactive")], "p_met_admitted")]
            table.append([f"{factor:g}", scale] +
                         [cell(row["first"][key], row["second"][key]) for row, key in picked])
    return gx.markdown_table(header, table)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="two seeds, one scale, one factor, a 10 s window (checks the "
                             "script, not the result)")
    parser.add_argument("--out", default=os.path.join(gx.ROOT, "docs", "results"))
    args = parser.parse_args()
    scales = [1.0] if args.quick else SCALES
    seeds = "1..2" if args.quick else SEEDS
    duration = 10 if args.quick else None
    factors = FACTORS[:1] if args.quick else FACTORS

    commands = []
    preset = compare("before", "after", scales, seeds, duration, commands)
    predictions = {factor: compare(("stale", factor), ("honest", factor), scales, seeds, duration,
                                   commands)
                   for factor in factors}

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "h200-preset-effect.json"), "w") as f:
        json.dump({"scenario": SCENARIO, "hardware": HARDWARE, "seeds": seeds,
                   "before_settings": BEFORE, "commands": commands,
                   "before_after": preset,
                   "stale_honest": {str(factor): rows for factor, rows in predictions.items()}},
                  f, indent=1)

    lines = [
        "### The H200 preset's defaults against the H100's values",
        "",
        f"{SCENARIO} on 8 x {HARDWARE}, gangway (lease), seeds {seeds}; arrival rates = the "
        "scenario's x rate scale, the same for both settings. Each cell: before → after (mean "
        "over seeds), then the paired difference after - before in percentage points with its "
        "95 % interval. Before: every model's roofline settings set to the H100's (compute 0.5 "
        "small / 0.4 large, bandwidth 0.85, 0.2 ms); after: the H200 preset's (bandwidth 0.57, "
        "1.1 ms). The simulated GPU is the cost model, so the two settings are two GPUs, each "
        "predicted exactly.",
        "",
        markdown(preset),
        "",
    ]
    lines += [
        "### Stale or honest predictions on one GPU, in short",
        "",
        "Each cell: stale → honest (mean over seeds), then the paired difference honest - stale "
        "in percentage points with its 95 % interval; the tables below have every class.",
        "",
        summary(predictions),
        "",
    ]
    for factor, rows in predictions.items():
        lines += [
            f"### One GPU, stale or honest predictions: iterations take {factor:g}x the H100 "
            "values' prediction",
            "",
            f"The same runs, with every iteration taking {factor:g} times what the H100's values "
            "predict (an overrun fault over the whole run). Each cell: stale → honest, where "
            "stale predicts with the H100's values and honest predicts the iteration times "
            "exactly; then the paired difference honest - stale.",
            "",
            markdown(rows),
            "",
        ]
    with open(os.path.join(args.out, "h200-preset-effect.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
