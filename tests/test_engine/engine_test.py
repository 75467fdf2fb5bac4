#!/usr/bin/env python3
"""ctest's engine tests: a real `gangway engine` on a free loopback port, checked over HTTP as a
client of vLLM's API would see it: completions and chat, streamed and not, usage, the pause modes
(keep freezes tokens, wait drains, abort ends), /is_paused, metric names, vLLM's error shapes, a
client that disconnects, bad flags, and `gangway load` against it.

Usage: engine_test.py GANGWAY_BINARY
Every wait is a bounded loop; nothing asserts how long anything took.
"""
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = "llama-3-8b"


def wait_until(predicate, what, tries=500, pause_s=0.02):
    for _ in range(tries):
        if predicate():
            return
        time.sleep(pause_s)
    raise AssertionError(f"gave up waiting for {what}")


class Engine:
    def __init__(self, gangway, work, *extra):
        self.port_file = os.path.join(work, "port")
        self.log = open(os.path.join(work, "engine.log"), "w")
        self.process = subprocess.Popen(
            [gangway, "engine", "--model", MODEL, "--host", "127.0.0.1", "--port", "0",
             "--port-file", self.port_file, *extra],
            stdout=self.log, stderr=subprocess.STDOUT)
        wait_until(lambda: os.path.exists(self.port_file) and open(self.port_file).read().strip(),
                   "the port file")
        self.port = int(open(self.port_file).read())

    def connection(self, timeout=30):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None):
        connection = self.connection()
        payload = None if body is None else (body if isinstance(body, (bytes, str))
                                             else json.dumps(body))
        connection.request(method, path, body=payload,
                           headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, data

    def json(self, method, path, body=None):
        status, data = self.request(method, path, body)
        return status, json.loads(data)

    def metrics(self):
        status, data = self.request("GET", "/metrics")
        assert status == 200
        values = {}
        for line in data.decode().splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                values[name] = float(value)
        return values

    def metric(self, name, **labels):
        wanted = {"engine": "0", "model_name": MODEL, **labels}
        for key, value in self.metrics().items():
            base, _, rest = key.partition("{")
            if base != name:
                continue
            pairs = dict(item.split("=", 1) for item in rest.rstrip("}").split(",") if item)
            if {k: v.strip('"') for k, v in pairs.items()} == wanted:
                return value
        raise AssertionError(f"no metric {name} {labels}")

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=30)
        self.log.close()
        assert code == 0, f"engine exited {code}"


class Stream:
    """A streamed generation read event by event."""

    def __init__(self, engine, path, body):
        self.connection = engine.connection()
        self.connection.request("POST", path, body=json.dumps({**body, "stream": True}),
                                headers={"Content-Type": "application/json"})
        self.response = self.connection.getresponse()
        assert self.response.status == 200, self.response.status
        assert self.response.getheader("Content-Type").startswith("text/event-stream")
        self.chunks = []
        self.done = False

    def next_event(self):
        data = None
        while True:
            line = self.response.readline()
            if not line:
                raise AssertionError("the stream ended without data: [DONE]")
            line = line.decode().rstrip("\r\n")
            if line.startswith("data: "):
                data = line[len("data: "):]
            elif line == "" and data is not None:
                break
        if data == "[DONE]":
            self.done = True
            return None
        chunk = json.loads(data)
        self.chunks.append(chunk)
        return chunk

    def read_to_end(self, limit=100000):
        for _ in range(limit):
            if self.next_event() is None:
                return
        raise AssertionError("stream too long")

    def tokens(self):
        count = 0
        for chunk in self.chunks:
            for choice in chunk["choices"]:
                text = choice.get("text", choice.get("delta", {}).get("content", ""))
                count += 1 if text else 0
        return count

    def finish_reason(self):
        reasons = [c["choices"][0]["finish_reason"] for c in self.chunks
                   if c["choices"] and c["choices"][0].get("finish_reason")]
        assert len(reasons) == 1, reasons
        return reasons[0]

    def close(self):
        self.connection.close()


