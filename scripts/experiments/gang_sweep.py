#!/usr/bin/python3
"""Gang-scheduling experiment: every policy on the same arrivals while the large
model's share of the offered load goes from 0 to 100 % and the total load from 50 % to 110 % of
the node's capacity (capacities from docs/capacity.md). Request shapes and SLO classes are those
of examples/peak-mixed.yaml.

Two more parts on the same binary: backfill (easy-backfill, gangway-exclusive) with the
output-length predictor against an oracle that reads the true lengths
(scheduler.oracle_output_lengths), and a replay of the Azure conversation trace mapped to both
tiers (examples/azure-conv-replay.yaml) at rate scales around the node's capacity.

    make release     # or any Release build; GANGWAY=/path/to/gangway picks the binary
    /usr/bin/python3 scripts/experiments/gang_sweep.py [--quick] [--out DIR]
        [--only sweep|steady|oracle|weights|azure]

Writes docs/results/gang-sweep.{md,json}, gang-sweep-seeds.json (the mixed points on more
seeds) and gang-sweep-goodput.png, gang-steady.{md,json} (the points at and above capacity over
longer windows), gang-oracle.{md,json}, gang-weights.{md,json} (the arbiter's
weights at one mixed point), gang-azure.{md,json}.

Longer than most scripts because it is one experiment: its five parts share the scenarios, the
row summaries and the table helpers, and each report page's text sits beside the runs it
describes.
"""

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(__file__))
import gangway_experiments as gx  # noqa: E402

SMALL_CAPACITY = 1527.0
LARGE_CAPACITY = 103.3
POLICIES = ["gangway-lease", "gangway-exclusive", "fcfs", "sm-first", "lm-first", "time-slice",
            "easy-backfill"]


def mix_scenario(base, load, large_share):
    """The peak scenario's streams with rates for `load` (fraction of capacity) of which
    `large_share` comes from the large model."""
    small_rate = load * (1 - large_share) * SMALL_CAPACITY
    large_rate = load * large_share * LARGE_CAPACITY
    small_streams = {"sm-interactive": 0.6, "sm-standard": 0.3, "sm-batch": 0.1}
    large_streams = {"lm-interactive": 0.4, "lm-standard": 0.4, "lm-batch": 0.2}
    rates = {name: small_rate * f for name, f in small_streams.items()}
    rates.update({name: large_rate * f for name, f in large_streams.items()})
    scenario = gx.scaled(base, rates)
    return scenario


def summarize(run):
    models = run["models"]
    small = models.get("llama-3-8b", {})
    large = models.get("llama-3-70b", {})
    node = run["node"]

    def q(stats, group, key):
        return stats.get(group, {}).get(key) if stats and stats.get("arrived") else None

    prediction = run.get("prediction", {})
    accuracy = prediction.get("models", {})
    backfill = prediction.get("backfill", {})
    return {
        "goodput": run["total"]["goodput_rps"],
        "sm_goodput": small.get("goodput_rps") if small.get("arrived") else None,
        "lm_goodput": large.get("goodput_rps") if large.get("arrived") else None,
        "slo": run["total"]["slo_attainment"],
        "sm_slo": small.get("slo_attainment") if small.get("arrived") else None,
        "lm_slo": large.get("slo_attainment") if large.get("arrived") else None,
        "lm_queue_p50": q(large, "queue_ms", "p50"),
        "lm_queue_p99": q(large, "queue_ms", "p99"),
        "lm_queue_max": q(large, "queue_ms", "max"),
        "sm_queue_max": q(small, "queue_ms", "max"),
        "sm_ttft_p99": q(small, "ttft_ms", "p99"),
        "utilization": node["gpu_utilization"],
        "barrier": node["gang_barrier_fraction"],
        "idle_waiting": node["idle_while_waiting_fraction"],
        "sm_pred_mae_tokens": accuracy.get("llama-3-8b", {}).get("mean_abs_error_tokens"),
        "sm_pred_rel_error": accuracy.get("llama-3-8b", {}).get("relative_error"),
        "sm_pred_mae_s": accuracy.get("llama-3-8b", {}).get("mean_abs_error_s"),
        "lm_pred_mae_tokens": accuracy.get("llama-3-70b", {}).get("mean_abs_error_tokens"),
        "lm_pred_rel_error": accuracy.get("llama-3-70b", {}).get("relative_error"),
        "lm_pred_mae_s": accuracy.get("llama-3-70b", {}).get("mean_abs_error_s"),
        "reservations": backfill.get("reservations"),
        "overruns": backfill.get("overruns"),
        "overrun_fraction": backfill.get("overrun_fraction"),
        "mean_overrun_ms": backfill.get("mean_overrun_ms"),
        "max_overrun_ms": backfill.get("max_overrun_ms"),
        "mean_early_ms": backfill.get("mean_early_ms"),
        "wall_s": run["sim"]["wall_s"],
    }


