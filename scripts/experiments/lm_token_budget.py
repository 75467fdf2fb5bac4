#!/usr/bin/python3
"""The large model's iteration token budget at saturation (load 1.0 / large share 0.5): gangway-lease and
time-slice on the gang sweep's overloaded mixed points with the large model's
`max_batched_tokens` at 512 (examples/peak-mixed.yaml), 384 and 256, on eleven seeds.

At saturation the large model gets about half the node, and nearly every one of its iterations
carries prefill chunks of the prompts that arrived while the small models ran (~31 ms against
~12 ms for a decode-only one), so its interactive class misses its 50 ms TPOT target under every
gang policy. This experiment measures what a smaller budget does to that class, to the totals,
and to the two policies' order.

    make release     # or any Release build; GANGWAY=/path/to/gangway picks the binary
    /usr/bin/python3 scripts/experiments/lm_token_budget.py [--quick] [--out DIR]

Also reads the GPU schedule (`--timeline`) of seed 1 at 1.0 / 0.5 for each budget: how long the
two policies' large-model phases last, how many iterations they hold, and how many of those carry
prefill.

Writes docs/results/lm-token-budget.{md,json}.
"""

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(__file__))
import gang_sweep as gs  # noqa: E402
import gangway_experiments as gx  # noqa: E402

POINTS = [(0.85, 0.5), (1.0, 0.25), (1.0, 0.5), (1.0, 0.75), (1.1, 0.25), (1.1, 0.5)]
BUDGETS = [512, 384, 256]
SEEDS = list(range(1, 11)) + [42]
POLICIES = ["gangway", "time-slice"]


def with_large_budget(scenario, budget):
    variant = copy.deepcopy(scenario)
    for model in variant["models"]:
        if model.get("tier") == "large":
            model["max_batched_tokens"] = budget
    return variant


def class_goodput(run, model, slo_class):
    return run["model_classes"].get(model, {}).get(slo_class, {}).get("goodput_rps", 0.0)


def run_one(job):
    base, (load, share), budget, seed = job
    scenario = with_large_budget(gs.mix_scenario(base, load, share), budget)
    scenario["seed"] = seed
    doc = gx.simulate(scenario, POLICIES)
    rows = []
    for run in doc["runs"]:
        rows.append({
            "load": load, "large_share": share, "budget": budget, "seed": seed,
            "policy": run["policy"],
            "goodput": run["total"]["goodput_rps"],
            "lm_interactive_goodput": class_goodput(run, "llama-3-70b", "interactive"),
            "sm_interactive_goodput": class_goodput(run, "llama-3-8b", "interactive"),
            "lm_goodput": run["models"].get("llama-3-70b", {}).get("goodput_rps", 0.0),
            "sm_goodput": run["models"].get("llama-3-8b", {}).get("goodput_rps", 0.0),
            "lm_busy_fraction": run["node"]["lm_busy_fraction"],
        })
    return rows


def phase_structure(base, budget, load=1.0, share=0.5, seed=1):
    """Large-model phases in one run's GPU schedule, per policy: a phase is a run of large-model
    iterations with less than 1 ms between them."""
    scenario = with_large_budget(gs.mix_scenario(base, load, share), budget)
    scenario["seed"] = seed
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        stem = os.path.join(tmp, "timeline.json")
        gx.simulate(scenario, POLICIES, ["--timeline", stem])
        for policy in POLICIES:
            with open(os.path.join(tmp, f"timeline.{policy}.json")) as f:
                doc = json.load(f)
            events = doc["traceEvents"] if isinstance(doc, dict) else doc
            # One event per GPU per gang iteration: GPU 0's stand for the gang.
            iterations = sorted((e for e in events if e.get("ph") == "X" and
                                 e.get("cat") == "lm" and e["tid"] == 1), key=lambda e: e["ts"])
            phases = [[iterations[0]]]
            for before, after in zip(iterations, iterations[1:]):
                if after["ts"] - (before["ts"] + before["dur"]) > 1000:
                    phases.append([after])
                else:
                    phases[-1].append(after)
            lengths = [(p[-1]["ts"] + p[-1]["dur"] - p[0]["ts"]) / 1e3 for p in phases]
            gaps = [(b[0]["ts"] - (a[-1]["ts"] + a[-1]["dur"])) / 1e3
                    for a, b in zip(phases, phases[1:])]
            with_prefill = [e for e in iterations if e["args"]["prefill_tokens"] > 0]
            decode_only = [e for e in iterations if e["args"]["prefill_tokens"] == 0]
            deciles = statistics.quantiles(gaps, n=10)
            out[policy] = {
                "phases": len(phases),
                "phase_ms_mean": statistics.mean(lengths),
                "gap_ms_p10": deciles[0], "gap_ms_p50": deciles[4], "gap_ms_p90": deciles[8],
                "iterations_per_phase": len(iterations) / len(phases),
                "prefill_iteration_fraction": len(with_prefill) / len(iterations),
                "prefill_iteration_ms": statistics.mean(e["dur"] for e in with_prefill) / 1e3,
                "decode_only_iteration_ms":
                    statistics.mean(e["dur"] for e in decode_only) / 1e3 if decode_only else 0,
            }
    return out


def mean(rows, key):
    return sum(r[key] for r in rows) / len(rows)


