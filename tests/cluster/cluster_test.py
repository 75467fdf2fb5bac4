#!/usr/bin/python3
"""Three `gangway serve` nodes behind one HAProxy on loopback, configured by the shipped
deploy/haproxy/render_config.py (scripts/experiments/cluster_loopback.py starts and stops them).

    cluster_test.py GANGWAY_BINARY CASE

Cases (each a ctest test of its own, label cluster):
  spread  a hot tenant pinned to node 1 overloads it: its agent weight falls below the others',
          the general traffic goes to the other nodes, and the hot tenant's retry-elsewhere
          rejections are served there; no request is lost or served twice.
  drain   SIGTERM to a node under load: its agent says drain, it exits 0 once its requests are
          done, and no request fails.
  kill    kill -9 of a node under load: its started streams fail at their clients (counted), the
          rest is served elsewhere, HAProxy marks it down within its check interval, and the
          restarted node takes traffic again.
  config  bad configuration: an agent port another process holds, an agent port equal to the
          HTTP port, an unreachable node; each gives a clear error.
  deploy  the shipped files: deploy/haproxy/haproxy.cfg is what render_config.py writes and
          HAProxy accepts it; deploy/systemd/gangway.service passes systemd-analyze verify.
Exit 0 on success, 1 on a failed check (the message says which), 77 when haproxy is missing.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "experiments"))
import cluster_loopback as loopback  # noqa: E402

NODE_SCENARIO = os.path.join(HERE, "node.yaml")


class CheckFailed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise CheckFailed(message)
    print(f"ok: {message}")


def scenario_variant(workdir, name, streams, duration_s=None, rate_scale=None,
                     output_tokens=None):
    """node.yaml with only the named streams (and other run settings): the load to send."""
    with open(NODE_SCENARIO) as f:
        doc = yaml.safe_load(f)
    doc["workload"]["streams"] = [s for s in doc["workload"]["streams"] if s["name"] in streams]
    for stream in doc["workload"]["streams"]:
        if rate_scale:
            stream["arrival"]["rate_per_s"] *= rate_scale
        if output_tokens:
            stream["output_tokens"] = stream["max_tokens"] = output_tokens
    if duration_s:
        doc["duration_s"] = duration_s
    path = os.path.join(workdir, name + ".yaml")
    with open(path, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    return path


def totals(document):
    return document["runs"][0]["total"]


def node_counts(nodes):
    """Per node: requests it saw and how they ended (from its /metrics)."""
    counts = []
    for node in nodes:
        text = node.metrics()
        counts.append({
            "arrived": loopback.prometheus_sum(text, "gangway_requests_arrived_total"),
            "arrived_general": loopback.prometheus_sum(text, "gangway_requests_arrived_total",
                                                       slo_class="interactive"),
            "completed": loopback.prometheus_sum(text, "gangway_requests_finished_total",
                                                 outcome="completed"),
            "rejected": loopback.prometheus_sum(text, "gangway_requests_finished_total",
                                                outcome="rejected"),
        })
    return counts


def expect_every_request_answered_once(document, counts=None, retries=None):
    total = totals(document)
    load = document["runs"][0]["load"]
    ended = total["completed"] + total["rejected"] + total["failed"] + total["cancelled"]
    check(ended == total["arrived"],
          f"every measured request ended once at its client ({ended} of {total['arrived']})")
    if counts is not None:
        served = sum(c["completed"] for c in counts)
        # The nodes' counts include the warm-up, the client's measured window does not: compare
        # with everything the client saw completed (HTTP 200 with [DONE]).
        ok = load["http_status"].get("200", 0)
        check(served == ok, f"the nodes completed exactly the requests answered 200 "
                            f"({served:.0f} = {ok}): none served twice")
        if retries is not None:
            arrived = sum(c["arrived"] for c in counts)
            check(arrived == load["sent"] + retries,
                  f"the nodes saw each request once plus HAProxy's retries "
                  f"({arrived:.0f} = {load['sent']} + {retries})")


def case_spread(binary, workdir):
    load_scenario = scenario_variant(workdir, "spread", ["general", "hot"])
    weights = {}
    with loopback.loopback_cluster(binary, NODE_SCENARIO, 3, pins=[("hot", 1)],
                                   keep=os.path.join(workdir, "spread")) as (nodes, balancer):
        stop = threading.Event()

        def sample():
            while not stop.is_set():
                try:
                    for name, row in balancer.servers().items():
                        weights.setdefault(name, []).append(int(row["weight"] or 0))
                except OSError:
                    pass
                stop.wait(0.1)
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            document = loopback.run_load(binary, load_scenario, balancer.url)
        finally:
            stop.set()
            sampler.join(timeout=5)
        counts = node_counts(nodes)
        backend = balancer.backend()
    retries = int(backend["wretr"] or 0)
    print("per node:", counts, "haproxy retries:", retries, "redispatches:", backend["wredis"])
    mean = {name: sum(v) / len(v) for name, v in weights.items() if v}
    print("mean agent weights:", mean)
    check(mean["node1"] < 0.5 * min(mean["node2"], mean["node3"]),
          f"the hot node's agent weight ({mean['node1']:.0f}) is under half the others' "
          f"({mean['node2']:.0f}, {mean['node3']:.0f})")
    general = [c["arrived_general"] for c in counts]
    # Round robin would give each node the same share of the general traffic; weights under
    # half the others' give the hot node about that fraction of theirs. A few hundred requests
    # leave room for chance, so the bound sits well above the weights' ratio.
    check(general[0] < 0.7 * min(general[1], general[2]),
          f"the hot node got clearly less of the general traffic than each other node "
          f"({general[0]:.0f} vs {general[1]:.0f}, {general[2]:.0f}: under 70 %)")
    check(counts[0]["rejected"] > 0 and retries > 0,
          f"the hot node turned requests away ({counts[0]['rejected']:.0f}) and HAProxy sent "
          f"them on ({retries} retries)")
    total = totals(document)
    check(total["rejected"] <= 0.02 * total["arrived"] and total["failed"] == 0,
          f"the other nodes served the hot node's rejections: {total['rejected']} of "
          f"{total['arrived']} rejected at the client, {total['failed']} failed")
    expect_every_request_answered_once(document, counts, retries)


def live_requests(node):
    status, body = loopback.http_get(node.url + "/health", 2.0)
    return json.loads(body)["live_requests"] if status == 200 else 0


def case_drain(binary, workdir):
    # Streams of 40 tokens (0.8 s) at 60 % of the cluster's capacity: the drained node has
    # requests to finish for a while, and two nodes carry the traffic after it.
    load_scenario = scenario_variant(workdir, "steady", ["general"], duration_s=4, rate_scale=0.4,
                                     output_tokens=40)
    with loopback.loopback_cluster(binary, NODE_SCENARIO, 3,
                                   keep=os.path.join(workdir, "drain")) as (nodes, balancer):
        load = loopback.start_load(binary, load_scenario, balancer.url)
        time.sleep(1.5)
        target = nodes[1]
        # Signalled while it has requests in flight, so that the drain has something to finish.
        loopback.wait_until(lambda: live_requests(target) > 0, 3, interval_s=0.005,
                            what="the node to have requests in flight")
        target.signal(signal.SIGTERM)
        answer = loopback.wait_until(lambda: target.agent() == "drain" and "drain", 2,
                                     what="the agent to answer drain")
        check(answer == "drain", "the draining node's agent answers 'drain'")
        # The agent (every 100 ms) says drain before the readiness check (every 200 ms, down
        # after two 503s) marks it down.
        seen = loopback.wait_until(
            lambda: (not balancer.servers()["node2"]["status"].startswith("UP")
                     and balancer.servers()["node2"]["status"]),
            3, interval_s=0.005, what="HAProxy to stop sending new requests to the draining node")
        check(seen.startswith("DRAIN"), f"HAProxy shows the draining node as {seen}")
        code = target.wait(15)
        check(code == 0, f"the drained node exited 0 (got {code})")
        document = loopback.finish_load(load)
        counts = node_counts([nodes[0], nodes[2]])
    total = totals(document)
    load_info = document["runs"][0]["load"]
    check(total["failed"] == 0 and total["rejected"] == 0 and not load_info["transport_errors"],
          f"no request failed or was turned away ({total['failed']} failed, "
          f"{total['rejected']} rejected, transport errors {load_info['transport_errors']})")
    check(total["completed"] == total["arrived"],
          f"every request completed ({total['completed']} of {total['arrived']})")
    check(all(c["completed"] > 0 for c in counts), "the other nodes carried the traffic")


def case_kill(binary, workdir):
    load_scenario = scenario_variant(workdir, "steady", ["general"], duration_s=5, rate_scale=2.0)
    with loopback.loopback_cluster(binary, NODE_SCENARIO, 3,
                                   keep=os.path.join(workdir, "kill")) as (nodes, balancer):
        load = loopback.start_load(binary, load_scenario, balancer.url)
        time.sleep(1.5)
        target = nodes[1]
        loopback.wait_until(lambda: live_requests(target) > 0, 3, interval_s=0.005,
                            what="the node to have requests in flight")
        in_flight = live_requests(target)
        killed_at = time.monotonic()
        target.process.send_signal(signal.SIGKILL)
        target.wait(5)
        loopback.wait_until(lambda: balancer.servers()["node2"]["status"].startswith("DOWN"), 5,
                            interval_s=0.01, what="HAProxy to mark the killed node down")
        down_after = time.monotonic() - killed_at
        # The check interval is 200 ms with fall 2: down within 2 intervals plus a margin for a
        # busy machine; refused connections from live traffic mark it down sooner.
        check(down_after < 1.5, f"HAProxy marked the killed node down after {down_after:.2f} s")
        time.sleep(0.5)
        target.start(wait=True)
        loopback.wait_until(lambda: balancer.servers()["node2"]["status"].startswith("UP"), 5,
                            interval_s=0.05, what="the restarted node to be UP in HAProxy")
        document = loopback.finish_load(load)
        rejoined = node_counts([target])[0]
    total = totals(document)
    load_info = document["runs"][0]["load"]
    print("client:", {k: total[k] for k in ("arrived", "completed", "rejected", "failed")},
          "transport errors:", load_info["transport_errors"], "status:", load_info["http_status"])
    lost = total["failed"]
    check(lost >= 1, f"the killed node's started streams failed at their clients ({lost})")
    # Streams that had started fail; requests still queued there had no answer yet and are sent
    # to another node (retry-on empty-response). A few may have arrived between the count and
    # the kill.
    check(lost == sum(load_info["transport_errors"].values()) and lost <= in_flight + 5,
          f"the failures are the killed node's requests in flight, seen as broken streams "
          f"({lost} failed, {in_flight} in flight there just before the kill)")
    check(total["completed"] + total["failed"] + total["rejected"] + total["cancelled"]
          == total["arrived"], "every request ended once")
    check(total["rejected"] == 0, f"nothing else was turned away ({total['rejected']})")
    check(rejoined["completed"] > 0,
          f"the restarted node took traffic again ({rejoined['completed']:.0f} completed)")


def case_config(binary, workdir):
    # An agent port another process holds: exit 2 naming the key and the address.
    with socket.socket() as holder:
        holder.bind((loopback.LOCALHOST, 0))
        holder.listen(1)
        taken = holder.getsockname()[1]
        port = loopback.free_ports(1)[0]
        out = subprocess.run([binary, "serve", NODE_SCENARIO, "--port", str(port),
                              "--agent-port", str(taken)], capture_output=True, text=True,
                             timeout=30)
    check(out.returncode == 2 and "server.agent_port" in out.stderr
          and f"127.0.0.1:{taken}" in out.stderr and "in use" in out.stderr,
          f"a taken agent port exits 2 with a clear line: {out.stderr.strip()}")
    # The agent port equal to the HTTP port, in the file: exit 2 at its line.
    clash = os.path.join(workdir, "clash.yaml")
    with open(NODE_SCENARIO) as f:
        text = f.read()
    with open(clash, "w") as f:
        f.write(text.replace("  drain_grace_s: 10\n", "  port: 8123\n  agent_port: 8123\n"))
    out = subprocess.run([binary, "serve", clash], capture_output=True, text=True, timeout=30)
    check(out.returncode == 2 and "clash.yaml:" in out.stderr
          and "server.agent_port" in out.stderr and "must differ" in out.stderr,
          f"an agent port equal to the HTTP port exits 2 at its line: {out.stderr.strip()}")
    out = subprocess.run([binary, "serve", NODE_SCENARIO, "--port", "8124", "--agent-port",
                          "8124"], capture_output=True, text=True, timeout=30)
    check(out.returncode == 2 and "--agent-port" in out.stderr,
          f"the same clash from the flags exits 2: {out.stderr.strip()}")
    # The renderer refuses what HAProxy would take and route badly.
    render = [sys.executable, loopback.RENDER]
    out = subprocess.run(render + ["--node", "127.0.0.1:9000:9000", "--node", "127.0.0.1:9001:9002"],
                         capture_output=True, text=True, timeout=30)
    check(out.returncode == 2 and "agent port must differ" in out.stderr,
          f"render_config.py refuses a node whose ports clash: {out.stderr.strip()}")
    out = subprocess.run(render + ["--node", "127.0.0.1:9000:9100", "--node", "127.0.0.1:9100:9200"],
                         capture_output=True, text=True, timeout=30)
    check(out.returncode == 2 and "given twice" in out.stderr,
          f"render_config.py refuses a port used twice: {out.stderr.strip()}")
    # An unreachable node: HAProxy shows it DOWN with the check's reason, the others serve.
    nodes = [loopback.Node(binary, NODE_SCENARIO, workdir, i + 1) for i in range(3)]
    balancer = None
    try:
        for node in nodes[:2]:
            node.start()
        balancer = loopback.Balancer(nodes, workdir).start()
        loopback.wait_until(lambda: balancer.servers()["node3"]["status"].startswith("DOWN"), 10,
                            interval_s=0.05, what="the unreachable node DOWN")
        row = balancer.servers()["node3"]
        print("node3 in HAProxy:", {k: row[k] for k in ("status", "check_status", "last_chk")})
        check(row["check_status"] == "L4CON" and "refused" in row["last_chk"].lower(),
              f"HAProxy says why: {row['check_status']} {row['last_chk']}")
        loopback.wait_until(lambda: all(balancer.servers()[n]["status"].startswith("UP")
                                        for n in ("node1", "node2")), 10,
                            interval_s=0.05, what="the reachable nodes UP")
        statuses = [loopback.http_get(balancer.url + "/v1/models")[0] for _ in range(6)]
        check(statuses == [200] * 6, f"the reachable nodes answer every request ({statuses})")
    finally:
        for node in nodes:
            node.stop()
        if balancer:
            balancer.stop()


def retry_elsewhere_statuses():
    """The statuses of docs/server.md's error table whose router action sends the request to
    another node ("retry elsewhere", "send to another node")."""
    with open(os.path.join(HERE, "..", "..", "docs", "server.md")) as f:
        rows = [line.split("|")[1:-1] for line in f if re.match(r"\| [0-9]{3}\b", line)]
    statuses = {int(row[0].split()[0]) for row in rows
                if "retry elsewhere" in row[-1] or "another node" in row[-1]}
    check(statuses, "docs/server.md's error table names statuses to retry elsewhere")
    return statuses


def case_deploy(binary, workdir):
    shipped_path = os.path.join(HERE, "..", "..", "deploy", "haproxy", "haproxy.cfg")
    with open(shipped_path) as f:
        shipped = f.read()
    rendered = loopback.render_config.render(loopback.render_config.EXAMPLE_NODES)
    check(shipped == rendered, "deploy/haproxy/haproxy.cfg is render_config.py's output for its "
                               "example nodes (regenerate it with the command in its header)")
    defaults = shipped.split("\ndefaults\n", 1)[1].split("\n\n", 1)[0].splitlines()
    check("    option http-no-delay" in defaults,
          "the shipped configuration forwards each token at once (option http-no-delay in "
          "defaults): without it HAProxy holds a stream's first event about 200 ms")
    retried = retry_elsewhere_statuses()
    retry_on = next(line.split()[1:] for line in shipped.splitlines()
                    if line.strip().startswith("retry-on "))
    listed = {int(word) for word in retry_on if word.isdigit()}
    check(listed == retried, f"HAProxy retries exactly the statuses docs/server.md says to send "
                             f"to another node ({sorted(listed)} against {sorted(retried)})")
    out = subprocess.run([loopback.haproxy_binary(), "-c", "-f", shipped_path],
                         capture_output=True, text=True, timeout=30)
    check(out.returncode == 0, f"haproxy -c accepts the shipped configuration: "
                               f"{(out.stdout + out.stderr).strip()}")
    for count in (2, 64):
        path = os.path.join(workdir, f"nodes{count}.cfg")
        with open(path, "w") as f:
            f.write(loopback.render_config.render(
                [(f"10.0.{i // 200}.{i % 200 + 10}", 8000, 9100) for i in range(count)]))
        out = subprocess.run([loopback.haproxy_binary(), "-c", "-q", "-f", path],
                             capture_output=True, text=True, timeout=30)
        check(out.returncode == 0, f"haproxy -c accepts the configuration for {count} nodes "
                                   f"{out.stderr.strip()}")
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        print("skipped: systemd-analyze is not installed; the unit is not checked")
        return
    unit = os.path.join(HERE, "..", "..", "deploy", "systemd", "gangway.service")
    with open(unit) as f:
        text = f.read()
    check("ExecStart=/usr/local/bin/gangway serve " in text, "the unit runs gangway serve")
    local = os.path.join(workdir, "gangway.service")
    with open(local, "w") as f:
        f.write(text.replace("/usr/local/bin/gangway", os.path.abspath(binary)))
    out = subprocess.run([analyze, "verify", local], capture_output=True, text=True, timeout=60,
                         cwd=workdir)
    check(out.returncode == 0 and not out.stderr.strip(),
          f"systemd-analyze verify accepts the unit {out.stderr.strip()}")


CASES = {"spread": case_spread, "drain": case_drain, "kill": case_kill, "config": case_config,
         "deploy": case_deploy}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in CASES:
        print(__doc__, file=sys.stderr)
        return 2
    binary, case = sys.argv[1], sys.argv[2]
    if not loopback.haproxy_binary():
        print("skipped: haproxy is not installed (scripts/setup.sh installs it)")
        return 77
    with tempfile.TemporaryDirectory(prefix=f"gangway-cluster-{case}-") as workdir:
        try:
            CASES[case](binary, workdir)
        except (CheckFailed, TimeoutError, RuntimeError) as error:
            print(f"FAILED: {error}")
            for name in sorted(os.listdir(workdir)):
                path = os.path.join(workdir, name)
                if os.path.isdir(path):
                    for log in sorted(os.listdir(path)):
                        if log.endswith(".log"):
                            with open(os.path.join(path, log), errors="replace") as f:
                                print(f"--- {name}/{log} (last lines)")
                                print("".join(f.readlines()[-15:]))
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
