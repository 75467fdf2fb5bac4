#!/usr/bin/env python3
"""What the engines_e2e.py cases share: starting processes (engines, fake engines, gangway serve)
and stopping every one of them at the end, waiting for a port, the HTTP helpers (plain, JSON and
streamed), reading a Prometheus metric, and a Node of gangway serve over its engines.
"""
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "fake_engine.py")
PROCESSES = []


def fail(message):
    print("FAIL: " + message, flush=True)
    raise SystemExit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(command, **kwargs):
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs)
    PROCESSES.append(process)
    return process


def stop_all():
    for process in PROCESSES:
        if process.poll() is None:
            process.kill()
    for process in PROCESSES:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def wait_http(port, path="/health", timeout_s=20):
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", path)
            if connection.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    fail(f"nothing answered on port {port}{path} within {timeout_s} s")


def start_serve(gangway, scenario, directory, timeout_s=30, what="start"):
    """Starts `gangway serve SCENARIO` on a free port; returns the process and the port, once
    /health answers. Fails with the server's stderr if it exits first, or names `what` it did not
    do within `timeout_s`."""
    port_file = os.path.join(directory, "port")
    serve = start([gangway, "serve", scenario, "--port", "0", "--port-file", port_file])
    deadline = time.time() + timeout_s
    while not os.path.exists(port_file):
        if serve.poll() is not None:
            fail("gangway serve exited: " + serve.stderr.read().decode())
        if time.time() > deadline:
            fail("gangway serve did not " + what)
        time.sleep(0.05)
    with open(port_file) as f:
        port = int(f.read().strip())
    wait_http(port)
    return serve, port


def get(port, path, timeout=10):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    connection.request("GET", path)
    response = connection.getresponse()
    return response.status, response.read().decode()


def post(port, path, body, timeout=30):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    return response.status, response.read().decode()


def stream(port, path, body, timeout=30, stop_after=None):
    """Streams an answer; returns (status, data payloads). stop_after: close after N events."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    events = []
    if response.status != 200:
        return response.status, [response.read().decode()]
    buffer = b""
    while True:
        piece = response.read1(65536)
        if not piece:
            break
        buffer += piece
        while b"\n\n" in buffer:
            event, buffer = buffer.split(b"\n\n", 1)
            for line in event.split(b"\n"):
                if line.startswith(b"data: "):
                    events.append(line[6:].decode())
            if stop_after is not None and len(events) >= stop_after:
                connection.sock.shutdown(socket.SHUT_RDWR)
                connection.close()
                return response.status, events
    return response.status, events


def metric(text, name, labels=""):
    total = 0.0
    found = False
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        key, _, value = line.rpartition(" ")
        if key == name or (key.startswith(name + "{") and labels in key):
            total += float(value)
            found = True
    return total if found else None


def has_engine_command(gangway):
    result = subprocess.run([gangway, "--help"], capture_output=True, timeout=30)
    return any(line.split()[:1] == ["engine"] for line in result.stdout.decode().splitlines())


class Node:
    """gangway serve over small-model and large-model engines."""

    def __init__(self, gangway, kind="vllm", small=2, behaviours=None, use_fake=False,
                 extra_server="", token_ms=5, small_model_extra=""):
        self.gangway = gangway
        self.dir = tempfile.mkdtemp(prefix="gangway-engines-")
        self.small_ports = [free_port() for _ in range(small)]
        self.large_port = free_port()
        behaviours = behaviours or {}
        engines = [("llama-3-8b", port, False) for port in self.small_ports]
        engines.append(("llama-3-70b", self.large_port, True))
        for index, (model, port, large) in enumerate(engines):
            behaviour = behaviours.get(index)
            if use_fake or behaviour:
                start([sys.executable, FAKE, "--port", str(port), "--model", model,
                       "--behaviour", behaviour or "normal", "--token-ms", str(token_ms)])
            else:
                # The memory shares gangway derives for this node (its `engine` log lines).
                command = [gangway, "engine", "--model", model, "--port", str(port),
                           "--gpu-memory-utilization", "0.509" if large else "0.490"]
                if large:
                    command += ["--tensor-parallel-size", "8"]
                start(command, env=dict(os.environ, VLLM_SERVER_DEV_MODE="1"))
        for index, (model, port, large) in enumerate(engines):
            if behaviours.get(index) != "hang":
                wait_http(port, "/v1/models")
        gpus = ", ".join(str(g) for g in range(small))
        urls_small = ", ".join(f"http://127.0.0.1:{p}" for p in self.small_ports)
        scenario = f"""
models:
  - {{name: llama-3-8b, tier: small, shape: llama-3-8b, gpus: [{gpus}]{small_model_extra}}}
  - {{name: llama-3-70b, tier: large, shape: llama-3-70b, gpus: all, tensor_parallel: 8}}
policy: {{name: gangway, lease_max_ms: 50, max_large_wait_ms: 200}}
workload:
  streams:
    - {{name: s, model: llama-3-8b, arrival: {{rate_per_s: 1}}, prompt_tokens: 8, output_tokens: 4}}
server:
  engine_idle_timeout_s: 2
  engine_control_timeout_s: 1
  engine_health_interval_s: 0.2
  log_level: warn
{extra_server}
  engines:
    llama-3-8b: {{kind: {kind}, urls: [{urls_small}]}}
    llama-3-70b: {{kind: {kind}, urls: [http://127.0.0.1:{self.large_port}]}}
"""
        self.scenario = os.path.join(self.dir, "node.yaml")
        with open(self.scenario, "w") as out:
            out.write(scenario)
        self.serve, self.port = start_serve(gangway, self.scenario, self.dir)

    def metrics(self):
        return get(self.port, "/metrics")[1]


def completion(model, max_tokens=8, stream_it=False, chat=False, usage=False):
    body = {"model": model, "max_tokens": max_tokens, "stream": stream_it}
    if chat:
        body["messages"] = [{"role": "user", "content": "Hello"}]
    else:
        body["prompt"] = "Hello, GPUs"
    if usage:
        body["stream_options"] = {"include_usage": True}
    return body
