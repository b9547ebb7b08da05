"""The converted-copy change: the translated tree as it is, as a branch of its own.

Every file of the translated tree that differs from the CUDA tree is written; files the translation
renamed away (``.cu`` -> ``.hip``) are deleted. For teams that fork for AMD.
"""
from __future__ import annotations

from pathlib import Path

from worker.delivery.model import Change, FileChange


def converted_copy(tree: Path, translated: Path) -> Change:
    files: list[FileChange] = []
    seen: set[str] = set()
    for path in sorted(translated.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        relative = path.relative_to(translated).as_posix()
        seen.add(relative)
        original = tree / relative
        data = path.read_bytes()
        if not original.is_file() or original.read_bytes() != data:
            files.append(FileChange(relative, data, "translated"))
    for path in sorted(tree.rglob("*")):
        relative = path.relative_to(tree).as_posix()
        if path.is_file() and not path.is_symlink() and relative not in seen and ".git" not in path.parts:
            files.append(FileChange(relative, None, "renamed or dropped by the translation"))
    return Change("copy", "", tuple(files))
