#!/usr/bin/env python3
"""Compares two runs of families.py on the same members, loads and seeds (for example gangway with
`--policy-set split=demand` against its default), point by point: the mean per-seed difference
(second - first) in total goodput, SM and LM attainment over arrivals and P(SLO met | admitted)
per tier, with its paired 95 % interval, and the points where the second is significantly
behind on goodput or on either tier's attainment.

    python3 scripts/experiments/families_compare.py A/families.json B/families.json [--policy P]
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import families  # noqa: E402


def admitted_attainment(row, tier):
    stats = row[tier]
    if not stats or not stats["admitted"]:
        return None
    return stats["admitted_slo_met"] / stats["admitted"]


METRICS = [
    ("goodput", lambda r: r["goodput"], 1.0),
    ("SM att %", lambda r: families.attainment(r, "small"), 100.0),
    ("LM att %", lambda r: families.attainment(r, "large"), 100.0),
    ("SM SLO of admitted %", lambda r: admitted_attainment(r, "small"), 100.0),
    ("LM SLO of admitted %", lambda r: admitted_attainment(r, "large"), 100.0),
]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--policy", default="gangway-lease")
    args = parser.parse_args()
    runs = []
    for path in (args.first, args.second):
        with open(path) as f:
            runs.append({(r["member"], r["load"], r["seed"]): r for r in json.load(f)["runs"]
                         if r["policy"] == args.policy})
    points = sorted({(m, load) for (m, load, _) in runs[0]})
    print("| member | load | " + " | ".join("%s: first -> second [95 %% CI of diff]" % name
                                             for name, _, _ in METRICS) + " |")
    print("|---|---|" + "---|" * len(METRICS))
    behind = []
    for member, load in points:
        seeds = sorted(s for (m, lo, s) in runs[0] if (m, lo) == (member, load)
                       and (m, lo, s) in runs[1])
        cells = []
        for name, value, scale in METRICS:
            pairs = [(value(runs[0][(member, load, s)]), value(runs[1][(member, load, s)]))
                     for s in seeds]
            pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
            if not pairs:
                cells.append("-")
                continue
            first = [a * scale for a, _ in pairs]
            second = [b * scale for _, b in pairs]
            interval = families.difference_interval(second, first)
            text = "%.1f -> %.1f" % (families.mean(first), families.mean(second))
            if interval:
                text += " [%+.1f, %+.1f]" % interval
                if interval[1] < 0 and name in ("goodput", "SM att %", "LM att %"):
                    behind.append("%s %g %s" % (member, load, name))
            cells.append(text)
        print("| %s | %g | %s |" % (member, load, " | ".join(cells)))
    print()
    print("second significantly behind: " + (", ".join(behind) if behind else "nowhere"))


if __name__ == "__main__":
    main()