def write_report(results, phases, out_dir, wall_s, base, points, budgets, seeds):
    lines = ["# The large model's token budget at saturation", "",
             "Generated by `scripts/experiments/lm_token_budget.py` (do not edit by hand). "
             f"Scenario: examples/peak-mixed.yaml at the gang sweep's mixes "
             f"({base['duration_s'] - base['warmup_s']} s measured after a {base['warmup_s']} s "
             f"warm-up, {base['drain_s']} s of drain), the large "
             "model's `max_batched_tokens` set to each budget; seeds "
             f"{', '.join(map(str, seeds))}; means over the seeds. Goodput in requests/s on "
             f"time. Wall time {wall_s:.0f} s. The 95 % interval is that of the mean per-seed "
             "difference of goodput (paired: a seed gives both policies the same arrivals), "
             "relative to time-slice's mean; where it contains 0 the seeds cannot tell the two "
             "apart.", ""]
    table = []
    for load, share in points:
        for budget in budgets:
            cell = {}
            for policy in POLICIES:
                cell[policy] = [r for r in results if r["load"] == load and
                                r["large_share"] == share and r["budget"] == budget and
                                r["policy"] == policy]
            gw, ts = cell["gangway"], cell["time-slice"]
            ours = [r["goodput"] for r in sorted(gw, key=lambda r: r["seed"])]
            theirs = [r["goodput"] for r in sorted(ts, key=lambda r: r["seed"])]
            ahead = sum(g >= t for g, t in zip(ours, theirs))
            margin = mean(gw, "goodput") / mean(ts, "goodput") - 1
            low, high = gx.paired_interval(ours, theirs)
            table.append([f"{load:.2f}", f"{share:.2f}", budget,
                          f"{mean(gw, 'goodput'):.1f}", f"{mean(ts, 'goodput'):.1f}",
                          f"{100 * margin:+.2f}%", f"{100 * low:+.2f}% .. {100 * high:+.2f}%",
                          f"{ahead} of {len(gw)}",
                          f"{mean(gw, 'lm_interactive_goodput'):.2f}",
                          f"{mean(ts, 'lm_interactive_goodput'):.2f}",
                          f"{mean(gw, 'sm_goodput'):.1f}", f"{mean(gw, 'lm_goodput'):.2f}",
                          f"{100 * mean(gw, 'lm_busy_fraction'):.1f}%"])
    lines += [gx.markdown_table(
        ["load", "LM share", "LM budget", "gangway goodput", "time-slice goodput", "margin",
         "95 % interval", "gangway ahead", "gangway LM interactive", "time-slice LM interactive",
         "gangway SM goodput", "gangway LM goodput", "gangway LM busy"], table), ""]
    lines += ["## Large-model phases at 1.0 / 0.5, seed 1", "",
              "From the GPU schedule (`gangway simulate --timeline`): phases of large-model "
              "iterations, the small models' phases between them (p10 / p50 / p90), iterations "
              "per phase, the share of large-model iterations that carry prefill chunks, and the "
              "mean length of those and of decode-only ones.", ""]
    rows = []
    for budget in budgets:
        for policy in POLICIES:
            p = phases[budget][policy]
            rows.append([budget, policy, p["phases"], f"{p['phase_ms_mean']:.1f}",
                         f"{p['gap_ms_p10']:.0f} / {p['gap_ms_p50']:.0f} / {p['gap_ms_p90']:.0f}",
                         f"{p['iterations_per_phase']:.2f}",
                         f"{100 * p['prefill_iteration_fraction']:.1f}%",
                         f"{p['prefill_iteration_ms']:.1f}", f"{p['decode_only_iteration_ms']:.1f}"])
    lines += [gx.markdown_table(
        ["LM budget", "policy", "LM phases", "LM phase, ms", "SM phase, ms",
         "LM iterations per phase", "with prefill", "prefill iteration, ms",
         "decode-only iteration, ms"], rows), ""]
    with open(os.path.join(out_dir, "lm-token-budget.md"), "w") as f:
        f.write("\n".join(lines))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true",
                        help="one point, two budgets, two seeds, short windows")
    parser.add_argument("--out", default=os.path.join(gx.ROOT, "docs", "results"),
                        help="where the report goes (default: docs/results)")
    args = parser.parse_args()
    base = gx.load_scenario("examples/peak-mixed.yaml")
    if args.quick:
        base["warmup_s"], base["duration_s"], base["drain_s"] = 3, 13, 20
        points, budgets, seeds = [(1.0, 0.5)], [512, 256], [1, 2]
    else:
        base["warmup_s"], base["duration_s"], base["drain_s"] = 5, 65, 60
        points, budgets, seeds = POINTS, BUDGETS, SEEDS
    jobs = [(base, point, budget, seed) for point in points for budget in budgets
            for seed in seeds]
    started = time.time()
    with ThreadPoolExecutor(max(1, os.cpu_count() or 1)) as pool:
        results = [row for rows in pool.map(run_one, jobs) for row in rows]
    phases = {budget: phase_structure(base, budget) for budget in budgets}
    wall_s = time.time() - started
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "lm-token-budget.json"), "w") as f:
        json.dump({"runs": results, "phases": phases}, f, indent=1)
    write_report(results, phases, args.out, wall_s, base, points, budgets, seeds)


if __name__ == "__main__":
    main()
