"""The integration's host API URL cannot make the worker call inside addresses (SSRF): refused when
saved, checked again after DNS resolution and on every redirect when sent, and an answer's body never
reaches the run or report pages."""
from __future__ import annotations

import socket
import ssl
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.test import Client
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.envconf import env_https_urls
from migrator.integrations.models import ProjectIntegration
from migrator.pipeline.orchestrator import run_sync
from migrator.projects import actions
from migrator.projects.models import Project, Run
from migrator.reports import hostapi
from migrator.reports.models import StatusPost
from migrator.reports.posting import post_run_status
from worker.sources.hostguard import HostPolicy, HostRefused, Pinned

SHA = "b" * 40
INSIDE_SECRET = "internal-only: SECRET_KEY=do-not-show"


class Endpoint:
    """A local HTTP server answering every request with one fixed status, headers and body."""

    def __init__(self, status: int = 201, body: bytes = b"{}", headers: dict[str, str] | None = None) -> None:
        self.status, self.body, self.headers = status, body, headers or {}
        self.seen: list[tuple[str, str, str]] = []  # (method, path, Host header)
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                endpoint.seen.append((self.command, self.path, self.headers.get("Host", "")))
                self.send_response(endpoint.status)
                for name, value in endpoint.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(endpoint.body)))
                self.end_headers()
                self.wfile.write(endpoint.body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    server = Endpoint()
    yield server
    server.stop()


@pytest.fixture
def project(team_user: tuple[User, Team], settings: Settings) -> Project:
    settings.MIGRATOR_HOST_BACKOFF_S = 0.01
    return actions.create_project(team_user[1], "demo", user=None, git_url="https://github.com/acme/demo.git")


def finished_run(project: Project, only_stages: Callable[..., None]) -> Run:
    only_stages()
    return run_sync(actions.create_run(project, user=None, ref=SHA, commit_sha=SHA))


FORM = {"host_kind": "gitlab", "repository": "", "host_token": "tok", "webhook_secret": "", "gitlab_token": "",
        "post_statuses": "on", "post_comments": "on"}


@pytest.mark.django_db
@pytest.mark.parametrize("url", [
    "http://127.0.0.1:6379/",  # the local Redis
    "http://localhost:8000/admin/",  # the web app itself
    "https://169.254.169.254/latest/meta-data",  # cloud metadata
    "https://10.1.2.3/api/v4",  # a private address
    "http://api.github.com",  # not https
    "https://api.github.com.attacker.example/",  # a look-alike host
    "https://user:pw@api.github.com/",  # credentials in the URL
    "https://gitlab.example.com/api/v4",  # self-hosted but not allowed by an administrator
])
def test_the_settings_form_refuses_urls_outside_the_configured_bases(
    alice_client: Client, project: Project, url: str
) -> None:
    response = alice_client.post(f"/projects/{project.pk}/integration", {**FORM, "host_api_url": url})
    assert response.status_code == 200 and b"host API URL refused" in response.content
    assert not ProjectIntegration.objects.filter(project=project).exists()


@pytest.mark.django_db
def test_the_settings_form_accepts_a_base_an_administrator_allowed(
    alice_client: Client, project: Project, settings: Settings
) -> None:
    settings.MIGRATOR_ALLOWED_HOST_API_BASES = [*settings.MIGRATOR_ALLOWED_HOST_API_BASES, "https://gitlab.example.com/api/v4"]
    response = alice_client.post(f"/projects/{project.pk}/integration", {**FORM, "host_api_url": "https://gitlab.example.com/api/v4"})
    assert response.status_code == 302
    assert ProjectIntegration.objects.get(project=project).api_url == "https://gitlab.example.com/api/v4"


@pytest.mark.django_db
def test_a_stored_inside_url_is_refused_when_sending(
    project: Project, endpoint: Endpoint, only_stages: Callable[..., None]
) -> None:
    ProjectIntegration.objects.create(project=project, host_token="tok", host_api_url=endpoint.url)  # saved before the check
    (post,) = post_run_status(finished_run(project, only_stages).pk)
    assert not post.ok and post.error.startswith("not sent: only https URLs are allowed")
    assert endpoint.seen == []


@pytest.mark.django_db
def test_a_name_resolving_to_loopback_is_refused_after_dns(
    project: Project, endpoint: Endpoint, only_stages: Callable[..., None], settings: Settings
) -> None:
    port = endpoint.server.server_address[1]
    settings.MIGRATOR_ALLOWED_HOST_API_BASES = [f"http://localhost:{port}"]  # allowed by name, resolves inside
    ProjectIntegration.objects.create(project=project, host_token="tok", host_api_url=f"http://localhost:{port}")
    (post,) = post_run_status(finished_run(project, only_stages).pk)
    assert not post.ok and "localhost resolves to" in post.error and "loopback address" in post.error
    assert endpoint.seen == []


def test_the_connection_goes_to_the_checked_address_with_the_real_host_name(endpoint: Endpoint) -> None:
    port = endpoint.server.server_address[1]
    policy = HostPolicy(bases=(f"http://api.host.test:{port}",), trusted_networks=HostPolicy.build([], ["127.0.0.1/32"]).trusted_networks,
                        resolver=lambda host, port: ["127.0.0.1"])
    client = hostapi.HostClient("github", f"http://api.host.test:{port}", "tok", policy=policy)
    answer = hostapi.post_commit_status(client, "acme/demo", SHA, "passed", "ok", "https://m.example/r/1")
    assert answer.ok and endpoint.seen == [("POST", f"/repos/acme/demo/statuses/{SHA}", f"api.host.test:{port}")]


def test_a_name_with_one_inside_address_is_refused() -> None:
    policy = HostPolicy(resolver=lambda host, port: ["140.82.112.6", "127.0.0.1"])
    answer = hostapi.HostClient("github", "https://api.github.com", "tok", policy=policy).request("POST", "/x", {})
    assert not answer.ok and answer.attempts == 1 and "127.0.0.1, a loopback address" in answer.error


def test_a_redirect_out_of_the_allowed_bases_is_not_followed(endpoint: Endpoint) -> None:
    inside = Endpoint()
    try:
        endpoint.status, endpoint.headers = 307, {"Location": f"{inside.url}/steal"}
        policy = HostPolicy.build([endpoint.url], ["127.0.0.0/8"])
        answer = hostapi.HostClient("github", endpoint.url, "tok", policy=policy).request("POST", "/x", {})
        assert not answer.ok and answer.error == "not sent: only https URLs are allowed (got http)"
        assert len(endpoint.seen) == 1 and inside.seen == []
    finally:
        inside.stop()


def test_a_redirect_to_a_metadata_address_is_not_followed(endpoint: Endpoint) -> None:
    endpoint.status, endpoint.headers = 308, {"Location": "https://169.254.169.254/latest/meta-data"}
    policy = HostPolicy.build([endpoint.url, "https://169.254.169.254"], ["127.0.0.0/8", "169.254.0.0/16"])
    answer = hostapi.HostClient("github", endpoint.url, "tok", policy=policy).request("POST", "/x", {})
    assert not answer.ok and "link-local or cloud metadata address" in answer.error


@pytest.mark.django_db
def test_an_error_answer_shows_only_its_status_line(
    project: Project, endpoint: Endpoint, only_stages: Callable[..., None], settings: Settings, alice_client: Client
) -> None:
    settings.MIGRATOR_ALLOWED_HOST_API_BASES = [endpoint.url]
    settings.MIGRATOR_HOST_API_TRUSTED_NETWORKS = ["127.0.0.0/8"]
    endpoint.status, endpoint.body = 422, INSIDE_SECRET.encode()
    ProjectIntegration.objects.create(project=project, host_token="tok", host_api_url=endpoint.url)
    run = finished_run(project, only_stages)
    (post,) = post_run_status(run.pk)
    assert post.error == "HTTP 422 Unprocessable Entity"
    for page in (f"/runs/{run.pk}/report", f"/runs/{run.pk}/"):
        assert INSIDE_SECRET.encode() not in alice_client.get(page).content


@pytest.mark.django_db
def test_a_non_http_service_is_not_quoted(
    project: Project, only_stages: Callable[..., None], settings: Settings
) -> None:
    """What a Redis-like service answers to an HTTP request never reaches the recorded error."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def answer_like_redis() -> None:
        for _ in range(3):
            conn, _addr = listener.accept()
            conn.recv(65536)
            conn.sendall(b"-ERR Possible SECURITY ATTACK detected. " + INSIDE_SECRET.encode() + b"\r\n")
            conn.close()

    threading.Thread(target=answer_like_redis, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    settings.MIGRATOR_ALLOWED_HOST_API_BASES, settings.MIGRATOR_HOST_API_TRUSTED_NETWORKS = [url], ["127.0.0.0/8"]
    ProjectIntegration.objects.create(project=project, host_token="tok", host_api_url=url)
    (post,) = post_run_status(finished_run(project, only_stages).pk)
    listener.close()
    assert not post.ok and "SECURITY ATTACK" not in post.error and INSIDE_SECRET not in post.error
    assert StatusPost.objects.get().error == post.error


def test_a_redirect_within_the_allowed_bases_is_followed(endpoint: Endpoint) -> None:
    moved = Endpoint()
    try:
        endpoint.status, endpoint.headers = 307, {"Location": f"{moved.url}/repos/acme/renamed/statuses/{SHA}"}
        policy = HostPolicy.build([endpoint.url, moved.url], ["127.0.0.0/8"])
        answer = hostapi.HostClient("github", endpoint.url, "tok", policy=policy).request("POST", "/x", {})
        assert answer.ok and [path for _m, path, _h in moved.seen] == [f"/repos/acme/renamed/statuses/{SHA}"]
    finally:
        moved.stop()


@pytest.mark.parametrize("address", ["127.0.0.1", "::1", "::ffff:127.0.0.1", "0.0.0.0", "10.0.0.8", "172.16.3.4",
                                     "192.168.1.1", "100.64.0.1", "169.254.169.254", "fe80::1", "fd00:ec2::254", "224.0.0.1"])
def test_inside_addresses_are_refused(address: str) -> None:
    with pytest.raises(HostRefused):
        HostPolicy().check_address("h", address)


def test_trusted_networks_never_open_metadata_addresses() -> None:
    policy = HostPolicy.build([], ["10.0.0.0/8", "169.254.0.0/16"])
    policy.check_address("gitlab.internal", "10.1.2.3")
    with pytest.raises(HostRefused, match="metadata"):
        policy.check_address("h", "169.254.169.254")


@pytest.mark.parametrize("raw", ["http://gitlab.example.com/api/v4", "gitlab.example.com", "https://x.example/?q=1"])
def test_an_administrator_cannot_configure_a_base_that_is_not_https(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("MIGRATOR_ALLOWED_HOST_API_BASES", raw)
    with pytest.raises(ImproperlyConfigured, match="is not an https URL"):
        env_https_urls("MIGRATOR_ALLOWED_HOST_API_BASES", [])


def test_tls_checks_the_real_host_name_while_connecting_to_the_pinned_address(tmp_path: Path) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=api.host.test", "-addext", "subjectAltName=DNS:api.host.test"],
                   check=True, capture_output=True)
    server = Endpoint(status=200, body=b"{}")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server.server.socket = context.wrap_socket(server.server.socket, server_side=True)
    port = server.server.server_address[1]
    try:
        with httpx.Client(verify=ssl.create_default_context(cafile=str(cert)), trust_env=False) as client:
            good = Pinned(f"https://api.host.test:{port}/x", "api.host.test", port, "127.0.0.1")
            assert hostapi._send(client, good, "POST", {}).status_code == 200
            with pytest.raises(httpx.ConnectError, match="Hostname mismatch"):
                hostapi._send(client, Pinned(f"https://other.test:{port}/x", "other.test", port, "127.0.0.1"), "POST", {})
    finally:
        server.stop()
    assert server.seen == [("POST", "/x", f"api.host.test:{port}")]
