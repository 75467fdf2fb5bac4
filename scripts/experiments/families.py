#!/usr/bin/python3
"""Workload-family suite: gangway against every baseline on workloads nobody tuned for.

Each *member* of the family is a workload shape: the large model's (LM) share of the offered
load, each tier's arrival process (Poisson, Gamma with a coefficient of variation of 2-4, or
on/off bursts), each tier's prompt lengths (lognormal, means 100-2,000 tokens, tails to 16k),
output lengths (geometric, means 30-300), the classes' TPOT targets, and for some members shared
system prompts and multi-turn sessions (the prefix-heavy members). Each member runs at loads
from 0.3x to 3x of the node's capacity for that shape, on several seeds, under every gang policy
with the same arrivals; every point also gets the fluid upper bound on goodput
(`gangway simulate --bound`, docs/gang-scheduling.md).

Capacity of a shape: each tier alone, offered far more than it can serve with admission off and a
short queue cap, completes this many requests per second (the throughput limit). Load x = x times that, split between the tiers by the LM share.

Per point and policy it reports, as means over seeds with paired 95 % intervals against gangway:
total goodput, each tier's SLO attainment over all arrivals, P(SLO met | admitted) per tier and
class with a target (the promises admission makes), and gangway's distance to the bound. A
baseline *dominates* gangway at a point when its mean attainment is at least gangway's on both
tiers and its paired interval lies above gangway's on at least one.

    make release
    GANGWAY=build/release/src/cli/gangway nice -n 10 /usr/bin/python3 \\
        scripts/experiments/families.py [--quick] [--out DIR] [--jobs N] [--members a,b]

Writes families.{md,json} and families-*.png to --out (default docs/results). --quick runs two
members at two loads on two seeds with short windows (a few seconds to half a minute): the test
that keeps the script's flags and JSON keys working.

Longer than most scripts because it is one experiment: the members' definitions, the runs, the
bound and the report page share one set of row summaries.
"""

import argparse
import hashlib
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import yaml

sys.path.insert(0, os.path.dirname(__file__))
import gangway_experiments as gx  # noqa: E402

SMALL = "llama-3-8b"
LARGE = "llama-3-70b"
POLICIES = ["gangway", "time-slice", "sm-first", "lm-first", "fcfs", "easy-backfill"]
LOADS = [0.3, 0.7, 1.0, 1.5, 3.0]
SEEDS = [1, 2, 3, 4, 5]
# Share of each tier's requests per class (interactive, standard, batch).
SMALL_CLASSES = {"interactive": 0.6, "standard": 0.3, "batch": 0.1}
LARGE_CLASSES = {"interactive": 0.4, "standard": 0.4, "batch": 0.2}
PROMPT_MAX = 16384

# The members. Arrivals: ("poisson",), ("gamma", cv), ("on_off", peak factor): bursts at
# `peak factor` times the mean rate for 2 s, then 6 s at the rate that keeps the mean.
# tpot: (interactive, standard) targets in ms (None: no target). prefix: shared system prompts
# and sessions on both tiers.
MEMBERS = [
    {"name": "light-lm", "lm_share": 0.1, "arrivals": (("poisson",), ("poisson",)),
     "prompt": (100, 100), "output": (30, 30), "tpot": (50, None), "prefix": False},
    {"name": "bursty-sm", "lm_share": 0.3, "arrivals": (("gamma", 2.0), ("poisson",)),
     "prompt": (300, 600), "output": (100, 60), "tpot": (50, 150), "prefix": False},
    {"name": "bursty-lm", "lm_share": 0.5, "arrivals": (("poisson",), ("gamma", 4.0)),
     "prompt": (600, 1000), "output": (60, 100), "tpot": (100, 200), "prefix": False},
    {"name": "long-lm-prompts", "lm_share": 0.7, "arrivals": (("on_off", 3.0), ("poisson",)),
     "prompt": (1000, 2000), "output": (30, 300), "tpot": (50, None), "prefix": False},
    {"name": "lm-heavy-onoff", "lm_share": 0.9, "arrivals": (("poisson",), ("on_off", 3.0)),
     "prompt": (2000, 300), "output": (300, 30), "tpot": (50, 150), "prefix": False},
    {"name": "both-bursty", "lm_share": 0.5, "arrivals": (("gamma", 3.0), ("gamma", 3.0)),
     "prompt": (150, 1500), "output": (150, 150), "tpot": (50, None), "prefix": False},
    {"name": "prefix-chat", "lm_share": 0.3, "arrivals": (("poisson",), ("on_off", 3.0)),
     "prompt": (400, 2000), "output": (100, 100), "tpot": (100, 200), "prefix": True},
    {"name": "prefix-bursty", "lm_share": 0.7, "arrivals": (("gamma", 2.0), ("gamma", 4.0)),
     "prompt": (1200, 200), "output": (200, 60), "tpot": (50, None), "prefix": True},
]

