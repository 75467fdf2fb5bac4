#!/usr/bin/python3
"""Rate sweep of `gangway serve` under `gangway load` (bench/README.md, "gangway serve").

For each rate: starts a fresh `gangway serve SCENARIO --port 0` on loopback, drives it with
`gangway load SCENARIO --rate-scale RATE/BASE --duration S --json` on the same machine, samples
the server's RSS every second, reads its user and system CPU time (/proc/PID/stat) and the
per-thread CPU (and, with --threads, the load generator's CPU for its whole run), and prints one
markdown row per run: sent rate, completed, server-added TTFT p50/p90/p99/max (client-measured
TTFT minus the engine's share the server reports), client TTFT p50/p99, TPOT p50, server CPU
(user + sys, % of one core), server CPU per completed request (user + sys over the run divided
by the requests completed, in the same run as the latencies), RSS, and the load average around
the run. With --baseline BINARY every run is preceded by the same run of that binary (same rate,
same flags), so that before and after meet the same neighbours, and the ratio of their CPU per
request is printed. The ceiling is the highest rate whose server-added TTFT p99 is under the target (5 ms) with
every request completed.

  scripts/server_rate_sweep.py --rates 200,400,800,1200,1600 --duration 20
  scripts/server_rate_sweep.py --rates 1600 --duration 60 --rss   # + RSS at 10 s, middle, end
  scripts/server_rate_sweep.py --rates 1600 --repeat 3 --baseline /tmp/gangway-before

The machine matters: on a shared 2-core VM the load generator competes with the server for the
same cores, and other processes with both; the load average is printed with every row.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE_RATE = 1600.0  # requests/s of bench/server/emulated-1600.yaml at --rate-scale 1


def cpu_times(pid):
    """(user_s, sys_s) of a process, or of a thread with /proc/PID/task/TID."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    hz = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / hz, int(fields[12]) / hz


def thread_times(pid):
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            user, system = cpu_times(f"{pid}/task/{tid}")
            out[name] = (out.get(name, (0, 0))[0] + user, out.get(name, (0, 0))[1] + system)
        except OSError:
            pass
    return out


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def run_one(gangway, scenario, rate, duration, workdir, serve_flags):
    port_file = os.path.join(workdir, f"port-{rate:g}")
    if os.path.exists(port_file):
        os.remove(port_file)  # an earlier run's (a repeat, or the baseline's): not this server's
    log = open(os.path.join(workdir, f"server-{rate:g}.log"), "w")
    server = subprocess.Popen(
        [gangway, "serve", scenario, "--port", "0", "--port-file", port_file, "--log-level",
         "warn"] + serve_flags, stderr=log)
    try:
        for _ in range(200):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.05)
        port = int(open(port_file).read().strip())
        rss = []
        stop = threading.Event()

        def sample():
            start = time.monotonic()
            while not stop.is_set():
                value = rss_kib(server.pid)
                if value is not None:
                    rss.append((time.monotonic() - start, value))
                stop.wait(1.0)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        load_before = loadavg()
        user0, sys0 = cpu_times(server.pid)
        threads0 = thread_times(server.pid)
        started = time.monotonic()
        # The load generator is the only child reaped during the run (the server is reaped after).
        children0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        load = subprocess.run(
            [gangway, "load", "--url", f"http://127.0.0.1:{port}", scenario, "--rate-scale",
             f"{rate / BASE_RATE:g}", "--duration", str(duration), "--json", "--no-progress"],
            capture_output=True, text=True, check=True)
        elapsed = time.monotonic() - started
        children1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        user1, sys1 = cpu_times(server.pid)
        threads1 = thread_times(server.pid)
        load_after = loadavg()
        stop.set()
        sampler.join()
        doc = json.loads(load.stdout)
        with open(os.path.join(workdir, f"load-{rate:g}.json"), "w") as f:
            f.write(load.stdout)
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
    run = doc["runs"][0]
    threads = {name: (threads1[name][0] - threads0.get(name, (0, 0))[0],
                      threads1[name][1] - threads0.get(name, (0, 0))[1]) for name in threads1}
    return {
        "rate": rate, "duration": duration, "elapsed_s": elapsed, "load": run["load"],
        "total": run["total"], "user_s": user1 - user0, "sys_s": sys1 - sys0,
        "threads": threads, "rss": rss, "loadavg": (load_before, load_after),
        "load_user_s": children1.ru_utime - children0.ru_utime,
        "load_sys_s": children1.ru_stime - children0.ru_stime,
    }


def cpu_us_per_request(result):
    """Server CPU (user + sys) over the run divided by the requests it completed."""
    return 1e6 * (result["user_s"] + result["sys_s"]) / max(result["total"]["completed"], 1)


