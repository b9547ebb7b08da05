"""Build-file findings for a whole tree: which rules read which file, size cap, parse errors."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from worker.scanning.files import (
    MAX_FILE_BYTES,
    TreeFile,
    build_kind,
    read_text,
    walk_tree,
)
from worker.scanning.fixes import apply_fixes
from worker.scanning.model import AppliedFix, Family, Finding
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

__all__ = ["RULE_IDS", "AppliedFix", "Finding", "scan_build_files", "scan_file"]

Scanner = Callable[[str, str], list[Finding]]

SCANNERS: dict[str, Scanner] = {
    "cmake": scan_cmake,
    "make": lambda rel, text: scan_commands(rel, text, "make"),
    "shell": lambda rel, text: scan_commands(rel, text, "shell"),
    "dockerfile": scan_dockerfile,
    "setup-py": scan_setup_py,
    "pyproject": scan_pyproject,
    "requirements": scan_requirements,
    "conda": scan_conda,
    "ci": scan_ci,
    "compose": scan_compose,
    "deepspeed": scan_deepspeed,
    "accelerate": scan_accelerate,
}
_FAMILY_OF_KIND: dict[str, Family] = {
    "cmake": "cmake", "make": "make", "shell": "shell", "dockerfile": "container", "setup-py": "python-build",
    "pyproject": "dependencies", "requirements": "dependencies", "conda": "dependencies", "ci": "ci",
    "compose": "container", "deepspeed": "run-config", "accelerate": "run-config",
}

_SHARED_RULES = ("nvcc", "nvidia-arch-flag", "nvcc-only-flag", "cuda-path", "cuda-link-library",
                 "cuda-home-variable", "ld-library-path-cuda")
_OWN_RULES = (
    "cmake.find-package-cuda", "cmake.find-package-cudatoolkit", "cmake.enable-language-cuda",
    "cmake.project-language-cuda", "cmake.findcuda-macro", "cmake.findcuda-variable", "cmake.cuda-imported-target",
    "cmake.cmake-cuda-variable", "cmake.cuda-property", "cmake.cu-source-language", "cmake.cuda-generator-expression",
    "python-build.cuda-extension", "python-build.cuda-home", "python-build.nvcc-compile-args",
    "dependencies.cuda-wheel-index", "dependencies.cuda-local-version", "dependencies.nvidia-wheel",
    "dependencies.cupy-cuda", "dependencies.conda-cuda-package", "dependencies.nvidia-channel",
    "container.nvidia-base-image", "container.docker-gpus-flag", "container.nvidia-runtime", "container.nvidia-env",
    "ci.cuda-toolkit-install",
    "run-config.deepspeed-fp16", "run-config.accelerate-fp16", "run-config.cuda-visible-devices",
    "run-config.nccl-variable",
    "parse.error", "scan.file-too-large",
)
# Every rule id a finding can carry (for the settings form's opt-out list and the docs). The shared
# command-line rules take the family of the file they are found in.
RULE_IDS = _OWN_RULES + tuple(f"{family}.{name}" for family in ("cmake", "make", "shell", "container", "ci",
                                                                 "python-build") for name in _SHARED_RULES)


def scan_file(tree_file: TreeFile, kind: str) -> list[Finding]:
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
        return SCANNERS[kind](tree_file.rel, text)
    except (ValueError, TypeError, RecursionError, AttributeError) as error:  # keep one bad file from stopping a scan
        return [Finding("parse.error", "warning", tree_file.rel, 1, 0, "", f"Could not parse this file ({error}).",
                        family=family)]


def fix_tree(tree: Path, exclude_globs: Iterable[str], disabled_rules: set[str]) -> list[AppliedFix]:
    """Scan ``tree`` and apply the safe fixes there (what the hipify stage does on ``workspace.hip``)."""
    return apply_fixes(tree, scan_build_files(tree, exclude_globs), disabled_rules)


def scan_build_files(tree: Path, exclude_globs: Iterable[str]) -> list[Finding]:
    findings: list[Finding] = []
    for tree_file in walk_tree(tree, exclude_globs):
        kind = build_kind(tree_file.rel)
        if kind is not None:
            findings += scan_file(tree_file, kind)
    return sorted(findings, key=lambda f: (f.file, f.line, f.column, f.rule_id))
