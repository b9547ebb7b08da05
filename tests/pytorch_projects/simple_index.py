"""A local package index over HTTP (PEP 503 simple pages), serving wheels the tests write.

Several indexes under one server: ``http://127.0.0.1:PORT/<index>/simple/``. ``gate``, when
given and not yet set, makes the index slow: each answer is sent a byte every half second until
the test sets it (so pip's read timeout never fires and nothing depends on a timing), then at once.
"""
from __future__ import annotations

import html
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from packaging.utils import canonicalize_name, parse_wheel_filename

from tests.pytorch_projects.wheels import make_wheel


class SimpleIndex:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.port = 0
        self.gate: threading.Event | None = None
        self.requests: list[str] = []

    def url(self, index: str) -> str:
        return f"http://127.0.0.1:{self.port}/{index}/simple"

    def add(self, index: str, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
        folder = self.root / index
        folder.mkdir(parents=True, exist_ok=True)
        return make_wheel(folder, name, version, requires)

    def page(self, index: str, project: str) -> bytes | None:
        folder = self.root / index
        if not folder.is_dir():
            return None
        links = [f'<a href="/{index}/files/{urllib.parse.quote(w.name)}">{html.escape(w.name)}</a>'
                 for w in sorted(folder.glob("*.whl")) if canonicalize_name(parse_wheel_filename(w.name)[0]) == project]
        if not links:
            return None
        return ("<!DOCTYPE html><html><body>" + "<br>".join(links) + "</body></html>").encode()


def _handler(index: SimpleIndex) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802  (the standard library's name)
            index.requests.append(self.path)
            parts = [urllib.parse.unquote(p) for p in self.path.split("?")[0].strip("/").split("/")]
            body: bytes | None = None
            kind = "text/html"
            if len(parts) == 3 and parts[1] == "simple":
                body = index.page(parts[0], canonicalize_name(parts[2]))
            elif len(parts) == 3 and parts[1] == "files" and (index.root / parts[0] / parts[2]).is_file():
                body, kind = (index.root / parts[0] / parts[2]).read_bytes(), "application/octet-stream"
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            sent = 0
            while index.gate is not None and not index.gate.is_set() and sent < len(body) - 1:
                self.wfile.write(body[sent:sent + 1])
                self.wfile.flush()
                sent += 1
                index.gate.wait(0.5)
            self.wfile.write(body[sent:])

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@contextmanager
def serving(root: Path) -> Iterator[SimpleIndex]:
    index = SimpleIndex(root)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(index))
    server.daemon_threads = True
    index.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield index
    finally:
        if index.gate is not None:
            index.gate.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
