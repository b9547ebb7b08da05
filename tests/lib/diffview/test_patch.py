"""Patches checked with the real `git apply`, tree comparison and archives."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

import pytest

from migrator.lib.diffview.patch import (
    archive_tree,
    build_patch,
    build_patch_bytes,
    tree_changes,
    tree_patch_pairs,
)


def _write_tree(root: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


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
    _write_tree(repo, original)
    assert _git(repo, "init", "-q").returncode == 0
    check = _git(repo, "apply", "--check", "-", stdin=patch)
    assert check.returncode == 0, check.stderr.decode()
    assert _git(repo, "apply", "-", stdin=patch).returncode == 0
    return repo


ORIGINAL = {
    "src/kernel.cu": b"#include <cuda_runtime.h>\n"
    + b"".join(b"int v%d = %d;\n" % (i, i) for i in range(40))
    + b"void f() { cudaMalloc(&p, 4); }\n",
    "src/no_newline.cu": b"int a;\ncudaFree(p);",
    "src/crlf.cu": b"int a;\r\ncudaMemcpy(d, s, n, cudaMemcpyHostToDevice);\r\nint b;\r\n",
    "CMakeLists.txt": b"project(x LANGUAGES CXX CUDA)\n",
    "old dir/gone.txt": b"bye\n",
    "src/renamed.cu": b"__global__ void k() {}\ncudaDeviceSynchronize();\n",
    "src/moved_only.cuh": b"#pragma once\n",
    "data/blob.bin": b"\x00\x01\x02binary\xff" * 50,
}
TRANSLATED = {
    "src/kernel.cu": ORIGINAL["src/kernel.cu"]
    .replace(b"cuda_runtime.h", b"hip/hip_runtime.h")
    .replace(b"cudaMalloc", b"hipMalloc"),
    "src/no_newline.cu": b"int a;\nhipFree(p);",
    "src/crlf.cu": b"int a;\r\nhipMemcpy(d, s, n, hipMemcpyHostToDevice);\r\nint b;\r\n",
    "CMakeLists.txt": b"project(x LANGUAGES CXX HIP)",
    "src/renamed.hip": b"__global__ void k() {}\nhipDeviceSynchronize();\n",
    "src/moved_only.h": b"#pragma once\n",
    "added file.hip": b"new\nfile\n",
    "data/blob.bin": b"\x00\x03binary\xfe" * 60,
    "data/new.bin": b"\x00\x00\x01",
}
RENAMES = {
    "src/renamed.cu": "src/renamed.hip",
    "src/moved_only.cuh": "src/moved_only.h",
}


def test_tree_patch_applies_cleanly_with_git_and_reproduces_the_translated_tree(
    tmp_path: Path,
) -> None:
    _write_tree(tmp_path / "orig", ORIGINAL)
    _write_tree(tmp_path / "hip", TRANSLATED)
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


def test_tree_changes_lists_statuses_with_line_counts(tmp_path: Path) -> None:
    _write_tree(tmp_path / "orig", ORIGINAL)
    _write_tree(tmp_path / "hip", TRANSLATED)
    changes = {
        c.path: c for c in tree_changes(tmp_path / "orig", tmp_path / "hip", RENAMES)
    }
    assert (
        changes["src/kernel.cu"].status,
        changes["src/kernel.cu"].added,
        changes["src/kernel.cu"].removed,
    ) == ("modified", 2, 2)
    assert (changes["CMakeLists.txt"].added, changes["CMakeLists.txt"].removed) == (
        1,
        1,
    )
    assert (changes["src/renamed.hip"].status, changes["src/renamed.hip"].old_path) == (
        "renamed",
        "src/renamed.cu",
    )
    assert (changes["src/moved_only.h"].added, changes["src/moved_only.h"].removed) == (
        0,
        0,
    )
    assert (changes["added file.hip"].status, changes["added file.hip"].added) == (
        "added",
        2,
    )
    assert (
        changes["old dir/gone.txt"].status,
        changes["old dir/gone.txt"].removed,
    ) == ("removed", 1)
    assert changes["data/blob.bin"].binary and changes["data/new.bin"].binary
    assert "src/no_newline.cu" in changes and len(changes) == 10


def test_archive_tree_holds_every_file_under_the_prefix(tmp_path: Path) -> None:
    _write_tree(tmp_path / "hip", TRANSLATED)
    (tmp_path / "hip" / ".git").mkdir()
    (tmp_path / "hip" / ".git" / "config").write_bytes(b"secret")
    data = archive_tree(tmp_path / "hip", prefix="project-hip")
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        files = {
            m.name: archive.extractfile(m).read()  # type: ignore[union-attr]
            for m in archive.getmembers()
            if m.isfile()
        }
        owners = {(m.uid, m.uname) for m in archive.getmembers()}
    assert files == {f"project-hip/{name}": body for name, body in TRANSLATED.items()}
    assert owners == {(0, "")}


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
