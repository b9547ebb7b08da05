"""What kind of project a tree is, and which pipeline stages apply to that kind.

Kinds: ``cuda-cpp`` (CUDA C/C++ built with CMake, Make or a command), ``pytorch-extension``
(``torch.utils.cpp_extension`` in a setup script or at run time, or scikit-build/CMake with
``find_package(Torch)``), ``python-app`` (a Python application on PyTorch, no CUDA sources),
``mixed`` (a Python package plus kernel directories with their own CUDA sources) and ``other``
(neither CUDA sources nor PyTorch). Python files are read with ``ast``; a file that does not
parse counts as not using PyTorch.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from worker.payloads import ProjectKindData
from worker.scanning.files import MAX_FILE_BYTES, TreeFile, read_text, walk_tree

ProjectKindName = Literal["cuda-cpp", "pytorch-extension", "python-app", "mixed", "other"]

CUDA_SOURCE_SUFFIXES = (".cu", ".cuh")
HOST_SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx", ".c")
# C/C++ sources calling the CUDA runtime, driver or libraries (a cuSOLVER sample is all .cpp): CUDA code too
_CUDA_HOST_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"](?:cuda|cuda_runtime|cuda_runtime_api|cublas\w*|cusolver\w*"
                                r"|curand\w*|cufft\w*|cusparse\w*|nvrtc|nvml|npp\w*|cudnn\w*)\.h[>\"]", re.MULTILINE)
_BUILD_FILES = frozenset({"CMakeLists.txt", "Makefile", "makefile", "GNUmakefile", "setup.py", "pyproject.toml"})
_EXTENSION_NAMES = frozenset({"CUDAExtension", "BuildExtension", "CppExtension", "load", "load_inline"})
_CMAKE_TORCH = re.compile(r"find_package\s*\(\s*Torch\b", re.IGNORECASE)
_SKBUILD = re.compile(r"scikit[-_]build", re.IGNORECASE)
LIST_CAP = 50


@dataclass
class ProjectKind:
    kind: ProjectKindName
    reason: str
    cuda_sources: int = 0
    torch_files: int = 0  # Python files importing torch
    extension_markers: list[str] = field(default_factory=list)  # "file:line what"
    kernel_dirs: list[str] = field(default_factory=list)  # directories owning CUDA sources ("." = the root)
    python_packages: list[str] = field(default_factory=list)  # top-level dirs holding __init__.py

    def to_dict(self) -> ProjectKindData:
        return ProjectKindData(
            kind=self.kind, reason=self.reason, cuda_sources=self.cuda_sources, torch_files=self.torch_files,
            extension_markers=list(self.extension_markers), kernel_dirs=list(self.kernel_dirs),
            python_packages=list(self.python_packages))

    @classmethod
    def from_dict(cls, payload: Mapping[str, object]) -> ProjectKind:
        names = {"kind", "reason", "cuda_sources", "torch_files", "extension_markers", "kernel_dirs",
                 "python_packages"}
        return cls(**{k: v for k, v in payload.items() if k in names})  # type: ignore[arg-type]


@dataclass
class _Evidence:
    cuda_files: list[str] = field(default_factory=list)
    build_dirs: set[str] = field(default_factory=set)
    torch_files: list[str] = field(default_factory=list)
    markers: list[str] = field(default_factory=list)
    packages: set[str] = field(default_factory=set)


def _python_evidence(rel: str, text: str, evidence: _Evidence) -> None:
    try:
        tree = ast.parse(text, filename=rel)
    except (SyntaxError, ValueError, RecursionError):
        return
    uses_torch = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            uses_torch |= any(alias.name.split(".")[0] == "torch" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            uses_torch |= node.module.split(".")[0] == "torch"
            if node.module == "torch.utils.cpp_extension":
                found = sorted(a.name for a in node.names if a.name in _EXTENSION_NAMES)
                if found:
                    evidence.markers.append(f"{rel}:{node.lineno} imports {', '.join(found)}")
        elif isinstance(node, ast.Attribute) and node.attr in _EXTENSION_NAMES:
            base = node.value
            if isinstance(base, ast.Name) and base.id == "cpp_extension" or \
                    isinstance(base, ast.Attribute) and base.attr == "cpp_extension":
                evidence.markers.append(f"{rel}:{node.lineno} uses cpp_extension.{node.attr}")
    if uses_torch:
        evidence.torch_files.append(rel)


def _note(tree_file: TreeFile, evidence: _Evidence) -> None:
    rel, name = tree_file.rel, tree_file.name
    parent = str(PurePosixPath(rel).parent)
    if name in _BUILD_FILES:
        evidence.build_dirs.add(parent)
    if name == "__init__.py" and "/" in rel:
        evidence.packages.add(rel.split("/", 1)[0])
    if rel.endswith(CUDA_SOURCE_SUFFIXES):
        evidence.cuda_files.append(rel)
        return
    if tree_file.size > MAX_FILE_BYTES:
        return
    if rel.endswith(HOST_SOURCE_SUFFIXES):
        text = read_text(tree_file)
        if text is not None and _CUDA_HOST_INCLUDE.search(text):
            evidence.cuda_files.append(rel)
        return
    if name.endswith(".py") or name in ("CMakeLists.txt", "pyproject.toml"):
        text = read_text(tree_file)
        if text is None:
            return
        if name.endswith(".py"):
            _python_evidence(rel, text, evidence)
        elif name == "CMakeLists.txt" and _CMAKE_TORCH.search(text):
            evidence.markers.append(f"{rel}: find_package(Torch)")
        elif name == "pyproject.toml" and _SKBUILD.search(text) and "torch" in text:
            evidence.markers.append(f"{rel}: scikit-build with torch")


def _owner_dir(rel: str, build_dirs: set[str]) -> str:
    """The nearest directory above ``rel`` (not the root) with its own build file, else the top-level one."""
    parts = PurePosixPath(rel).parts[:-1]
    for depth in range(len(parts), 0, -1):
        candidate = "/".join(parts[:depth])
        if candidate in build_dirs:
            return candidate
    return "." if "." in build_dirs or not parts else parts[0]


def _in_dirs(rel: str, dirs: Iterable[str]) -> bool:
    return any(d == "." or rel == d or rel.startswith(d + "/") for d in dirs)


def classify(evidence: _Evidence) -> ProjectKind:
    kernel_dirs = sorted({_owner_dir(rel, evidence.build_dirs) for rel in evidence.cuda_files})
    outside = [rel for rel in evidence.torch_files if not _in_dirs(rel, kernel_dirs)]
    base = dict(cuda_sources=len(evidence.cuda_files), torch_files=len(evidence.torch_files),
                extension_markers=evidence.markers[:LIST_CAP], kernel_dirs=kernel_dirs[:LIST_CAP],
                python_packages=sorted(evidence.packages)[:LIST_CAP])
    if evidence.cuda_files and outside and "." not in kernel_dirs:
        return ProjectKind("mixed", f"a Python package ({len(outside)} files on PyTorch) plus CUDA kernels in "
                           f"{', '.join(kernel_dirs[:5])}", **base)  # type: ignore[arg-type]
    if evidence.markers:
        return ProjectKind("pytorch-extension", f"PyTorch extension build: {evidence.markers[0]}",
                           **base)  # type: ignore[arg-type]
    if evidence.cuda_files:
        return ProjectKind("cuda-cpp", f"{len(evidence.cuda_files)} CUDA source files (CUDA C++, or C/C++ calling "
                           "CUDA's runtime or libraries)",
                           **base)  # type: ignore[arg-type]
    if evidence.torch_files:
        return ProjectKind("python-app", f"Python application on PyTorch ({len(evidence.torch_files)} files import "
                           "torch), no CUDA sources", **base)  # type: ignore[arg-type]
    return ProjectKind("other", "no CUDA sources and no PyTorch use found", **base)  # type: ignore[arg-type]


def detect_kind(tree: Path, exclude_globs: Iterable[str]) -> ProjectKind:
    evidence = _Evidence()
    for tree_file in walk_tree(tree, exclude_globs):
        _note(tree_file, evidence)
    return classify(evidence)


# Why a stage does not apply to a kind; absent means it applies.
_NOT_APPLICABLE: dict[tuple[str, str], str] = {
    ("python-app", "compile"): "a Python application on PyTorch has no CUDA sources to compile; its GPU code "
                               "comes from the wheels in the dependency report",
    ("python-app", "link"): "a Python application has nothing to link",
    ("pytorch-extension", "link"): "the extension's own build (setup.py / CMake through PyTorch) links it in the "
                                   "compile stage",
    ("other", "compile"): "no CUDA sources and no PyTorch use found",
    ("other", "link"): "no CUDA sources and no PyTorch use found",
}


def not_applicable_reason(kind: ProjectKindName, stage: str) -> str | None:
    """Why ``stage`` does not apply to a project of ``kind``; None when it applies."""
    return _NOT_APPLICABLE.get((kind, stage))


def applicable_stages(kind: ProjectKindName, stages: Iterable[str]) -> dict[str, str | None]:
    """Each stage with None (applies) or the reason it does not."""
    return {stage: not_applicable_reason(kind, stage) for stage in stages}
