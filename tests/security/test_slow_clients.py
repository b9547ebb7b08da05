"""Slow clients cannot hold the dashboard: served as ./dev up serves it (gunicorn -c gunicorn.conf.py), a
client that stops sending its request, or trickles it, is cut off with 408 and its thread freed, while
the page keeps answering and a request sent at a normal pace is served whole."""
from __future__ import annotations

import http.client
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from migrator.accounts.models import Team
from migrator.integrations.models import ProjectIntegration
from migrator.projects import actions

ROOT = Path(__file__).resolve().parents[2]
THREADS = 3
ANSWER_WITHIN_S = 60  # socket timeout: a server that never answers fails the test instead of hanging it


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[int]:
    """The dashboard under gunicorn with the project's config: one worker, a short read deadline. Nothing
    asked of it here reads the database."""
    port = free_port()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "migrator.test_settings", "MIGRATOR_WEB_WORKERS": "1",
           "MIGRATOR_WEB_THREADS": str(THREADS), "MIGRATOR_WEB_READ_TIMEOUT_S": "1"}
    proc = subprocess.Popen([str(ROOT / ".venv/bin/gunicorn"), "-c", "gunicorn.conf.py", "-b", f"127.0.0.1:{port}"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(300):
            if proc.poll() is not None:
                raise AssertionError(f"gunicorn did not start: {proc.stderr.read().decode() if proc.stderr else ''}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def get_login(port: int) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=ANSWER_WITHIN_S)
    try:
        conn.request("GET", "/login/")
        response = conn.getresponse()
        response.read()
        return response.status, (response.getheader("Set-Cookie") or "").split(";", 1)[0]
    finally:
        conn.close()


def slow_post(port: int, cookie: str, length: int = 100_000) -> socket.socket:
    """Headers of a sign-in POST and one byte of its body."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=ANSWER_WITHIN_S)
    sock.sendall(f"POST /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: {cookie}\r\nContent-Type: "
                 f"application/x-www-form-urlencoded\r\nContent-Length: {length}\r\n\r\nu".encode())
    return sock


def answer_of(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    sock.close()
    return data


def test_a_client_that_stops_sending_is_cut_off_with_408(server: int) -> None:
    status, cookie = get_login(server)
    assert status == 200 and cookie.startswith("csrftoken=")
    answer = answer_of(slow_post(server, cookie))
    assert answer.startswith(b"HTTP/1.1 408 ") and b"did not arrive in time" in answer


def test_a_client_trickling_its_body_is_cut_off_too(server: int) -> None:
    _status, cookie = get_login(server)
    sock = slow_post(server, cookie)
    sock.settimeout(0.3)
    sent = 1
    answer = b""
    while not answer and sent < 600:  # a byte every 0.3 s keeps the connection busy, never fast enough
        try:
            answer = sock.recv(65536)
        except TimeoutError:
            try:
                sock.sendall(b"u")
            except OSError:
                break
            sent += 1
    sock.settimeout(ANSWER_WITHIN_S)
    answer += answer_of(sock)
    assert answer.startswith(b"HTTP/1.1 408 ") and sent < 600


def test_the_page_answers_while_every_thread_once_held_a_slow_client(server: int) -> None:
    _status, cookie = get_login(server)
    slow = [slow_post(server, cookie) for _ in range(THREADS * 2)]
    assert get_login(server)[0] == 200  # answered once the deadline freed a thread
    assert all(answer_of(sock).startswith(b"HTTP/1.1 408 ") for sock in slow)


def test_a_body_sent_at_a_normal_pace_is_served_whole(server: int) -> None:
    _status, cookie = get_login(server)
    body = f"username=nobody&password=wrong&padding={'x' * 500_000}".encode()  # no CSRF token in it
    conn = http.client.HTTPConnection("127.0.0.1", server, timeout=ANSWER_WITHIN_S)
    try:
        conn.request("POST", "/login/", body=body, headers={
            "Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"})
        response = conn.getresponse()
        page = response.read().decode()
    finally:
        conn.close()
    # The CSRF check answers only once it has read the whole form: not cut off, refused for the token.
    assert response.status == 403 and "CSRF verification failed" in page


class _CutOff:
    """A request body whose client went away: what the read deadline leaves a view reading it."""

    def read(self, *_args: object) -> bytes:
        raise ConnectionResetError(104, "the request did not arrive within the read deadline")

    readline = read


@pytest.mark.django_db
def test_a_view_reading_a_cut_off_body_answers_408(client: Client, team_user: tuple[User, Team]) -> None:
    project = actions.create_project(team_user[1], "hooked", user=None, git_url="https://github.com/acme/demo.git")
    ProjectIntegration.objects.create(project=project, webhook_secret="s")
    response = client.post(f"/hooks/github/{project.pk}", b"{}", content_type="application/json",
                           **{"wsgi.input": _CutOff(), "CONTENT_LENGTH": "100000"})  # type: ignore[arg-type]
    assert response.status_code == 408 and response["Connection"] == "close"
