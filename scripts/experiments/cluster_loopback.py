"""A cluster on loopback: several `gangway serve` nodes behind one HAProxy, configured by
deploy/haproxy/render_config.py (the shipped configuration), for the cluster tests
(tests/cluster) and experiment (scripts/experiments/cluster.py).

Every process is started here and stopped here (also when a test fails), every wait is bounded,
and every address is 127.0.0.1. Uses only Debian's python3 and the haproxy package.
"""

import contextlib
import csv
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RENDER = os.path.join(ROOT, "deploy", "haproxy", "render_config.py")
sys.path.insert(0, os.path.dirname(RENDER))
import render_config  # noqa: E402  (deploy/haproxy/render_config.py)

LOCALHOST = "127.0.0.1"


def haproxy_binary():
    return shutil.which("haproxy") or ("/usr/sbin/haproxy" if os.path.exists("/usr/sbin/haproxy")
                                       else None)


def free_ports(count):
    """Ports the kernel has just handed out and released: free unless another process takes one
    in the moment before it is bound again."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind((LOCALHOST, 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def wait_until(predicate, timeout_s, interval_s=0.02, what="a condition"):
    """Polls `predicate` until it returns something true; raises TimeoutError after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{what} not reached within {timeout_s} s")
        time.sleep(interval_s)


def http_get(url, timeout_s=2.0):
    """(status, body) of a GET; (None, error text) when nothing answered."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except (urllib.error.URLError, OSError) as error:
        return None, str(error)


def agent_answer(port, timeout_s=2.0):
    """The line a node's agent check answers (what HAProxy reads), without its newline."""
    with socket.create_connection((LOCALHOST, port), timeout=timeout_s) as s:
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(256)
            if not chunk:
                break
            data += chunk
    return data.decode().rstrip("\n")


def prometheus_sum(text, name, **labels):
    """The sum of a Prometheus metric's samples whose labels include `labels`."""
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        head, _, value = line.rpartition(" ")
        if all(f'{key}="{val}"' in head for key, val in labels.items()):
            total += float(value)
    return total


class Node:
    """One `gangway serve` process on loopback."""

    def __init__(self, binary, scenario, workdir, index, port=None, agent_port=None,
                 extra_args=()):
        self.binary = binary
        self.scenario = scenario
        self.index = index
        if port is None or agent_port is None:
            port, agent_port = free_ports(2)
        self.port = port
        self.agent_port = agent_port
        self.extra_args = list(extra_args)
        self.log_path = os.path.join(workdir, f"node{index}.log")
        self.process = None

    @property
    def url(self):
        return f"http://{LOCALHOST}:{self.port}"

    def start(self, wait=True):
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [self.binary, "serve", self.scenario, "--host", LOCALHOST, "--port", str(self.port),
             "--agent-port", str(self.agent_port), *self.extra_args],
            stdout=self.log, stderr=subprocess.STDOUT)
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout_s=15):
        def ready():
            if self.process.poll() is not None:
                raise RuntimeError(f"node{self.index} exited with {self.process.returncode}: "
                                   + self.log_text()[-2000:])
            return http_get(self.url + "/ready", 1.0)[0] == 200
        wait_until(ready, timeout_s, what=f"node{self.index} ready")

    def metrics(self):
        status, body = http_get(self.url + "/metrics", 5.0)
        if status != 200:
            raise RuntimeError(f"node{self.index} /metrics: {status} {body[:200]}")
        return body

    def agent(self):
        return agent_answer(self.agent_port)

    def signal(self, number):
        self.process.send_signal(number)

    def wait(self, timeout_s):
        return self.process.wait(timeout=timeout_s)

    def running(self):
        return self.process is not None and self.process.poll() is None

    def log_text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self):
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.log.close()