def policy_name(run):
    return run["policy"] if run["policy"] != "gangway" else "gangway-" + run["mode"]


def run_sweep(base, loads, shares):
    results = []
    for load in loads:
        for share in shares:
            document = gx.simulate(mix_scenario(base, load, share), POLICIES)
            for run in document["runs"]:
                row = {"load": load, "large_share": share, "policy": policy_name(run),
                       "seed": base["seed"]}
                row.update(summarize(run))
                results.append(row)
                print(json.dumps(row), flush=True)
    return results


ORACLE_POLICIES = ["easy-backfill", "gangway-exclusive"]


def run_oracle(base, points):
    """Backfill with the predictor against backfill with perfect knowledge of output lengths
    (scheduler.oracle_output_lengths), same arrivals."""
    results = []
    for load, share in points:
        for oracle in (False, True):
            scenario = mix_scenario(base, load, share)
            scenario.setdefault("scheduler", {})["oracle_output_lengths"] = oracle
            document = gx.simulate(scenario, ORACLE_POLICIES)
            for run in document["runs"]:
                row = {"load": load, "large_share": share, "policy": policy_name(run),
                       "lengths": "oracle" if oracle else "predicted"}
                row.update(summarize(run))
                results.append(row)
                print(json.dumps(row), flush=True)
    return results


WEIGHT_POINT = (0.85, 0.5)
WEIGHTS = [0.5, 1, 3, 6, 20]


def run_weights(base, weights):
    """gangway in both modes at one mixed point with the large model's arbiter weight varied
    (the small models' stays 6): how the configured weights split the node under contention."""
    results = []
    load, share = WEIGHT_POINT
    for weight in weights:
        scenario = mix_scenario(base, load, share)
        scenario["policy"] = dict(scenario.get("policy", {}), large_weight=weight)
        document = gx.simulate(scenario, ["gangway-lease", "gangway-exclusive"])
        for run in document["runs"]:
            row = {"load": load, "large_share": share, "policy": policy_name(run),
                   "large_weight": weight}
            row.update(summarize(run))
            results.append(row)
            print(json.dumps(row), flush=True)
    return results


# Sustained overload: at and above capacity the backlog, and with it what admission turns away,
# goes on growing for minutes, so a 60 s window measures the start of a transient (at 1.0 / 0.5
# the policies' rejections are alike in the first minute and twice as high for time-slice after
# five). The overloaded mixed points run again with STEADY_WINDOW_S measured, and one of them
# (WINDOW_POINT) with windows of each length in WINDOWS_S under gangway-lease and its closest
# baseline there.
STEADY_LOADS = [1.0, 1.1]
STEADY_WINDOW_S = 300
WINDOW_POINT = (1.0, 0.5)
WINDOWS_S = [60, 120, 300, 600]
WINDOW_POLICIES = ["gangway-lease", "time-slice"]


def with_window(base, window_s):
    """`base` measured for `window_s` after its warm-up."""
    return dict(base, duration_s=base["warmup_s"] + window_s)


def steady_job(job):
    """One (point, seed, window, policies) run of the sustained-overload part: its rows."""
    (load, share), seed, window_s, policies, base = job
    scenario = mix_scenario(with_window(dict(base, seed=seed), window_s), load, share)
    document = gx.simulate(scenario, policies)
    rows = []
    for run in document["runs"]:
        row = {"load": load, "large_share": share, "policy": policy_name(run), "seed": seed,
               "window_s": window_s,
               "rejected_fraction": run["total"]["rejected"] / max(1, run["total"]["arrived"]),
               "drain_s": run["sim"]["simulated_s"] - base["warmup_s"] - window_s,
               "sm_queue_p99": run["models"]["llama-3-8b"]["queue_ms"]["p99"]}
        row.update(summarize(run))
        rows.append(row)
    return rows


def run_steady(base, points, seeds, window_s, windows_s, workers):
    """Every policy at `points` on `seeds` with `window_s` measured, then WINDOW_POLICIES at
    WINDOW_POINT with each other window length in `windows_s`. Runs `workers` simulations at
    once; the rows come back in job order, so the output does not depend on scheduling."""
    jobs = [(point, seed, window_s, POLICIES, base) for point in points for seed in seeds]
    jobs += [(WINDOW_POINT, seed, window, WINDOW_POLICIES, base)
             for window in windows_s if window != window_s for seed in seeds]
    with ThreadPoolExecutor(max(1, workers)) as pool:
        results = [row for rows in pool.map(steady_job, jobs) for row in rows]
    for row in results:
        print(json.dumps(row), flush=True)
    return results


AZURE_TRACE = "data/traces/AzureLLMInferenceTrace_conv.csv"


