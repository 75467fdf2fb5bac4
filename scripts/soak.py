#!/usr/bin/env python3
"""A soak of gangway serve: mixed load with faults injected on a schedule.

Runs `gangway serve` on loopback, on a copy of examples/serve.yaml, for --minutes (default 12)
under a steady `gangway load` (its workload at --rate-scale, in consecutive phases of --phase-s
seconds), and on a schedule:
  - engine faults on the emulated GPUs (the scenario's `faults:`, timed from the server's start):
    a stall of one GPU, the loss of a GPU (its small-model work fails, the gang cannot run), an
    overrun of every GPU, the loss of a second GPU, another stall;
  - overload bursts: a second `gangway load` at --burst-scale;
  - client disconnect storms (cancellations): streaming requests whose clients go away, half
    resetting the connection and half closing it, some before any byte, some after the first;
  - SIGHUP (the server logs and ignores it) three times;
  - SIGTERM at the end, in the middle of a last load phase: the server drains and exits 0.
Throughout, checked clients send streaming and whole requests (a share of them reading slowly,
through a small receive buffer) and read every answer to its end, and a probe asks /health
every quarter second. RSS is sampled every --rss-every-s seconds. The load and the storms come
from 127.0.0.1 and stand for many clients behind one gateway (the soak's scenario gives that
address as many connections as the node has); the checked clients come from 127.0.0.3 and the
probe from 127.0.0.2, as a kubelet's would, so that neither is refused for the load's
connections.

The promises it checks (exit status 1 when one is broken, each named):
  - every request ends exactly once: the server's books balance (arrived == the sum of finished
    by outcome, none live once the load stops), and every checked client's answer holds exactly
    one terminal outcome (a finish_reason or an error, then [DONE] for a stream);
  - the server stays responsive: every probe answered 200 within --probe-limit-s;
  - memory stays flat (runs of 5 minutes or more): over the second half of the run, once the
    first overload burst has set the high-water mark, RSS grows by at most 10 % + 16 MiB;
  - no connection errors, the server alive after each SIGHUP and exit status 0 after SIGTERM.
Connections the server refuses when the load exceeds its connection cap (reset or closed at
once: `gangway load` counts them as transport errors) are counted and reported, not promises
broken: a refused connection never reached the scheduler.
It reports per phase requests by outcome as `gangway load` saw them, TTFT and end-to-end p99,
the faults active; per storm how its clients left; the checked clients' outcomes; probe latency;
RSS over time (first, after warm-up, last, max, slope). The summary is printed and written as
JSON to --out (default build/soak/soak.json).

  scripts/soak.py [--gangway build/release/src/cli/gangway] [--minutes 12] [--rate-scale 0.1]
  scripts/soak.py --quick     # about 25 s: every kind of fault once, for CI

Longer than most scripts because the schedule, the checked clients and the report share one
run's processes and clock.
"""
import argparse
import http.client
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def rss_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def get(port, path, timeout=10):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as reply:
        return reply.read().decode()


PROBE_ADDRESS = "127.0.0.2"
CHECKED_CLIENT_ADDRESS = "127.0.0.3"