QUICK_MEMBERS = ["bursty-lm", "prefix-chat"]
QUICK_LOADS = [0.7, 3.0]
QUICK_SEEDS = [1, 2]
QUICK_POLICIES = ["gangway", "time-slice", "sm-first"]


def arrival_spec(kind, rate):
    if kind[0] == "poisson":
        return {"process": "poisson", "rate_per_s": rate}
    if kind[0] == "gamma":
        return {"process": "gamma", "rate_per_s": rate, "cv": kind[1]}
    peak = kind[1]
    on_s, off_s = 2.0, 6.0
    off_rate = rate * ((on_s + off_s) - peak * on_s) / off_s
    return {"process": "on_off", "on_rate_per_s": rate * peak, "off_rate_per_s": off_rate,
            "on_s": on_s, "off_s": off_s}


def lengths(prompt_mean, output_mean):
    p99 = min(10.0 * prompt_mean, 0.85 * PROMPT_MAX)
    max_tokens = int(min(2048, max(256, 4 * output_mean)))
    return ({"dist": "lognormal", "mean": prompt_mean, "p99": p99, "max": PROMPT_MAX},
            {"dist": "geometric", "mean": output_mean, "max": max_tokens}, max_tokens)


def member_scenario(member, rates, window, seed):
    """The member's scenario with `rates` = (SM requests/s, LM requests/s); window = (warmup,
    duration, drain) in seconds."""
    interactive_tpot, standard_tpot = member["tpot"]
    standard = {"name": "standard", "ttft_ms": 2000, "weight": 2, "downgrade_to": "batch"}
    if standard_tpot:
        standard["tpot_ms"] = standard_tpot
    doc = {
        "name": "family-" + member["name"], "seed": seed,
        "warmup_s": window[0], "duration_s": window[1], "drain_s": window[2],
        "node": {"gpus": 8, "hardware": "h100-sxm-80gb", "kv_block_tokens": 16},
        "models": [
            {"name": SMALL, "tier": "small", "shape": "llama-3-8b", "gpus": "all"},
            {"name": LARGE, "tier": "large", "shape": "llama-3-70b", "gpus": "all",
             "tensor_parallel": 8},
        ],
        "slo_classes": [
            {"name": "interactive", "ttft_ms": 200, "tpot_ms": interactive_tpot, "weight": 4},
            standard,
            {"name": "batch", "weight": 1},
        ],
        "policy": {"name": "gangway", "mode": "lease"},
        "workload": {"streams": []},
    }
    for tier, (model, classes) in enumerate(((SMALL, SMALL_CLASSES), (LARGE, LARGE_CLASSES))):
        rate = rates[tier]
        if rate <= 0:
            continue
        prompt, output, max_tokens = lengths(member["prompt"][tier], member["output"][tier])
        for slo_class, fraction in classes.items():
            stream = {"name": "%s-%s" % ("sm" if tier == 0 else "lm", slo_class),
                      "model": model, "class": slo_class,
                      "arrival": arrival_spec(member["arrivals"][tier], rate * fraction),
                      "prompt_tokens": dict(prompt), "output_tokens": dict(output),
                      "max_tokens": max_tokens}
            if member["prefix"]:
                # Shared system prompts (the pool spans the tier's classes) and chat sessions.
                stream["prefix"] = {"groups": 32, "group_tokens": 1024, "zipf_s": 1.1,
                                    "pool": "system-" + model}
                stream["sessions"] = {"new_session_probability": 0.34, "think_time_s": 3.0}
                stream["max_prompt_tokens"] = PROMPT_MAX
            doc["workload"]["streams"].append(stream)
    return doc