def azure_scenario(base, rate_scale, window_s, warmup_s):
    """examples/azure-conv-replay.yaml's mapping (one row in ten with a prompt of >= 1,000
    tokens to the large model, the rest to the small one), with the trace compressed by
    `rate_scale` and replayed for `window_s` simulated seconds."""
    scenario = dict(base)
    scenario["warmup_s"] = warmup_s
    scenario["duration_s"] = window_s
    trace = dict(scenario["workload"]["trace"])
    trace["path"] = AZURE_TRACE  # relative to the repository root (the simulator's cwd)
    trace["rate_scale"] = rate_scale
    trace["start_s"] = 0
    trace["end_s"] = window_s * rate_scale
    scenario["workload"] = {"trace": trace}
    return scenario


def run_azure(base, scales, window_s, warmup_s, drain_s):
    results = []
    for scale in scales:
        scenario = azure_scenario(base, scale, window_s, warmup_s)
        scenario["drain_s"] = drain_s
        document = gx.simulate(scenario, POLICIES)
        for run in document["runs"]:
            row = {"rate_scale": scale, "policy": policy_name(run),
                   "offered_rps": run["total"]["arrived"] / run["sim"]["measured_s"],
                   "lm_offered_rps": run["models"]["llama-3-70b"]["arrived"]
                   / run["sim"]["measured_s"]}
            row.update(summarize(run))
            results.append(row)
            print(json.dumps(row), flush=True)
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer points, shorter windows")
    parser.add_argument("--only", choices=["sweep", "steady", "oracle", "weights", "azure"],
                        action="append", help="run only these parts (repeatable; default: all)")
    parser.add_argument("--out", default=os.path.join(gx.ROOT, "docs", "results"),
                        help="where the reports go (default: docs/results)")
    args = parser.parse_args()
    parts = args.only or ["sweep", "steady", "oracle", "weights", "azure"]
    base = gx.load_scenario("examples/peak-mixed.yaml")
    azure_base = gx.load_scenario("examples/azure-conv-replay.yaml")
    if args.quick:
        base["warmup_s"], base["duration_s"], base["drain_s"] = 3, 13, 20
        loads, shares = [0.85, 1.0], [0.0, 0.5, 1.0]
        oracle_points = [(0.85, 0.25)]
        weights = [1, 6]
        azure_scales, azure_window, azure_warmup = [100], 16, 4
        extra_seeds = [1]
        steady_seeds, steady_window, windows = [1, 2], 30, [10, 30]
    else:
        base["warmup_s"], base["duration_s"], base["drain_s"] = 5, 65, 60
        loads, shares = [0.5, 0.7, 0.85, 1.0, 1.1], [0.0, 0.25, 0.5, 0.75, 1.0]
        oracle_points = [(load, share) for load in [0.7, 0.85, 1.0] for share in [0.25, 0.5, 0.75]]
        weights = WEIGHTS
        # The trace's mean rate is 5.5 req/s; the node saturates between scale 24 and 40
        # (about 120-200 req/s of these long conversation requests).
        azure_scales, azure_window, azure_warmup = [8, 16, 24, 32, 40], 120, 10
        # Ten more seeds: at the points where gangway and time-slice are within a few tenths of a
        # percent of each other, five seeds in all were not enough to tell which is ahead.
        extra_seeds = list(range(1, 11))
        steady_seeds = extra_seeds + [base["seed"]]
        steady_window, windows = STEADY_WINDOW_S, WINDOWS_S
    out_dir = args.out
    os.makedirs(out_dir, exist_ok=True)
    settings = {"peak_warmup_s": base["warmup_s"], "peak_duration_s": base["duration_s"],
                "peak_drain_s": base["drain_s"], "seed": base["seed"],
                "azure_window_s": azure_window, "azure_warmup_s": azure_warmup,
                "azure_seed": azure_base["seed"]}
    if "sweep" in parts:
        started = time.time()
        results = run_sweep(base, loads, shares)
        settings["sweep_wall_s"] = time.time() - started
        # The same sweep on more seeds, at the points where both tiers have traffic: one seed's
        # margins of a percent or two between the policies that serve both tiers are within the
        # spread between seeds.
        started = time.time()
        seed_results = []
        mixed = [share for share in shares if 0 < share < 1]
        for seed in extra_seeds:
            seeded = dict(base, seed=seed)
            seed_results += run_sweep(seeded, loads, mixed)
        settings["seeds_wall_s"] = time.time() - started
        with open(os.path.join(out_dir, "gang-sweep-seeds.json"), "w") as f:
            json.dump(seed_results, f, indent=1)
        with open(os.path.join(out_dir, "gang-sweep.json"), "w") as f:
            json.dump(results, f, indent=1)
        write_report(results, loads, shares, out_dir, settings, seed_results)
    if "steady" in parts:
        steady_points = [(load, share) for load in loads if load in STEADY_LOADS
                         for share in shares if 0 < share < 1]
        settings.update(steady_window_s=steady_window, steady_seeds=steady_seeds)
        run_part(settings, "steady", out_dir,
                 lambda: run_steady(base, steady_points, steady_seeds, steady_window, windows,
                                    os.cpu_count() or 1),
                 lambda r: write_steady_report(r, steady_points, out_dir, settings))
    if "oracle" in parts:
        run_part(settings, "oracle", out_dir, lambda: run_oracle(base, oracle_points),
                 lambda r: write_oracle_report(r, out_dir, settings))
    if "weights" in parts:
        run_part(settings, "weights", out_dir, lambda: run_weights(base, weights),
                 lambda r: write_weights_report(r, out_dir, settings))
    if "azure" in parts:
        run_part(settings, "azure", out_dir,
                 lambda: run_azure(azure_base, azure_scales, azure_window, azure_warmup, 60),
                 lambda r: write_azure_report(r, azure_scales, out_dir, settings))


