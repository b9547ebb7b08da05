"""Comparing the original and translated trees, and archiving the translated tree."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from migrator.lib.diffview.tree import archive_tree, tree_changes
from tests.lib.diffview.sample_trees import ORIGINAL, RENAMES, TRANSLATED, write_tree


def test_tree_changes_lists_statuses_with_line_counts(tmp_path: Path) -> None:
    write_tree(tmp_path / "orig", ORIGINAL)
    write_tree(tmp_path / "hip", TRANSLATED)
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
    write_tree(tmp_path / "hip", TRANSLATED)
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
