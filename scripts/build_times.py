#!/usr/bin/env python3
"""Times `make test` from a fresh clone, step by step, and names the slowest targets and tests.

    scripts/build_times.py [--jobs 2] [--keep] [--check] WORKDIR

Clones the repository's HEAD into WORKDIR/gangway (no build cache, no compiler launcher), then
runs the steps of `make test` one after another: the package check (make setup), the sanitizer
build, the normal build, then `make test` itself, which finds both builds done and runs the
two test passes. With --check it then changes one line of a core file (a comment in
src/sched/scheduler.cc) and times `make check`. Prints a Markdown report: wall and CPU seconds
per step, the slowest compile steps (from each build's .ninja_log) and the slowest tests.
"""
import argparse
import os
import pathlib
import re
import resource
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(name, command, cwd, env, log):
    start_wall, start_cpu = time.monotonic(), cpu_seconds()
    with open(log, "a") as out:
        out.write(f"\n### {name}: {command}\n")
        out.flush()
        result = subprocess.run(command, shell=True, cwd=cwd, env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    wall, cpu = time.monotonic() - start_wall, cpu_seconds() - start_cpu
    if result.returncode != 0:
        sys.exit(f"{name} failed (exit {result.returncode}); see {log}")
    return name, wall, cpu


def ninja_steps(build, count):
    log = build / ".ninja_log"
    steps = {}
    for line in log.read_text().splitlines()[1:]:
        start, end, _, output, _ = line.split("\t")
        steps[output] = int(end) - int(start)
    return sorted(steps.items(), key=lambda item: -item[1])[:count], sum(steps.values())


def slowest_tests(log_text, count):
    found = re.findall(r"Test +#\d+: (\S+) \.+ +Passed +([0-9.]+) sec", log_text)
    return sorted(((name, float(seconds)) for name, seconds in found), key=lambda t: -t[1])[:count]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("workdir", type=pathlib.Path)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--check", action="store_true", help="also time make check after a one-line change")
    parser.add_argument("--keep", action="store_true", help="keep the clone")
    args = parser.parse_args()

    checkout = args.workdir / "gangway"
    if checkout.exists():
        shutil.rmtree(checkout)
    args.workdir.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "-q", str(ROOT), str(checkout)], check=True)
    log = args.workdir / "build-times.log"
    log.write_text("")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CCACHE") and k != "CMAKE_CXX_COMPILER_LAUNCHER"}
    env["JOBS"] = str(args.jobs)

    steps = [timed("packages (make setup)", "make setup", checkout, env, log),
             timed("sanitizer build (make asan-build)", f"make asan-build JOBS={args.jobs}",
                   checkout, env, log),
             timed("normal build (make test-build)", f"make test-build JOBS={args.jobs}",
                   checkout, env, log)]
    first_log_size = log.stat().st_size
    # The rest of make test: both builds are up to date, so this is its two test passes.
    steps.append(timed("tests, both passes (make test)", f"make test JOBS={args.jobs}", checkout,
                       env, log))
    test_output = log.read_text()[first_log_size:]
    if args.check:
        core_file = checkout / "src/sched/scheduler.cc"
        core_file.write_text(core_file.read_text() + "// one-line change\n")
        steps.append(timed("make check after a one-line change to src/sched/scheduler.cc",
                           f"make check JOBS={args.jobs}", checkout, env, log))

    print(f"# make test from a fresh clone ({args.jobs} jobs, {os.cpu_count()} cores)\n")
    print("| step | wall s | CPU s |\n|---|---:|---:|")
    total_wall = total_cpu = 0.0
    for name, wall, cpu in steps:
        print(f"| {name} | {wall:.0f} | {cpu:.0f} |")
        if not name.startswith("make check"):
            total_wall += wall
            total_cpu += cpu
    print(f"| **make test** | **{total_wall:.0f}** | **{total_cpu:.0f}** |\n")
    for build in ("asan", "test"):
        top, total = ninja_steps(checkout / "build" / build, 8)
        print(f"Slowest compile steps of build/{build} (sum of all steps {total / 1000:.0f} s):\n")
        for output, ms in top:
            print(f"- {ms / 1000:.0f} s {output}")
        print()
    print("Slowest tests (both passes):\n")
    for name, seconds in slowest_tests(test_output, 10):
        print(f"- {seconds:.0f} s {name}")
    if not args.keep:
        shutil.rmtree(checkout)


if __name__ == "__main__":
    main()