def row(result, label=""):
    load, total = result["load"], result["total"]
    sa = load["server_added_ttft_ms"]
    window = load["measured_s"]
    cpu = result["user_s"] + result["sys_s"]
    rss = [kib for _, kib in result["rss"]]
    return (f"| {label}{result['rate']:g} | {result['duration']} s | {load['sent_rps']:.0f} | "
            f"{total['completed']} / {total['arrived']} | "
            f"{sa['p50']:.2f} / {sa['p90']:.2f} / {sa['p99']:.2f} / {sa['max']:.1f} | "
            f"{total['ttft_ms']['p50']:.1f} / {total['ttft_ms']['p99']:.1f} | "
            f"{total['tpot_ms']['p50']:.1f} | "
            f"{100 * cpu / window:.0f} % ({100 * result['sys_s'] / max(cpu, 1e-9):.0f} % sys) | "
            f"{cpu_us_per_request(result):.0f} us | "
            f"{max(rss) / 1024 if rss else 0:.1f} MiB | "
            f"{result['loadavg'][0]:.1f} / {result['loadavg'][1]:.1f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rates", default="200,400,800,1200,1600",
                        help="requests/s, comma-separated")
    parser.add_argument("--duration", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=1, help="runs per rate")
    parser.add_argument("--target-ms", type=float, default=5.0)
    parser.add_argument("--scenario", default=os.path.join(ROOT, "bench/server/emulated-1600.yaml"))
    parser.add_argument("--gangway",
                        default=os.environ.get("GANGWAY",
                                               os.path.join(ROOT, "build/release/src/cli/gangway")))
    parser.add_argument("--rss", action="store_true", help="print RSS samples of each run")
    parser.add_argument("--threads", action="store_true", help="print per-thread CPU of each run")
    parser.add_argument("--out", help="directory for the load JSON and server logs")
    parser.add_argument("--baseline", help="a second gangway binary run before each run (A/B)")
    parser.add_argument("serve_flags", nargs="*", help="extra flags for gangway serve (after --)")
    args = parser.parse_args()
    workdir = args.out or tempfile.mkdtemp(prefix="gangway-sweep.")
    os.makedirs(workdir, exist_ok=True)
    rates = [float(r) for r in args.rates.split(",")]
    print(f"gangway {args.gangway}, scenario {args.scenario}, {os.cpu_count()} CPUs, "
          f"out {workdir}", file=sys.stderr)
    print("| rate req/s | window | sent req/s | completed | server-added TTFT p50 / p90 / p99 / max ms "
          "| client TTFT p50 / p99 ms | TPOT p50 ms | server CPU | server CPU per request | max RSS "
          "| load avg before / after |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    ceiling = None
    results = []
    ratios = []
    for rate in rates:
        for _ in range(args.repeat):
            if args.baseline:
                before = run_one(args.baseline, args.scenario, rate, args.duration, workdir,
                                 args.serve_flags)
                print(row(before, "baseline "), flush=True)
            result = run_one(args.gangway, args.scenario, rate, args.duration, workdir,
                             args.serve_flags)
            results.append(result)
            print(row(result), flush=True)
            if args.baseline:
                ratios.append(cpu_us_per_request(result) / cpu_us_per_request(before))
                print(f"    CPU per request, this binary / baseline: {ratios[-1]:.2f}",
                      file=sys.stderr, flush=True)
            if args.threads:
                for name, (user, system) in sorted(result["threads"].items()):
                    print(f"    thread {name}: user {user:.1f} s, sys {system:.1f} s",
                          file=sys.stderr)
                print(f"    load generator (gangway load, whole run): user "
                      f"{result['load_user_s']:.1f} s, sys {result['load_sys_s']:.1f} s",
                      file=sys.stderr)
            if args.rss:
                samples = result["rss"]
                at = lambda t: min(samples, key=lambda s: abs(s[0] - t))[1] / 1024
                window = result["duration"]
                print(f"    RSS MiB: start {samples[0][1] / 1024:.1f}, 10 s {at(10):.1f}, "
                      f"middle {at(window / 2):.1f}, end of window {at(window - 1):.1f}, "
                      f"max {max(s[1] for s in samples) / 1024:.1f}", file=sys.stderr)
    for rate in rates:
        runs = [r for r in results if r["rate"] == rate]
        if all(r["load"]["server_added_ttft_ms"]["p99"] < args.target_ms and
               r["total"]["completed"] == r["total"]["arrived"] for r in runs):
            ceiling = rate
    if ratios:
        ratios.sort()
        print(f"\nCPU per request, this binary / baseline: median {ratios[len(ratios) // 2]:.2f}, "
              f"min {ratios[0]:.2f}, max {ratios[-1]:.2f} ({len(ratios)} pairs)")
    print(f"\nceiling (highest rate with every run's server-added TTFT p99 < {args.target_ms:g} ms "
          f"and every request completed): {f'{ceiling:g} req/s' if ceiling else 'none of these'}")


if __name__ == "__main__":
    main()