def run_part(settings, name, out_dir, run, write):
    """Runs one part, records its wall time as settings[name + "_wall_s"], writes its JSON
    (gang-NAME.json) and then its report."""
    started = time.time()
    results = run()
    settings[name + "_wall_s"] = time.time() - started
    with open(os.path.join(out_dir, f"gang-{name}.json"), "w") as f:
        json.dump(results, f, indent=1)
    write(results)

def fmt(value, digits=1, percent=False):
    if value is None:
        return "-"
    return f"{100 * value:.{digits}f}%" if percent else f"{value:.{digits}f}"


def row_for(results, policy, **where):
    return next(r for r in results if r["policy"] == policy
                and all(r[k] == v for k, v in where.items()))


def policy_table(results, points, lead, cell):
    """A table with a row per point and a column per policy: each point is the fields that pick
    its rows (row_for), lead(point) its first cells, then cell(row, policy) for every policy."""
    return [lead(point) + [cell(row_for(results, policy, **point), policy) for policy in POLICIES]
            for point in points]


def sweep_points(loads, shares):
    return [{"load": load, "large_share": share} for load in loads for share in shares]


def sweep_lead(point):
    return [f"{point['load']:.2f}", f"{point['large_share']:.2f}"]


BASELINES = ["fcfs", "sm-first", "lm-first", "time-slice", "easy-backfill"]
# Exclusive-mode baselines that serve both tiers (sm-first starves the LM, time-slice is
# iteration-level): gangway-exclusive is also compared with the best of these.
EXCLUSIVE_BASELINES = ["fcfs", "lm-first", "easy-backfill"]


