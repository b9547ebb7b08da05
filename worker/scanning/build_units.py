"""What a project's own build files say to compile: targets with their sources, include
directories, definitions and link libraries, read from CMake and Makefiles.

This is a static reading, not a run of CMake or make: variables set with ``set``/``list(APPEND)``/
``file(GLOB)`` (CMake) and ``=``/``:=``/``?=``/``+=`` (make, ``include`` followed) are expanded, every
branch of a conditional counts, and functions other than ``wildcard`` expand to nothing. Only files
that exist in the tree are returned, as tree-relative posix paths.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from worker.scanning.cmake_sources import Command, commands

_TREE = "\0tree/"  # marks a path already relative to the tree root (after ${CMAKE_CURRENT_SOURCE_DIR} etc.)
SOURCE_SUFFIXES = (".cu", ".hip", ".cpp", ".cc", ".cxx", ".c")
UnitKind = Literal["executable", "library", "code-object"]
# CMake link items: imported targets of CUDA and ROCm -> the library name to pass as -l ("" = implicit).
_TARGET_LIBRARIES = {
    "hip::host": "", "hip::device": "", "hip::amdhip64": "", "CUDA::cudart": "", "CUDA::cuda_driver": "",
    "CUDA::cudart_static": "", "roc::hipblas": "hipblas", "CUDA::cublas": "hipblas", "roc::hipblaslt": "hipblaslt",
    "CUDA::cublasLt": "hipblaslt", "hip::hipfft": "hipfft", "CUDA::cufft": "hipfft", "hip::hiprand": "hiprand",
    "CUDA::curand": "hiprand", "roc::hipsparse": "hipsparse", "CUDA::cusparse": "hipsparse",
    "roc::hipsolver": "hipsolver", "CUDA::cusolver": "hipsolver", "hiprtc::hiprtc": "hiprtc", "CUDA::nvrtc": "hiprtc",
    "MIOpen": "MIOpen", "rocm_smi64": "rocm_smi64", "CUDA::nvml": "rocm_smi64", "Threads::Threads": "pthread",
    "OpenMP::OpenMP_CXX": "gomp", "OpenMP::OpenMP_C": "gomp",
}
_KEYWORDS = {"PRIVATE", "PUBLIC", "INTERFACE", "STATIC", "SHARED", "MODULE", "OBJECT", "WIN32", "MACOSX_BUNDLE",
             "EXCLUDE_FROM_ALL", "SYSTEM", "BEFORE", "AFTER", "IMPORTED", "GLOBAL", "ALIAS", "OPTIONS", "debug",
             "optimized", "general", "LINK_PRIVATE", "LINK_PUBLIC", "LINK_INTERFACE_LIBRARIES"}


@dataclass
class BuildUnit:
    """One target of the project's build: what to compile and how, and what to link."""

    name: str
    kind: UnitKind
    build_file: str  # the file that declares it
    sources: list[str] = field(default_factory=list)
    include_dirs: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)  # NAME or NAME=VALUE
    link_libraries: list[str] = field(default_factory=list)  # -l names
    depends: list[str] = field(default_factory=list)  # other units of this project it links
    std: str = ""  # the -std= its compiles name (make's dry run), "" when the build files name none


@dataclass
class _Scope:
    folder: str  # tree-relative
    variables: dict[str, list[str]]
    include_dirs: list[str]
    defines: list[str]


def cmake_units(tree: Path) -> list[BuildUnit]:
    """Targets of the CMake project rooted at ``tree/CMakeLists.txt`` (add_subdirectory followed)."""
    if not (tree / "CMakeLists.txt").is_file():
        return []
    units: dict[str, BuildUnit] = {}
    _read_cmake_dir(tree, _Scope("", {}, [], []), units, depth=0)
    names = set(units)
    for unit in units.values():
        unit.depends = [lib for lib in unit.link_libraries if lib in names]
        unit.link_libraries = [lib for lib in unit.link_libraries if lib not in names]
    return list(units.values())


def _read_cmake_dir(tree: Path, scope: _Scope, units: dict[str, BuildUnit], depth: int) -> None:
    path = tree / scope.folder / "CMakeLists.txt"
    if depth > 32 or not inside_tree(tree, path) or not path.is_file():
        return
    rel = posixpath.join(scope.folder, "CMakeLists.txt") if scope.folder else "CMakeLists.txt"
    here = [_TREE + (scope.folder or ".")]
    scope.variables.update({"CMAKE_CURRENT_SOURCE_DIR": here, "CMAKE_CURRENT_LIST_DIR": here})
    scope.variables.setdefault("CMAKE_SOURCE_DIR", [_TREE + "."])
    scope.variables.setdefault("PROJECT_SOURCE_DIR", [_TREE + "."])
    for command in commands(path.read_text(errors="replace").splitlines()):
        args = [item for arg in command.arguments for item in _expand_cmake(arg, scope.variables)]
        _apply_cmake(tree, scope, units, rel, command, args, depth)