def tier_capacity(member, tier, window):
    """Requests/s the tier completes alone when offered far more than it can serve (admission
    off, 64 queued per class at most, so the drain adds little)."""
    guess = (1527.0 * (128 + 8 * 32) / (member["prompt"][0] + 8 * member["output"][0])
             if tier == 0 else
             103.3 * (112 + 8 * 28) / (member["prompt"][1] + 8 * member["output"][1]))
    rates = [0.0, 0.0]
    rates[tier] = 3.0 * guess
    doc = member_scenario(member, rates, window, 1)
    doc["admission"] = {"queue_cap": 64}
    run = gx.simulate(doc, ["gangway"], ["--no-admission"])["runs"][0]
    model = SMALL if tier == 0 else LARGE
    return run["models"][model]["completed"] / run["sim"]["measured_s"]


def policy_label(run):
    return run["policy"] + ("-" + run["mode"] if run["policy"] == "gangway" else "")


def tier_stats(run, model):
    stats = run["models"].get(model)
    if not stats or not stats["arrived"]:
        return None
    classes = {}
    for slo_class, c in run["model_classes"].get(model, {}).items():
        if c["arrived"]:
            classes[slo_class] = {"arrived": c["arrived"], "admitted": c["admitted"],
                                  "admitted_slo_met": c["admitted_slo_met"],
                                  "misses": c.get("promise_misses"),
                                  "slo_met": c["slo_met"], "ttft_mean": c["ttft_ms"]["mean"],
                                  "ttft_p99": c["ttft_ms"]["p99"]}
    return {"arrived": stats["arrived"], "slo_met": stats["slo_met"],
            "admitted": stats["admitted"], "admitted_slo_met": stats["admitted_slo_met"],
            "attainment": stats["slo_attainment"], "goodput": stats["goodput_rps"],
            "ttft_mean": stats["ttft_ms"]["mean"], "ttft_p99": stats["ttft_ms"]["p99"],
            "classes": classes}


def run_point(job):
    member, load, seed, capacity, window, policies, cache, policy_settings, admission = job
    share = member["lm_share"]
    rates = (load * (1 - share) * capacity[0], load * share * capacity[1])
    doc = member_scenario(member, rates, window, seed)
    doc["policy"].update(policy_settings)
    if admission:
        doc["admission"] = dict(admission)
    path = None
    if cache:
        key = json.dumps([doc, policies], sort_keys=True)
        path = os.path.join(cache, "%s-%g-%d-%s.json" % (
            member["name"], load, seed, hashlib.sha1(key.encode()).hexdigest()[:12]))
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
    document = gx.simulate(doc, policies, ["--bound"])
    bound = document["bound"]
    rows = []
    for run in document["runs"]:
        rows.append({"member": member["name"], "load": load, "seed": seed,
                     "policy": policy_label(run), "goodput": run["total"]["goodput_rps"],
                     "small": tier_stats(run, SMALL), "large": tier_stats(run, LARGE),
                     "bound": bound["goodput_rps"], "bound_large_share": bound["large_share"],
                     "wall_s": run["sim"]["wall_s"]})
    if path:
        with open(path, "w") as f:
            json.dump(rows, f)
    print("%s load %g seed %d: gangway %.1f req/s" % (member["name"], load, seed,
                                                      rows[0]["goodput"]), flush=True)
    return rows


