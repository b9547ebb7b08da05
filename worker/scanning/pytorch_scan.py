"""The scan stage's part for PyTorch projects (Python applications, extensions, mixed trees):
GPU touchpoints in Python and configs, the dependency report with ROCm counterparts, the
readiness figures that matter for the kind, and the generated ROCm requirement files.

Dependency resolution runs pip (binary-only dry run, see ``dep_resolve``) against pip's
configured index; ``MIGRATOR_RESOLVE_DEPENDENCIES=off`` turns it off (declared names only),
``MIGRATOR_PIP_INDEX_URL`` names another index and ``MIGRATOR_PIP_TIMEOUT_S`` bounds it.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from worker.payloads import PythonScanData
from worker.scanning.dep_report import (
    CONSTRAINTS_FILE,
    REQUIREMENTS_FILE,
    build_report,
    constraints_text,
    requirements_text,
)
from worker.scanning.dep_resolve import ResolveOptions
from worker.scanning.project_kind import ProjectKind
from worker.scanning.python_touchpoints import python_readiness, rocm_files_shipped, scan_touchpoints
from worker.scanning.rocm_counterparts import DEFAULT_ROCM_VERSION

PYTHON_KINDS = frozenset({"python-app", "pytorch-extension", "mixed"})
FINDINGS_CAP = 1000
_OFF = ("0", "off", "false", "no")


def resolve_options_from_env() -> ResolveOptions | None:
    if os.environ.get("MIGRATOR_RESOLVE_DEPENDENCIES", "on").strip().lower() in _OFF:
        return None
    try:
        timeout = float(os.environ.get("MIGRATOR_PIP_TIMEOUT_S", "300"))
    except ValueError as error:
        raise ValueError(f"MIGRATOR_PIP_TIMEOUT_S must be a number of seconds: {error}") from error
    return ResolveOptions(index_url=os.environ.get("MIGRATOR_PIP_INDEX_URL", "").strip(), timeout_s=timeout)


def rocm_version_for(target_hip_version: str) -> str:
    """HIP and ROCm share version numbers; the project's target, else the toolchain's."""
    parts = target_hip_version.strip().split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 and all(p.isdigit() for p in parts[:2]) else DEFAULT_ROCM_VERSION


def pytorch_scan(tree: Path, exclude_globs: Iterable[str], kind: ProjectKind, options: ResolveOptions | None,
                 rocm_version: str = DEFAULT_ROCM_VERSION,
                 cancel: Callable[[], bool] | None = None) -> PythonScanData:
    """The scan data for a PyTorch project; empty for other kinds."""
    if kind.kind not in PYTHON_KINDS:
        return PythonScanData()
    globs = tuple(exclude_globs)
    touchpoints = scan_touchpoints(tree, globs)
    readiness = python_readiness(touchpoints, rocm_files_shipped(tree, globs))
    report = build_report(tree, globs, options, rocm_version, cancel)
    generated = {REQUIREMENTS_FILE: requirements_text(report), CONSTRAINTS_FILE: constraints_text(report)} \
        if report.declarations else {}
    return PythonScanData(
        python_findings=[f.to_dict() for f in touchpoints[:FINDINGS_CAP]],
        python_findings_total=len(touchpoints),
        python_readiness=readiness.to_dict(),
        python_summary=readiness.summary(),
        dependencies=report.to_dict(),
        dependencies_summary=report.summary(),
        generated_files=generated,
    )
