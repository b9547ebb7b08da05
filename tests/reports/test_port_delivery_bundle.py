"""The bundle fallback end to end: a team repository served over smart HTTP on 127.0.0.1 (git's own
git-http-backend, a network remote as a real host is), no host token. Nothing is pushed; the command line
prints the bundle and the git commands, and those commands, run as printed in a fresh clone beside the
downloaded bundle, put the verified port branch on the team's remote."""
from __future__ import annotations

import io
import shlex
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.projects import actions
from migrator.reports.models import PortAttempt, PortState
from tests.reports.team_repo import git, team_repo
from tests.security.git_servers import GitHttpServer

FIXTURES = Path(__file__).parent.parent / "fixtures" / "delivery"
pytestmark = pytest.mark.django_db


@pytest.fixture
def served(tmp_path: Path, settings: Settings) -> Iterator[tuple[str, Path]]:
    """``make_histogram`` as ``team.git`` behind an HTTP git server; (its URL, the bare repository)."""
    repo = team_repo(tmp_path / "host", FIXTURES / "make_histogram")
    git(repo.bare, "config", "http.receivepack", "true")  # the maintainer's push at the end
    server = GitHttpServer(tmp_path / "host")
    settings.MIGRATOR_GIT_TRUSTED_NETWORKS = ["127.0.0.0/8"]  # the operator's setting for an inside host
    settings.MIGRATOR_ALLOW_LOCAL_GIT = False
    yield f"http://127.0.0.1:{server.port}/team.git", repo.bare
    server.stop()


def _printed_commands(output: str) -> list[str]:
    return [line.strip() for line in output.splitlines() if line.startswith("    git ")]


def test_without_a_token_the_printed_commands_apply_the_bundle_to_the_team_remote(
    tmp_path: Path, team_user: tuple[User, Team], served: tuple[str, Path], only_stages: Callable[..., None]
) -> None:
    url, bare = served
    only_stages("fetch")
    actions.create_project(team_user[1], "histogram", user=None, git_url=url)
    out = io.StringIO()
    with pytest.raises(SystemExit) as stopped:
        call_command("migrate_repo", url, "--ref", "main", "--project", "histogram", "--team", team_user[1].name,
                     "--deliver", "port/rocm", stdout=out, stderr=io.StringIO())
    assert stopped.value.code == 3, out.getvalue()  # partial: only the fetch stage runs here
    output = out.getvalue()

    attempt = PortAttempt.objects.get()
    assert attempt.state == PortState.BUNDLED, output
    assert attempt.rocm["status"] == "passed"
    assert subprocess.run(["git", "-C", str(bare), "rev-parse", "--verify", "-q", "refs/heads/port/rocm"],
                          check=False, capture_output=True).returncode == 1  # nothing was pushed
    bundle = Path(attempt.bundle)
    assert f"  bundle: {bundle}" in output
    commands = _printed_commands(output)
    assert [c.split()[1] for c in commands] == ["fetch", "log", "push"]

    maintainer = tmp_path / "maintainer"
    git(tmp_path, "clone", "-q", url, str(maintainer))
    shutil.copy(bundle, maintainer / bundle.name)  # the download, beside their clone
    ran = [subprocess.run(["git", "-c", "core.hooksPath=/dev/null", *shlex.split(c)[1:]], cwd=maintainer,
                          capture_output=True, text=True, check=False, timeout=60) for c in commands]
    assert [r.returncode for r in ran] == [0, 0, 0], [r.stderr for r in ran]
    assert "Port to ROCm/HIP (single-source)" in ran[1].stdout  # the log shows the delivered commit
    assert git(bare, "rev-parse", "refs/heads/port/rocm") == attempt.commit
    assert "include rocm/hip.mk" in git(bare, "show", "port/rocm:Makefile")
    assert git(bare, "show", "port/rocm:histogram.cu") == git(bare, "show", "main:histogram.cu")  # CUDA untouched