def check_basics(engine):
    status, data = engine.request("GET", "/health")
    assert status == 200 and data == b"", (status, data)
    status, models = engine.json("GET", "/v1/models")
    assert status == 200 and models["object"] == "list", models
    assert [m["id"] for m in models["data"]] == [MODEL], models
    assert models["data"][0]["max_model_len"] > 0

    status, body = engine.json("POST", "/v1/completions",
                               {"model": MODEL, "prompt": "Hello, GPUs", "max_tokens": 5})
    assert status == 200, body
    assert body["object"] == "text_completion" and body["id"].startswith("cmpl-"), body
    choice = body["choices"][0]
    assert choice["finish_reason"] == "length" and len(choice["text"]) == 20, choice
    assert body["usage"] == {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8,
                             "prompt_tokens_details": None}, body["usage"]

    status, body = engine.json("POST", "/v1/chat/completions",
                               {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}],
                                "max_tokens": 4})
    assert status == 200, body
    assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-"), body
    assert body["choices"][0]["message"]["role"] == "assistant"
    assert body["usage"]["completion_tokens"] == 4

    status, body = engine.json("POST", "/v1/completions",
                               {"prompt": "x", "max_tokens": 20, "min_tokens": 6})
    assert body["choices"][0]["finish_reason"] == "stop", body
    assert body["usage"]["completion_tokens"] == 6, body


def check_streams(engine):
    stream = Stream(engine, "/v1/completions",
                    {"model": MODEL, "prompt": "abc", "max_tokens": 7,
                     "stream_options": {"include_usage": True}})
    stream.read_to_end()
    assert stream.done and stream.tokens() == 7, stream.chunks
    assert stream.finish_reason() == "length"
    assert stream.chunks[-1]["choices"] == [] and stream.chunks[-1]["usage"]["completion_tokens"] == 7
    assert all(c["object"] == "text_completion" for c in stream.chunks)
    assert len({c["id"] for c in stream.chunks}) == 1
    stream.close()

    stream = Stream(engine, "/v1/chat/completions",
                    {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}],
                     "max_tokens": 3})
    stream.read_to_end()
    first = stream.chunks[0]["choices"][0]["delta"]
    assert first == {"role": "assistant", "content": ""}, first
    assert stream.tokens() == 3 and stream.finish_reason() == "length"
    assert all("usage" not in c for c in stream.chunks), "usage only when asked for"
    stream.close()


def check_pause_keep(engine):
    stream = Stream(engine, "/v1/completions", {"prompt": "x", "max_tokens": 300})
    for _ in range(3):
        stream.next_event()
    status, body = engine.json("POST", "/pause?mode=keep")
    assert status == 200 and body == {"status": "paused"}, body
    assert engine.json("GET", "/is_paused")[1] == {"is_paused": True}
    generated = engine.metric("vllm:generation_tokens_total")
    assert engine.metric("vllm:num_requests_running") == 1
    kv_usage = engine.metric("vllm:kv_cache_usage_perc")
    assert kv_usage > 0, "keep holds the request's KV"
    time.sleep(0.3)
    assert engine.metric("vllm:generation_tokens_total") == generated, "keep froze the tokens"
    assert engine.metric("vllm:kv_cache_usage_perc") == kv_usage
    status, body = engine.json("POST", "/resume")
    assert status == 200 and body == {"status": "resumed"}, body
    assert engine.json("GET", "/is_paused")[1] == {"is_paused": False}
    stream.read_to_end()
    assert stream.tokens() == 300 and stream.finish_reason() == "length", "it went on after resume"
    stream.close()


def check_pause_wait(engine):
    stream = Stream(engine, "/v1/completions", {"prompt": "x", "max_tokens": 40})
    stream.next_event()
    # vLLM's older spelling of mode=wait.
    status, body = engine.json("POST", "/pause?wait_for_inflight_requests=true&clear_cache=false")
    assert status == 200 and body == {"status": "paused"}, body
    # /pause answered once the running request had finished: its stream is complete.
    stream.read_to_end()
    assert stream.tokens() == 40 and stream.finish_reason() == "length"
    stream.close()
    assert engine.metric("vllm:num_requests_running") == 0
    # A new request waits until resume.
    late = engine.connection()
    late.request("POST", "/v1/completions", body=json.dumps({"prompt": "y", "max_tokens": 2}),
                 headers={"Content-Type": "application/json"})
    wait_until(lambda: engine.metric("vllm:num_requests_waiting") == 1, "a waiting request")
    engine.json("POST", "/resume")
    response = late.getresponse()
    assert response.status == 200 and json.loads(response.read())["usage"]["completion_tokens"] == 2
    late.close()


def check_pause_abort(engine):
    aborted_before = engine.metric("vllm:request_success_total", finished_reason="abort")
    stream = Stream(engine, "/v1/chat/completions",
                    {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 500})
    stream.next_event()
    status, body = engine.json("POST", "/pause?mode=abort")
    assert status == 200 and body == {"status": "paused"}, body
    stream.read_to_end()
    assert stream.finish_reason() == "abort", stream.chunks[-1]
    stream.close()
    assert engine.metric("vllm:request_success_total", finished_reason="abort") == aborted_before + 1
    assert engine.metric("vllm:num_requests_running") == 0
    assert engine.metric("vllm:kv_cache_usage_perc") == 0
    engine.json("POST", "/resume")