def difference_interval(first, second):
    """95 % confidence interval of the mean per-seed difference first - second (same seeds, same
    arrivals: paired), in the values' own units; None with fewer than two seeds."""
    n = len(first)
    if n < 2 or n != len(second):
        return None
    d = [x - y for x, y in zip(first, second)]
    m = sum(d) / n
    var = sum((x - m) ** 2 for x in d) / (n - 1)
    q = gx._T_975[n - 2] if n - 1 <= len(gx._T_975) else 1.96
    half = q * (var / n) ** 0.5
    return (m - half, m + half)


def mean(values):
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def attainment(row, tier):
    stats = row[tier]
    return stats["attainment"] if stats else None


def summarize(rows, members, loads):
    """Per point: each policy's means, gangway's paired intervals against each baseline, whether
    any baseline dominates, the promise figures, and the distance to the bound."""
    points = []
    for member in members:
        for load in loads:
            at = [r for r in rows if r["member"] == member["name"] and r["load"] == load]
            if not at:
                continue
            by_policy = {}
            for r in at:
                by_policy.setdefault(r["policy"], []).append(r)
            ours = sorted(by_policy["gangway-lease"], key=lambda r: r["seed"])
            point = {"member": member["name"], "load": load, "seeds": len(ours),
                     "bound": mean([r["bound"] for r in ours]), "policies": {},
                     "dominated_by": [], "goodput_behind": []}
            for policy, runs in by_policy.items():
                runs = sorted(runs, key=lambda r: r["seed"])
                entry = {"goodput": mean([r["goodput"] for r in runs]),
                         "small": mean([attainment(r, "small") for r in runs]),
                         "large": mean([attainment(r, "large") for r in runs])}
                for tier in ("small", "large"):
                    admitted = sum(r[tier]["admitted"] for r in runs if r[tier])
                    kept = sum(r[tier]["admitted_slo_met"] for r in runs if r[tier])
                    entry[tier + "_kept"] = kept / admitted if admitted else None
                    entry[tier + "_admitted"] = admitted
                    per_class = {}
                    for r in runs:
                        for name, c in (r[tier]["classes"] if r[tier] else {}).items():
                            acc = per_class.setdefault(name, [0, 0, 0, {}])
                            acc[0] += c["admitted"]
                            acc[1] += c["admitted_slo_met"]
                            acc[2] += c["arrived"]
                            for cause, count in (c.get("misses") or {}).items():
                                if isinstance(count, int):
                                    acc[3][cause] = acc[3].get(cause, 0) + count
                    entry[tier + "_classes"] = {
                        name: {"admitted": a, "kept": (k / a if a else None),
                               "admitted_fraction": a / n if n else None, "misses": m}
                        for name, (a, k, n, m) in per_class.items()}
                    entry[tier + "_ttft_mean"] = mean([r[tier]["ttft_mean"] for r in runs
                                                       if r[tier]])
                    entry[tier + "_ttft_p99"] = mean([r[tier]["ttft_p99"] for r in runs
                                                      if r[tier]])
                if policy != "gangway-lease" and len(runs) == len(ours):
                    entry["goodput_interval"] = difference_interval(
                        [r["goodput"] for r in ours], [r["goodput"] for r in runs])
                    for tier in ("small", "large"):
                        a = [attainment(r, tier) for r in ours]
                        b = [attainment(r, tier) for r in runs]
                        entry[tier + "_interval"] = (
                            None if None in a or None in b else difference_interval(b, a))
                point["policies"][policy] = entry
            g = point["policies"]["gangway-lease"]
            point["fraction_of_bound"] = (g["goodput"] / point["bound"]
                                          if point["bound"] else None)
            for policy, entry in point["policies"].items():
                if policy == "gangway-lease":
                    continue
                tiers = [t for t in ("small", "large") if g[t] is not None]
                if tiers and all(entry[t] is not None and entry[t] >= g[t] - 1e-12
                                 for t in tiers) and any(
                        entry.get(t + "_interval") and entry[t + "_interval"][0] > 0
                        for t in tiers):
                    point["dominated_by"].append(policy)
                if entry["goodput"] > g["goodput"] + 1e-9:
                    interval = entry.get("goodput_interval")
                    point["goodput_behind"].append(
                        {"policy": policy, "significant": bool(interval and interval[1] < 0)})
            points.append(point)
    return points


