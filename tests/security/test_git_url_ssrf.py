"""A git URL cannot make the worker reach inside addresses: refused before anything connects, after DNS,
on every redirect, and git connects to the address that was checked, never to a name resolved again.

The recording sockets prove "nothing connected"; names under ``.pinned.test`` exist only in the test's
resolver, so a clone that reaches them proves git used the checked address."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.pipeline.stagecontext import source_spec
from migrator.projects import actions
from migrator.projects.models import Project
from tests.security.git_servers import GitHttpServer, Listener, bare_repository
from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.sources.gitsource import GitSourceError, check_git_url, shallow_clone
from worker.sources.hostguard import HostPolicy, Resolver, system_resolver
from worker.stages import fetch

FILES = {"src/k.cu": "__global__ void k() {}\n"}


def resolving(names: dict[str, str]) -> Resolver:
    """A resolver that knows ``names`` (name -> address) and asks the system about the rest."""
    return lambda host, port: [names[host]] if host in names else system_resolver(host, port)


def policy(trusted: tuple[str, ...] = (), names: dict[str, str] | None = None) -> HostPolicy:
    return HostPolicy(bases=(), trusted_networks=HostPolicy.build([], trusted).trusted_networks,
                      resolver=resolving(names or {}))


@pytest.fixture
def listener() -> Iterator[Listener]:
    sock = Listener()
    yield sock
    sock.stop()


def clone(url: str, tmp_path: Path, guard: HostPolicy, lines: list[str] | None = None) -> None:
    log = lines.append if lines is not None else (lambda _text: None)
    shallow_clone(url, "main", tmp_path / "out", allow_local=False, timeout=30, policy=guard, log=log)


@pytest.mark.parametrize("scheme", ["https", "http", "git", "ssh"])
def test_a_url_naming_the_loopback_address_connects_nowhere(scheme: str, listener: Listener, tmp_path: Path) -> None:
    user = "git@" if scheme == "ssh" else ""
    with pytest.raises(GitSourceError, match=r"git URL refused: 127\.0\.0\.1 resolves to 127\.0\.0\.1, a loopback "
                                             r"address \(an operator can trust an inside network with "
                                             r"MIGRATOR_GIT_TRUSTED_NETWORKS\)"):
        clone(f"{scheme}://{user}127.0.0.1:{listener.port}/r.git", tmp_path, policy())
    assert listener.connections == [] and not (tmp_path / "out").exists()


def test_a_name_resolving_to_loopback_connects_nowhere(listener: Listener, tmp_path: Path) -> None:
    with pytest.raises(GitSourceError, match=r"localhost resolves to (127\.0\.0\.1|::1), a loopback address"):
        clone(f"http://localhost:{listener.port}/r.git", tmp_path, policy())
    with pytest.raises(GitSourceError, match="a loopback address"):
        clone(f"ssh://git@inside.pinned.test:{listener.port}/r.git", tmp_path, policy(names={"inside.pinned.test": "127.0.0.1"}))
    assert listener.connections == []


@pytest.mark.parametrize("address, kind", [("10.1.2.3", "a private address"), ("192.168.0.7", "a private address"),
                                           ("100.64.0.1", "a non-public address"), ("240.0.0.1", "a reserved address"),
                                           ("224.0.0.1", "a multicast address"), ("0.0.0.0", "an unspecified address"),
                                           ("fd12::1", "a private address")])
def test_private_reserved_and_multicast_addresses_are_refused(address: str, kind: str, tmp_path: Path) -> None:
    lines: list[str] = []
    with pytest.raises(GitSourceError, match=f"resolves to {address}, {kind}"):
        clone("https://git.pinned.test/acme/r.git", tmp_path, policy(names={"git.pinned.test": address}), lines)
    assert not any(line.startswith("$ git") for line in lines)  # git never ran


@pytest.mark.parametrize("url", ["http://169.254.169.254/latest/meta-data/r.git", "git://169.254.169.254/r.git",
                                 "https://metadata.pinned.test/r.git"])
def test_metadata_addresses_are_refused_even_inside_trusted_networks(url: str, tmp_path: Path) -> None:
    guard = policy(trusted=("169.254.0.0/16",), names={"metadata.pinned.test": "169.254.169.254"})
    with pytest.raises(GitSourceError, match=r"169\.254\.169\.254, a link-local or cloud metadata address$"):
        clone(url, tmp_path, guard)


def test_a_redirect_to_an_inside_address_is_refused(tmp_path: Path) -> None:
    inside = Listener("127.0.0.2")
    # 127.0.0.1 is trusted here: it stands for a public host, which redirects to a loopback address.
    outside = GitHttpServer(redirect_to=f"http://127.0.0.2:{inside.port}")
    try:
        with pytest.raises(GitSourceError, match=r"127\.0\.0\.2 resolves to 127\.0\.0\.2, a loopback address"):
            clone(f"http://public.pinned.test:{outside.port}/repo.git", tmp_path,
                  policy(trusted=("127.0.0.1/32",), names={"public.pinned.test": "127.0.0.1"}))
    finally:
        outside.stop()
        inside.stop()
    assert inside.connections == [] and outside.git_requests() == []  # git itself never ran against either


def test_a_redirect_to_a_metadata_name_is_refused(tmp_path: Path) -> None:
    outside = GitHttpServer(redirect_to="http://meta.pinned.test")
    try:
        with pytest.raises(GitSourceError, match="link-local or cloud metadata address"):
            clone(f"http://public.pinned.test:{outside.port}/repo.git", tmp_path,
                  policy(trusted=("127.0.0.1/32",), names={"public.pinned.test": "127.0.0.1",
                                                           "meta.pinned.test": "169.254.169.254"}))
    finally:
        outside.stop()


def test_git_connects_to_the_checked_address_with_the_real_host_name(tmp_path: Path) -> None:
    server = GitHttpServer(bare_repository(tmp_path, FILES).parent)
    try:
        clone(f"http://git.pinned.test:{server.port}/repo.git", tmp_path,
              policy(trusted=("127.0.0.1/32",), names={"git.pinned.test": "127.0.0.1"}))
    finally:
        server.stop()
    assert (tmp_path / "out/src/k.cu").read_text() == FILES["src/k.cu"]
    assert "/repo.git/git-upload-pack" in server.git_requests()
    assert {host for _m, _p, host, _a in server.requests} == {f"git.pinned.test:{server.port}"}


def test_a_redirect_between_allowed_hosts_is_followed_and_pinned(tmp_path: Path) -> None:
    moved = GitHttpServer(bare_repository(tmp_path, FILES).parent)
    old = GitHttpServer(redirect_to=f"http://new.pinned.test:{moved.port}")
    lines: list[str] = []
    try:
        clone(f"http://old.pinned.test:{old.port}/repo.git", tmp_path,
              policy(trusted=("127.0.0.1/32",), names={"old.pinned.test": "127.0.0.1", "new.pinned.test": "127.0.0.1"}),
              lines)
    finally:
        old.stop()
        moved.stop()
    assert (tmp_path / "out/src/k.cu").exists()
    assert old.git_requests() == [] and "/repo.git/git-upload-pack" in moved.git_requests()
    assert any("the server moved the repository to http://new.pinned.test" in line for line in lines)


@pytest.mark.parametrize("scheme, greeting", [("ssh", b"SSH-2.0-"), ("git", b"git-upload-pack /r.git\0host=127.0.0.1")])
def test_ssh_and_git_protocol_connect_to_the_checked_address(
    scheme: str, greeting: bytes, listener: Listener, tmp_path: Path
) -> None:
    user = "git@" if scheme == "ssh" else ""
    with pytest.raises(GitSourceError):  # the listener hangs up: what matters is where git connected
        clone(f"{scheme}://{user}git.pinned.test:{listener.port}/r.git", tmp_path,
              policy(trusted=("127.0.0.1/32",), names={"git.pinned.test": "127.0.0.1"}))
    assert len(listener.connections) == 1 and greeting in listener.connections[0]


@pytest.mark.parametrize("url", [
    "ssh://-oProxyCommand=touch%20CANARY/r.git",
    "ssh://-oProxyCommand=touch%20CANARY@example.com/r.git",
    "ssh://git@-oProxyCommand=touch%20CANARY/r.git",
    "git@-oProxyCommand:r.git",
    "-oProxyCommand=touch@example.com:r.git",
])
def test_ssh_hosts_and_users_that_look_like_options_are_refused(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(GitSourceError, match="may not begin with '-'|malformed git URL"):
        check_git_url(url, allow_local=False)
    with pytest.raises(GitSourceError, match="may not begin with '-'|malformed git URL"):
        clone(url, tmp_path, policy())
    assert not (tmp_path / "CANARY").exists() and not (tmp_path / "out").exists()


def test_the_fetch_stage_fails_with_the_reason(listener: Listener, tmp_path: Path) -> None:
    spec = {"kind": "git", "url": f"https://127.0.0.1:{listener.port}/r.git", "ref": "main", "allow_local": False,
            "timeout_s": 30, "trusted_networks": []}
    ctx = StageContext(run_id=1, project_id=1, workspace=Workspace(tmp_path / "ws"), settings=ProjectSettings(),
                       cache_dir=tmp_path / "cache", source_spec=spec)
    result = fetch.run(ctx)
    assert result.outcome == "failed" and result.summary.startswith("git URL refused: 127.0.0.1 resolves to")
    assert listener.connections == []


@pytest.mark.django_db
def test_the_operator_setting_reaches_the_fetch(team_user: tuple[User, Team], settings: Settings) -> None:
    settings.MIGRATOR_GIT_TRUSTED_NETWORKS = ["10.20.0.0/16"]
    project = actions.create_project(team_user[1], "inside", user=None, git_url="https://gitlab.corp.example/a/b.git")
    spec = source_spec(actions.create_run(project, user=None, ref="main"))
    assert spec["trusted_networks"] == ["10.20.0.0/16"]


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["https://127.0.0.1/a/b.git", "http://localhost:6379/x", "git://169.254.169.254/x",
                                 "ssh://git@[::1]/x", "git@10.0.0.5:a/b.git"])
def test_the_new_project_form_refuses_inside_addresses(alice_client: Client, team_user: tuple[User, Team], url: str) -> None:
    response = alice_client.post("/projects/new", {"name": "p", "team": team_user[1].pk, "git_url": url})
    assert response.status_code == 400 and "git URL refused" in response.content.decode()
    assert not Project.objects.exists()


@pytest.mark.django_db
def test_a_trusted_network_opens_the_form_to_an_inside_gitlab(
    alice_client: Client, team_user: tuple[User, Team], settings: Settings
) -> None:
    settings.MIGRATOR_GIT_TRUSTED_NETWORKS = ["10.0.0.0/8"]
    response = alice_client.post("/projects/new", {"name": "p", "team": team_user[1].pk, "git_url": "git@10.0.0.5:a/b.git"})
    assert response.status_code == 302 and Project.objects.get().git_url == "git@10.0.0.5:a/b.git"
