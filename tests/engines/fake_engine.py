#!/usr/bin/env python3
"""A deliberately faulty OpenAI-compatible engine for gangway serve's failure tests.

It speaks the part of vLLM's HTTP API that gangway uses (completions and chat with SSE,
/health, /pause, /resume, /is_paused, /v1/models) and misbehaves on request:
  --behaviour normal    streams max_tokens tokens, one every --token-ms
  --behaviour garbage   answers 200 text/event-stream with events that are not JSON
  --behaviour hang      accepts the request and never answers (nor /health)
  --behaviour error500  answers every generation with 500 and an OpenAI error body
GET /metrics reports fake_engine_pauses_total, fake_engine_resumes_total and
fake_engine_aborted_total (streams whose client went away). Loopback only.
"""
import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE = {"paused": False, "pauses": 0, "resumes": 0, "aborted": 0, "requests": 0}
LOCK = threading.Condition()


def make_handler(args):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def reply(self, status, body, content_type="application/json"):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if args.behaviour == "hang":
                time.sleep(3600)
            path = self.path.split("?")[0]
            if path == "/health":
                self.reply(200, "")
            elif path == "/is_paused":
                self.reply(200, json.dumps({"is_paused": STATE["paused"]}))
            elif path == "/v1/models":
                self.reply(200, json.dumps({"object": "list", "data": [{"id": args.model}]}))
            elif path == "/metrics":
                with LOCK:
                    text = "".join(f"fake_engine_{k}_total {STATE[k]}\n"
                                   for k in ("pauses", "resumes", "aborted", "requests"))
                self.reply(200, text, "text/plain")
            else:
                self.reply(404, "{}")

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length) if length else b""
            path = self.path.split("?")[0]
            if path in ("/pause", "/pause_generation"):
                with LOCK:
                    STATE["paused"] = True
                    STATE["pauses"] += 1
                self.reply(200, "{}")
                return
            if path in ("/resume", "/continue_generation"):
                with LOCK:
                    STATE["paused"] = False
                    STATE["resumes"] += 1
                    LOCK.notify_all()
                self.reply(200, "{}")
                return
            if path not in ("/v1/completions", "/v1/chat/completions"):
                self.reply(404, "{}")
                return
            with LOCK:
                STATE["requests"] += 1
            request = json.loads(body)
            if args.behaviour == "hang":
                time.sleep(3600)
                return
            if args.behaviour == "error500":
                self.reply(500, json.dumps({"error": {"message": "the fake engine fails on purpose",
                                                      "type": "server_error", "code": 500}}))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

            def chunk(text):
                data = text.encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

            chat = path.endswith("chat/completions")
            try:
                if args.behaviour == "garbage":
                    chunk("data: this is not json\n\n")
                    chunk("data: [DONE]\n\n")
                    self.wfile.write(b"0\r\n\r\n")
                    return
                tokens = int(request.get("max_tokens") or 16)
                for i in range(tokens):
                    with LOCK:
                        while STATE["paused"]:
                            LOCK.wait(1.0)
                    time.sleep(args.token_ms / 1000.0)
                    piece = {"index": 0, "logprobs": None, "finish_reason": None}
                    if chat:
                        piece["delta"] = {"content": f" t{i}"}
                    else:
                        piece["text"] = f" t{i}"
                    if i == tokens - 1:
                        piece["finish_reason"] = "length"
                    chunk("data: " + json.dumps({"id": "x", "object": "chunk", "choices": [piece]}) + "\n\n")
                usage = {"prompt_tokens": 5, "completion_tokens": tokens, "total_tokens": tokens + 5}
                chunk("data: " + json.dumps({"id": "x", "choices": [], "usage": usage}) + "\n\n")
                chunk("data: [DONE]\n\n")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                with LOCK:
                    STATE["aborted"] += 1

    return Handler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", default="m")
    parser.add_argument("--behaviour", default="normal",
                        choices=["normal", "garbage", "hang", "error500"])
    parser.add_argument("--token-ms", type=float, default=5)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(args))
    server.daemon_threads = True
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