def write_report(results, loads, shares, out_dir, settings, seed_results):
    lines = ["# Gang-scheduling sweep", "",
             "Generated by `scripts/experiments/gang_sweep.py`; do not edit by hand. Every policy "
             f"runs on the same arrivals (seed {settings['seed']}) for each point: "
             f"{settings['peak_duration_s'] - settings['peak_warmup_s']} s measured after a "
             f"{settings['peak_warmup_s']} s warm-up, then up to {settings['peak_drain_s']} s of "
             "drain. Load is a fraction of capacity "
             f"(SM {SMALL_CAPACITY:.0f} req/s, LM {LARGE_CAPACITY:.0f} req/s alone; "
             "docs/capacity.md); LM share is the large model's part of that load. "
             f"This part took {settings['sweep_wall_s']:.0f} s of wall time.", ""]
    best = {}
    for load in loads:
        for share in shares:
            rows = [r for r in results if r["load"] == load and r["large_share"] == share]
            top = max(rows, key=lambda r: r["goodput"])
            best[(load, share)] = top["policy"]
    lines += ["## Goodput (requests meeting their SLO per second), best in bold", ""]
    header = ["load", "LM share"] + POLICIES
    points = sweep_points(loads, shares)

    def goodput_cell(r, policy):
        text = fmt(r["goodput"])
        return f"**{text}**" if best[(r["load"], r["large_share"])] == policy else text
    table = policy_table(results, points, sweep_lead, goodput_cell)
    lines += [gx.markdown_table(header, table), ""]

    lines += ["## gangway against the best baseline at each point", "",
              "Margin = gangway's goodput / the best baseline's - 1 (positive: gangway ahead). "
              "`gangway-exclusive` is also compared with the best exclusive-mode baseline that "
              "serves both tiers (`fcfs`, `lm-first`, `easy-backfill`).", ""]
    table = []
    wins = 0
    for load in loads:
        for share in shares:
            lease = row_for(results, "gangway-lease", load=load, large_share=share)
            excl = row_for(results, "gangway-exclusive", load=load, large_share=share)
            base = max((row_for(results, p, load=load, large_share=share) for p in BASELINES),
                       key=lambda r: r["goodput"])
            ex_base = max((row_for(results, p, load=load, large_share=share)
                           for p in EXCLUSIVE_BASELINES),
                          key=lambda r: r["goodput"])
            margin = lease["goodput"] / base["goodput"] - 1 if base["goodput"] > 0 else None
            ex_margin = (excl["goodput"] / ex_base["goodput"] - 1
                         if ex_base["goodput"] > 0 else None)
            wins += 1 if lease["goodput"] >= base["goodput"] else 0
            table.append([f"{load:.2f}", f"{share:.2f}", fmt(lease["goodput"]),
                          f"{base['policy']} {fmt(base['goodput'])}",
                          fmt(margin, 1, True), fmt(excl["goodput"]),
                          f"{ex_base['policy']} {fmt(ex_base['goodput'])}",
                          fmt(ex_margin, 1, True)])
    lines += [gx.markdown_table(["load", "LM share", "gangway-lease", "best baseline",
                                 "margin", "gangway-exclusive", "best exclusive baseline",
                                 "margin"], table), "",
              f"`gangway-lease` has the highest goodput (or ties) at {wins} of "
              f"{len(loads) * len(shares)} points.", ""]
    lines += seeds_section(results + seed_results, loads, shares, settings)

    lines += ["## Starvation: longest queueing delay of each tier (ms)", "",
              "The worst wait of any measured request; `-` where the tier had no traffic.", ""]
    table = policy_table(
        results, points, sweep_lead,
        lambda r, _: f"{fmt(r['lm_queue_max'], 0)} / {fmt(r['sm_queue_max'], 0)}")
    lines += ["LM max / SM max:", "", gx.markdown_table(header, table), ""]

    for metric, title, percent in [
            ("slo", "SLO attainment (all requests)", True),
            ("sm_goodput", "SM goodput (req/s)", False),
            ("lm_goodput", "LM goodput (req/s)", False),
            ("lm_queue_p50", "LM queueing delay p50 (ms)", False),
            ("lm_queue_p99", "LM queueing delay p99 (ms)", False),
            ("lm_queue_max", "LM queueing delay max (ms)", False),
            ("sm_ttft_p99", "SM TTFT p99 (ms)", False),
            ("utilization", "GPU utilisation", True),
            ("barrier", "Gang-barrier fraction of GPU time", True),
            ("idle_waiting", "Idle-while-waiting fraction of GPU time", True)]:
        lines += [f"## {title}", ""]
        table = policy_table(results, points, sweep_lead,
                             lambda r, _: fmt(r[metric], 1 if not percent else 2, percent))
        lines += [gx.markdown_table(header, table), ""]
    lines += ["## Gang barrier plus idle-while-waiting (target: under 3 % at load 0.85)", ""]
    table = policy_table(results, points, sweep_lead,
                         lambda r, _: fmt(r["barrier"] + r["idle_waiting"], 2, True))
    lines += [gx.markdown_table(header, table), ""]
    with open(os.path.join(out_dir, "gang-sweep.md"), "w") as f:
        f.write("\n".join(lines))
    plot(results, loads, shares, out_dir)


def seeds_section(results, loads, shares, settings):
    """gangway-lease against the best baseline over every seed run, at the mixed points."""
    seeds = sorted({r["seed"] for r in results})
    points = [(load, share) for load in loads for share in shares if 0 < share < 1]
    table, wins, undecided = margins_over_seeds(results, points, seeds)
    lines = [f"## Over {len(seeds)} seeds", "",
             f"The points where both tiers have traffic, on seeds {', '.join(map(str, seeds))} "
             f"(the extra seeds took {settings['seeds_wall_s']:.0f} s). " + MARGINS_LEGEND, "",
             gx.markdown_table(MARGINS_TABLE_HEADER, table), "",
             f"On the means `gangway-lease` leads or ties at {wins} of {len(points)} mixed points. "
             f"The interval contains 0 at {len(undecided)} "
             f"({', '.join(undecided) if undecided else 'none'}): there the seeds cannot tell "
             "the two apart.", ""]
    return lines


MARGINS_LEGEND = (
    "Mean goodput over the seeds; the best baseline is the one with the highest mean; margin on "
    "the means; ahead = seeds on which gangway-lease has at least that baseline's goodput; spread "
    "= lowest and highest margin on one seed; 95 % interval = of the mean per-seed difference "
    "(paired: a seed gives both policies the same arrivals), relative to the baseline's mean.")
MARGINS_TABLE_HEADER = ["load", "LM share", "gangway-lease", "best baseline", "margin", "ahead",
                        "spread", "95 % interval"]


