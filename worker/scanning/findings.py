"""Build-file findings for a whole tree: which rules read which file, size cap, parse errors."""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from worker.scanning.cmake_sources import libraries_used
from worker.scanning.files import (
    MAX_FILE_BYTES,
    TreeFile,
    build_kind,
    read_text,
    walk_tree,
)
from worker.scanning.fixes import apply_fixes
from worker.scanning.model import DEFAULT_OFFLOAD_ARCHS, AppliedFix, Family, Finding, RocmRelease, ScanContext
from worker.scanning.rules_cmake import scan_cmake
from worker.scanning.rules_config import (
    scan_accelerate,
    scan_ci,
    scan_commands,
    scan_compose,
    scan_deepspeed,
    scan_dockerfile,
)
from worker.scanning.rules_python import (
    scan_conda,
    scan_pyproject,
    scan_requirements,
    scan_setup_py,
)
from worker.scanning.rules_roctx import ROCTX_CALL

__all__ = ["RULE_IDS", "AppliedFix", "Finding", "scan_build_files", "scan_file"]

_HOST_SUFFIXES = {"c", "cc", "cpp", "cxx", "h", "hpp"}
_ROCTX_SUFFIXES = {"c", "cc", "cpp", "cxx", "cu", "hip"}  # compiled sources: a header's calls link with its users
_GPU_INCLUDE = re.compile(r"#\s*include\s*[<\"](?:cuda|cublas|cufft|curand|cusparse|cusolver|hip/|hipblas|hipfft|hiprand)")

Scanner = Callable[[str, str, ScanContext], list[Finding]]

SCANNERS: dict[str, Scanner] = {
    "cmake": scan_cmake,
    "make": lambda rel, text, ctx: scan_commands(rel, text, "make", ctx),
    "shell": lambda rel, text, ctx: scan_commands(rel, text, "shell", ctx),
    "dockerfile": scan_dockerfile,
    "setup-py": scan_setup_py,
    "pyproject": lambda rel, text, ctx: scan_pyproject(rel, text),
    "requirements": lambda rel, text, ctx: scan_requirements(rel, text),
    "conda": lambda rel, text, ctx: scan_conda(rel, text),
    "ci": scan_ci,
    "compose": scan_compose,
    "deepspeed": lambda rel, text, ctx: scan_deepspeed(rel, text),
    "accelerate": lambda rel, text, ctx: scan_accelerate(rel, text),
}
_FAMILY_OF_KIND: dict[str, Family] = {
    "cmake": "cmake", "make": "make", "shell": "shell", "dockerfile": "container", "setup-py": "python-build",
    "pyproject": "dependencies", "requirements": "dependencies", "conda": "dependencies", "ci": "ci",
    "compose": "container", "deepspeed": "run-config", "accelerate": "run-config",
}

_SHARED_RULES = ("nvcc", "nvidia-arch-flag", "nvcc-only-flag", "cuda-path", "cuda-link-library",
                 "cuda-home-variable", "ld-library-path-cuda", "hip-platform-define", "renamed-source")
_OWN_RULES = (
    "cmake.find-package-cuda", "cmake.find-package-cudatoolkit", "cmake.enable-language-cuda",
    "cmake.project-language-cuda", "cmake.findcuda-macro", "cmake.findcuda-variable", "cmake.cuda-imported-target",
    "cmake.cmake-cuda-variable", "cmake.cuda-property", "cmake.cu-source-language", "cmake.cuda-generator-expression",
    "cmake.hip-host-link", "cmake.aux-source-directory-cuda", "cmake.nvtx-roctx-link", "make.nvtx-roctx-link",
    "python-build.cuda-extension", "python-build.cuda-home", "python-build.nvcc-compile-args",
    "dependencies.cuda-wheel-index", "dependencies.cuda-local-version", "dependencies.nvidia-wheel",
    "dependencies.cupy-cuda", "dependencies.conda-cuda-package", "dependencies.nvidia-channel",
    "container.nvidia-base-image", "container.docker-gpus-flag", "container.nvidia-runtime", "container.nvidia-env",
    "ci.cuda-toolkit-install", "ci.cuda-version-matrix", "ci.windows-toolkit-path",
    "python-build.nvcc-probe", "python-build.cuda-version-probe", "python-build.cuda-arch-list",
    "run-config.deepspeed-fp16", "run-config.accelerate-fp16", "run-config.cuda-visible-devices",
    "run-config.nccl-variable", "run-config.nvidia-smi", "run-config.torch-version-cuda",
    "parse.error", "scan.file-too-large",
)
# Every rule id a finding can carry (for the settings form's opt-out list and the docs). The shared
# command-line rules take the family of the file they are found in.
RULE_IDS = _OWN_RULES + tuple(f"{family}.{name}" for family in ("cmake", "make", "shell", "container", "ci",
                                                                 "python-build") for name in _SHARED_RULES)