def probe_health(port, timeout):
    """GET /health from the probe's own address; True when answered 200."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout,
                                            source_address=(PROBE_ADDRESS, 0))
    try:
        connection.request("GET", "/health")
        response = connection.getresponse()
        response.read()
        return response.status == 200
    finally:
        connection.close()


def metric_sum(metrics, name, label_filter=None):
    total = 0.0
    for line in metrics.splitlines():
        if not line.startswith(name):
            continue
        match = re.match(rf"{re.escape(name)}(\{{[^}}]*\}})? ([0-9.e+-]+)$", line)
        if not match:
            continue
        if label_filter and label_filter not in (match.group(1) or ""):
            continue
        total += float(match.group(2))
    return total


def books(port):
    """The server's accounts: arrived, finished by outcome, live."""
    metrics = get(port, "/metrics")
    finished = {}
    for outcome in ("completed", "rejected", "cancelled", "failed"):
        finished[outcome] = int(
            metric_sum(metrics, "gangway_requests_finished_total", f'outcome="{outcome}"'))
    return {
        "arrived": int(metric_sum(metrics, "gangway_requests_arrived_total")),
        "finished": finished,
        "live": int(metric_sum(metrics, "gangway_live_requests")),
        "client_disconnects": int(metric_sum(metrics, "gangway_client_disconnects_total")),
        "connection_errors": int(metric_sum(metrics, "gangway_connection_errors_total")),
        "slow_readers_cut": int(metric_sum(metrics, "gangway_slow_readers_cut_total")),
        "connections_refused": int(metric_sum(metrics, "gangway_connections_refused_total")),
        "read_timeouts": int(metric_sum(metrics, "gangway_read_timeouts_total")),
    }


def run_load(gangway, port, scenario, rate_scale, duration, seed, out_path, drain_s):
    command = [gangway, "load", "--url", f"http://127.0.0.1:{port}", scenario,
               "--rate-scale", str(rate_scale), "--duration", str(duration), "--seed", str(seed),
               "--drain-timeout", str(drain_s), "--json", "--no-progress"]
    with open(out_path, "w") as out:
        return subprocess.Popen(["nice", "-n", "5"] + command, stdout=out,
                                stderr=subprocess.DEVNULL)


def load_summary(path):
    try:
        with open(path) as f:
            document = json.load(f)
    except (OSError, ValueError) as error:
        return {"error": f"no JSON from gangway load: {error}"}
    run = document["runs"][0]
    total = run["total"]
    return {
        "arrived": total["arrived"],
        "completed": total["completed"],
        "rejected": total["rejected"],
        "cancelled": total["cancelled"],
        "failed": total["failed"],
        "reasons": total["reasons"],
        "http_status": run["load"]["http_status"],
        "transport_errors": run["load"]["transport_errors"],
        "ttft_p99_ms": total["ttft_ms"]["p99"],
        "ttft_p50_ms": total["ttft_ms"]["p50"],
        "e2e_p99_ms": total["e2e_ms"]["p99"],
        "server_added_ttft_p99_ms": run["load"]["server_added_ttft_ms"].get("p99"),
    }


def completion_body(max_tokens, stream, prompt_words=40):
    return json.dumps({"model": "llama-3-8b", "prompt": "soak " * prompt_words,
                       "max_tokens": max_tokens, "ignore_eos": True, "stream": stream})


def storm(port, requests, rng):
    """Streaming requests whose clients go away: reset or close, before or after a byte."""
    body = completion_body(200, True)
    request = (f"POST /v1/completions HTTP/1.1\r\nHost: soak\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n{body}").encode()
    counts = {"sent": 0, "reset": 0, "closed": 0, "after_first_bytes": 0, "connect_failed": 0}
    sockets = []
    for _ in range(requests):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(request)
            counts["sent"] += 1
            sockets.append(s)
        except OSError:
            counts["connect_failed"] += 1
    time.sleep(0.05)
    for s in sockets:
        try:
            if rng.random() < 0.5:
                s.settimeout(2)
                if s.recv(256):
                    counts["after_first_bytes"] += 1
            if rng.random() < 0.5:
                # SO_LINGER 0: close() sends a reset.
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                counts["reset"] += 1
            else:
                counts["closed"] += 1
        except OSError:
            pass
        finally:
            s.close()
    return counts