def margins_over_seeds(results, points, seeds):
    """gangway-lease against the baseline with the best mean goodput at each (load, share) point
    of `results` (rows with a seed each): the table's rows, how many points it leads or ties on
    the means, and the points whose paired 95 % interval contains 0."""
    table = []
    wins = 0
    undecided = []
    for load, share in points:
        by_policy = {}
        for r in results:
            if r["load"] == load and r["large_share"] == share:
                by_policy.setdefault(r["policy"], {})[r["seed"]] = r["goodput"]
        mean = {p: sum(v.values()) / len(v) for p, v in by_policy.items()}
        base = max(BASELINES, key=lambda p: mean[p])
        lease = by_policy["gangway-lease"]
        margins = [lease[s] / by_policy[base][s] - 1 for s in seeds if by_policy[base][s] > 0]
        ahead = sum(lease[s] >= by_policy[base][s] for s in seeds)
        margin = mean["gangway-lease"] / mean[base] - 1
        wins += 1 if margin >= 0 else 0
        low, high = gx.paired_interval([lease[s] for s in seeds],
                                       [by_policy[base][s] for s in seeds])
        if low < 0 < high:
            undecided.append(f"{load:.2f} / {share:.2f}")
        table.append([f"{load:.2f}", f"{share:.2f}", fmt(mean["gangway-lease"]),
                      f"{base} {fmt(mean[base])}", fmt(margin, 1, True),
                      f"{ahead} of {len(seeds)}",
                      f"{fmt(min(margins), 1, True)} .. {fmt(max(margins), 1, True)}",
                      f"{fmt(low, 2, True)} .. {fmt(high, 2, True)}"])
    return table, wins, undecided


def write_steady_report(results, points, out_dir, settings):
    window_s = settings["steady_window_s"]
    seeds = settings["steady_seeds"]
    steady = [r for r in results if r["window_s"] == window_s]
    lines = ["# Sustained overload: the points at and above capacity over longer windows", "",
             "Generated by `scripts/experiments/gang_sweep.py`; do not edit by hand. At and above "
             "the node's capacity no queue settles within a minute: a policy whose split does not "
             "follow demand lets one tier's backlog grow, and the backlog, with what admission "
             "turns away, goes on growing for minutes (the window-length table below): a 60 s "
             "window measures the start of that transient. "
             f"Here the sweep's mixed points at load {', '.join(f'{x:.1f}' for x in STEADY_LOADS)} "
             f"run again with {window_s} s measured (after a {settings['peak_warmup_s']} s "
             f"warm-up, up to {settings['peak_drain_s']} s of drain), every policy on the same "
             f"arrivals, seeds {', '.join(map(str, seeds))}. This part took "
             f"{settings['steady_wall_s']:.0f} s.", "",
             f"## gangway-lease against the best baseline, {window_s} s windows", "",
             MARGINS_LEGEND, ""]
    table, wins, undecided = margins_over_seeds(steady, points, seeds)
    lines += [gx.markdown_table(MARGINS_TABLE_HEADER, table), "",
              f"On the means `gangway-lease` leads or ties at {wins} of {len(points)} points. "
              f"The interval contains 0 at {len(undecided)} "
              f"({', '.join(undecided) if undecided else 'none'}).", "",
              "## gangway-exclusive against the exclusive-mode baselines", "",
              "Mean goodput over the seeds against the best of `fcfs`, `lm-first` and "
              "`easy-backfill` (the exclusive-mode baselines that serve both tiers).", ""]
    table = []
    for load, share in points:
        mean = {}
        for policy in ["gangway-exclusive"] + EXCLUSIVE_BASELINES:
            goodputs = [r["goodput"] for r in steady if r["policy"] == policy
                        and r["load"] == load and r["large_share"] == share]
            mean[policy] = sum(goodputs) / len(goodputs)
        base = max(EXCLUSIVE_BASELINES, key=lambda p: mean[p])
        ratio = mean["gangway-exclusive"] / mean[base] if mean[base] > 0 else None
        table.append([f"{load:.2f}", f"{share:.2f}", fmt(mean["gangway-exclusive"]),
                      f"{base} {fmt(mean[base])}", f"{fmt(ratio)}x"])
    lines += [gx.markdown_table(["load", "LM share", "gangway-exclusive",
                                 "best exclusive baseline", "ratio"], table), "",
              "## Arrivals turned away by admission (mean over the seeds)", ""]
    table = []
    for load, share in points:
        cells = [f"{load:.2f}", f"{share:.2f}"]
        for policy in POLICIES:
            rows = [r for r in steady if r["policy"] == policy and r["load"] == load
                    and r["large_share"] == share]
            cells.append(fmt(sum(r["rejected_fraction"] for r in rows) / len(rows), 2, True))
        table.append(cells)
    lines += [gx.markdown_table(["load", "LM share"] + POLICIES, table), ""]
    load, share = WINDOW_POINT
    lines += [f"## Window length at {load:.2f} / {share:.2f}", "",
              "The same point measured over windows of each length (seconds after the warm-up), "
              f"{' and '.join(WINDOW_POLICIES)}, mean over the seeds; margin and ahead as above; "
              "drain = how long the run went on after the window to finish the work admitted in "
              "it; SM queue p99 over all classes.", ""]
    table = []
    for window in sorted({r["window_s"] for r in results}):
        rows = [r for r in results if r["window_s"] == window and r["load"] == load
                and r["large_share"] == share]
        mean = {}
        for policy in WINDOW_POLICIES:
            mine = [r for r in rows if r["policy"] == policy]
            mean[policy] = {key: sum(r[key] for r in mine) / len(mine)
                            for key in ("goodput", "rejected_fraction", "drain_s",
                                        "sm_queue_p99")}
        ours, theirs = (by_seed(rows, policy) for policy in WINDOW_POLICIES)
        low, high = gx.paired_interval([ours[s] for s in seeds], [theirs[s] for s in seeds])
        cells = [str(window)]
        for policy in WINDOW_POLICIES:
            m = mean[policy]
            cells += [fmt(m["goodput"]), fmt(m["rejected_fraction"], 2, True),
                      fmt(m["drain_s"], 2), fmt(m["sm_queue_p99"], 0)]
        first, second = (mean[p]["goodput"] for p in WINDOW_POLICIES)
        cells += [fmt(first / second - 1, 2, True),
                  f"{sum(ours[s] >= theirs[s] for s in seeds)} of {len(seeds)}",
                  f"{fmt(low, 2, True)} .. {fmt(high, 2, True)}"]
        table.append(cells)
    header = ["window s"]
    for policy in WINDOW_POLICIES:
        header += [f"{policy} goodput", "rejected", "drain s", "SM queue p99 ms"]
    lines += [gx.markdown_table(header + ["margin", "ahead", "95 % interval"], table), ""]
    with open(os.path.join(out_dir, "gang-steady.md"), "w") as f:
        f.write("\n".join(lines))