def scan_file(tree_file: TreeFile, kind: str, ctx: ScanContext | None = None) -> list[Finding]:
    """Findings of one build file; a crash inside a rule becomes a parse.error finding."""
    family = _FAMILY_OF_KIND[kind]
    if tree_file.size > MAX_FILE_BYTES:
        return [Finding("scan.file-too-large", "info", tree_file.rel, 1, 0, "", f"Skipped: larger than "
                        f"{MAX_FILE_BYTES // (1024 * 1024)} MB.", family=family)]
    text = read_text(tree_file)
    if text is None:
        return [Finding("parse.error", "warning", tree_file.rel, 1, 0, "", "Could not read this file as text.",
                        family=family)]
    try:
        return SCANNERS[kind](tree_file.rel, text, ctx or ScanContext())
    except (ValueError, TypeError, RecursionError, AttributeError) as error:  # keep one bad file from stopping a scan
        return [Finding("parse.error", "warning", tree_file.rel, 1, 0, "", f"Could not parse this file ({error}).",
                        family=family)]


def fix_tree(tree: Path, exclude_globs: Iterable[str], disabled_rules: set[str],
             offload_archs: Sequence[str] = DEFAULT_OFFLOAD_ARCHS, rocm: RocmRelease = RocmRelease()) -> list[AppliedFix]:
    """Scan ``tree`` and apply the safe fixes there (what the hipify stage does on ``workspace.hip``)."""
    return apply_fixes(tree, scan_build_files(tree, exclude_globs, offload_archs, rocm), disabled_rules)


def scan_build_files(tree: Path, exclude_globs: Iterable[str], offload_archs: Sequence[str] = DEFAULT_OFFLOAD_ARCHS,
                     rocm: RocmRelease = RocmRelease()) -> list[Finding]:
    """Every build file's findings; ``rocm``: the chosen toolchain's release, which suggestions name."""
    build_files = [(f, kind) for f in walk_tree(tree, exclude_globs) if (kind := build_kind(f.rel)) is not None]
    ctx = ScanContext(tuple(offload_archs) or DEFAULT_OFFLOAD_ARCHS, _cmake_libraries(build_files),
                      cuda_host_dirs(tree, exclude_globs), renamed_cu_sources(tree, exclude_globs), rocm,
                      roctx_sources(tree, exclude_globs))
    findings: list[Finding] = []
    for tree_file, kind in build_files:
        findings += scan_file(tree_file, kind, ctx)
    return sorted(findings, key=lambda f: (f.file, f.line, f.column, f.rule_id))


def cuda_host_dirs(tree: Path, exclude_globs: Iterable[str]) -> frozenset[str]:
    """Folders holding C/C++ host sources (not .cu) that include CUDA or HIP headers."""
    found: set[str] = set()
    for tree_file in walk_tree(tree, exclude_globs):
        if tree_file.rel.rsplit(".", 1)[-1].lower() not in _HOST_SUFFIXES or tree_file.size > MAX_FILE_BYTES:
            continue
        text = read_text(tree_file)
        if text and _GPU_INCLUDE.search(text):
            found.add(tree_file.rel.rpartition("/")[0])
    return frozenset(found)


def roctx_sources(tree: Path, exclude_globs: Iterable[str]) -> frozenset[str]:
    """Sources that call roctx: in a translated tree, those whose NVTX calls the translation mapped to roctx."""
    found: set[str] = set()
    for tree_file in walk_tree(tree, exclude_globs):
        if tree_file.rel.rsplit(".", 1)[-1].lower() not in _ROCTX_SUFFIXES or tree_file.size > MAX_FILE_BYTES:
            continue
        text = read_text(tree_file)
        if text and "roctx" in text and ROCTX_CALL.search(text):
            found.add(tree_file.rel)
    return frozenset(found)


def renamed_cu_sources(tree: Path, exclude_globs: Iterable[str]) -> frozenset[str]:
    """The .cu files a translation with rename_cu_to_hip wrote as .hip (a .hip file with no .cu beside it)."""
    hip = {f.rel[:-4] for f in walk_tree(tree, exclude_globs) if f.rel.endswith(".hip")}
    return frozenset(f"{stem}.cu" for stem in hip if not (tree / f"{stem}.cu").exists())


def _cmake_libraries(build_files: list[tuple[TreeFile, str]]) -> dict[str, frozenset[str]]:
    """Directory -> ROCm library packages its CMake files link (for one find_package per package)."""
    by_dir: dict[str, frozenset[str]] = {}
    for tree_file, kind in build_files:
        if kind != "cmake" or tree_file.size > MAX_FILE_BYTES:
            continue
        text = read_text(tree_file) or ""
        folder = tree_file.rel.rpartition("/")[0]
        by_dir[folder] = by_dir.get(folder, frozenset()) | libraries_used(text)
    return by_dir
