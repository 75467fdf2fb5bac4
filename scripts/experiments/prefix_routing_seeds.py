#!/usr/bin/python3
"""Routing rules on prefix-heavy workloads over several seeds, paired (docs/kv-and-routing.md
reads it): is routing by predicted TTFT at or ahead of the best other rule on the small model's
mean and p99 TTFT at every point, or behind by more than the seeds' noise?

Points: the synthetic prefix groups and the warm-busy/cold-idle sweep at h = 0.8 and 0.95 of
scripts/experiments/kv_routing.py (admission off, as there), and the workload families' two
prefix-heavy members of scripts/experiments/families.py at 0.3, 1 and 3 times their capacity
(admission on, as in the family suite). Each point runs every rule on the same arrivals, seed by
seed; the difference predicted-ttft minus the other rule is paired by seed, with its 95 %
confidence interval.

    GANGWAY=build/release/src/cli/gangway /usr/bin/python3 \\
        scripts/experiments/prefix_routing_seeds.py [--quick] [--jobs N] [--out DIR]

Writes prefix-routing.md and prefix-routing.json to DIR (default: docs/results).
"""

import concurrent.futures
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import families  # noqa: E402
import gangway_experiments as gx  # noqa: E402
import kv_routing as kv  # noqa: E402

RULES = ["predicted-ttft", "sglang", "cache-only", "least-loaded"]
METRICS = [("ttft_mean", "TTFT mean (ms)"), ("ttft_p99", "TTFT p99 (ms)")]


def small_row(run_doc):
    stats = kv.model_stats(run_doc, kv.SMALL)
    cache = run_doc["kv"]["prefix_cache"]["models"].get(kv.SMALL, {})
    ttft = stats.get("ttft_ms", {})
    return {"ttft_mean": ttft.get("mean"), "ttft_p99": ttft.get("p99"),
            "hit_rate": cache.get("token_hit_rate"), "attainment": stats.get("slo_attainment")}


def run_point(job):
    """One point on one seed: every rule on the same arrivals."""
    kind, label, scenario = job
    extra = []
    for rule in RULES:
        extra += ["--routing", rule]
    if kind == "kv":
        document = kv.run(scenario, routings=RULES)
    else:
        document = gx.simulate(scenario, [], extra)
    return {run["routing"]: small_row(run) for run in document["runs"]}


def points(quick, capacities):
    """(kind, label, scenario maker taking a seed) for every point."""
    out = []
    groups_window = (5, 15, 60) if quick else (10, 40, 60)
    for load in ([0.8] if quick else [0.5, 0.8, 0.9]):
        rate = load * capacities["prefix-groups"]
        out.append(("kv", f"prefix groups, load {load:g}",
                    lambda seed, rate=rate: kv.prefix_groups_scenario(rate, groups_window)))
    sweep_window = (2, 8, 60) if quick else (3, 20, 120)
    for h in ([0.8] if quick else [0.8, 0.95]):
        for load in ([1.0] if quick else [0.5, 1.0, 1.25]):
            rate = load * capacities["h-sweep"]
            out.append(("kv", f"h = {h:g}, load {load:g}",
                        lambda seed, h=h, rate=rate: kv.h_sweep_scenario(h, rate, sweep_window)))
    family_window = (2, 6, 30) if quick else (4, 20, 30)
    for member in families.MEMBERS:
        if not member["prefix"] or (quick and member["name"] != "prefix-chat"):
            continue
        small_cap, large_cap = capacities[member["name"]]
        for load in ([1.0] if quick else [0.3, 1.0, 3.0]):
            share = member["lm_share"]
            rates = (load * (1 - share) * small_cap, load * share * large_cap)
            out.append(("family", f"{member['name']}, load {load:g}",
                        lambda seed, member=member, rates=rates: families.member_scenario(
                            member, rates, family_window, seed)))
    return out


def measure_capacities(quick):
    sweep_window = (2, 8, 60) if quick else (3, 20, 120)
    groups_window = (5, 15, 60) if quick else (10, 40, 60)

    def h_nocache(rate):
        scenario = kv.h_sweep_scenario(0.5, rate, sweep_window)
        scenario["scheduler"] = {"prefix_caching": False}
        return scenario

    capacities = {
        "prefix-groups": kv.capacity(lambda r: kv.prefix_groups_scenario(r, groups_window),
                                     100, 3000, "prefix-groups")[0],
        "h-sweep": kv.capacity(h_nocache, 20, 2000, "h-sweep (no cache)")[0],
    }
    capacity_window = (2, 6, 10)
    for member in families.MEMBERS:
        if member["prefix"]:
            capacities[member["name"]] = (families.tier_capacity(member, 0, capacity_window),
                                          families.tier_capacity(member, 1, capacity_window))
    return capacities


