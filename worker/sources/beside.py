"""What a subdirectory's build files need from beside it, read statically from their text.

A run with ``source_subdir`` fetches one directory of a repository, but that directory's build files
often name paths next to it: a Makefile in ``app-a/`` with ``-I../app-b``, a Rodinia-style
``include ../../common/make.config``, a CMakeLists.txt with ``add_subdirectory(../x ...)``,
``include_directories(../../Common)`` or ``${CMAKE_CURRENT_SOURCE_DIR}/../cmake/Modules``. This module
finds those paths so the fetch keeps them.

Nothing is run: every word of a build file is read as a possible path once the variables it can
decide (the file's own simple assignments, ``$(CURDIR)``, CMake's source-dir variables) are expanded.
A word counts only when it climbs out of the subdirectory, stays inside the repository and names a
path the repository holds (``exists``), so a guess never keeps anything that is not there. A file
reference keeps the folder holding it (a git sparse checkout keeps folders, not files), except at the
top of the repository, where only the file is kept. A path that contains the subdirectory itself (the
repository, ``../..``) is never kept: it would be the whole tree. Kept build fragments (``make.config``,
``*.cmake``) and the build files of kept folders are read in turn, until nothing new is named.
"""
from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

MAKEFILE_NAMES = ("GNUmakefile", "makefile", "Makefile")
_FRAGMENT = re.compile(r"(?:^(?:GNU)?[Mm]akefile[\w.-]*|\.mk|\.make|\.config|\.cmake|^CMakeLists\.txt)$")
_READ_CAP = 1_000_000  # bytes of one build file
_MAX_FILES = 2000  # build files read for one subdirectory
_COMMENT = re.compile(r"(?<!\\)#.*$", re.MULTILINE)
_ASSIGN = re.compile(r"^\s*(?:export\s+|override\s+)?([A-Za-z_][\w.-]*)\s*(?::{1,3}=|\?=|=)\s*(.*?)\s*$", re.MULTILINE)
_CMAKE_SET = re.compile(r"\bset\s*\(\s*([A-Za-z_][\w.-]*)\s+([^\s)]+)", re.IGNORECASE)
_REFERENCE = re.compile(r"\$(?:\(([\w.-]+)\)|\{([\w.-]+)\})")
_WORD = re.compile(r"(?:\$\([\w.-]+\)|\$\{[\w.-]+\}|[^\s()\"';,=$])+")
_TOP = "\0top/"  # marks a path already relative to the repository's top (no build file holds a NUL)
_FLAG = re.compile(r"^(?:-(?:I|L|isystem|iquote|idirafter|include|imacros)|-Wl,-rpath,|--include-directory=)")
_GLOB = re.compile(r"[*?\[]")
_CMAKE_DIRS = ("CMAKE_CURRENT_SOURCE_DIR", "CMAKE_CURRENT_LIST_DIR")
_CMAKE_TOPS = ("CMAKE_SOURCE_DIR", "PROJECT_SOURCE_DIR")


@dataclass(frozen=True)
class KeptPath:
    path: str  # repository-relative: a folder, or a file at the top of the repository
    build_file: str  # repository-relative build file that names it
    word: str  # the word as the build file wrote it

    def describe(self) -> str:
        return f"{self.path} ({self.build_file}: {self.word})"


@dataclass(frozen=True)
class _Source:
    file: str  # repository-relative build file
    base: str  # the folder its relative paths start from (make's or CMake's current folder)


def paths_beside(root: Path, subdir: str, exists: Callable[[str], bool],
                 is_file: Callable[[str], bool] | None = None) -> list[KeptPath]:
    """The paths outside ``subdir`` (repository-relative, below ``root``) that its build files name,
    each once, in the order found; ``exists(path)`` says whether the repository holds ``path`` and
    ``is_file(path)`` whether it is a file (default: as ``root`` holds it; a sparse checkout does not yet)."""
    subdir = subdir.strip("/")
    is_file = is_file or (lambda path: (root / path).is_file())
    queue = [_Source(file, posixpath.dirname(file)) for file in _build_files(root, subdir)]
    kept: dict[str, KeptPath] = {}
    read: set[str] = set()
    while queue and len(read) < _MAX_FILES:
        source = queue.pop(0)
        if source.file in read:
            continue
        read.add(source.file)
        for word, target in _named_paths(root, source, subdir):
            if not exists(target):
                continue
            keep = posixpath.dirname(target) if "/" in target and is_file(target) else target
            if _covered(keep, subdir, kept):
                continue
            kept[keep] = KeptPath(keep, source.file, word)
            queue += _follow(root, keep, target, source)
    return _outermost(list(kept.values()))