def checked_exchange(port, stream, slow, rng):
    """One request read to its end. Returns its outcome: 'completed', 'error:<code>' or
    'broken:<why>' when the answer does not hold exactly one terminal outcome."""
    body = completion_body(rng.randint(1, 64), stream, rng.randint(1, 200))
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60,
                                            source_address=(CHECKED_CLIENT_ADDRESS, 0))
    try:
        if slow:
            # A small receive buffer and pauses between reads: the server's writes back up.
            connection.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            connection.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            connection.sock.settimeout(60)
            connection.sock.bind((CHECKED_CLIENT_ADDRESS, 0))
            connection.sock.connect(("127.0.0.1", port))
        connection.request("POST", "/v1/completions", body=body,
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        if not stream or response.status != 200:
            text = response.read()
            try:
                answer = json.loads(text)
            except ValueError:
                return f"broken:status {response.status} with a body that is not JSON"
            if response.status == 200:
                reasons = [c.get("finish_reason") for c in answer.get("choices", [])]
                return "completed" if reasons and reasons[0] else "broken:200 without finish_reason"
            code = answer.get("error", {}).get("code")
            return f"error:{code}" if code else f"broken:status {response.status} without a code"
        terminals = []
        done = False
        while True:
            line = response.readline()
            if not line:
                break
            if slow:
                time.sleep(0.002)
            line = line.strip()
            if not line.startswith(b"data:"):
                continue
            data = line[5:].strip()
            if done:
                return "broken:an event after [DONE]"
            if data == b"[DONE]":
                done = True
                continue
            event = json.loads(data)
            if "error" in event:
                terminals.append(f"error:{event['error'].get('code')}")
            elif any(c.get("finish_reason") for c in event.get("choices", [])):
                terminals.append("completed")
        if not done:
            return f"broken:stream ended without [DONE] after {terminals}"
        if len(terminals) != 1:
            return f"broken:{len(terminals)} terminal events {terminals}"
        return terminals[0]
    except (OSError, http.client.HTTPException, ValueError) as error:
        return f"broken:{type(error).__name__}: {error}"
    finally:
        connection.close()


def fit_slope_mib_per_hour(samples):
    if len(samples) < 3:
        return None
    xs = [t for t, _ in samples]
    ys = [r for _, r in samples]
    n = len(xs)
    mean_x = sum(xs) / n
    mean_y = sum(ys) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    if sxx == 0:
        return None
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys))
    return sxy / sxx * 3600