class Balancer:
    """HAProxy on loopback with the configuration render_config.py writes for the nodes."""

    def __init__(self, nodes, workdir, agent=True, check_interval="200ms",
                 agent_interval="100ms", retries=3, pins=(), maxconn=1500):
        self.port, self.stats_port = free_ports(2)
        self.socket_path = os.path.join(workdir, "haproxy.sock")
        self.config_path = os.path.join(workdir, "haproxy.cfg")
        self.log_path = os.path.join(workdir, "haproxy.log")
        text = render_config.render(
            [(LOCALHOST, n.port, n.agent_port) for n in nodes],
            bind=f"{LOCALHOST}:{self.port}", stats_bind=f"{LOCALHOST}:{self.stats_port}",
            check=check_interval, agent_interval=agent_interval, agent=agent, retries=retries,
            pins=pins, stats_socket=self.socket_path, log="stderr format raw local0 info",
            maxconn=maxconn)
        with open(self.config_path, "w") as f:
            f.write(text)
        self.process = None

    @property
    def url(self):
        return f"http://{LOCALHOST}:{self.port}"

    def start(self):
        binary = haproxy_binary()
        if not binary:
            raise RuntimeError("haproxy is not installed (scripts/setup.sh installs it)")
        check = subprocess.run([binary, "-c", "-f", self.config_path],
                               capture_output=True, text=True, timeout=30)
        if check.returncode != 0:
            raise RuntimeError("haproxy -c rejected the configuration:\n" + check.stdout
                               + check.stderr)
        if os.path.exists(self.socket_path):
            os.unlink(self.socket_path)
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen([binary, "-db", "-f", self.config_path],
                                        stdout=self.log, stderr=subprocess.STDOUT)

        def answering():
            if self.process.poll() is not None:
                raise RuntimeError("haproxy exited: " + open(self.log_path).read()[-2000:])
            try:
                return "pxname" in self.command("show stat")
            except OSError:
                return False
        wait_until(answering, 10, interval_s=0.05, what="haproxy's stats socket")
        return self

    def command(self, text):
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(5)
            s.connect(self.socket_path)
            s.sendall(text.encode() + b"\n")
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        return data.decode()

    def servers(self):
        """{server name: row of `show stat`} for the backend's servers."""
        text = self.command("show stat").lstrip("# ")
        rows = csv.DictReader(io.StringIO(text))
        return {row["svname"]: row for row in rows
                if row["pxname"] == "gangway_nodes" and row["svname"] not in ("FRONTEND",
                                                                             "BACKEND")}

    def backend(self):
        text = self.command("show stat").lstrip("# ")
        for row in csv.DictReader(io.StringIO(text)):
            if row["pxname"] == "gangway_nodes" and row["svname"] == "BACKEND":
                return row
        raise RuntimeError("no backend row in show stat")

    def wait_all_up(self, count, timeout_s=15):
        def up():
            rows = self.servers()
            return len(rows) == count and all(r["status"].startswith("UP") for r in rows.values())
        wait_until(up, timeout_s, interval_s=0.05, what=f"{count} nodes UP in haproxy")

    def stop(self):
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.log.close()


@contextlib.contextmanager
def loopback_cluster(binary, scenario, count, agent=True, check_interval="200ms",
                     agent_interval="100ms", retries=3, pins=(), node_args=(), keep=None,
                     maxconn=1500):
    """Starts `count` nodes of `scenario` and HAProxy in front of them; yields (nodes, balancer)
    once every node is UP there; stops everything on exit. Logs stay in `keep` if given.
    `maxconn`: HAProxy's, which needs about twice as many descriptors (the machine's hard limit
    must allow them)."""
    workdir = keep or tempfile.mkdtemp(prefix="gangway-cluster-")
    os.makedirs(workdir, exist_ok=True)
    nodes = []
    balancer = None
    try:
        for i in range(count):
            nodes.append(Node(binary, scenario, workdir, i + 1, extra_args=node_args).start())
        balancer = Balancer(nodes, workdir, agent, check_interval, agent_interval, retries,
                            pins, maxconn).start()
        balancer.wait_all_up(count)
        yield nodes, balancer
    finally:
        for node in nodes:
            node.stop()
        if balancer:
            balancer.stop()
        if keep is None:
            shutil.rmtree(workdir, ignore_errors=True)


def run_load(binary, scenario, url, extra_args=(), timeout_s=120):
    """`gangway load --json` against `url`; returns the parsed document."""
    out = subprocess.run([binary, "load", "--url", url, scenario, "--json", "--no-progress",
                          *extra_args], capture_output=True, text=True, timeout=timeout_s)
    if out.returncode != 0:
        raise RuntimeError(f"gangway load exited {out.returncode}: {out.stderr[-2000:]}")
    return json.loads(out.stdout)


def start_load(binary, scenario, url, extra_args=()):
    """`gangway load --json` in the background; finish with finish_load()."""
    return subprocess.Popen([binary, "load", "--url", url, scenario, "--json", "--no-progress",
                             *extra_args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finish_load(process, timeout_s=120):
    out, err = process.communicate(timeout=timeout_s)
    if process.returncode != 0:
        raise RuntimeError(f"gangway load exited {process.returncode}: {err[-2000:]}")
    return json.loads(out)