def check_metric_names(engine):
    names = {key.partition("{")[0] for key in engine.metrics()}
    for name in ("vllm:num_requests_running", "vllm:num_requests_waiting",
                 "vllm:kv_cache_usage_perc", "vllm:prompt_tokens_total",
                 "vllm:generation_tokens_total", "vllm:request_success_total",
                 "vllm:num_preemptions_total", "vllm:cache_config_info"):
        assert name in names, (name, names)


def check_errors(engine):
    def error(method, path, body, status, error_type):
        got, data = engine.request(method, path, body)
        assert got == status, (path, got, data)
        parsed = json.loads(data)
        assert set(parsed["error"]) == {"message", "type", "param", "code"}, parsed
        assert parsed["error"]["type"] == error_type and parsed["error"]["code"] == status, parsed
        return parsed["error"]

    message = error("POST", "/v1/completions", {"model": "gpt-4", "prompt": "x"}, 404,
                    "NotFoundError")["message"]
    assert message == "The model `gpt-4` does not exist.", message
    error("POST", "/v1/completions", b"{not json", 400, "BadRequestError")
    error("POST", "/v1/chat/completions", {"messages": "hi"}, 400, "BadRequestError")
    error("POST", "/v1/completions", {"prompt": "x", "max_tokens": -1}, 400, "BadRequestError")
    error("POST", "/v1/completions", {"prompt": "x" * 200000, "max_tokens": 10}, 400,
          "BadRequestError")
    error("POST", "/pause?mode=sideways", None, 400, "BadRequestError")
    status, data = engine.request("GET", "/v1/completions")
    assert status == 405 and json.loads(data) == {"detail": "Method Not Allowed"}, data
    status, data = engine.request("GET", "/no/such/path")
    assert status == 404 and json.loads(data) == {"detail": "Not Found"}, data
    # Garbage instead of HTTP: a 400 and the engine goes on.
    with socket.create_connection(("127.0.0.1", engine.port), timeout=10) as raw:
        raw.sendall(b"\x00\x01 not http at all\r\n\r\n")
        assert raw.recv(100).startswith(b"HTTP/1.1 400"), "garbage gets a 400"
    assert engine.request("GET", "/health")[0] == 200


def check_disconnect(engine):
    aborted_before = engine.metric("vllm:request_success_total", finished_reason="abort")
    stream = Stream(engine, "/v1/completions", {"prompt": "x", "max_tokens": 5000})
    stream.next_event()
    assert engine.metric("vllm:num_requests_running") == 1
    stream.response.close()
    stream.close()
    wait_until(lambda: engine.metric("vllm:num_requests_running") == 0, "the abort")
    assert engine.metric("vllm:request_success_total", finished_reason="abort") == aborted_before + 1


def check_load(gangway, engine, work):
    out = os.path.join(work, "load.json")
    with open(out, "w") as stdout:
        subprocess.run([gangway, "load", "--url", f"http://127.0.0.1:{engine.port}",
                        os.path.join(HERE, "engine_load.yaml"), "--duration", "2", "--json"],
                       stdout=stdout, check=True, timeout=120)
    total = json.load(open(out))["runs"][0]["total"]
    assert total["arrived"] > 0 and total["completed"] == total["arrived"], total


def check_bad_flags(gangway):
    for flags, needle in ((["--model", "no-such-model"], "--model"),
                          (["--model", MODEL, "--gpu-memory-utilization", "1.5"],
                           "--gpu-memory-utilization"),
                          (["--model", "llama-3-70b", "--gpu-memory-utilization", "0.5"],
                           "--gpu-memory-utilization"),
                          (["--model", MODEL, "--port", "70000"], "--port"),
                          (["--model", MODEL, "--host", "not-an-address"], "--host")):
        result = subprocess.run([gangway, "engine", *flags], capture_output=True, text=True,
                                timeout=30)
        assert result.returncode == 2, (flags, result.returncode, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0], (flags, result.stderr)


def main():
    gangway = sys.argv[1]
    check_bad_flags(gangway)
    with tempfile.TemporaryDirectory() as work:
        engine = Engine(gangway, work)
        try:
            for check in (check_basics, check_streams, check_pause_keep, check_pause_wait,
                          check_pause_abort, check_metric_names, check_errors, check_disconnect):
                check(engine)
                print(f"ok {check.__name__}")
            check_load(gangway, engine, work)
            print("ok check_load")
        finally:
            if engine.process.poll() is None:
                engine.stop()
            else:
                print(open(os.path.join(work, "engine.log")).read())
                raise AssertionError("the engine died")


if __name__ == "__main__":
    main()