def common_root(subdir: str, kept: Sequence[str]) -> str:
    """The deepest folder holding ``subdir`` and every kept path ("" for the repository's top)."""
    parts = subdir.strip("/").split("/")
    for path in kept:
        other = path.split("/")
        common = 0
        while common < min(len(parts), len(other)) and parts[common] == other[common]:
            common += 1
        parts = parts[:common]
    return "/".join(parts)


def _build_files(root: Path, folder: str) -> Iterator[str]:
    """Build files under ``folder`` (repository-relative), symbolic links left out."""
    top = root / folder if folder else root
    if not top.is_dir() or top.is_symlink():
        return
    for path in sorted(top.rglob("*")):
        if path.is_symlink() or not path.is_file() or any(part.startswith(".git") for part in path.parts):
            continue
        if _FRAGMENT.search(path.name) and path.stat().st_size <= _READ_CAP:
            yield path.relative_to(root).as_posix()


def _follow(root: Path, keep: str, target: str, source: _Source) -> list[_Source]:
    """What a kept path brings to read: a fragment (read from the includer's folder) or a folder's build files."""
    path = root / target
    if path.is_file() and not path.is_symlink():
        return [_Source(target, source.base)] if _FRAGMENT.search(path.name) else []
    return [_Source(file, posixpath.dirname(file)) for file in _build_files(root, keep)]


def _named_paths(root: Path, source: _Source, subdir: str) -> Iterator[tuple[str, str]]:
    """(word, repository-relative path) for each word of the build file that climbs out of ``subdir``."""
    text = _read(root / source.file)
    if not text:
        return
    text = _COMMENT.sub("", text.replace("\\\n", " "))
    variables = _variables(text, source, subdir)
    for raw in _WORD.findall(text):
        word = _FLAG.sub("", raw)
        if ".." not in word and "$" not in word:
            continue
        expanded = _expand(word, variables)
        if not expanded or expanded.startswith(("/", "~")):
            continue
        expanded = _GLOB.split(expanded, maxsplit=1)[0]
        if expanded.startswith(_TOP):  # from a source-dir variable: already relative to the repository
            target = posixpath.normpath(expanded[len(_TOP):].lstrip("/") or ".")
        elif _TOP in expanded:
            continue
        else:
            target = posixpath.normpath(posixpath.join(source.base, expanded))
        if target not in (".", "..") and not target.startswith("../") and _outside(target, subdir):
            yield raw, target


def _variables(text: str, source: _Source, subdir: str) -> dict[str, str]:
    """The variables a reader can decide without running anything; the source-dir ones as ``_TOP`` paths."""
    here = _TOP + source.base
    values = {"CURDIR": here, **{name: here for name in _CMAKE_DIRS}, **{name: _TOP + subdir for name in _CMAKE_TOPS}}
    for match in (*_ASSIGN.finditer(text), *_CMAKE_SET.finditer(text)):
        name, value = match.group(1), match.group(2).strip()
        if value and " " not in value:
            values.setdefault(name, value)
    return values


def _expand(word: str, variables: dict[str, str], depth: int = 0) -> str | None:
    """``word`` with its variables replaced; None when one of them is not known here."""
    unknown = False

    def replace(match: re.Match[str]) -> str:
        nonlocal unknown
        name = match.group(1) or match.group(2)
        value = _expand(variables[name], variables, depth + 1) if name in variables and depth < 4 else None
        if value is None:
            unknown = True
            return ""
        return value

    expanded = _REFERENCE.sub(replace, word)
    return None if unknown else expanded


def _outside(target: str, subdir: str) -> bool:
    return not (target == subdir or target.startswith(subdir + "/"))


def _covered(keep: str, subdir: str, kept: dict[str, KeptPath]) -> bool:
    """Already kept, inside the subdirectory, or a folder holding the subdirectory (the whole tree)."""
    if not _outside(keep, subdir) or (subdir + "/").startswith(keep + "/"):
        return True
    return any(keep == other or keep.startswith(other + "/") for other in kept)


def _outermost(kept: list[KeptPath]) -> list[KeptPath]:
    return [item for item in kept if not any(other is not item and item.path.startswith(other.path + "/")
                                             for other in kept)]


def _read(path: Path) -> str:
    try:
        if path.is_symlink() or path.stat().st_size > _READ_CAP:
            return ""
        return path.read_text(errors="replace")
    except OSError:
        return ""