def _expand_cmake(value: str, variables: dict[str, list[str]]) -> list[str]:
    for _ in range(8):
        match = re.search(r"\$\{(\w+)\}", value)
        if not match:
            break
        replacement = variables.get(match.group(1), [])
        if match.group(0) == value:
            return [v for item in replacement for v in _expand_cmake(item, variables)]
        value = value.replace(match.group(0), " ".join(replacement))
    return [part for part in value.split(";") if part] if value else []


def _apply_cmake(tree: Path, scope: _Scope, units: dict[str, BuildUnit], rel: str, command: Command,
                 args: list[str], depth: int) -> None:
    name = command.name
    if name == "set" and args:
        scope.variables[args[0]] = [a for a in args[1:] if a not in ("CACHE", "PARENT_SCOPE")]
    elif name == "list" and len(args) > 1 and args[0].upper() == "APPEND":
        scope.variables.setdefault(args[1], []).extend(args[2:])
    elif name == "file" and len(args) > 2 and args[0].upper() in ("GLOB", "GLOB_RECURSE"):
        scope.variables[args[1]] = _glob(tree, scope.folder, [a for a in args[2:] if a.upper() not in
                                                                ("CONFIGURE_DEPENDS", "LIST_DIRECTORIES")],
                                          args[0].upper() == "GLOB_RECURSE")
    elif name == "include_directories":
        scope.include_dirs += _dirs(tree, scope.folder, args)
    elif name in ("add_definitions", "add_compile_definitions"):
        scope.defines += [a.removeprefix("-D") for a in args if name == "add_compile_definitions" or a.startswith("-D")]
    elif name == "add_subdirectory" and args:
        folder = _join(scope.folder, args[0])
        child = _Scope(folder, dict(scope.variables), list(scope.include_dirs), list(scope.defines))
        _read_cmake_dir(tree, child, units, depth + 1)
    elif name in ("add_executable", "cuda_add_executable", "add_library", "cuda_add_library", "python_add_library",
                  "pybind11_add_module") and args:  # the last two: Python extension modules (PyTorch bindings)
        if any(a in ("IMPORTED", "ALIAS", "INTERFACE") for a in args[1:]):
            return
        kind: UnitKind = "executable" if "executable" in name else "library"
        unit = BuildUnit(args[0], kind, rel, include_dirs=list(scope.include_dirs), defines=list(scope.defines))
        unit.sources = _sources(tree, scope.folder, args[1:])
        units[args[0]] = unit
    elif args and args[0] in units:
        _apply_target_command(tree, scope, units[args[0]], name, args[1:])


def _apply_target_command(tree: Path, scope: _Scope, unit: BuildUnit, name: str, args: list[str]) -> None:
    items = [a for a in args if a not in _KEYWORDS]
    if name == "target_sources":
        unit.sources += [s for s in _sources(tree, scope.folder, items) if s not in unit.sources]
    elif name == "target_include_directories":
        unit.include_dirs += [d for d in _dirs(tree, scope.folder, items) if d not in unit.include_dirs]
    elif name == "target_compile_definitions":
        unit.defines += [a.removeprefix("-D") for a in items if a not in unit.defines]
    elif name in ("target_link_libraries", "cuda_add_cublas_to_target"):
        for item in items:
            library = _TARGET_LIBRARIES.get(item, item.removeprefix("-l"))
            if library and "$<" not in library and "::" not in library and library not in unit.link_libraries:
                unit.link_libraries.append(library)


def inside_tree(tree: Path, path: Path) -> bool:
    """Build files name paths freely (``../..``, links): only files that stay in the tree are read."""
    return path.resolve().is_relative_to(tree.resolve())


def _join(folder: str, item: str) -> str:
    """Tree-relative path of a build-file item (relative to its folder, or tree-rooted after expansion)."""
    if item.startswith(_TREE):
        joined = posixpath.normpath(item[len(_TREE):])
    else:
        joined = posixpath.normpath(posixpath.join(folder, item)) if not item.startswith("/") else item
    return "" if joined == "." else joined


def _sources(tree: Path, folder: str, items: list[str]) -> list[str]:
    found = []
    for item in items:
        rel = _join(folder, item)
        if (rel.endswith(SOURCE_SUFFIXES) and not rel.startswith("..") and inside_tree(tree, tree / rel)
                and (tree / rel).is_file() and rel not in found):
            found.append(rel)
    return found


def _dirs(tree: Path, folder: str, items: list[str]) -> list[str]:
    return [rel or "." for item in items if item not in _KEYWORDS and "$<" not in item and not item.startswith("/")
            and not (rel := _join(folder, item)).startswith("..") and (tree / rel).is_dir()]


def _glob(tree: Path, folder: str, patterns: list[str], recursive: bool) -> list[str]:
    found: list[str] = []
    base = tree.resolve()
    for pattern in patterns:
        rel = _join(folder, pattern)
        head, _, tail = rel.rpartition("/")
        matches = (tree / head).rglob(tail) if recursive else (tree / head).glob(tail)
        found += sorted(_TREE + p.resolve().relative_to(base).as_posix() for p in matches if p.is_file())
    return found