def by_seed(rows, policy):
    return {r["seed"]: r["goodput"] for r in rows if r["policy"] == policy}


def write_oracle_report(results, out_dir, settings):
    lines = ["# Backfill with the output-length predictor against perfect knowledge", "",
             "Generated by `scripts/experiments/gang_sweep.py`; do not edit by hand. The same "
             "arrivals (examples/peak-mixed.yaml shapes, seed "
             f"{settings['seed']}, {settings['peak_duration_s'] - settings['peak_warmup_s']} s "
             "measured) run with output lengths predicted online and with "
             "`scheduler.oracle_output_lengths: true` (the predictor reads the true lengths). "
             "Overruns: gang phases that started after the reservation (the shadow time "
             "predicted when the gang was wanted); early: how much sooner than reserved the "
             f"others started. This part took {settings['oracle_wall_s']:.0f} s.", ""]
    header = ["load", "LM share", "policy", "lengths", "goodput", "SM goodput", "LM goodput",
              "LM queue p50 ms", "LM queue p99 ms", "reservations", "overruns",
              "mean overrun ms", "mean early ms", "SM pred. MAE tokens", "SM pred. MAE s"]
    table = []
    for r in results:
        table.append([f"{r['load']:.2f}", f"{r['large_share']:.2f}", r["policy"], r["lengths"],
                      fmt(r["goodput"]), fmt(r["sm_goodput"]), fmt(r["lm_goodput"]),
                      fmt(r["lm_queue_p50"]), fmt(r["lm_queue_p99"]), r["reservations"],
                      f"{r['overruns']} ({fmt(r['overrun_fraction'], 0, True)})",
                      fmt(r["mean_overrun_ms"]), fmt(r["mean_early_ms"]),
                      fmt(r["sm_pred_mae_tokens"]), fmt(r["sm_pred_mae_s"], 3)])
    lines += [gx.markdown_table(header, table), "", "## Margin of the predictor", "",
              "Goodput with the predictor / goodput with the oracle - 1, and the change in LM "
              "queueing p99.", ""]
    table = []
    for r in results:
        if r["lengths"] != "predicted":
            continue
        o = next(x for x in results if x["lengths"] == "oracle" and x["policy"] == r["policy"]
                 and x["load"] == r["load"] and x["large_share"] == r["large_share"])
        table.append([f"{r['load']:.2f}", f"{r['large_share']:.2f}", r["policy"],
                      fmt(r["goodput"] / o["goodput"] - 1 if o["goodput"] else None, 1, True),
                      fmt(r["sm_goodput"] / o["sm_goodput"] - 1 if o["sm_goodput"] else None,
                          1, True),
                      f"{fmt(r['lm_queue_p99'])} vs {fmt(o['lm_queue_p99'])}"])
    lines += [gx.markdown_table(["load", "LM share", "policy", "goodput margin",
                                 "SM goodput margin", "LM queue p99 ms (pred. vs oracle)"],
                                table), ""]
    with open(os.path.join(out_dir, "gang-oracle.md"), "w") as f:
        f.write("\n".join(lines))


