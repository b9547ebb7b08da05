"""The scan stage's inventory: what is in the tree and how much of it is CUDA."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from worker.scanning.cuda_refs import CUDA_SUFFIXES, Location, SourceRefs, scan_source
from worker.scanning.files import (
    MAX_FILE_BYTES,
    SOURCE_LANGUAGES,
    TreeFile,
    build_kind,
    language_of,
    walk_tree,
)
from worker.scanning.libraries import library_of_identifier

LIST_CAP = 200  # longest list kept in to_dict(); counts stay exact

_BUILD_SYSTEMS = {
    "CMakeLists.txt": "CMake", "Makefile": "Make", "makefile": "Make", "GNUmakefile": "Make",
    "setup.py": "setuptools (setup.py)", "pyproject.toml": "pyproject", "setup.cfg": "setuptools (setup.cfg)",
    "BUILD": "Bazel", "BUILD.bazel": "Bazel", "WORKSPACE": "Bazel", "WORKSPACE.bazel": "Bazel", "MODULE.bazel": "Bazel",
    "meson.build": "Meson", "SConstruct": "SCons", "configure.ac": "Autotools", "build.ninja": "Ninja",
}


@dataclass
class LanguageStats:
    files: int = 0
    lines: int = 0


@dataclass
class Inventory:
    files_total: int = 0
    lines_total: int = 0
    by_language: dict[str, LanguageStats] = field(default_factory=dict)
    cuda_files: list[str] = field(default_factory=list)
    kernels: list[Location] = field(default_factory=list)
    launch_sites: list[Location] = field(default_factory=list)
    identifiers: Counter[str] = field(default_factory=Counter)  # CUDA API name -> references
    defined: set[str] = field(default_factory=set)  # CUDA-looking names the project defines (cudaCheck)
    libraries: Counter[str] = field(default_factory=Counter)  # library -> references
    constructs: Counter[str] = field(default_factory=Counter)  # no automatic path (inline PTX, warp size 32)
    construct_sites: list[Location] = field(default_factory=list)
    build_systems: dict[str, list[str]] = field(default_factory=dict)
    dependency_files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # too large or unreadable

    def add_source(self, refs: SourceRefs, rel: str) -> None:
        if refs.is_cuda or rel.endswith(CUDA_SUFFIXES):
            self.cuda_files.append(rel)
        self.identifiers.update(refs.identifiers)
        self.defined |= refs.defined
        self.libraries.update(refs.libraries)
        self.constructs.update(refs.constructs)
        self.construct_sites += refs.construct_sites
        self.kernels += refs.kernels
        self.launch_sites += refs.launches

    def api_identifiers(self) -> Counter[str]:
        """CUDA API references, without names the project itself defines (its own helpers and macros)."""
        return Counter({name: n for name, n in self.identifiers.items() if name not in self.defined})

    def api_by_library(self) -> dict[str, int]:
        counts: Counter[str] = Counter()
        for name, count in self.api_identifiers().items():
            counts[library_of_identifier(name)] += count
        for library, count in self.libraries.items():
            if library not in counts:
                counts[library] = count
        return dict(counts.most_common())

    def to_dict(self) -> dict[str, object]:
        return {
            "files_total": self.files_total,
            "lines_total": self.lines_total,
            "by_language": {k: {"files": v.files, "lines": v.lines}
                            for k, v in sorted(self.by_language.items(), key=lambda kv: -kv[1].lines)},
            "cuda_files_count": len(self.cuda_files),
            "cuda_files": self.cuda_files[:LIST_CAP],
            "kernels_count": len(self.kernels),
            "kernels": [vars(k) for k in self.kernels[:LIST_CAP]],
            "launch_sites_count": len(self.launch_sites),
            "launch_sites": [vars(k) for k in self.launch_sites[:LIST_CAP]],
            "cuda_references": sum(self.api_identifiers().values()),
            "distinct_cuda_apis": len(self.api_identifiers()),
            "api_by_library": self.api_by_library(),
            "top_apis": dict(self.api_identifiers().most_common(50)),
            "project_defined_cuda_names": sorted(self.defined)[:LIST_CAP],
            "constructs": dict(self.constructs),
            "construct_sites": [vars(k) for k in self.construct_sites[:LIST_CAP]],
            "build_systems": self.build_systems,
            "dependency_files": self.dependency_files,
            "skipped": self.skipped,
        }


def _note_build_file(inventory: Inventory, tree_file: TreeFile) -> None:
    system = _BUILD_SYSTEMS.get(tree_file.name)
    if system is None and tree_file.name.endswith(".bzl"):
        system = "Bazel"
    if system:
        inventory.build_systems.setdefault(system, []).append(tree_file.rel)
    if build_kind(tree_file.rel) in ("requirements", "conda", "pyproject") or tree_file.name in ("setup.py", "Pipfile", "poetry.lock"):
        inventory.dependency_files.append(tree_file.rel)


def _add_file(inventory: Inventory, tree_file: TreeFile) -> None:
    language = language_of(tree_file.name)
    stats = inventory.by_language.setdefault(language, LanguageStats())
    stats.files += 1
    inventory.files_total += 1
    _note_build_file(inventory, tree_file)
    if tree_file.size > MAX_FILE_BYTES:
        inventory.skipped.append(f"{tree_file.rel} (larger than {MAX_FILE_BYTES // (1024 * 1024)} MB)")
        return
    try:
        data = tree_file.path.read_bytes()
    except OSError:
        inventory.skipped.append(f"{tree_file.rel} (unreadable)")
        return
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    stats.lines += lines
    inventory.lines_total += lines
    if language in SOURCE_LANGUAGES and b"\0" not in data[:8192]:
        inventory.add_source(scan_source(tree_file.rel, data.decode("utf-8", errors="replace")), tree_file.rel)


def build_inventory(tree: Path, exclude_globs: Iterable[str],
                    on_progress: Callable[[int], None] | None = None) -> Inventory:
    """Walk ``tree``; ``on_progress(files_done)`` runs every 250 files (a stage checks cancellation there)."""
    inventory = Inventory()
    for tree_file in walk_tree(tree, exclude_globs):
        _add_file(inventory, tree_file)
        if on_progress is not None and inventory.files_total % 250 == 0:
            on_progress(inventory.files_total)
    return inventory
