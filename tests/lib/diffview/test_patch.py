"""Patches checked with the real `git apply`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from migrator.lib.diffview.patch import build_patch, build_patch_bytes
from migrator.lib.diffview.tree import tree_changes, tree_patch_pairs
from tests.lib.diffview.sample_trees import ORIGINAL, RENAMES, TRANSLATED, write_tree


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def _git(
    repo: Path, *args: str, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["git", *args], cwd=repo, input=stdin, capture_output=True, check=False
    )


def _apply(tmp_path: Path, original: dict[str, bytes], patch: bytes) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    write_tree(repo, original)
    assert _git(repo, "init", "-q").returncode == 0
    check = _git(repo, "apply", "--check", "-", stdin=patch)
    assert check.returncode == 0, check.stderr.decode()
    assert _git(repo, "apply", "-", stdin=patch).returncode == 0
    return repo


def test_tree_patch_applies_cleanly_with_git_and_reproduces_the_translated_tree(
    tmp_path: Path,
) -> None:
    write_tree(tmp_path / "orig", ORIGINAL)
    write_tree(tmp_path / "hip", TRANSLATED)
    changes = tree_changes(tmp_path / "orig", tmp_path / "hip", RENAMES)
    patch = build_patch_bytes(
        tree_patch_pairs(tmp_path / "orig", tmp_path / "hip", changes)
    )
    repo = _apply(tmp_path, ORIGINAL, patch)
    assert _tree(repo) == TRANSLATED


def test_patch_marks_missing_final_newline_and_uses_dev_null_for_added_and_deleted_files() -> (
    None
):
    patch = build_patch(
        [
            ("a.cu", b"x\ncudaFree(p);", b"x\nhipFree(p);", None),
            ("new.hip", None, b"one\n", None),
            ("gone.cu", b"two\n", None, None),
        ]
    )
    assert (
        "-cudaFree(p);\n\\ No newline at end of file\n+hipFree(p);\n\\ No newline at end of file\n"
        in patch
    )
    assert "diff --git a/new.hip b/new.hip\nnew file mode 100644\n" in patch
    assert "--- /dev/null\n+++ b/new.hip\n@@ -0,0 +1 @@\n+one\n" in patch
    assert "--- a/gone.cu\n+++ /dev/null\n@@ -1 +0,0 @@\n-two\n" in patch


def test_patch_writes_rename_headers_without_hunks_for_identical_content() -> None:
    patch = build_patch([("a.cuh", b"same\n", b"same\n", "a.h")])
    assert patch == "diff --git a/a.cuh b/a.h\nrename from a.cuh\nrename to a.h\n"


def test_patch_skips_unchanged_files() -> None:
    assert build_patch([("a.cu", b"same\n", b"same\n", None)]) == ""


def test_patch_keeps_far_apart_changes_in_separate_hunks(tmp_path: Path) -> None:
    old = b"".join(b"line %d\n" % i for i in range(100))
    new = old.replace(b"line 5\n", b"LINE 5\n").replace(b"line 90\n", b"LINE 90\n")
    patch = build_patch_bytes([("f.txt", old, new, None)])
    assert patch.count(b"\n@@ ") == 2
    assert b"@@ -3,7 +3,7 @@" in patch
    repo = _apply(tmp_path, {"f.txt": old}, patch)
    assert (repo / "f.txt").read_bytes() == new


def test_patch_quotes_hostile_file_names_and_git_applies_them(tmp_path: Path) -> None:
    name = 'we"ird\\na\tme é.cu'
    patch = build_patch_bytes([(name, b"cuda\n", b"hip\n", None)])
    assert b'"a/we\\"ird\\\\na\\tme \\303\\251.cu"' in patch
    repo = _apply(tmp_path, {name: b"cuda\n"}, patch)
    assert (repo / name).read_bytes() == b"hip\n"


@pytest.mark.parametrize(
    "old,new", [(b"a\r\nb\r\n", b"a\nb\n"), (b"", b"x"), (b"x", b"")]
)
def test_patch_applies_line_ending_and_empty_edge_cases(
    tmp_path: Path, old: bytes, new: bytes
) -> None:
    repo = _apply(
        tmp_path, {"f.cu": old}, build_patch_bytes([("f.cu", old, new, None)])
    )
    assert (repo / "f.cu").read_bytes() == new
