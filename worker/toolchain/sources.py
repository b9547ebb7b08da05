"""What to compile in a translated tree: translation units, include dirs, dialect, include closure.

Includes are found by scanning ``#include`` lines (every branch of ``#if`` is
followed, which over-approximates and is safe for cache keys) and resolving them
the way the compiler would: next to the including file, then in the include dirs.

``build_units`` is the per-file mode's source of truth where the project has build files: each
target's own sources, include directories, definitions and link libraries, read from CMake or the
Makefiles (Windows-only sources left out). ``scan_tree`` is the fallback for trees without any; it
never guesses a project folder for a system header (a Windows shim ``dev/unistd.h`` must not shadow
``<unistd.h>``) and leaves Windows-only sources out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from translator.globs import is_excluded
from translator.tree import link_stays_inside
from worker.scanning.build_units import BuildUnit, cmake_units
from worker.scanning.make_units import MAKEFILE_NAMES, make_units

__all__ = ["BuildUnit", "SourceTree", "build_units", "detect_cxx_std", "is_windows_only", "scan_tree"]

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
_WINDOWS_DIRS = {"win", "win32", "win64", "windows", "msvc", "vs", "vc", "visualstudio"}
_WINDOWS_HEADERS = {"windows.h", "direct.h", "io.h", "conio.h", "winsock2.h", "ws2tcpip.h", "tchar.h", "process.h",
                    "shlwapi.h", "intrin.h", "windef.h", "winbase.h", "d3d9.h", "d3d10.h", "d3d11.h", "d3d12.h",
                    "dxgi.h", "d3dx9.h", "d3dx11.h", "d3dcompiler.h"}
# Headers the system provides: an angle include of one of these never resolves into the project.
SYSTEM_HEADERS = frozenset(
    "assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h locale.h math.h setjmp.h "
    "signal.h stdalign.h stdarg.h stdatomic.h stdbool.h stddef.h stdint.h stdio.h stdlib.h stdnoreturn.h string.h "
    "tgmath.h threads.h time.h uchar.h wchar.h wctype.h unistd.h fcntl.h dirent.h pthread.h sched.h semaphore.h "
    "dlfcn.h glob.h libgen.h poll.h pwd.h grp.h regex.h strings.h syslog.h termios.h netdb.h getopt.h malloc.h "
    "alloca.h execinfo.h cpuid.h immintrin.h x86intrin.h emmintrin.h xmmintrin.h omp.h mpi.h utime.h fnmatch.h "
    "spawn.h wordexp.h ftw.h iconv.h langinfo.h search.h ulimit.h utmp.h endian.h byteswap.h".split()
) | frozenset(_WINDOWS_HEADERS)
_WINDOWS_INCLUDE = re.compile(r"^\s*#\s*include\s*[<\"](" + "|".join(re.escape(h) for h in sorted(_WINDOWS_HEADERS))
                              + r")[>\"]", re.MULTILINE | re.IGNORECASE)
_CONDITION = re.compile(r"^\s*#\s*(if|ifdef|ifndef|endif)\b", re.MULTILINE)


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
    tree.include_dirs = list(dict.fromkeys([*extra_include_dirs, *_discover_include_dirs(tree)]))
    included = included_sources(tree)
    tree.translation_units = [f for f in files if f not in included and _is_translation_unit(tree, f)]
    return tree


def included_sources(tree: SourceTree) -> set[str]:
    """Sources another file ``#include``s (a kernel ``.cu`` pulled into its host file): compiled there, never
    on their own, where the including file's types and macros are missing."""
    found: set[str] = set()
    for relative in tree.files:
        if Path(relative).suffix.lower() not in HEADER_SUFFIXES + SOURCE_SUFFIXES:
            continue
        for kind, name in tree.includes(relative):
            target = tree.resolve(relative, name, kind)
            if target and target != relative and Path(target).suffix.lower() in SOURCE_SUFFIXES:
                found.add(target)
    return found


def _list_files(root: Path, exclude_globs: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    for path in root.rglob("*"):
        relative = path.relative_to(root).as_posix()
        if any(part in _SKIP_DIRS for part in path.relative_to(root).parts):
            continue
        if is_excluded(relative, exclude_globs):
            continue
        if path.is_file() and (not path.is_symlink() or link_stays_inside(path, root)):
            found.append(relative)
    return sorted(found)


def _is_translation_unit(tree: SourceTree, relative: str) -> bool:
    """Every C/C++ source is a TU: host-only files (a ``main.cpp`` calling launch wrappers)
    are needed at link time just as much as the kernels, and hipcc compiles them as plain C++.
    Windows-only sources are not: they cannot build on Linux."""
    return Path(relative).suffix.lower() in SOURCE_SUFFIXES and not is_windows_only(relative, tree.text(relative))


def is_windows_only(relative: str, text: str) -> bool:
    """A source in a Windows folder (``win/``, ``msvc/``), or one that includes a Windows header
    outside any ``#if`` (a guarded ``#ifdef _WIN32`` include is fine)."""
    parts = [part.lower() for part in Path(relative).parts]
    if any(part in _WINDOWS_DIRS for part in parts[:-1]) or re.search(r"[_-](?:win(?:32|64|dows)?|d3d\d*|dx\d+)\.", parts[-1]):
        return True
    for include in _WINDOWS_INCLUDE.finditer(text):
        depth = 0
        for condition in _CONDITION.finditer(text, 0, include.start()):
            depth += -1 if condition.group(1) == "endif" else 1
        if depth <= 0:
            return True
    return False


def build_units(root: Path, exclude_globs: tuple[str, ...] = ()) -> list[BuildUnit]:
    """Targets of the project's own build files (CMake when there is a top-level CMakeLists.txt,
    else every Makefile), each with its own sources, include dirs, definitions and link libraries;
    empty when the tree has no build file this understands. Pure: reads files, runs nothing."""
    units = cmake_units(root)
    if not units and not (root / "CMakeLists.txt").is_file():
        for makefile in _makefiles(root, exclude_globs):
            units += make_units(root, makefile)
    for unit in units:
        unit.sources = [s for s in unit.sources if not is_excluded(s, exclude_globs)
                        and not is_windows_only(s, (root / s).read_text(errors="replace"))]
    return [unit for unit in units if unit.sources]


def _makefiles(root: Path, exclude_globs: tuple[str, ...]) -> list[str]:
    found = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if (path.name in MAKEFILE_NAMES and path.is_file() and not any(p in _SKIP_DIRS for p in path.parts)
                and (not path.is_symlink() or link_stays_inside(path, root))
                and not is_excluded(relative, exclude_globs)):
            found.append(relative)
    return found


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
            if kind == "<" and (name in SYSTEM_HEADERS or name.startswith(("sys/", "netinet/", "arpa/", "linux/"))
                                or "." not in name):
                continue  # the system's header; a same-named project file must not shadow it
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
