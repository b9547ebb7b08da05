"""Where a translated tree's own Makefile build lives: the root, or the folders beside its CUDA sources.

A tree whose top holds a Makefile that builds code builds there (one unit). Otherwise each folder holding CUDA code
(``.cu``/``.hip`` sources, or C/C++ sources that include HIP headers once translated) is built by the
nearest Makefile at or above it: a suite of ``<app>/Makefile`` folders, sharing ``include/`` or
``common/make.config``, becomes one unit per app, each with its own result. A CMakeLists.txt beside a
Makefile does not hide it (the caller takes CMake only where CMake's targets were found).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from translator.globs import is_excluded
from translator.tree import link_stays_inside
from worker.scanning.make_units import MAKEFILE_NAMES
from worker.toolchain.sources import is_windows_only

_CUDA_SUFFIXES = (".cu", ".hip")
_HOST_SUFFIXES = (".cpp", ".cc", ".cxx", ".c")  # sources only: a folder of shared headers is built by its users
_HIP_INCLUDE = re.compile(r"^\s*#\s*include\s*[<\"](?:hip\w*/|hip_runtime|roc\w+/|hipblas|hipfft|hiprand|hipsolver"
                          r"|hipsparse|rocblas)", re.MULTILINE)
# What a Makefile that builds code mentions (a compiler, sources or objects, a sub-make); a documentation
# Makefile at the top (sphinx-build, pandoc) does not, and the folders beside the sources decide instead.
_BUILDS_CODE = re.compile(r"\.(?:cu|hip|c|cc|cpp|cxx|o)\b|(?<![\w-])(?:hipcc|nvcc|gcc|g\+\+|clang\+\+|clang|cc|c\+\+)"
                          r"(?![\w-])|\$[({](?:MAKE|CC|CXX|NVCC|HIPCC|LINK\.\w+|COMPILE\.\w+)[)}]|(?<![\w-])make(?![\w-])")
_SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules"}
_READ_CAP = 2_000_000


@dataclass(frozen=True)
class MakeFolders:
    folders: list[str]  # tree-relative, "." for the root
    makefiles: list[str]  # the Makefile of each folder
    reason: str  # why these: one clause for the log and the compile page


def make_folders(tree: Path, exclude_globs: tuple[str, ...] = ()) -> MakeFolders:
    """The folders whose Makefiles build the tree's CUDA code; empty when none does."""
    top = _makefile(tree, "")
    if top and _builds_code((tree / top).read_text(errors="replace")):
        return MakeFolders(["."], [top], f"{top} at the top of the tree")
    chosen: dict[str, str] = {}
    for folder in sorted(cuda_folders(tree, exclude_globs)):
        owner = _owning_folder(tree, folder)
        if owner is not None:
            chosen[owner[0]] = owner[1]
    outermost = {f: m for f, m in chosen.items()
                 if not any(other != f and PurePosixPath(f).is_relative_to(other) for other in chosen)}
    folders = sorted(outermost)
    if not folders:
        return MakeFolders([], [], "")
    files = [outermost[f] for f in folders]
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    return MakeFolders(folders, files, f"{shown}, beside the CUDA sources" + (
        f" ({len(files)} build folders, each its own unit)" if len(files) > 1 else ""))


def cuda_folders(tree: Path, exclude_globs: tuple[str, ...] = ()) -> set[str]:
    """Tree-relative folders holding CUDA code (Windows-only files left out)."""
    found: set[str] = set()
    for path in tree.rglob("*"):
        relative = path.relative_to(tree)
        rel = relative.as_posix()
        if any(part in _SKIP_DIRS for part in relative.parts) or is_excluded(rel, exclude_globs):
            continue
        if not path.is_file() or (path.is_symlink() and not link_stays_inside(path, tree)):
            continue
        suffix = path.suffix.lower()
        if suffix not in _CUDA_SUFFIXES + _HOST_SUFFIXES or path.stat().st_size > _READ_CAP:
            continue
        text = path.read_text(errors="replace")
        if (suffix in _CUDA_SUFFIXES or _HIP_INCLUDE.search(text)) and not is_windows_only(rel, text):
            found.add(relative.parent.as_posix())
    return found


def _makefile(tree: Path, folder: str) -> str:
    for name in MAKEFILE_NAMES:
        path = tree / folder / name if folder else tree / name
        if path.is_file() and (not path.is_symlink() or link_stays_inside(path, tree)):
            return f"{folder}/{name}" if folder else name
    return ""


def _owning_folder(tree: Path, folder: str) -> tuple[str, str] | None:
    """The nearest folder at or above ``folder`` (below the root) with a Makefile."""
    parts = PurePosixPath(folder).parts if folder != "." else ()
    for depth in range(len(parts), 0, -1):
        candidate = "/".join(parts[:depth])
        if makefile := _makefile(tree, candidate):
            return candidate, makefile
    return None


def _builds_code(text: str) -> bool:
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    return bool(_BUILDS_CODE.search("\n".join(lines)))
