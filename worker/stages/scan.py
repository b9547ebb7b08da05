"""Scan stage: inventory of the fetched tree, build-file findings and a readiness summary.

Inputs: ``ctx.workspace.source`` (read only), ``ctx.settings.exclude_globs``.
Outputs: data = {"inventory", "findings" (compact, capped), "findings_total", "findings_by_severity",
"findings_by_rule", "readiness", "artifact"}; the full findings list goes to
``ctx.workspace.artifacts / "scan.json"``.
Failure modes: passed even when findings exist (they are information); failed only when the
source tree is missing or cannot be read.
"""
from __future__ import annotations

import json
from collections import Counter

from worker.context import StageContext, StageResult
from worker.payloads import ScanData, ScanFindingData
from worker.scanning.findings import scan_build_files
from worker.scanning.inventory import build_inventory
from worker.scanning.model import Finding
from worker.scanning.project_kind import detect_kind
from worker.scanning.pytorch_scan import PYTHON_KINDS, pytorch_scan, resolve_options_from_env, rocm_version_for
from worker.scanning.readiness import summarize
from worker.wording import counted

FINDINGS_IN_DATA = 2000  # compact rows (~250 bytes each) on the Stage row; the artifact keeps every finding


def _compact(finding: Finding) -> ScanFindingData:
    return ScanFindingData(
        rule_id=finding.rule_id, severity=finding.severity, file=finding.file, line=finding.line,
        column=finding.column, text=finding.text[:200], replacement=finding.replacement,
        notebook_slug=finding.notebook_slug, fixable=finding.fixable)


def _summary(files: int, cuda_files: int, findings: list[Finding], share: float, engine: bool) -> str:
    by_severity = Counter(f.severity for f in findings)
    plural = {"error": "errors", "warning": "warnings", "info": "info"}
    counts = ", ".join(f"{by_severity[s]} {plural[s] if by_severity[s] != 1 else s}" for s in ("error", "warning", "info"))
    fixable = sum(1 for f in findings if f.fixable)
    readiness = f"{share:.0%} of CUDA references translatable" if engine else "translation engine unavailable"
    return f"{counted(files, 'file')} ({cuda_files} with CUDA); findings: {counts} ({fixable} fixable); {readiness}"


def run(ctx: StageContext) -> StageResult:
    source = ctx.workspace.source
    if not source.is_dir():
        return StageResult.failed(f"source tree {source} is missing or not a directory")
    try:
        next(source.iterdir(), None)
    except OSError as error:
        return StageResult.failed(f"cannot read the source tree: {error}")
    globs = ctx.settings.exclude_globs
    ctx.log("scan: building the inventory\n")
    inventory = build_inventory(source, globs, on_progress=lambda done: ctx.check_cancelled())
    ctx.progress(1, 3)
    ctx.log(f"scan: {inventory.files_total} files, {len(inventory.cuda_files)} with CUDA; checking build files\n")
    findings = scan_build_files(source, globs, ctx.settings.offload_archs)
    ctx.check_cancelled()
    ctx.progress(2, 3)
    readiness = summarize(inventory)
    kind = detect_kind(source, globs)
    ctx.log(f"scan: project kind {kind.kind}: {kind.reason}\n")
    if kind.kind in PYTHON_KINDS:
        ctx.log("scan: Python touchpoints, and the install sets' ROCm side (resolved afterwards on the deps queue)\n")
    python = pytorch_scan(source, globs, kind, resolve_options_from_env(), rocm_version_for(
        ctx.settings.target_hip_version))
    ctx.check_cancelled()
    if python:
        ctx.log(f"scan: dependencies: {python.get('dependencies_summary', '')}\n")
    ctx.workspace.artifacts.mkdir(parents=True, exist_ok=True)
    artifact = ctx.workspace.artifacts / "scan.json"
    inventory_data, readiness_data, kind_data = inventory.to_dict(), readiness.to_dict(), kind.to_dict()
    full = {"inventory": inventory_data, "readiness": readiness_data, "project_kind": kind_data, **python,
            "findings": [f.to_dict() for f in findings]}
    artifact.write_text(json.dumps(full, indent=1), encoding="utf-8")
    ctx.progress(3, 3)
    summary = _summary(inventory.files_total, len(inventory.cuda_files), findings,
                       readiness.translatable_share, readiness.engine_available)
    if python:  # a PyTorch project: its Python touchpoints and dependencies count, not only C++ references
        parts = summary.split("; ")
        if kind.kind == "python-app":
            parts = parts[:-1]  # the share of C++ CUDA references says nothing about a Python application
        summary = "; ".join([kind.kind, *parts, python.get("python_summary", ""),
                             f"dependencies: {python.get('dependencies_summary', '')}"])
    ctx.log(f"scan: {summary}\n")
    data: ScanData = {
        **python,
        "inventory": inventory_data,
        "findings": [_compact(f) for f in findings[:FINDINGS_IN_DATA]],
        "findings_total": len(findings),
        "findings_truncated": len(findings) > FINDINGS_IN_DATA,
        "findings_by_severity": dict(Counter(f.severity for f in findings)),
        "findings_by_rule": dict(Counter(f.rule_id for f in findings).most_common()),
        "readiness": readiness_data,
        "project_kind": kind_data,
        "artifact": str(artifact.relative_to(ctx.workspace.root)),
    }
    return StageResult.passed(summary, **data)
