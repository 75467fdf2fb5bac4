#!/usr/bin/python3
"""Runs every `gangway` command of docs/guide.md, in the guide's order, in quick mode: so that a
renamed flag, a changed default or a command that stopped working fails a test instead of a
newcomer's first ten minutes.

    /usr/bin/python3 tests/guide/guide_commands_test.py [--full] path/to/gangway

Reads the guide's ```sh blocks. `cp examples/X my-node.yaml` copies the example into a temporary
folder, which stands for my-node.yaml and /tmp everywhere; `git clone`, `make` and `alias` lines
are the build the test runs on. Simulations get short windows (`--duration 8`, a 2 s warm-up)
unless the guide gives a duration; capacity searches two seeds at a coarse tolerance; `gangway
serve` listens on a free port, the `gangway load` lines after it send to that port for 3 s, and
the server must drain and exit 0 on SIGTERM. Every command must exit 0; a capacity search must
print its table and a `--report` must write its file. Standard library only; no timing checks.

`--full` runs the commands as the guide writes them (no quick flags; `gangway serve` still on a
free port) and prints each one's wall time: scripts/guide_walk.sh uses it to time the guide from
a fresh clone.
"""

import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GUIDE = os.path.join(ROOT, "docs", "guide.md")
SKIPPED = ("git", "make", "alias", "cd")
QUICK = {
    "simulate": [("--duration", "8"), ("--set", "warmup_s=2")],
    "capacity": [("--duration", "8"), ("--set", "warmup_s=2"), ("--seeds", "2"),
                 ("--tolerance", "0.3"), ("--no-progress", None)],
}


def guide_commands(text):
    """The shell lines of the guide's ```sh blocks: continuations joined, comments dropped."""
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def quick(words, full):
    """`gangway SUBCOMMAND ...` with the quick flags it does not already give."""
    if full:
        return words
    extra = []
    for flag, value in QUICK.get(words[1], []):
        if flag in words and flag != "--set":
            continue
        extra += [flag] + ([value] if value is not None else [])
    return words + extra


def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("gangway", help="the gangway binary")
    parser.add_argument("--full", action="store_true",
                        help="the commands as written, each one's wall time printed")
    args = parser.parse_args()
    binary = os.path.abspath(args.gangway)
    with open(GUIDE) as f:
        commands = guide_commands(f.read())
    work = tempfile.mkdtemp(prefix="gangway-guide-")
    server = None
    port = None
    ran = 0
    try:
        for line in commands:
            words = shlex.split(line.replace("/tmp/", work + "/"))
            if words[0] in SKIPPED:
                continue
            if words[0] == "cp":
                shutil.copy(os.path.join(ROOT, words[1]), os.path.join(work, words[2]))
                continue
            if words[0] != "gangway":
                fail(f"a command the test does not know how to run: {line}")
            words = [binary] + quick(words, args.full)[1:]
            words = [os.path.join(work, w) if w.endswith(".yaml") and not w.startswith(
                ("examples/", "/")) and "=" not in w else w for w in words]
            words = [os.path.join(ROOT, w) if w.startswith("examples/") else w for w in words]
            subcommand = words[1]
            if subcommand == "serve":
                port_file = os.path.join(work, "port")
                server = subprocess.Popen(words + ["--port", "0", "--port-file", port_file,
                                                   "--log-level", "warn"], cwd=work)
                deadline = time.time() + 60
                while not (os.path.exists(port_file) and open(port_file).read().strip()):
                    if server.poll() is not None or time.time() > deadline:
                        fail(f"gangway serve did not start: {line}")
                    time.sleep(0.1)
                port = open(port_file).read().strip()
                ran += 1
                continue
            if subcommand == "load":
                if port is None:
                    fail("the guide runs gangway load before gangway serve")
                words = [w.replace("127.0.0.1:8000", "127.0.0.1:" + port) for w in words]
                if not args.full:
                    if "--duration" in words:
                        words[words.index("--duration") + 1] = "3"
                    words += ["--set", "warmup_s=1"]
            print("$ " + " ".join(shlex.quote(w) for w in words), flush=True)
            started = time.time()
            done = subprocess.run(words, cwd=work, capture_output=True, text=True, timeout=600)
            print(f"TIME {time.time() - started:7.2f} s  {line}", flush=True)
            if done.returncode != 0:
                fail(f"exit {done.returncode}: {line}\n{done.stdout}\n{done.stderr}")
            if not done.stdout.strip():
                fail(f"no output: {line}")
            if subcommand == "capacity" and "--json" not in words and "capacity/s" not in done.stdout:
                fail(f"no capacity table: {line}\n{done.stdout}")
            if "--report" in words and not os.path.getsize(words[words.index("--report") + 1]):
                fail(f"--report wrote nothing: {line}")
            ran += 1
        if server is not None:
            server.send_signal(signal.SIGTERM)
            if server.wait(timeout=60) != 0:
                fail(f"gangway serve exited {server.returncode} after SIGTERM")
            server = None
    finally:
        if server is not None:
            server.kill()
            server.wait()
        shutil.rmtree(work, ignore_errors=True)
    if ran < 6:
        fail(f"only {ran} gangway commands found in {GUIDE}: the guide's sh blocks changed shape")
    print(f"ok: {ran} gangway commands from docs/guide.md")


if __name__ == "__main__":
    main()
