"""The scan stage's part for PyTorch projects (Python applications, extensions, mixed trees):
GPU touchpoints in Python and configs, the dependency report (install sets, their ROCm side,
the project's own ROCm files), the readiness figures that matter for the kind, and the generated
``requirements-rocm.txt``.

The scan resolves nothing: each set's resolve request goes into the stage data with its cache
key, and the dependencies app resolves it on its own queue (``deps``) once the scan has passed.
``resolve_options_from_env`` reads the product's index settings (the only ones a resolve sees):
``MIGRATOR_RESOLVE_DEPENDENCIES=off`` (no resolve), ``MIGRATOR_PIP_INDEX_URL``,
``MIGRATOR_PIP_EXTRA_INDEX_URLS`` (comma-separated), ``MIGRATOR_ROCM_WHEEL_INDEX`` (a mirror of
PyTorch's ROCm index), ``MIGRATOR_PIP_TIMEOUT_S`` (default 300), ``MIGRATOR_PIP_CERT``,
``MIGRATOR_PIP_PROXY``, ``MIGRATOR_PIP_CACHE_DIR``. ``MIGRATOR_PIP_CERT`` defaults to the operating
system's CA bundle (pip's own bundle would refuse a company's TLS proxy).
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from worker.payloads import PythonScanData
from worker.scanning.dep_report import REQUIREMENTS_FILE, build_report, requirements_text
from worker.scanning.dep_resolve import ResolveOptions
from worker.scanning.project_kind import ProjectKind
from worker.scanning.python_touchpoints import python_readiness, rocm_files_shipped, scan_touchpoints
from worker.scanning.rocm_counterparts import DEFAULT_ROCM_VERSION

PYTHON_KINDS = frozenset({"python-app", "pytorch-extension", "mixed"})
FINDINGS_CAP = 1000
_OFF = ("0", "off", "false", "no")
_CA_BUNDLES = ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt")


def resolve_options_from_env() -> ResolveOptions | None:
    if os.environ.get("MIGRATOR_RESOLVE_DEPENDENCIES", "on").strip().lower() in _OFF:
        return None
    try:
        timeout = float(os.environ.get("MIGRATOR_PIP_TIMEOUT_S", "300"))
    except ValueError as error:
        raise ValueError(f"MIGRATOR_PIP_TIMEOUT_S must be a number of seconds: {error}") from error
    extra = tuple(u.strip() for u in os.environ.get("MIGRATOR_PIP_EXTRA_INDEX_URLS", "").split(",") if u.strip())
    return ResolveOptions(index_url=os.environ.get("MIGRATOR_PIP_INDEX_URL", "").strip(), extra_index_urls=extra,
                          rocm_index=os.environ.get("MIGRATOR_ROCM_WHEEL_INDEX", "").strip(), timeout_s=timeout,
                          cert=os.environ.get("MIGRATOR_PIP_CERT", _system_ca_bundle()).strip(),
                          proxy=os.environ.get("MIGRATOR_PIP_PROXY", "").strip(),
                          cache_dir=os.environ.get("MIGRATOR_PIP_CACHE_DIR", "").strip())


def _system_ca_bundle() -> str:
    """The operating system's CA bundle, where there is one: pip's own bundle lacks a company's TLS proxy CA."""
    return next((path for path in _CA_BUNDLES if os.path.isfile(path)), "")


def rocm_version_for(target_hip_version: str) -> str:
    """HIP and ROCm share version numbers; the project's target, else the toolchain's."""
    parts = target_hip_version.strip().split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 and all(p.isdigit() for p in parts[:2]) else DEFAULT_ROCM_VERSION


def pytorch_scan(tree: Path, exclude_globs: Iterable[str], kind: ProjectKind, options: ResolveOptions | None,
                 rocm_version: str = DEFAULT_ROCM_VERSION) -> PythonScanData:
    """The scan data for a PyTorch project; empty for other kinds."""
    if kind.kind not in PYTHON_KINDS:
        return PythonScanData()
    globs = tuple(exclude_globs)
    touchpoints = scan_touchpoints(tree, globs)
    readiness = python_readiness(touchpoints, rocm_files_shipped(tree, globs))
    report = build_report(tree, globs, options, rocm_version)
    text = requirements_text(report)
    generated = {REQUIREMENTS_FILE: text} if text else {}
    return PythonScanData(
        python_findings=[f.to_dict() for f in touchpoints[:FINDINGS_CAP]],
        python_findings_total=len(touchpoints),
        python_readiness=readiness.to_dict(),
        python_summary=readiness.summary(),
        dependencies=report.to_dict(),
        dependencies_summary=report.summary(),
        generated_files=generated,
        dependency_requests=report.requests(),
    )
