"""A cloned repository may carry links out of the checkout: they are removed and named, never followed."""
from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.pipeline.orchestrator import run_sync
from migrator.projects import actions
from migrator.projects.workspaces import workspace_for
from worker.sources.gitsource import shallow_clone

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}


@pytest.fixture
def hostile_repo(tmp_path: Path) -> Path:
    """Links that leave the tree as written, and one (``a.cu``) that leaves only once ``b -> .`` is followed."""
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src/main.cu").write_text("__global__ void k() {}\n")
    (repo / "configure").write_text("#!/bin/sh\necho configured\n")
    (repo / "configure").chmod(0o755)
    links = {"passwd.cu": "/etc/passwd", "src/up.h": "../../outside.txt", "b": ".", "a.cu": "b/../outside.txt",
             "src/alias.cu": "main.cu"}
    for name, target in links.items():
        os.symlink(target, repo / name)
    subprocess.run(["git", "-C", str(repo), "init", "-q", "-b", "main"], check=True, env=GIT_ENV)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, env=GIT_ENV)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "links"], check=True, env=GIT_ENV)
    (tmp_path / "outside.txt").write_text("SECRET outside the checkout\n")
    return repo


def test_links_leaving_the_checkout_are_removed_and_named(hostile_repo: Path, tmp_path: Path) -> None:
    lines: list[str] = []
    result = shallow_clone(str(hostile_repo), "main", tmp_path / "ws" / "out", allow_local=True, log=lines.append)
    out = tmp_path / "ws" / "out"
    assert [path for path, _ in result.removed_links] == ["a.cu", "passwd.cu", "src/up.h"]
    assert not any((out / name).is_symlink() for name in ("a.cu", "passwd.cu", "src/up.h"))
    assert os.readlink(out / "src/alias.cu") == "main.cu" and os.readlink(out / "b") == "."
    assert any("removed symbolic link passwd.cu -> /etc/passwd: it points outside the checkout" in line for line in lines)


def test_a_checkout_keeps_executable_bits(hostile_repo: Path, tmp_path: Path) -> None:
    shallow_clone(str(hostile_repo), "main", tmp_path / "out", allow_local=True)
    assert stat.S_IMODE((tmp_path / "out/configure").stat().st_mode) & 0o111
    assert not stat.S_IMODE((tmp_path / "out/src/main.cu").stat().st_mode) & 0o111


@pytest.mark.django_db
def test_the_fetch_stage_reports_the_removed_links(
    hostile_repo: Path, team_user: tuple[User, Team], only_stages: Callable[..., None], settings: Settings
) -> None:
    settings.MIGRATOR_ALLOW_LOCAL_GIT = True
    only_stages("fetch")
    project = actions.create_project(team_user[1], "hostile", user=None, git_url=str(hostile_repo))
    run = run_sync(actions.create_run(project, user=None, ref="main"))
    fetch = run.stages.get(name="fetch")
    assert fetch.state == "passed" and "removed 3 symbolic link(s) pointing outside the checkout" in fetch.summary
    assert fetch.data["removed_links"] == ["a.cu", "passwd.cu", "src/up.h"]
    source = workspace_for(run.pk).source
    assert all(p.resolve().is_relative_to(source.resolve()) for p in source.rglob("*"))
