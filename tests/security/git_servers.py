"""Local stand-ins for what a git URL may reach: a socket that records every connection, and a smart
HTTP git server (git's own ``git-http-backend``) that can also answer with a redirect."""
from __future__ import annotations

import os
import socket
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

HTTP_BACKEND = "/usr/lib/git-core/git-http-backend"
GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}


class Listener:
    """A TCP socket on ``host`` that accepts, records the first bytes the client sends, and hangs up."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.sock = socket.create_server((host, 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _peer = self.sock.accept()
            except TimeoutError:
                continue
            with conn:
                self.connections.append(self._first_bytes(conn))

    @staticmethod
    def _first_bytes(conn: socket.socket) -> bytes:
        """What the client sends before half a second of silence (at most 4 KB)."""
        conn.settimeout(0.5)
        data = b""
        while len(data) < 4096:
            try:
                piece = conn.recv(4096)
            except OSError:
                break
            if not piece:
                break
            data += piece
        return data

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


def bare_repository(tmp_path: Path, files: dict[str, str]) -> Path:
    """``tmp_path/served/repo.git``: a bare repository whose ``main`` holds ``files``."""
    work = tmp_path / "work"
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "one"]):
        subprocess.run(["git", "-C", str(work), *args], check=True, env=GIT_ENV)
    served = tmp_path / "served"
    served.mkdir()
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(served / "repo.git")], check=True, env=GIT_ENV)
    return served / "repo.git"


class GitHttpServer:
    """Serves the bare repositories under ``root`` over smart HTTP on ``host``; or, with ``redirect_to``,
    answers every request with a 301 to the same path under that base URL. Records (method, path,
    Host header, User-Agent) of every request."""

    def __init__(self, root: Path | None = None, *, host: str = "127.0.0.1", redirect_to: str = "") -> None:
        self.requests: list[tuple[str, str, str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self._answer()

            def do_POST(self) -> None:
                self._answer()

            def _answer(self) -> None:
                server.requests.append((self.command, self.path, self.headers.get("Host", ""),
                                        self.headers.get("User-Agent", "")))
                if redirect_to:
                    self.send_response(301)
                    self.send_header("Location", redirect_to.rstrip("/") + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self._backend()

            def _backend(self) -> None:
                path, _, query = self.path.partition("?")
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                env = {"PATH": os.environ["PATH"], "GIT_PROJECT_ROOT": str(root), "GIT_HTTP_EXPORT_ALL": "1",
                       "REQUEST_METHOD": self.command, "PATH_INFO": path, "QUERY_STRING": query,
                       "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
                       "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""), "REMOTE_ADDR": "127.0.0.1"}
                out = subprocess.run([HTTP_BACKEND], input=body, env=env, capture_output=True, check=False).stdout
                head, _, payload = out.partition(b"\r\n\r\n")
                headers = dict(line.split(": ", 1) for line in head.decode().split("\r\n") if ": " in line)
                self.send_response(int(headers.pop("Status", "200").split()[0]))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.http = ThreadingHTTPServer((host, 0), Handler)
        self.port = self.http.server_address[1]
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def git_requests(self) -> list[str]:
        """Paths of the requests git itself sent (not the redirect check)."""
        return [urlsplit(path).path for _m, path, _h, agent in self.requests if "migrator" not in agent]

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()
