"""Comparing the original and translated trees of a run, and archiving the translated tree.

Symbolic links are neither followed nor diffed (a hostile repository could point
them anywhere); the archive stores them as links, as git would, and leaves out any
link that points outside the tree. Every file is listed and read through
``worker.contained`` (by directory descriptor, beneath the tree, regular files only).
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO, Literal

from migrator.lib.diffview.align import align_lines
from worker.contained import ContainedFileError, open_beneath, read_beneath, walk_beneath
from worker.sources.treelinks import text_leaves, within

ChangeStatus = Literal["modified", "added", "removed", "renamed"]
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})
READ_LIMIT = 1 << 30  # one file of a tree; the archive limits keep real ones far smaller


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


def _files(root: Path) -> list[str]:
    """Regular files under `root` by POSIX relative path, skipping VCS folders and symlinks."""
    return [entry.relative for entry in walk_beneath(root, skip=SKIPPED_DIRS)]


def read_file(root: Path, relative: str) -> bytes:
    """A regular file of the tree, reached without any link; ContainedFileError otherwise."""
    return read_beneath(root, relative, limit=READ_LIMIT, follow_links=False)


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
    translated = set(_files(translated_root))
    claimed: set[str] = set()
    changes: list[FileChange] = []
    for old_path in originals:
        new_path = renames.get(old_path, old_path)
        if new_path not in translated:
            data = read_file(original_root, old_path)
            changes.append(_change(old_path, old_path, "removed", data, b""))
            continue
        claimed.add(new_path)
        old_data, new_data = read_file(original_root, old_path), read_file(translated_root, new_path)
        if new_path != old_path:
            changes.append(_change(new_path, old_path, "renamed", old_data, new_data))
        elif old_data != new_data:
            changes.append(_change(new_path, old_path, "modified", old_data, new_data))
    for new_path in sorted(translated - claimed):
        changes.append(
            _change(new_path, None, "added", b"", read_file(translated_root, new_path))
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
            yield change.path, None, read_file(translated_root, change.path), None
        elif change.status == "removed":
            yield change.path, read_file(original_root, change.path), None, None
        else:
            old_path = change.old_path or change.path
            new_path = change.path if change.status == "renamed" else None
            old = read_file(original_root, old_path)
            yield old_path, old, read_file(translated_root, change.path), new_path


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
        for relative, info, target in _archive_entries(root):
            tar = tarfile.TarInfo(f"{top}/{relative}" if top else relative)
            tar.mode, tar.mtime = stat.S_IMODE(info.st_mode), int(info.st_mtime)
            if stat.S_ISDIR(info.st_mode):
                tar.type = tarfile.DIRTYPE
                archive.addfile(_clean_owner(tar))
            elif stat.S_ISLNK(info.st_mode):
                tar.type, tar.linkname = tarfile.SYMTYPE, target
                archive.addfile(_clean_owner(tar))
            else:
                _add_file(archive, root, relative, tar)


def _archive_entries(root: Path) -> list[tuple[str, os.stat_result, str]]:
    """(relative path, lstat, link text) of every folder, regular file and inside link under `root`,
    sorted as paths; VCS folders, links leaving the tree and anything else (FIFOs, devices) left out."""
    found: list[tuple[str, os.stat_result, str]] = []
    try:
        top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return found
    try:
        for folder, dirs, files, folder_fd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
            dirs[:] = [name for name in dirs if name not in SKIPPED_DIRS]
            inner = "" if folder == "." else folder.removeprefix("./") + "/"
            for name in (*dirs, *files):
                relative = inner + name
                try:
                    info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
                    target = os.readlink(name, dir_fd=folder_fd) if stat.S_ISLNK(info.st_mode) else ""
                except OSError:
                    continue
                if stat.S_ISLNK(info.st_mode) and (text_leaves(relative, target) or not within(root, root / relative)):
                    continue
                if stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                    found.append((relative, info, target))
    finally:
        os.close(top)
    return sorted(found, key=lambda item: PurePosixPath(item[0]).parts)


def _add_file(archive: tarfile.TarFile, root: Path, relative: str, tar: tarfile.TarInfo) -> None:
    """A regular file, opened beneath `root` without following links; left out when it is gone or changed kind."""
    try:
        fd = open_beneath(root, relative, follow_links=False)
    except ContainedFileError:
        return
    with os.fdopen(fd, "rb") as handle:
        tar.size = os.fstat(handle.fileno()).st_size
        archive.addfile(_clean_owner(tar), handle)


def archive_tree(root: Path, prefix: str | None = None) -> bytes:
    """The .tar.gz of `root` in memory; prefer `write_tree_archive` for large trees."""
    buffer = io.BytesIO()
    write_tree_archive(root, buffer, prefix)
    return buffer.getvalue()
