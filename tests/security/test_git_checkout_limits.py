"""A git checkout obeys the archive limits before anything is written: a tiny repository naming one
large blob under thousands of paths (a checkout bomb) is measured from its tree and refused."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.pipeline.stagecontext import source_spec
from migrator.projects import actions
from tests.security.git_servers import GIT_ENV
from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.sources.archives import Limits
from worker.sources.gitsource import GitSourceError, shallow_clone
from worker.stages import fetch

MIB = 1024 * 1024


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True, check=True,
                          env=GIT_ENV).stdout.decode().strip()


def bomb_repository(tmp_path: Path, copies: int, blob_bytes: int = MIB, folder: str = "") -> Path:
    """One blob of ``blob_bytes`` named ``copies`` times (in ``folder``, or at the top), and a small kernel
    under ``kernels/``: built with hash-object and mktree, never checked out here."""
    repo = tmp_path / "bomb"
    _git(tmp_path, "init", "-q", "-b", "main", str(repo))
    _git(repo, "config", "uploadpack.allowFilter", "true")
    big = _git(repo, "hash-object", "-w", "--stdin", stdin=b"\0" * blob_bytes)
    small = _git(repo, "hash-object", "-w", "--stdin", stdin=b"__global__ void k() {}\n")
    copies_tree = _git(repo, "mktree", stdin="".join(f"100644 blob {big}\tcopy{i:05}.bin\n"
                                                      for i in range(copies)).encode())
    kernels = _git(repo, "mktree", stdin=f"100644 blob {small}\tk.cu\n".encode())
    entries = [f"040000 tree {kernels}\tkernels\n", f"100644 blob {small}\tREADME.md\n"]
    if folder:
        entries.append(f"040000 tree {copies_tree}\t{folder}\n")
        root = _git(repo, "mktree", stdin="".join(sorted(entries, key=lambda e: e.split("\t")[1])).encode())
    else:
        listing = _git(repo, "ls-tree", copies_tree) + "\n"
        root = _git(repo, "mktree", stdin=(listing + "".join(entries)).encode())
    commit = _git(repo, "commit-tree", root, "-m", "bomb")
    _git(repo, "update-ref", "refs/heads/main", commit)
    return repo


def test_a_checkout_bomb_is_refused_at_the_default_limits_before_checkout(tmp_path: Path) -> None:
    repo = bomb_repository(tmp_path, copies=2600)
    packed = sum(p.stat().st_size for p in (repo / ".git/objects").rglob("*") if p.is_file())
    assert packed < 100 * 1024  # the repository itself is tiny
    lines: list[str] = []
    with pytest.raises(GitSourceError) as refused:
        shallow_clone(f"file://{repo}", "main", tmp_path / "out", allow_local=True, log=lines.append)
    assert str(refused.value) == (f"repository tree is {2600 * MIB + 2 * 23} bytes when checked out (2602 files), "
                                  f"over the limit of {2 * 1024**3} bytes; nothing was checked out")
    assert not any(line.startswith("$ git checkout") for line in lines)
    assert not (tmp_path / "out").exists()


def test_too_many_files_and_a_file_too_large_are_refused(tmp_path: Path) -> None:
    repo = bomb_repository(tmp_path, copies=30, blob_bytes=4096)
    with pytest.raises(GitSourceError, match=r"^repository tree holds 32 files, over the limit of 20; nothing"):
        shallow_clone(str(repo), "main", tmp_path / "a", allow_local=True, limits=Limits(max_files=20))
    with pytest.raises(GitSourceError, match=r"^copy00000\.bin is 4096 bytes, over the limit of 1024 bytes per file"):
        shallow_clone(str(repo), "main", tmp_path / "b", allow_local=True, limits=Limits(max_file_bytes=1024))
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_sparse_clone_counts_only_what_it_checks_out(tmp_path: Path) -> None:
    repo = bomb_repository(tmp_path, copies=200, folder="assets")
    limits = Limits(max_total_bytes=10 * MIB)
    result = shallow_clone(f"file://{repo}", "main", tmp_path / "kernels", allow_local=True, limits=limits,
                           sparse_dir="kernels")
    assert result.commit and (tmp_path / "kernels/kernels/k.cu").is_file()
    assert not (tmp_path / "kernels/assets").exists()
    with pytest.raises(GitSourceError, match=r"^repository tree is \d+ bytes when checked out \(201 files\)"):
        shallow_clone(f"file://{repo}", "main", tmp_path / "assets", allow_local=True, limits=limits,
                      sparse_dir="assets")
    assert not (tmp_path / "assets").exists()


def test_a_tree_within_the_limits_is_checked_out(tmp_path: Path) -> None:
    repo = bomb_repository(tmp_path, copies=3, blob_bytes=1000)
    lines: list[str] = []
    shallow_clone(str(repo), "main", tmp_path / "out", allow_local=True, log=lines.append,
                  limits=Limits(max_files=5, max_total_bytes=3046, max_file_bytes=1000))
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["README.md", "copy00000.bin", "copy00001.bin",
                                                                    "copy00002.bin", "kernels"]
    assert "the checkout writes 5 files, 3046 bytes: within the limits\n" in lines


def test_the_fetch_stage_applies_the_operator_limits(tmp_path: Path) -> None:
    repo = bomb_repository(tmp_path, copies=50, blob_bytes=MIB)
    spec = {"kind": "git", "url": str(repo), "ref": "main", "allow_local": True, "timeout_s": 60,
            "limits": {"max_files": 1000, "max_total_bytes": 20 * MIB, "max_file_bytes": MIB}}
    ctx = StageContext(run_id=1, project_id=1, workspace=Workspace(tmp_path / "ws"), settings=ProjectSettings(),
                       cache_dir=tmp_path / "cache", source_spec=spec)
    result = fetch.run(ctx)
    assert result.outcome == "failed"
    assert result.summary == (f"repository tree is {50 * MIB + 46} bytes when checked out (52 files), over the limit "
                              f"of {20 * MIB} bytes; nothing was checked out")
    assert not Workspace(tmp_path / "ws").source.exists()


@pytest.mark.django_db
def test_git_runs_get_the_archive_limits_from_the_settings(team_user: tuple[User, Team], settings: Settings) -> None:
    settings.MIGRATOR_MAX_ARCHIVE_FILES, settings.MIGRATOR_MAX_UNPACKED_BYTES = 1234, 5 * MIB
    project = actions.create_project(team_user[1], "git", user=None, git_url="https://github.com/acme/demo.git")
    spec = source_spec(actions.create_run(project, user=None, ref="main"))
    assert spec["limits"] == {"max_files": 1234, "max_total_bytes": 5 * MIB,
                              "max_file_bytes": settings.MIGRATOR_MAX_FILE_BYTES}
