#!/usr/bin/env python3
"""Pause and resume latency of `gangway engine` (the test engine), as a client sees them.

Starts the engine on a free loopback port, keeps --streams streaming completions running (long
max_tokens), then --cycles times: POST /pause?mode=keep and time until its answer
(pause-to-paused: at most the iteration in flight plus HTTP), then POST /resume and time until the
first token after it on any stream (resume-to-first-token: HTTP, the first iteration after
resume, delivery). Prints p50/p99/max in ms and the decode iteration the cost model gives, for
scale. Figures go to bench/README.md ("Test engine"); nothing here is asserted.

Usage: engine_pause_bench.py [--gangway build/release/src/cli/gangway] [--model llama-3-8b]
                             [--streams 32] [--cycles 50]
"""
import argparse
import http.client
import json
import os
import signal
import subprocess
import tempfile
import threading
import time


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def summary(values):
    return (f"p50 {1000 * percentile(values, 0.5):.2f}  p99 {1000 * percentile(values, 0.99):.2f}"
            f"  max {1000 * max(values):.2f} ms")


class StreamReader(threading.Thread):
    def __init__(self, port, stop, token_times, lock):
        super().__init__(daemon=True)
        self.port, self.stop, self.token_times, self.lock = port, stop, token_times, lock

    def run(self):
        while not self.stop.is_set():
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            body = json.dumps({"prompt": "bench", "max_tokens": 30000, "stream": True})
            connection.request("POST", "/v1/completions", body=body,
                               headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            while not self.stop.is_set():
                line = response.readline()
                if not line or line.startswith(b"data: [DONE]"):
                    break
                if line.startswith(b"data: "):
                    now = time.perf_counter()
                    with self.lock:
                        self.token_times.append(now)
            connection.close()


def post(port, path):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("POST", path)
    response = connection.getresponse()
    response.read()
    connection.close()
    assert response.status == 200, (path, response.status)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gangway", default="build/release/src/cli/gangway")
    parser.add_argument("--model", default="llama-3-8b")
    parser.add_argument("--streams", type=int, default=32)
    parser.add_argument("--cycles", type=int, default=50)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as work:
        port_file = os.path.join(work, "port")
        engine = subprocess.Popen([args.gangway, "engine", "--model", args.model, "--port", "0",
                                   "--port-file", port_file], stderr=subprocess.DEVNULL)
        for _ in range(500):
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            time.sleep(0.01)
        port = int(open(port_file).read())
        stop, lock, token_times = threading.Event(), threading.Lock(), []
        readers = [StreamReader(port, stop, token_times, lock) for _ in range(args.streams)]
        for reader in readers:
            reader.start()
        time.sleep(1.0)  # every stream past its prefill, decoding
        pause_s, resume_s, first_token_s = [], [], []
        for _ in range(args.cycles):
            start = time.perf_counter()
            post(port, "/pause?mode=keep")
            pause_s.append(time.perf_counter() - start)
            time.sleep(0.05)
            start = time.perf_counter()
            post(port, "/resume")
            resume_s.append(time.perf_counter() - start)
            for _ in range(1000):
                with lock:
                    after = [t for t in token_times[-4 * args.streams:] if t > start]
                if after:
                    first_token_s.append(min(after) - start)
                    break
                time.sleep(0.001)
            time.sleep(0.05)
        stop.set()
        engine.send_signal(signal.SIGTERM)
        engine.wait(timeout=30)
    print(f"gangway engine --model {args.model}, {args.streams} streams decoding, "
          f"{args.cycles} cycles")
    print(f"pause (keep) to paused answer:   {summary(pause_s)}")
    print(f"resume answer:                   {summary(resume_s)}")
    print(f"resume to first token:           {summary(first_token_s)}")
    gaps = sorted(b - a for a, b in zip(token_times, token_times[1:]) if b - a > 0.001)
    if gaps:
        print(f"token gap between iterations (decode iteration, for scale): "
              f"p50 {1000 * percentile(gaps, 0.5):.2f} ms")


if __name__ == "__main__":
    main()
