"""The source_subdir setting: validation, sparse partial clones, the fetch stage, form and API."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from migrator.accounts.models import Team
from migrator.api.models import create_token
from migrator.projects.models import Project
from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings, SettingsError
from worker.sources.gitsource import shallow_clone
from worker.stages import fetch


@pytest.mark.parametrize("value", ["/etc", "../up", "a/../../b", "~/x", "a\\b", "-rf", ".", "a\nb"])
def test_a_subdirectory_outside_the_repository_is_refused(value: str) -> None:
    with pytest.raises(SettingsError, match="source_subdir"):
        ProjectSettings.from_dict({"source_subdir": value})


def test_a_relative_subdirectory_is_kept() -> None:
    assert ProjectSettings.from_dict({"source_subdir": "sgl-kernel/csrc"}).source_subdir == "sgl-kernel/csrc"


@pytest.fixture
def big_repo(tmp_path: Path) -> Path:
    """A repository with a kernels directory and a large unrelated one; the server allows partial clones."""
    repo = tmp_path / "upstream"
    for rel, text in {"README.md": "top\n", "kernels/csrc/a.cu": "__global__ void k() {}\n",
                      "kernels/CMakeLists.txt": "project(k)\n", "docs/big.txt": "x" * 200_000}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "one"],
                 ["config", "uploadpack.allowFilter", "true"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    return repo


def test_a_sparse_clone_checks_out_only_the_directory(big_repo: Path, tmp_path: Path) -> None:
    logs: list[str] = []
    shallow_clone(f"file://{big_repo}", "main", tmp_path / "out", allow_local=True, log=logs.append,
                  sparse_dir="kernels")
    assert (tmp_path / "out/kernels/csrc/a.cu").is_file() and not (tmp_path / "out/docs").exists()
    assert any("--filter=blob:none" in line for line in logs)


def _context(root: Path, spec: dict[str, object], subdir: str) -> StageContext:
    return StageContext(run_id=1, project_id=1, workspace=Workspace(root),
                        settings=ProjectSettings.from_dict({"source_subdir": subdir}), cache_dir=root / "cache",
                        source_spec=spec)


def test_the_fetch_stage_keeps_only_the_subdirectory(big_repo: Path, tmp_path: Path) -> None:
    spec = {"kind": "git", "url": f"file://{big_repo}", "ref": "main", "allow_local": True}
    result = fetch.run(_context(tmp_path / "ws", spec, "kernels"))
    assert result.outcome == "passed", result.summary
    source = Workspace(tmp_path / "ws").source
    assert sorted(p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file()) == \
        ["CMakeLists.txt", "csrc/a.cu"]
    assert result.data["source_subdir"] == "kernels" and result.data["files"] == 2


def test_a_missing_subdirectory_fails_the_fetch_clearly(big_repo: Path, tmp_path: Path) -> None:
    spec = {"kind": "git", "url": f"file://{big_repo}", "ref": "main", "allow_local": True}
    result = fetch.run(_context(tmp_path / "ws", spec, "sgl-kernel"))
    assert result.outcome == "failed" and result.summary == "source_subdir: the tree has no directory sgl-kernel/"


@pytest.mark.django_db
def test_the_new_project_form_stores_the_subdirectory(
    client: Client, team_user: tuple[User, Team], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("migrator.projects.views.start_run", lambda run: None)
    client.force_login(team_user[0])
    data = {"name": "sgl", "team": team_user[1].pk, "git_url": "https://example.com/org/big.git",
            "source_subdir": "sgl-kernel"}
    assert client.post(reverse("projects:create"), data).status_code == 302
    assert Project.objects.get().settings == {"source_subdir": "sgl-kernel"}
    refused = client.post(reverse("projects:create"), {**data, "name": "bad", "source_subdir": "../etc"})
    assert refused.status_code == 400 and b"source_subdir" in refused.content


@pytest.mark.django_db
def test_the_api_takes_the_subdirectory(client: Client, team_user: tuple[User, Team]) -> None:
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {create_token(team_user[1], 'ci')[1]}"
    payload = {"name": "sgl", "git_url": "https://example.com/org/big.git", "source_subdir": "sgl-kernel"}
    assert client.post("/api/v1/projects", payload).status_code == 201
    assert Project.objects.get().settings == {"source_subdir": "sgl-kernel"}
    bad = client.post("/api/v1/projects", {**payload, "name": "bad", "source_subdir": "/abs"})
    assert bad.status_code == 400 and "source_subdir" in bad.json()["detail"]
