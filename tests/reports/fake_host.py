"""A local HTTP server that behaves like the GitHub/GitLab REST API for statuses and comments.

It records every request, can answer 500 a given number of times, and keeps comments and pull
requests so that updates of unknown ids answer 404 like the real hosts.
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_COMMENT_CREATE = re.compile(r"/(issues/\d+/comments|merge_requests/\d+/notes)$")
_COMMENT_UPDATE = re.compile(r"/(issues/comments|merge_requests/\d+/notes)/(?P<id>\d+)$")
_PULL_CREATE = re.compile(r"/(pulls|merge_requests)$")
_PULL_UPDATE = re.compile(r"/(pulls|merge_requests)/(?P<number>\d+)$")


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]  # the JSON the client sent, read by the tests as they expect it


@dataclass
class FakeHost:
    fail_next: int = 0
    requests: list[Recorded] = field(default_factory=list)
    comments: dict[str, str] = field(default_factory=dict)
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)  # number -> what was sent
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> FakeHost:
        host = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                host.requests.append(Recorded(self.command, self.path, dict(self.headers), body))
                status, answer = host.answer(self.command, self.path, body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_PATCH = do_PUT = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def answer(self, method: str, path: str, body: dict[str, object]) -> tuple[int, dict[str, object]]:
        if self.fail_next > 0:
            self.fail_next -= 1
            return 500, {"message": "server error"}
        if method == "POST" and _COMMENT_CREATE.search(path):
            comment_id = str(1000 + len(self.comments))
            self.comments[comment_id] = str(body.get("body", ""))
            return 201, {"id": int(comment_id)}
        if (match := _COMMENT_UPDATE.search(path)) and method in ("PATCH", "PUT"):
            if match["id"] not in self.comments:
                return 404, {"message": "Not Found"}
            self.comments[match["id"]] = str(body.get("body", ""))
            return 200, {"id": int(match["id"])}
        if method == "POST" and _PULL_CREATE.search(path):
            return 201, self._pull(len(self.pulls) + 1, body)
        if (match := _PULL_UPDATE.search(path)) and method in ("PATCH", "PUT"):
            number = int(match["number"])
            if number not in self.pulls:
                return 404, {"message": "Not Found"}
            return 200, self._pull(number, {**self.pulls[number], **body})
        if method == "POST" and "/statuses/" in path:
            return 201, {"state": body.get("state")}
        return 404, {"message": "Not Found"}

    def _pull(self, number: int, body: dict[str, Any]) -> dict[str, object]:
        self.pulls[number] = dict(body)
        url = f"{self.url}/web/pull/{number}"
        return {"number": number, "iid": number, "html_url": url, "web_url": url}

    def paths(self, method: str) -> list[str]:
        return [r.path for r in self.requests if r.method == method]
