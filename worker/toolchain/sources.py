"""What to compile in a translated tree: translation units, include dirs, dialect, include closure.

Includes are found by scanning ``#include`` lines (every branch of ``#if`` is
followed, which over-approximates and is safe for cache keys) and resolving them
the way the compiler would: next to the including file, then in the include dirs.
"""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from pathlib import Path

from translator.tree import link_stays_inside

SOURCE_SUFFIXES = (".cu", ".hip", ".cpp", ".cc", ".cxx", ".c")
HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".hxx", ".cuh", ".inl", ".inc", ".tpp")
DEFAULT_CXX_STD = "c++17"  # nvcc 12's default dialect

_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.MULTILINE)
_MACRO_INCLUDE = re.compile(r"^\s*#\s*include\s+[A-Za-z_]", re.MULTILINE)
_MAIN = re.compile(r"^[ \t]*(?:extern\s+\"C\"\s+)?(?:int|auto)\s+main\s*\(", re.MULTILINE)
_CUDA_STANDARD = re.compile(r"CMAKE_CUDA_STANDARD\s+(\d+)|CUDA_STANDARD\s+(\d+)")
_CXX_STANDARD = re.compile(r"CMAKE_CXX_STANDARD\s+(\d+)")
_STD_FLAG = re.compile(r"-std=((?:c|gnu)\+\+\d+)")
_SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", "node_modules"}


@dataclass
class SourceTree:
    root: Path
    files: list[str]  # every file, tree-relative posix paths
    translation_units: list[str]
    include_dirs: list[str]  # tree-relative, in search order
    _text_cache: dict[str, str] = field(default_factory=dict, repr=False)
    _file_set: set[str] = field(default_factory=set, repr=False)

    @property
    def file_set(self) -> set[str]:
        if len(self._file_set) != len(self.files):
            self._file_set = set(self.files)
        return self._file_set

    def text(self, relative: str) -> str:
        if relative not in self._text_cache:
            self._text_cache[relative] = (self.root / relative).read_text(errors="replace")
        return self._text_cache[relative]

    def includes(self, relative: str) -> list[tuple[str, str]]:
        """(kind, name) for each ``#include`` of a file; kind is ``<`` or ``"``."""
        return [(m.group(1), m.group(2).strip()) for m in _INCLUDE.finditer(self.text(relative))]

    def has_macro_include(self, relative: str) -> bool:
        return bool(_MACRO_INCLUDE.search(self.text(relative)))

    def defines_main(self, relative: str) -> bool:
        return bool(_MAIN.search(self.text(relative)))

    def resolve(self, including: str, name: str, kind: str) -> str:
        """Tree-relative path of an included file, or "" when it is not in the tree."""
        candidates = [str(Path(including).parent / name)] if kind == '"' else []
        candidates += [f"{d}/{name}" if d not in ("", ".") else name for d in self.include_dirs]
        for candidate in candidates:
            normal = _normalise(candidate)
            if normal in self.file_set:
                return normal
        return ""

    def include_closure(self, relative: str) -> tuple[list[str], bool]:
        """Files in the tree a TU includes, transitively; the flag says a macro include was seen."""
        seen: set[str] = set()
        pending = [relative]
        macro = False
        while pending:
            current = pending.pop()
            macro = macro or self.has_macro_include(current)
            for kind, name in self.includes(current):
                found = self.resolve(current, name, kind)
                if found and found not in seen and found != relative:
                    seen.add(found)
                    pending.append(found)
        return sorted(seen), macro


def scan_tree(root: Path, exclude_globs: tuple[str, ...] = (), extra_include_dirs: tuple[str, ...] = ()) -> SourceTree:
    files = _list_files(root, exclude_globs)
    tree = SourceTree(root=root, files=files, translation_units=[], include_dirs=[])
    tree.translation_units = [f for f in files if _is_translation_unit(tree, f)]
    tree.include_dirs = list(dict.fromkeys([*extra_include_dirs, *_discover_include_dirs(tree)]))
    return tree


def _list_files(root: Path, exclude_globs: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    for path in root.rglob("*"):
        relative = path.relative_to(root).as_posix()
        if any(part in _SKIP_DIRS for part in path.relative_to(root).parts):
            continue
        if any(fnmatch.fnmatch(relative, pattern) for pattern in exclude_globs):
            continue
        if path.is_file() and (not path.is_symlink() or link_stays_inside(path, root)):
            found.append(relative)
    return sorted(found)


def _is_translation_unit(tree: SourceTree, relative: str) -> bool:
    """Every C/C++ source is a TU: host-only files (a ``main.cpp`` calling launch wrappers)
    are needed at link time just as much as the kernels, and hipcc compiles them as plain C++."""
    return Path(relative).suffix.lower() in SOURCE_SUFFIXES


def _discover_include_dirs(tree: SourceTree) -> list[str]:
    """``include/`` dirs plus every dir from which some ``#include`` in the tree resolves."""
    dirs: dict[str, None] = {}
    for relative in tree.files:
        parts = Path(relative).parts
        if "include" in parts[:-1]:
            dirs["/".join(parts[: parts.index("include") + 1])] = None
    code = [f for f in tree.files if Path(f).suffix.lower() in HEADER_SUFFIXES + SOURCE_SUFFIXES]
    by_basename: dict[str, list[str]] = {}
    for relative in code:
        by_basename.setdefault(Path(relative).name, []).append(relative)
    for relative in code:
        for kind, name in tree.includes(relative):
            if kind == '"' and _normalise(str(Path(relative).parent / name)) in tree.file_set:
                continue
            for candidate in by_basename.get(Path(name).name, []):
                if candidate == name or candidate.endswith("/" + name):
                    dirs[candidate[: len(candidate) - len(name)].rstrip("/") or "."] = None
    return list(dirs)


def detect_cxx_std(*roots: Path) -> str:
    """C++ dialect named by the CUDA build files (CMake standard, ``-std=`` flags), else c++17."""
    cxx_fallback = ""
    for root in roots:
        for path in sorted(_build_files(root)):
            text = path.read_text(errors="replace")
            if match := _CUDA_STANDARD.search(text):
                return f"c++{match.group(1) or match.group(2)}"
            if match := _STD_FLAG.search(text):
                return match.group(1)
            if (match := _CXX_STANDARD.search(text)) and not cxx_fallback:
                cxx_fallback = f"c++{match.group(1)}"
    return cxx_fallback or DEFAULT_CXX_STD


def _build_files(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    names = ("CMakeLists.txt", "Makefile", "makefile", "GNUmakefile")
    return [
        p for p in root.rglob("*")
        if p.is_file() and (not p.is_symlink() or link_stays_inside(p, root))
        and (p.name in names or p.suffix in (".cmake", ".mk"))
        and not any(part in _SKIP_DIRS for part in p.parts)
    ]


def _normalise(path: str) -> str:
    parts: list[str] = []
    for part in Path(path).parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)