def pct(x):
    return "-" if x is None else "%.1f" % (100.0 * x)


def write_report(out, summary, capacities, members, loads, seeds, policies, window, wall_s,
                 quick):
    lines = ["# Workload families: gangway against the baselines on workloads nobody tuned for",
             "",
             "Generated by `scripts/experiments/families.py`%s in %.0f s. Members (shapes) below; "
             "each at loads %s of its own capacity, seeds %s, windows of %d s after %d s of "
             "warm-up. Policies: %s." % (
                 " --quick" if quick else "", wall_s, ", ".join("%g" % x for x in loads),
                 ", ".join(str(s) for s in seeds), window[1] - window[0], window[0],
                 ", ".join(policies)),
             "", "## Members", ""]
    rows = []
    for m in members:
        cap = capacities[m["name"]]
        arrivals = ["%s%s" % (a[0], "" if len(a) == 1 else " %g" % a[1]) for a in m["arrivals"]]
        rows.append([m["name"], "%.1f" % m["lm_share"], arrivals[0], arrivals[1],
                     "%d / %d" % m["prompt"], "%d / %d" % m["output"],
                     "%s / %s" % (m["tpot"][0], m["tpot"][1] or "-"),
                     "yes" if m["prefix"] else "no", "%.0f / %.1f" % (cap[0], cap[1])])
    lines.append(gx.markdown_table(
        ["member", "LM share", "SM arrivals", "LM arrivals", "prompt mean SM / LM",
         "output mean SM / LM", "TPOT ms interactive / standard", "prefix-heavy",
         "capacity SM / LM, req/s"], rows))
    lines += ["", "## Attainment, goodput and the bound", "",
              "Per point: SLO attainment over all arrivals of each tier (SM / LM, %), total "
              "goodput (req/s), for gangway and the best baseline by goodput; the fluid bound "
              "and gangway's share of it; baselines that dominate gangway on (SM, LM) "
              "attainment; a goodput shortfall against a baseline (* when its paired 95 % "
              "interval excludes 0).", ""]
    rows = []
    for p in summary:
        g = p["policies"]["gangway-lease"]
        best = max((e for k, e in p["policies"].items() if k != "gangway-lease"),
                   key=lambda e: e["goodput"], default=None)
        best_name = next((k for k, e in p["policies"].items() if e is best), "-")
        behind = ", ".join(b["policy"] + ("*" if b["significant"] else "")
                           for b in p["goodput_behind"]) or "-"
        rows.append([p["member"], "%g" % p["load"], "%s / %s" % (pct(g["small"]), pct(g["large"])),
                     "%.1f" % g["goodput"],
                     best_name, "%s / %s" % (pct(best["small"]), pct(best["large"])) if best else "-",
                     "%.1f" % best["goodput"] if best else "-",
                     "%.1f" % p["bound"] if p["bound"] is not None else "-",
                     pct(p["fraction_of_bound"]),
                     ", ".join(p["dominated_by"]) or "-", behind])
    lines.append(gx.markdown_table(
        ["member", "load", "gangway SM / LM %", "gangway goodput", "best baseline",
         "its SM / LM %", "its goodput", "bound", "gangway % of bound", "dominated by",
         "goodput behind"], rows))
    lines += ["", "## Promises: P(SLO met | admitted)", "",
              "Per point, pooled over seeds: of the requests admission accepted in a class with a "
              "target, the share that met their whole SLO (TTFT and TPOT), per tier and class, "
              "and beside it the share of that class's arrivals admission accepted. gangway "
              "only.", ""]
    rows = []
    for p in summary:
        g = p["policies"]["gangway-lease"]
        cells = [p["member"], "%g" % p["load"]]
        for tier in ("small", "large"):
            for name in ("interactive", "standard"):
                c = g[tier + "_classes"].get(name)
                cells.append("-" if not c else "%s (%s adm.)" % (pct(c["kept"]),
                                                                 pct(c["admitted_fraction"])))
        rows.append(cells)
    lines.append(gx.markdown_table(
        ["member", "load", "SM interactive", "SM standard", "LM interactive", "LM standard"],
        rows))
    lines += ["", "## Promises broken, by cause", "",
              "Per load, pooled over members and seeds: the admitted requests of each tier and "
              "class that missed their SLO, as a share of that class's admitted requests, by "
              "cause: first token late (TTFT), first token on time but decode too slow (TPOT), "
              "dropped after admission (shed, expired, ...). gangway only.", ""]
    rows = []
    for load in sorted({p["load"] for p in summary}):
        at = [p for p in summary if p["load"] == load]
        for tier in ("small", "large"):
            for name in ("interactive", "standard"):
                admitted, misses = 0, {}
                for p in at:
                    c = p["policies"]["gangway-lease"][tier + "_classes"].get(name)
                    if not c:
                        continue
                    admitted += c["admitted"]
                    for cause, count in (c.get("misses") or {}).items():
                        misses[cause] = misses.get(cause, 0) + count
                if not admitted:
                    continue
                rows.append(["%g" % load, "%s %s" % (tier, name), admitted] +
                            [pct(misses.get(cause, 0) / admitted)
                             for cause in ("ttft", "tpot", "dropped")])
    lines.append(gx.markdown_table(
        ["load", "tier, class", "admitted", "TTFT late %", "TPOT missed %", "dropped %"], rows))
    with open(os.path.join(out, "families.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def plot(out, summary):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(7, 5))
    markers = {"gangway-lease": "o", "time-slice": "s", "sm-first": "v", "lm-first": "^",
               "fcfs": "x", "easy-backfill": "+"}
    for policy, marker in markers.items():
        xs = [p["policies"][policy]["small"] for p in summary if policy in p["policies"]]
        ys = [p["policies"][policy]["large"] for p in summary if policy in p["policies"]]
        pairs = [(x, y) for x, y in zip(xs, ys) if x is not None and y is not None]
        if pairs:
            ax.scatter([100 * x for x, _ in pairs], [100 * y for _, y in pairs], marker=marker,
                       label=policy, alpha=0.7)
    ax.set_xlabel("SM SLO attainment, % of arrivals")
    ax.set_ylabel("LM SLO attainment, % of arrivals")
    ax.legend()
    ax.set_title("Every family point: each policy's (SM, LM) attainment")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "families-attainment.png"), dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(7, 5))
    for policy, marker in markers.items():
        pairs = [(p["bound"], p["policies"][policy]["goodput"]) for p in summary
                 if policy in p["policies"] and p["bound"]]
        if pairs:
            ax.scatter([b for b, _ in pairs], [g / b for b, g in pairs], marker=marker,
                       label=policy, alpha=0.7)
    ax.set_xscale("log")
    ax.set_xlabel("fluid bound, on-time req/s")
    ax.set_ylabel("goodput / bound")
    ax.legend()
    ax.set_title("Distance to the fluid bound")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "families-bound.png"), dpi=110)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true",
                        help="two members, two loads, two seeds, three policies, short windows")
    parser.add_argument("--out", default=os.path.join(gx.ROOT, "docs", "results"))
    parser.add_argument("--jobs", type=int, default=1, help="simulations run at once")
    parser.add_argument("--members", help="comma-separated member names (default: all)")
    parser.add_argument("--loads", help="comma-separated loads (default: %s)" % LOADS)
    parser.add_argument("--seeds", type=int, help="number of seeds (default: %d)" % len(SEEDS))
    parser.add_argument("--policies", help="comma-separated policies (default: %s)" %
                        ",".join(POLICIES))
    parser.add_argument("--cache", help="keep each point's runs in this folder and reuse them "
                        "when the binary's inputs are the same (the binary itself is not keyed)")
    parser.add_argument("--admission-set", action="append", default=[], metavar="KEY=VALUE",
                        help="an admission setting for every run (docs/scenario.md), e.g. "
                        "keep_promises=true; repeatable")
    parser.add_argument("--policy-set", action="append", default=[], metavar="KEY=VALUE",
                        help="a policy parameter for every run (docs/scenario.md), e.g. "
                        "split=demand; repeatable")
    args = parser.parse_args()
    policy_settings = {}
    for setting in args.policy_set:
        key, _, value = setting.partition("=")
        if not key or not value:
            sys.exit("--policy-set: expected KEY=VALUE, got %r" % setting)
        policy_settings[key] = yaml.safe_load(value)
    admission_settings = {}
    for setting in args.admission_set:
        key, _, value = setting.partition("=")
        if not key or not value:
            sys.exit("--admission-set: expected KEY=VALUE, got %r" % setting)
        admission_settings[key] = yaml.safe_load(value)
    if args.quick:
        names, loads, seeds, policies = QUICK_MEMBERS, QUICK_LOADS, QUICK_SEEDS, QUICK_POLICIES
        window, capacity_window = (2, 8, 20), (2, 6, 10)
    else:
        names, loads, seeds, policies = [m["name"] for m in MEMBERS], LOADS, SEEDS, POLICIES
        window, capacity_window = (4, 24, 60), (3, 13, 20)
    if args.members:
        names = args.members.split(",")
    if args.loads:
        loads = [float(x) for x in args.loads.split(",")]
    if args.seeds:
        seeds = list(range(1, args.seeds + 1))
    if args.policies:
        policies = args.policies.split(",")
    members = [m for m in MEMBERS if m["name"] in names]
    if len(members) != len(names):
        sys.exit("unknown member in %s; known: %s" % (names, [m["name"] for m in MEMBERS]))
    started = time.time()
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        capacity_jobs = [(m, tier) for m in members for tier in (0, 1)]
        if args.cache:
            os.makedirs(args.cache, exist_ok=True)
        known = {}
        capacity_file = os.path.join(args.cache, "capacities.json") if args.cache else None
        if capacity_file and os.path.exists(capacity_file):
            with open(capacity_file) as f:
                known = json.load(f)

        def capacity(job):
            key = "%s/%d/%s" % (job[0]["name"], job[1], capacity_window)
            if key not in known:
                known[key] = tier_capacity(job[0], job[1], capacity_window)
            return known[key]
        values = list(pool.map(capacity, capacity_jobs))
        if capacity_file:
            with open(capacity_file, "w") as f:
                json.dump(known, f)
        capacities = {m["name"]: (values[2 * i], values[2 * i + 1])
                      for i, m in enumerate(members)}
        jobs = [(m, load, seed, capacities[m["name"]], window, policies, args.cache,
                 policy_settings, admission_settings)
                for m in members for load in loads for seed in seeds]
        rows = [row for result in pool.map(run_point, jobs) for row in result]
    summary = summarize(rows, members, loads)
    wall_s = time.time() - started
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "families.json"), "w") as f:
        json.dump({"members": members, "capacities": capacities, "loads": loads, "seeds": seeds,
                   "policies": policies, "window_s": window, "runs": rows, "points": summary},
                  f, indent=1)
    write_report(args.out, summary, capacities, members, loads, seeds, policies, window, wall_s,
                 args.quick)
    plot(args.out, summary)
    print("families: %d points, %d runs, %.0f s -> %s" % (len(summary), len(rows), wall_s,
                                                          args.out))


if __name__ == "__main__":
    main()
