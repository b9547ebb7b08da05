"""Walking a source tree: exclusion globs (``translator/globs.py``), size cap, language and build-file kinds."""
from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from translator.globs import is_excluded, is_excluded_dir

MAX_FILE_BYTES = 2 * 1024 * 1024

_LANGUAGE_BY_SUFFIX = {
    ".cu": "CUDA", ".cuh": "CUDA",
    ".cpp": "C++", ".cc": "C++", ".cxx": "C++", ".c++": "C++", ".hpp": "C++", ".hh": "C++", ".hxx": "C++",
    ".c": "C", ".h": "C/C++ header", ".inl": "C++", ".ipp": "C++",
    ".hip": "HIP", ".py": "Python", ".pyx": "Cython", ".pxd": "Cython",
    ".cmake": "CMake", ".mk": "Make", ".sh": "Shell", ".bash": "Shell", ".zsh": "Shell",
    ".yml": "YAML", ".yaml": "YAML", ".toml": "TOML", ".json": "JSON", ".md": "Markdown", ".rst": "reStructuredText",
    ".txt": "Text", ".bzl": "Bazel", ".ptx": "PTX", ".f90": "Fortran", ".cfg": "Config", ".ini": "Config",
}
_LANGUAGE_BY_NAME = {
    "CMakeLists.txt": "CMake", "Makefile": "Make", "makefile": "Make", "GNUmakefile": "Make",
    "Dockerfile": "Dockerfile", "BUILD": "Bazel", "BUILD.bazel": "Bazel", "WORKSPACE": "Bazel",
    "WORKSPACE.bazel": "Bazel", "MODULE.bazel": "Bazel", "meson.build": "Meson", "meson_options.txt": "Meson",
}
SOURCE_LANGUAGES = frozenset({"CUDA", "C++", "C", "C/C++ header", "HIP", "Python", "Cython"})


@dataclass(frozen=True)
class TreeFile:
    path: Path
    rel: str  # posix path relative to the tree root
    size: int

    @property
    def name(self) -> str:
        return self.path.name


def language_of(name: str) -> str:
    if name in _LANGUAGE_BY_NAME:
        return _LANGUAGE_BY_NAME[name]
    if name.startswith("Dockerfile") or name.endswith(".dockerfile") or name == "Containerfile":
        return "Dockerfile"
    if name.startswith("requirements") and name.endswith(".txt"):
        return "Requirements"
    return _LANGUAGE_BY_SUFFIX.get(os.path.splitext(name)[1].lower(), "Other")


def build_kind(rel: str) -> str | None:
    """Which rule set reads this file, or None when it is not a build/config file."""
    name = rel.rsplit("/", 1)[-1]
    lower = name.lower()
    if name == "CMakeLists.txt" or lower.endswith(".cmake"):
        return "cmake"
    if (name in ("Makefile", "makefile", "GNUmakefile") or lower.endswith((".mk", ".make"))
            or lower.startswith(("makefile_", "makefile.", "makefile-")) and not lower.endswith((".md", ".txt", ".html"))
            or lower in ("make.config", "make.inc", "make.def", "make.common", "common.mk")
            or lower.startswith("make.") and lower.endswith((".config", ".inc", ".def"))):
        return "make"
    if lower.endswith((".sh", ".bash", ".zsh")) or lower in (".env", "env.list"):
        return "shell"
    if name.startswith("Dockerfile") or lower.endswith(".dockerfile") or name == "Containerfile":
        return "dockerfile"
    if name == "setup.py":
        return "setup-py"
    if name == "pyproject.toml":
        return "pyproject"
    if (lower.startswith("requirements") or rel.startswith("requirements/") or "/requirements/" in rel) and lower.endswith((".txt", ".in")):
        return "requirements"
    if lower in ("environment.yml", "environment.yaml", "conda.yml", "conda.yaml") or (
        lower.startswith("environment") and lower.endswith((".yml", ".yaml"))
    ):
        return "conda"
    if rel.startswith(".github/workflows/") and lower.endswith((".yml", ".yaml")) or lower == ".gitlab-ci.yml":
        return "ci"
    if lower.endswith(".json") and ("deepspeed" in lower or "ds_config" in lower or "zero" in lower):
        return "deepspeed"
    if lower.endswith((".yml", ".yaml")) and ("accelerate" in lower or "fsdp" in lower or "deepspeed" in lower):
        return "accelerate"
    if lower in ("docker-compose.yml", "docker-compose.yaml", "compose.yml", "compose.yaml"):
        return "compose"
    return None


def walk_tree(tree: Path, exclude_globs: Iterable[str]) -> Iterator[TreeFile]:
    """Regular files under ``tree`` (sorted, symlinks not followed), minus excluded ones."""
    globs = tuple(exclude_globs)
    for dirpath, dirnames, filenames in os.walk(tree):
        base = Path(dirpath)
        rel_dir = base.relative_to(tree).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        dirnames[:] = sorted(d for d in dirnames if not is_excluded_dir(prefix + d, globs))
        for name in sorted(filenames):
            path = base / name
            rel = prefix + name
            if is_excluded(rel, globs) or path.is_symlink():
                continue
            try:
                size = path.stat().st_size
            except OSError:
                continue
            yield TreeFile(path, rel, size)


def read_text(file: TreeFile) -> str | None:
    """File text (undecodable bytes replaced), or None when it is binary or unreadable."""
    try:
        data = file.path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")
