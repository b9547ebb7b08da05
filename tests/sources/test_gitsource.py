"""Shallow clones with the git CLI, and refusal of URLs that could harm the host."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from worker.sources.gitsource import GitSourceError, check_git_url, check_ref, shallow_clone


def _head(repo: Path, rev: str = "HEAD") -> str:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", rev], capture_output=True, text=True, check=True).stdout.strip()


def test_it_clones_a_branch_and_pins_the_commit(git_repo: Path, tmp_path: Path) -> None:
    result = shallow_clone(str(git_repo), "main", tmp_path / "out", allow_local=True)
    assert result.commit == _head(git_repo)
    assert (tmp_path / "out/src/vadd.cu").exists() and not (tmp_path / "out/.git").exists()


def test_it_clones_a_tag(git_repo: Path, tmp_path: Path) -> None:
    result = shallow_clone(str(git_repo), "v1", tmp_path / "out", allow_local=True)
    assert result.commit == _head(git_repo, "v1^{commit}")
    assert not (tmp_path / "out/NOTES.txt").exists()


def test_it_clones_a_full_and_an_abbreviated_commit(git_repo: Path, tmp_path: Path) -> None:
    first = _head(git_repo, "HEAD~1")
    assert shallow_clone(str(git_repo), first, tmp_path / "a", allow_local=True).commit == first
    assert shallow_clone(str(git_repo), first[:10], tmp_path / "b", allow_local=True).commit == first


def test_it_clones_the_default_branch_without_a_ref(git_repo: Path, tmp_path: Path) -> None:
    assert shallow_clone(str(git_repo), "", tmp_path / "out", allow_local=True).commit == _head(git_repo)


def test_an_unknown_ref_is_a_clear_error_and_leaves_nothing(git_repo: Path, tmp_path: Path) -> None:
    with pytest.raises(GitSourceError, match="unknown ref"):
        shallow_clone(str(git_repo), "no-such-branch", tmp_path / "out", allow_local=True)
    assert not (tmp_path / "out").exists()


def test_local_paths_and_file_urls_are_refused_unless_allowed(git_repo: Path, tmp_path: Path) -> None:
    for url in (str(git_repo), f"file://{git_repo}"):
        with pytest.raises(GitSourceError, match="disabled on this installation"):
            shallow_clone(url, "", tmp_path / "out", allow_local=False)


@pytest.mark.parametrize(
    "url, message",
    [
        ("ext::sh%-c%touch", "not allowed"),
        ("fd::17", "not allowed"),
        ("--upload-pack=touch /tmp/pwned", "malformed"),
        ("https://", "malformed"),
        ("ftp://example.com/x.git", "unsupported"),
        ("", "empty"),
        ("https://example.com/a b.git", "malformed"),
    ],
)
def test_dangerous_or_malformed_urls_are_refused(url: str, message: str) -> None:
    with pytest.raises(GitSourceError, match=message):
        check_git_url(url, allow_local=True)


def test_network_urls_are_accepted() -> None:
    for url in ("https://github.com/o/r.git", "ssh://git@host/o/r", "git@github.com:o/r.git"):
        assert check_git_url(url, allow_local=False) == url


@pytest.mark.parametrize("ref", ["--exec=x", "a..b", "a b", "x" * 300])
def test_malformed_refs_are_refused(ref: str) -> None:
    with pytest.raises(GitSourceError, match="malformed git ref"):
        check_ref(ref)


def test_an_unreachable_host_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(GitSourceError, match="unreachable|failed"):
        shallow_clone("https://nonexistent.invalid/r.git", "", tmp_path / "out", allow_local=False, timeout=30)
