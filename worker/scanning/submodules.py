"""Submodules an archive or a snapshot left empty: ``.gitmodules`` names them, the tree has no files there.

A GitHub archive (and a clone without ``--recurse-submodules``) carries each submodule as an empty folder;
the project's build then fails on a missing header far from the cause. The scan names each one
("``dependencies/cutlass`` is an empty submodule directory: the build will need it"). ``.gitmodules`` is
read as git's config format, by lines; nothing in it is run or fetched.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

_SECTION = re.compile(r'^\s*\[\s*submodule\s+"([^"]*)"\s*\]\s*$')
_PATH = re.compile(r"^\s*path\s*=\s*(.+?)\s*$")
_URL = re.compile(r"^\s*url\s*=\s*(.+?)\s*$")
MAX_LISTED = 50


@dataclass(frozen=True)
class EmptySubmodule:
    path: str  # tree-relative
    url: str
    missing: bool  # no folder at all (else an empty one)

    @property
    def message(self) -> str:
        what = "a submodule missing from the tree" if self.missing else "an empty submodule directory"
        source = f" ({self.url})" if self.url else ""
        return f"`{self.path}` is {what}: the build will need it{source}"

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "url": self.url, "missing": self.missing, "message": self.message}


def _declared(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    path = url = ""
    in_section = False
    for line in [*text.splitlines(), '[submodule ""]']:
        if _SECTION.match(line):
            if in_section and path:
                found.append((path, url))
            in_section, path, url = True, "", ""
        elif in_section and (m := _PATH.match(line)):
            path = m.group(1).strip('"')
        elif in_section and (m := _URL.match(line)):
            url = m.group(1).strip('"')
    return found


def _inside(tree: Path, relative: str) -> bool:
    parts = PurePosixPath(relative).parts
    return bool(parts) and not relative.startswith("/") and ".." not in parts


def empty_submodules(tree: Path) -> list[EmptySubmodule]:
    """Submodules of ``tree/.gitmodules`` whose folder is empty or absent (a link counts as present)."""
    gitmodules = tree / ".gitmodules"
    if not gitmodules.is_file() or gitmodules.is_symlink():
        return []
    try:
        text = gitmodules.read_text(encoding="utf-8", errors="replace")[:200_000]
    except OSError:
        return []
    found = []
    for path, url in _declared(text):
        if not _inside(tree, path):
            continue
        folder = tree / path
        if folder.is_symlink():
            continue
        if not folder.exists():
            found.append(EmptySubmodule(path, url, missing=True))
        elif folder.is_dir() and not any(os.scandir(folder)):
            found.append(EmptySubmodule(path, url, missing=False))
    return found[:MAX_LISTED]