def write_weights_report(results, out_dir, settings):
    load, share = WEIGHT_POINT
    lines = ["# The arbiter's weights", "",
             "Generated by `scripts/experiments/gang_sweep.py`; do not edit by hand. gangway in "
             f"both modes at load {load:.2f} / LM share {share:.2f} (examples/peak-mixed.yaml "
             f"shapes, seed {settings['seed']}, "
             f"{settings['peak_duration_s'] - settings['peak_warmup_s']} s measured) with "
             "`large_weight` varied and `small_weight` at its default of 6: under contention the "
             "LM gets large_weight / (large_weight + 6) of the node's GPU-time. This part took "
             f"{settings['weights_wall_s']:.0f} s.", ""]
    header = ["policy", "large_weight", "goodput", "SM goodput", "LM goodput", "SM SLO",
              "LM SLO", "LM queue p99 ms", "LM queue max ms"]
    table = []
    for r in sorted(results, key=lambda r: (r["policy"], r["large_weight"])):
        table.append([r["policy"], f"{r['large_weight']:g}", fmt(r["goodput"]),
                      fmt(r["sm_goodput"]), fmt(r["lm_goodput"]), fmt(r["sm_slo"], 1, True),
                      fmt(r["lm_slo"], 1, True), fmt(r["lm_queue_p99"]),
                      fmt(r["lm_queue_max"])])
    lines += [gx.markdown_table(header, table), ""]
    with open(os.path.join(out_dir, "gang-weights.md"), "w") as f:
        f.write("\n".join(lines))


def write_azure_report(results, scales, out_dir, settings):
    lines = ["# Azure conversation trace replay", "",
             "Generated by `scripts/experiments/gang_sweep.py`; do not edit by hand. "
             "`data/traces/AzureLLMInferenceTrace_conv.csv` mapped as in "
             "examples/azure-conv-replay.yaml (one row in ten with a prompt of at least 1,000 "
             "tokens to llama-3-70b, class standard; every other row to llama-3-8b, class "
             "interactive), its timestamps compressed by `rate_scale`, replayed for "
             f"{settings['azure_window_s']} simulated s (the first {settings['azure_warmup_s']} s "
             "not measured), every policy on the same rows (mapping seed "
             f"{settings['azure_seed']}). This part took {settings['azure_wall_s']:.0f} s.", ""]
    header = ["rate scale", "offered req/s (LM)"] + POLICIES

    def scale_lead(point):
        first = next(r for r in results if r["rate_scale"] == point["rate_scale"])
        return [str(point["rate_scale"]),
                f"{first['offered_rps']:.0f} ({first['lm_offered_rps']:.1f})"]
    for metric, title, percent, digits in [
            ("goodput", "Goodput (req/s)", False, 1),
            ("slo", "SLO attainment", True, 1),
            ("lm_goodput", "LM goodput (req/s)", False, 2),
            ("lm_slo", "LM SLO attainment (rejected requests count as missed)", True, 1),
            ("lm_queue_p99", "LM queueing delay p99 (ms, admitted requests only)", False, 0),
            ("lm_queue_max", "LM queueing delay max (ms)", False, 0),
            ("sm_ttft_p99", "SM TTFT p99 (ms)", False, 0),
            ("utilization", "GPU utilisation", True, 1)]:
        lines += [f"## {title}", ""]
        table = policy_table(results, [{"rate_scale": scale} for scale in scales], scale_lead,
                             lambda r, _: fmt(r[metric], digits, percent))
        lines += [gx.markdown_table(header, table), ""]
    lines += ["## Output-length predictor on the trace", "",
              "Mean absolute error of the predicted output length (tokens, and relative to the "
              "mean length) and of the predicted remaining time (s) at first scheduling, per "
              "model, over the completed requests of each run.", ""]
    table = []
    for scale in scales:
        for policy in ["gangway-lease", "gangway-exclusive", "easy-backfill"]:
            r = row_for(results, policy, rate_scale=scale)
            table.append([str(scale), policy, fmt(r["sm_pred_mae_tokens"]),
                          fmt(r["sm_pred_rel_error"], 0, True), fmt(r["sm_pred_mae_s"], 3),
                          fmt(r["lm_pred_mae_tokens"]), fmt(r["lm_pred_rel_error"], 0, True),
                          fmt(r["lm_pred_mae_s"], 3)])
    lines += [gx.markdown_table(["rate scale", "policy", "SM MAE tokens", "SM relative",
                                 "SM MAE s", "LM MAE tokens", "LM relative", "LM MAE s"],
                                table), ""]
    with open(os.path.join(out_dir, "gang-azure.md"), "w") as f:
        f.write("\n".join(lines))


def plot(results, loads, shares, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(loads), figsize=(4 * len(loads), 3.6), sharey=False)
    if len(loads) == 1:
        axes = [axes]
    for ax, load in zip(axes, loads):
        for policy in POLICIES:
            ys = [next(r["goodput"] for r in results if r["load"] == load
                       and r["large_share"] == s and r["policy"] == policy) for s in shares]
            ax.plot(shares, ys, marker="o", label=policy)
        ax.set_title(f"load {load:.2f}")
        ax.set_xlabel("LM share of load")
    axes[0].set_ylabel("goodput (req/s meeting SLO)")
    axes[-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "gang-sweep-goodput.png"), dpi=110)


if __name__ == "__main__":
    main()
