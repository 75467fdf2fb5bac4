"""Shared helpers for the experiment scripts: build scenario variants from a base scenario,
run `gangway simulate --json` on them, and read the results.

Every table and plot in docs/ comes from a script in this folder, so that it can be
regenerated with one command (see each script's docstring). Uses only Debian's python3 with
python3-yaml and python3-matplotlib.
"""

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
    document. Relative trace paths are resolved from the repository root."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", dir=ROOT, delete=False) as f:
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


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        lines.append("| " + " | ".join(str(cell) for cell in row) + " |")
    return "\n".join(lines)
