"""A small OpenAI-compatible completion server for the llm-serve preset's tests.

Usage: openai_server.py PORT [--startup-delay S] [--token-delay S] [--pid-file PATH] [--suffix TEXT]
Serves /health (503 until the start-up delay has passed), /v1/models and streamed /v1/completions.
The "model" answers deterministically: the prompt's words reversed, one token per word, then
--suffix. It starts a helper child process, like real servers' tokenizer or scheduler workers,
so the tests can check that stopping the server leaves no process behind.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODEL = "tiny-reverse"


def tokens_for(prompt: str, limit: int, suffix: str) -> list[str]:
    words = list(reversed(prompt.split())) + suffix.split()
    return [(" " if i else "") + word for i, word in enumerate(words[:limit])]


class Handler(BaseHTTPRequestHandler):
    ready_at = 0.0
    token_delay = 0.0
    suffix = ""

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write("server: " + format % args + "\n")

    def _json(self, status: int, payload: object) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/health":
            self._json(200 if time.monotonic() >= self.ready_at else 503, {"ok": time.monotonic() >= self.ready_at})
        elif self.path == "/v1/models":
            self._json(200, {"object": "list", "data": [{"id": MODEL, "object": "model"}]})
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self) -> None:
        if self.path != "/v1/completions":
            self._json(404, {"error": "not found"})
            return
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        if request.get("model") != MODEL:
            self._json(400, {"error": f"unknown model {request.get('model')!r}"})
            return
        tokens = tokens_for(str(request["prompt"]), int(request.get("max_tokens", 16)), self.suffix)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for token in tokens:
            time.sleep(self.token_delay)
            event = {"object": "text_completion", "model": MODEL, "choices": [{"index": 0, "text": token}]}
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        usage = {"prompt_tokens": len(str(request["prompt"]).split()), "completion_tokens": len(tokens)}
        self.wfile.write(f"data: {json.dumps({'choices': [], 'usage': usage})}\n\ndata: [DONE]\n\n".encode())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("--startup-delay", type=float, default=0.5)
    parser.add_argument("--token-delay", type=float, default=0.002)
    parser.add_argument("--pid-file", default="")
    parser.add_argument("--suffix", default="")
    args = parser.parse_args()
    # The helper ignores SIGTERM, as a stuck worker would: only the group-wide SIGKILL ends it.
    helper = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, "
                               "signal.SIG_IGN); time.sleep(3600)"])
    if args.pid_file:
        with open(args.pid_file, "w") as handle:
            handle.write(f"{helper.pid}\n")
    Handler.ready_at = time.monotonic() + args.startup_delay
    Handler.token_delay = args.token_delay
    Handler.suffix = args.suffix
    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
