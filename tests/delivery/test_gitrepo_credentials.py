"""The host token reaches the git server as a header and nowhere else: not in the URL, not on a command
line, not in the log."""
from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from worker.delivery.gitrepo import PortRepo, RemoteSpec
from worker.sources.gitsource import GitSourceError
from worker.sources.hostguard import HostPolicy

TOKEN = "ghp_secret-token-123"


class _Recorder(BaseHTTPRequestHandler):
    seen: list[tuple[str, str]] = []  # (path, Authorization header)

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.seen.append((self.path, self.headers.get("Authorization", "")))
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def server() -> Iterator[str]:
    _Recorder.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/team/repo.git"
    httpd.shutdown()
    httpd.server_close()


def test_the_token_is_a_header_git_sends_and_never_logged(server: str, tmp_path: Path) -> None:
    log: list[str] = []
    repo = PortRepo(tmp_path / "repo", RemoteSpec(server, TOKEN), allow_local=False,
                    policy=HostPolicy.build([], ["127.0.0.0/8"]), log=log.append)
    with pytest.raises(GitSourceError):
        repo.fetch("main", "port/rocm")  # the server knows no repository: what git sent is what counts
    expected = "Basic " + base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    git_requests = [auth for path, auth in _Recorder.seen if "service=git-upload-pack" in path]
    assert expected in git_requests  # git's own request carried it
    assert TOKEN not in repo.url and all(TOKEN not in line and expected not in line for line in log)
    assert not any(TOKEN in word for word in repo.git.config)
