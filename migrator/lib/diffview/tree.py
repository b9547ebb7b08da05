"""Comparing the original and translated trees of a run, and archiving the translated tree.

Symbolic links are neither followed nor diffed (a hostile repository could point
them anywhere); the archive stores them as links, as git would, and leaves out any
link that points outside the tree.
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from migrator.lib.diffview.align import align_lines
from worker.sources.treelinks import link_leaves

ChangeStatus = Literal["modified", "added", "removed", "renamed"]
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})


@dataclass(frozen=True)
class FileChange:
    """One changed file; `path` is the translated path (the original one when removed)."""

    path: str
    old_path: str | None
    status: ChangeStatus
    added: int
    removed: int
    binary: bool


def split_patch_lines(data: bytes) -> list[bytes]:
    """Lines of `data` as git sees them: ended by "\\n" only, terminators kept."""
    lines = data.split(b"\n")
    result = [line + b"\n" for line in lines[:-1]]
    if lines[-1]:
        result.append(lines[-1])
    return result


def _files(root: Path) -> dict[str, Path]:
    """Regular files under `root` by POSIX relative path, skipping VCS folders and symlinks."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if (
            SKIPPED_DIRS.intersection(relative.parts[:-1])
            or path.is_symlink()
            or not path.is_file()
        ):
            continue
        found[relative.as_posix()] = path
    return found


def _line_counts(old: bytes, new: bytes) -> tuple[int, int, bool]:
    """(added, removed, binary) the way `git diff --numstat` counts them."""
    if b"\0" in old[:8192] or b"\0" in new[:8192]:
        return 0, 0, True
    added = removed = 0
    for op in align_lines(split_patch_lines(old), split_patch_lines(new)):
        if op.kind != "equal":
            removed += op.i2 - op.i1
            added += op.j2 - op.j1
    return added, removed, False


def tree_changes(
    original_root: Path, translated_root: Path, rename_map: dict[str, str] | None = None
) -> list[FileChange]:
    """Changed, added, removed and renamed files; `rename_map` maps original to translated paths."""
    renames = rename_map or {}
    originals = _files(original_root)
    translated = _files(translated_root)
    claimed: set[str] = set()
    changes: list[FileChange] = []
    for old_path, old_file in originals.items():
        new_path = renames.get(old_path, old_path)
        if new_path not in translated:
            data = old_file.read_bytes()
            changes.append(_change(old_path, old_path, "removed", data, b""))
            continue
        claimed.add(new_path)
        old_data, new_data = old_file.read_bytes(), translated[new_path].read_bytes()
        if new_path != old_path:
            changes.append(_change(new_path, old_path, "renamed", old_data, new_data))
        elif old_data != new_data:
            changes.append(_change(new_path, old_path, "modified", old_data, new_data))
    for new_path in sorted(set(translated) - claimed):
        changes.append(
            _change(new_path, None, "added", b"", translated[new_path].read_bytes())
        )
    return sorted(changes, key=lambda change: change.path)


def _change(
    path: str, old_path: str | None, status: ChangeStatus, old: bytes, new: bytes
) -> FileChange:
    if status == "removed":
        added, removed, binary = _line_counts(old, b"")
    else:
        added, removed, binary = _line_counts(old, new)
    return FileChange(path, old_path, status, added, removed, binary)


def tree_patch_pairs(
    original_root: Path, translated_root: Path, changes: list[FileChange]
) -> Iterator[tuple[str, bytes | None, bytes | None, str | None]]:
    """Inputs for `build_patch` from `tree_changes` results, reading files one at a time."""
    for change in changes:
        if change.status == "added":
            yield change.path, None, (translated_root / change.path).read_bytes(), None
        elif change.status == "removed":
            yield change.path, (original_root / change.path).read_bytes(), None, None
        else:
            old_path = change.old_path or change.path
            new_path = change.path if change.status == "renamed" else None
            old = (original_root / old_path).read_bytes()
            yield old_path, old, (translated_root / change.path).read_bytes(), new_path


def _clean_owner(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """Archives carry no worker user names or ids."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def write_tree_archive(
    root: Path, fileobj: BinaryIO, prefix: str | None = None
) -> None:
    """Stream `root` as .tar.gz into `fileobj` (no seeking needed), entries under `prefix`/."""
    top = prefix if prefix is not None else root.name
    with tarfile.open(fileobj=fileobj, mode="w|gz") as archive:
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            if SKIPPED_DIRS.intersection(relative.parts) or (path.is_symlink() and link_leaves(root, path)):
                continue
            name = f"{top}/{relative.as_posix()}" if top else relative.as_posix()
            archive.add(path, arcname=name, recursive=False, filter=_clean_owner)


def archive_tree(root: Path, prefix: str | None = None) -> bytes:
    """The .tar.gz of `root` in memory; prefer `write_tree_archive` for large trees."""
    buffer = io.BytesIO()
    write_tree_archive(root, buffer, prefix)
    return buffer.getvalue()
