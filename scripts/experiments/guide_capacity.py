#!/usr/bin/python3
"""The capacity answers that docs/guide.md shows for examples/peak-mixed.yaml: the guide's own
`gangway capacity` commands, run as written, their tables pasted into the guide.

    make release     # or any Release build; GANGWAY=/path/to/gangway picks the binary
    /usr/bin/python3 scripts/experiments/guide_capacity.py [--quick] [--out DIR]

Replaces the text between the markers `<!-- guide_capacity.py: begin -->` and
`<!-- guide_capacity.py: end -->` in docs/guide.md (about a minute on two cores). With `--out
DIR` the block goes to DIR/guide-capacity.md instead and the guide is left alone; `--quick`
(short windows, two seeds, a coarse tolerance) checks that the commands still run and print
their tables, and implies `--out` under the system's temporary folder unless one is given.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import gangway_experiments as gx  # noqa: E402

SCENARIO = "examples/peak-mixed.yaml"
GUIDE = os.path.join(gx.ROOT, "docs", "guide.md")
BEGIN = "<!-- guide_capacity.py: begin -->"
END = "<!-- guide_capacity.py: end -->"

# The guide's commands, in its order: the capacity per tier and for the mix; the lease setting
# compared; what decides the mix's answer (TTFT targets alone, a looser TPOT target); the lease
# setting and the policies compared under a 95 % attainment target, where the answer is well
# defined.
COMMANDS = [
    ["capacity", SCENARIO],
    ["capacity", SCENARIO, "--search", "mix", "--vary", "policy.lease_max_ms=60,100,150"],
    ["capacity", SCENARIO, "--search", "mix", "--measure", "ttft"],
    ["capacity", SCENARIO, "--search", "mix", "--set", "slo_classes[interactive].tpot_ms=75"],
    ["capacity", SCENARIO, "--search", "mix", "--attainment", "0.95",
     "--vary", "policy.lease_max_ms=60,100,150"],
    ["capacity", SCENARIO, "--search", "mix", "--attainment", "0.95",
     "--policy", "gangway", "--policy", "time-slice"],
]
QUICK_FLAGS = ["--duration", "8", "--set", "warmup_s=2", "--seeds", "2", "--tolerance", "0.3"]


def run(command, quick):
    args = [gx.binary()] + command + ["--no-progress"] + (QUICK_FLAGS if quick else [])
    started = time.time()
    out = subprocess.run(args, check=True, capture_output=True, text=True, cwd=gx.ROOT,
                         timeout=1800)
    wall_s = time.time() - started
    if "capacity/s" not in out.stdout:
        sys.exit(f"guide_capacity.py: no capacity table from: {' '.join(command)}")
    return out.stdout.rstrip("\n"), wall_s


def block(outputs):
    lines = [BEGIN, ""]
    for command, (text, _) in zip(COMMANDS, outputs):
        lines += ["```", "$ gangway " + " ".join(command), text, "```", ""]
    lines += ["(`scripts/experiments/guide_capacity.py` runs these commands and writes their "
              "output here.)", END]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true",
                        help="short windows, two seeds, coarse tolerance: the commands still run")
    parser.add_argument("--out", help="write DIR/guide-capacity.md instead of editing the guide")
    args = parser.parse_args()
    with open(GUIDE) as f:
        guide = f.read()
    if guide.count(BEGIN) != 1 or guide.count(END) != 1:
        sys.exit(f"guide_capacity.py: {GUIDE} needs one {BEGIN} and one {END}")
    outputs = []
    for command in COMMANDS:
        outputs.append(run(command, args.quick))
        print(f"{outputs[-1][1]:6.1f} s  gangway {' '.join(command)}", flush=True)
    text = block(outputs)
    out_dir = args.out or (tempfile.mkdtemp(prefix="guide-capacity-") if args.quick else None)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "guide-capacity.md"), "w") as f:
            f.write(text + "\n")
        print(f"wrote {os.path.join(out_dir, 'guide-capacity.md')}")
        return
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    with open(GUIDE, "w") as f:
        f.write(pattern.sub(lambda _: text, guide))
    print(f"updated {GUIDE}")


if __name__ == "__main__":
    main()