def summarize(labels, per_seed):
    """Per point and metric: each rule's mean, and predicted-ttft minus it, paired by seed."""
    rows = []
    for label in labels:
        seeds = per_seed[label]
        row = {"point": label, "rules": {}, "behind": []}
        for rule in RULES:
            row["rules"][rule] = {
                key: sum(s[rule][key] for s in seeds) / len(seeds)
                for key in ("ttft_mean", "ttft_p99", "hit_rate", "attainment")
                if all(s[rule][key] is not None for s in seeds)}
        for rule in RULES[1:]:
            for key, _ in METRICS:
                ours = [s["predicted-ttft"][key] for s in seeds]
                theirs = [s[rule][key] for s in seeds]
                if None in ours or None in theirs:
                    continue
                difference = gx.paired_difference(ours, theirs)
                row["rules"][rule][key + "_difference"] = difference
                if difference and difference[1] > 0:  # behind beyond the seeds' noise
                    row["behind"].append(f"{rule} ({key})")
        rows.append(row)
    return rows


def fmt_difference(difference):
    if difference is None:
        return "-"
    mean, low, high = difference
    return f"{mean:+.1f} [{low:+.1f}, {high:+.1f}]"


def write_report(results, out_dir):
    lines = [
        "# Routing on prefix-heavy workloads, over seeds", "",
        "Generated by `scripts/experiments/prefix_routing_seeds.py`"
        f"{' --quick' if results['quick'] else ''}; do not edit by hand. "
        f"Seeds {results['seeds'][0]}-{results['seeds'][-1]}; the script ran in "
        f"{results['wall_s']:.0f} s. The small model's requests; every rule on the same "
        "arrivals. For each other rule: predicted-ttft minus that rule, the mean of the per-seed "
        "differences and its 95 % confidence interval (negative: predicted-ttft is lower, "
        "better). A point lists a rule under *behind* only when the whole interval is above 0.",
        "",
        "Prefix groups and the h sweep are the workloads of kv-routing.md (admission off); "
        "the family members are those of families.md (admission on, so TTFT is over the "
        "requests admission took and the small model's SLO attainment over all arrivals is "
        "beside it).", ""]
    header = ["point", "predicted-ttft mean / p99 (ms)", "hit rate", "SLO attainment"]
    for rule in RULES[1:]:
        header += [f"vs {rule}: mean", f"vs {rule}: p99"]
    header.append("behind")
    table = []
    for row in results["rows"]:
        ours = row["rules"]["predicted-ttft"]
        cells = [row["point"],
                 f"{ours.get('ttft_mean', float('nan')):.1f} / "
                 f"{ours.get('ttft_p99', float('nan')):.1f}",
                 f"{100 * ours.get('hit_rate', 0):.1f} %",
                 f"{100 * ours['attainment']:.1f} %" if "attainment" in ours else "-"]
        for rule in RULES[1:]:
            cells += [fmt_difference(row["rules"][rule].get(key + "_difference"))
                      for key, _ in METRICS]
        cells.append(", ".join(row["behind"]) or "-")
        table.append(cells)
    lines += [gx.markdown_table(header, table), ""]
    behind = sum(1 for row in results["rows"] if row["behind"])
    lines += [f"Points where predicted-ttft is behind another rule beyond the noise: {behind} of "
              f"{len(results['rows'])}.", ""]
    gx.write_results(out_dir, "prefix-routing", lines, results)


def main():
    args = gx.experiment_arguments("one point per workload, two seeds, short windows").parse_args()
    started = time.time()
    seeds = [1, 2] if args.quick else [1, 2, 3, 4, 5]
    capacities = measure_capacities(args.quick)
    point_list = points(args.quick, capacities)
    jobs = []
    for kind, label, make in point_list:
        for seed in seeds:
            scenario = make(seed)
            scenario["seed"] = seed
            jobs.append((kind, label, scenario))
    with concurrent.futures.ProcessPoolExecutor(max(1, args.jobs)) as pool:
        outcomes = list(pool.map(run_point, jobs))
    per_seed = {}
    for (_, label, _), outcome in zip(jobs, outcomes):
        per_seed.setdefault(label, []).append(outcome)
    labels = [label for _, label, _ in point_list]
    results = {"quick": args.quick, "seeds": seeds, "rules": RULES, "capacities": capacities,
               "rows": summarize(labels, per_seed), "wall_s": time.time() - started}
    os.makedirs(args.out, exist_ok=True)
    write_report(results, args.out)
    print(f"prefix routing: {len(labels)} points, {len(jobs)} runs, "
          f"{results['wall_s']:.0f} s -> {args.out}", flush=True)


if __name__ == "__main__":
    main()