def percentile(values, share):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gangway", default=os.path.join(ROOT, "build/release/src/cli/gangway"))
    parser.add_argument("--minutes", type=float, default=12)
    parser.add_argument("--phase-s", type=float, default=60)
    parser.add_argument("--rate-scale", type=float, default=0.1,
                        help="the steady load, as a share of examples/serve.yaml's 402 req/s")
    parser.add_argument("--burst-scale", type=float, default=1.5)
    parser.add_argument("--burst-s", type=float, default=20)
    parser.add_argument("--storm-requests", type=int, default=300)
    parser.add_argument("--checked-clients", type=int, default=4,
                        help="threads that send requests and read each answer to its end")
    parser.add_argument("--probe-limit-s", type=float, default=2.0,
                        help="longest a /health probe may take")
    parser.add_argument("--rss-every-s", type=float, default=5)
    parser.add_argument("--quick", action="store_true",
                        help="about 25 s, every kind of fault once (CI)")
    parser.add_argument("--out", default=os.path.join(ROOT, "build/soak/soak.json"))
    args = parser.parse_args()
    if args.quick:
        args.minutes, args.phase_s, args.rate_scale = 0.2, 4, 0.05
        args.burst_scale, args.burst_s, args.storm_requests = 0.5, 2, 40
        args.checked_clients, args.rss_every_s = 2, 1
        # A CI machine may be busy with other tests: this checks that probes are answered at
        # all, the long run holds them to --probe-limit-s.
        args.probe_limit_s = max(args.probe_limit_s, 5)
    final_phase_s = 4 if args.quick else 20
    drain_s = 15 if args.quick else 60

    total_s = args.minutes * 60
    phases = max(1, int(round(total_s / args.phase_s)))
    total_s = phases * args.phase_s
    work = tempfile.mkdtemp(prefix="gangway-soak-")
    with open(os.path.join(ROOT, "examples/serve.yaml")) as f:
        scenario = yaml.safe_load(f)
    scenario["server"].update({"port": 0, "log_level": "warn",
                               "drain_grace_s": 5 if args.quick else 30})
    scenario["server"]["max_connections_per_client"] = scenario["server"].get(
        "max_connections", 10000)
    at = lambda share: round(total_s * share, 1)
    lasting = lambda share, at_least: round(max(at_least, total_s * share), 1)
    scenario["faults"] = [
        {"kind": "stall", "gpu": 2, "at_s": at(0.15), "duration_s": lasting(0.011, 0.5)},
        {"kind": "gpu_loss", "gpu": 5, "at_s": at(0.30), "duration_s": lasting(0.028, 1)},
        {"kind": "overrun", "at_s": at(0.45), "duration_s": lasting(0.042, 1), "factor": 3},
        {"kind": "gpu_loss", "gpu": 0, "at_s": at(0.62), "duration_s": lasting(0.014, 1)},
        {"kind": "stall", "gpu": 7, "at_s": at(0.78), "duration_s": lasting(0.007, 0.5)},
    ]
    scenario_path = os.path.join(work, "soak.yaml")
    with open(scenario_path, "w") as f:
        yaml.safe_dump(scenario, f, sort_keys=False)
    schedule = sorted(
        [(at(0.20), "burst"), (at(0.55), "burst"), (at(0.35), "storm"), (at(0.70), "storm"),
         (at(0.25), "sighup"), (at(0.50), "sighup"), (at(0.80), "sighup")])

    port_file = os.path.join(work, "port")
    log = open(os.path.join(work, "serve.log"), "w")
    server = subprocess.Popen(["nice", "-n", "5", args.gangway, "serve", scenario_path,
                               "--port-file", port_file], stderr=log)
    for _ in range(400):
        if os.path.exists(port_file) and os.path.getsize(port_file) > 0:
            break
        if server.poll() is not None:
            break
        time.sleep(0.05)
    if not (os.path.exists(port_file) and os.path.getsize(port_file) > 0):
        server.kill()
        print(f"soak: gangway serve did not start (log: {work}/serve.log)", file=sys.stderr)
        return 1
    port = int(open(port_file).read())
    start = time.monotonic()
    print(f"soak: gangway serve (pid {server.pid}) on port {port}, {phases} phases of "
          f"{args.phase_s:.0f} s, work folder {work}", file=sys.stderr)

    rss = []
    probes = []  # (t_s, seconds or None when it failed)
    checked = {}
    stop_sampling = threading.Event()
    stop_clients = threading.Event()
    lock = threading.Lock()

    def sample_rss():
        while not stop_sampling.is_set():
            value = rss_mib(server.pid)
            if value is not None:
                rss.append((time.monotonic() - start, value))
            stop_sampling.wait(args.rss_every_s)

    def probe():
        while not stop_clients.is_set():
            began = time.monotonic()
            try:
                answered = probe_health(port, args.probe_limit_s)
            except (OSError, http.client.HTTPException):
                answered = False
            probes.append((began - start, time.monotonic() - began if answered else None))
            stop_clients.wait(0.25)

    def checked_client(index):
        rng = random.Random(1000 + index)
        while not stop_clients.is_set():
            outcome = checked_exchange(port, stream=rng.random() < 0.7, slow=rng.random() < 0.3,
                                       rng=rng)
            with lock:
                checked[outcome] = checked.get(outcome, 0) + 1

    threads = [threading.Thread(target=sample_rss, daemon=True),
               threading.Thread(target=probe, daemon=True)]
    threads += [threading.Thread(target=checked_client, args=(i,), daemon=True)
                for i in range(args.checked_clients)]
    for thread in threads:
        thread.start()

    rng = random.Random(42)
    events = []
    bursts = []
    pending = list(schedule)

    def run_schedule(until):
        while pending and pending[0][0] <= until:
            when, what = pending.pop(0)
            delay = start + when - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            elapsed = round(time.monotonic() - start, 1)
            if what == "burst":
                path = os.path.join(work, f"burst-{len(bursts)}.json")
                bursts.append((elapsed, path, run_load(args.gangway, port, scenario_path,
                                                       args.burst_scale, args.burst_s,
                                                       1000 + len(bursts), path, drain_s)))
                events.append({"t_s": elapsed, "event": "overload burst",
                               "rate_scale": args.burst_scale, "duration_s": args.burst_s})
            elif what == "storm":
                counts = storm(port, args.storm_requests, rng)
                events.append({"t_s": elapsed, "event": "disconnect storm", **counts})
            elif what == "sighup":
                server.send_signal(signal.SIGHUP)
                time.sleep(0.1)
                events.append({"t_s": elapsed, "event": "SIGHUP",
                               "server_alive": server.poll() is None})

    results = []
    for phase in range(phases):
        phase_start = time.monotonic() - start
        path = os.path.join(work, f"phase-{phase}.json")
        load = run_load(args.gangway, port, scenario_path, args.rate_scale, args.phase_s,
                        100 + phase, path, drain_s)
        run_schedule(phase_start + args.phase_s)
        load.wait()
        summary = load_summary(path)
        summary["phase"] = phase
        summary["from_s"] = round(phase_start, 1)
        summary["faults_active"] = [
            f"{f['kind']}" + (f" gpu {f['gpu']}" if "gpu" in f else "")
            for f in scenario["faults"]
            if f["at_s"] < phase_start + args.phase_s and f["at_s"] + f["duration_s"] > phase_start]
        summary["rss_mib"] = [round(r, 1) for t, r in rss
                              if phase_start <= t < phase_start + args.phase_s]
        results.append(summary)
        print(f"soak: phase {phase}: " + json.dumps(
            {k: summary[k] for k in ("arrived", "completed", "rejected", "failed", "cancelled",
                                     "ttft_p99_ms") if k in summary}), file=sys.stderr)
    run_schedule(float("inf"))
    burst_results = []
    for elapsed, path, process in bursts:
        process.wait()
        summary = load_summary(path)
        summary["from_s"] = elapsed
        burst_results.append(summary)
    stop_clients.set()
    for thread in threads[1:]:
        thread.join(timeout=90)

    # The books once nothing is left in flight.
    for _ in range(240):
        if books(port)["live"] == 0:
            break
        time.sleep(0.25)
    before_sigterm = books(port)

    # The end: a last phase, with SIGTERM in its middle.
    path = os.path.join(work, "sigterm-phase.json")
    load = run_load(args.gangway, port, scenario_path, args.rate_scale, final_phase_s, 999, path,
                    drain_s)
    time.sleep(final_phase_s / 2)
    sigterm_at = round(time.monotonic() - start, 1)
    server.send_signal(signal.SIGTERM)
    try:
        exit_status = server.wait(timeout=120)
    except subprocess.TimeoutExpired:
        server.kill()
        exit_status = "killed after 120 s"
    load.wait()
    stop_sampling.set()
    sigterm_phase = load_summary(path)
    sigterm_phase["sigterm_at_s"] = sigterm_at

    finished_sum = sum(before_sigterm["finished"].values())
    samples = [(round(t, 1), round(r, 1)) for t, r in rss]
    settled = [s for s in samples if s[0] >= total_s / 2]
    probe_seconds = [s for _, s in probes if s is not None]
    report = {
        "minutes": round(total_s / 60, 2),
        "rate_scale": args.rate_scale,
        "phases": results,
        "bursts": burst_results,
        "events": events,
        "faults": scenario["faults"],
        "checked_clients": dict(sorted(checked.items())),
        "probes": {
            "sent": len(probes),
            "failed_at_s": [round(t, 1) for t, s in probes if s is None][:20],
            "failed": sum(1 for _, s in probes if s is None),
            "p99_ms": round(1000 * percentile(probe_seconds, 0.99), 1) if probe_seconds else None,
            "max_ms": round(1000 * max(probe_seconds), 1) if probe_seconds else None,
        },
        "books_before_sigterm": before_sigterm,
        "books_balance": before_sigterm["arrived"] - finished_sum,
        "sigterm_phase": sigterm_phase,
        "server_exit_status": exit_status,
        "rss_mib": {
            "first": samples[0][1] if samples else None,
            "at_half_time": settled[0][1] if settled else None,
            "last": samples[-1][1] if samples else None,
            "max": max(r for _, r in samples) if samples else None,
            "slope_mib_per_hour_second_half": fit_slope_mib_per_hour(settled),
            "samples": samples,
        },
    }
    broken = []
    if report["books_balance"] != 0:
        broken.append(f"arrived {before_sigterm['arrived']} != finished {finished_sum}")
    if before_sigterm["live"] != 0:
        broken.append(f"{before_sigterm['live']} requests still live with no load")
    if exit_status != 0:
        broken.append(f"server exit status {exit_status}")
    if before_sigterm["connection_errors"]:
        broken.append(f"{before_sigterm['connection_errors']} connection errors")
    for phase in results + burst_results:
        if "error" in phase:
            broken.append(phase["error"])
    if any(not e.get("server_alive", True) for e in events):
        broken.append("the server died on SIGHUP")
    bad_answers = {k: v for k, v in checked.items() if k.startswith("broken:")}
    if bad_answers:
        broken.append(f"answers without exactly one terminal outcome: {bad_answers}")
    if not checked:
        broken.append("no checked client got an answer")
    if report["probes"]["failed"]:
        broken.append(f"{report['probes']['failed']} /health probes failed or took over "
                      f"{args.probe_limit_s} s")
    rss_report = report["rss_mib"]
    if total_s >= 300 and rss_report["at_half_time"] is not None:
        allowed = rss_report["at_half_time"] * 1.1 + 16
        if rss_report["last"] > allowed:
            broken.append(f"RSS grew from {rss_report['at_half_time']} MiB at half time to "
                          f"{rss_report['last']} MiB (more than 10 % + 16 MiB)")
    report["broken_promises"] = broken

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
    print(json.dumps({k: v for k, v in report.items() if k not in ("phases", "rss_mib")},
                     indent=1))
    print("phase  from_s  arrived  completed  rejected  failed  cancelled  transport  ttft_p99_ms  "
          "e2e_p99_ms  rss_mib(min-max)  faults")
    for phase in results:
        rss_range = (f"{min(phase['rss_mib']):.1f}-{max(phase['rss_mib']):.1f}"
                     if phase["rss_mib"] else "-")
        print(f"{phase['phase']:5d}  {phase['from_s']:6.0f}  {phase.get('arrived', '?'):7}  "
              f"{phase.get('completed', '?'):9}  {phase.get('rejected', '?'):8}  "
              f"{phase.get('failed', '?'):6}  {phase.get('cancelled', '?'):9}  "
              f"{sum(phase.get('transport_errors', {}).values()):9}  "
              f"{phase.get('ttft_p99_ms') or 0:11.1f}  {phase.get('e2e_p99_ms') or 0:10.1f}  "
              f"{rss_range:16}  {', '.join(phase['faults_active'])}")
    print(f"RSS MiB: first {rss_report['first']}, at half time {rss_report['at_half_time']}, "
          f"last {rss_report['last']}, max {rss_report['max']}, slope "
          f"{rss_report['slope_mib_per_hour_second_half']} MiB/h over the second half")
    print(f"checked clients: {report['checked_clients']}; probes: {report['probes']}")
    print("broken promises: " + ("none" if not broken else "; ".join(broken)))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
