"""Shared helpers for the experiment scripts: build scenario variants from a base scenario,
run `gangway simulate --json` on them, and read the results.

Every table and plot in docs/ comes from a script in this folder, so that it can be
regenerated with one command (see each script's docstring). Uses only Debian's python3 with
python3-yaml and python3-matplotlib.
"""

import argparse
import copy
import json
import os
import subprocess
import tempfile

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_BINARY = os.path.join(ROOT, "build", "release", "src", "cli", "gangway")


def binary():
    return os.environ.get("GANGWAY", DEFAULT_BINARY)


def load_scenario(path):
    with open(os.path.join(ROOT, path)) as f:
        return yaml.safe_load(f)


def scaled(scenario, rates):
    """A copy of `scenario` whose streams get the given rates ({stream name: rate per s});
    streams not named are dropped."""
    variant = copy.deepcopy(scenario)
    streams = []
    for stream in variant["workload"]["streams"]:
        if stream["name"] in rates and rates[stream["name"]] > 0:
            stream["arrival"] = dict(stream["arrival"])
            stream["arrival"]["rate_per_s"] = float(rates[stream["name"]])
            streams.append(stream)
    variant["workload"]["streams"] = streams
    return variant


def simulate(scenario, policies, extra_args=(), timeout=3600):
    """Runs the simulator on a scenario (a dict) under the given policies; returns the parsed JSON
    document. The scenario is written to the system's temporary folder; the simulator runs in the
    repository root, so relative trace paths are resolved from there."""
    with tempfile.NamedTemporaryFile("w", prefix="gangway-scenario-", suffix=".yaml",
                                     delete=False) as f:
        yaml.safe_dump(scenario, f, sort_keys=False)
        path = f.name
    try:
        command = [binary(), "simulate", path, "--json"]
        for policy in policies:
            command += ["--policy", policy]
        command += list(extra_args)
        out = subprocess.run(command, check=True, capture_output=True, text=True,
                             timeout=timeout, cwd=ROOT)
        return json.loads(out.stdout)
    finally:
        os.unlink(path)


def runs_by_policy(document):
    return {run["policy"] + ("-" + run["mode"] if run["policy"] == "gangway" else ""): run
            for run in document["runs"]}


def experiment_arguments(quick_help):
    """The flags every seeded experiment takes: --quick (its short mode, which the test command
    runs), --jobs and --out."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--jobs", type=int, default=2, help="simulations run at once")
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "results"),
                        help="where the report goes (default: docs/results)")
    return parser


def write_results(out_dir, stem, lines, data):
    """Writes STEM.md (the report's lines) and STEM.json (its data) to out_dir."""
    with open(os.path.join(out_dir, stem + ".md"), "w") as f:
        f.write("\n".join(lines))
    with open(os.path.join(out_dir, stem + ".json"), "w") as f:
        json.dump(data, f, indent=1)


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        lines.append("| " + " | ".join(str(cell) for cell in row) + " |")
    return "\n".join(lines)


# Two-sided 95 % quantiles of Student's t for 1..30 degrees of freedom (beyond: the normal's).
_T_975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
          2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
          2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def paired_difference(ours, theirs):
    """The mean per-seed difference ours - theirs and its 95 % confidence interval: (mean, low,
    high). The same seed gives both runs the same arrivals, so the differences are paired. None
    with fewer than two seeds."""
    n = len(ours)
    if n < 2 or n != len(theirs):
        return None
    differences = [a - b for a, b in zip(ours, theirs)]
    mean = sum(differences) / n
    variance = sum((d - mean) ** 2 for d in differences) / (n - 1)
    quantile = _T_975[n - 2] if n - 1 <= len(_T_975) else 1.960
    half = quantile * (variance / n) ** 0.5
    return (mean, mean - half, mean + half)


def paired_interval(ours, theirs):
    """95 % confidence interval of the mean per-seed difference ours - theirs, relative to the
    mean of theirs: (low, high); an interval that contains 0 means the seeds cannot tell the two
    apart. None with fewer than two seeds."""
    difference = paired_difference(ours, theirs)
    if difference is None:
        return None
    reference = sum(theirs) / len(theirs)
    return (difference[1] / reference, difference[2] / reference)
