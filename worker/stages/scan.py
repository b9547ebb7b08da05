"""Scan stage: inventory of the fetched tree, build-file findings and a readiness summary.

Inputs: ``ctx.workspace.source`` (read only), ``ctx.settings.exclude_globs``.
Outputs: data = {"inventory", "findings" (compact, capped), "findings_total", "findings_by_severity",
"findings_by_rule", "readiness", "wavefront_hazards", "wavefront_total", "wavefront_by_kind", "artifact"};
the full findings list goes to ``records/scan.json`` (``"artifact"`` names it relative to the run's folder).
The tree is translated in memory (nothing written) with the hipify stage's options, so the readiness counts
what the translation leaves, and the wave-size hazards say which fixes it will apply.
Failure modes: passed even when findings exist (they are information); failed only when the
source tree is missing or cannot be read.
"""
from __future__ import annotations

import json
from collections import Counter

from translator.account import TreeAccount
from translator.tree import account_tree
from worker.contained import write_record
from worker.context import StageContext, StageResult
from worker.payloads import ScanData, ScanFindingData, WavefrontHazardData
from worker.scanning.findings import scan_build_files
from worker.scanning.inventory import build_inventory
from worker.scanning.model import Finding
from worker.scanning.project_kind import detect_kind
from worker.scanning.pytorch_scan import PYTHON_KINDS, pytorch_scan, resolve_options_from_env, rocm_version_for
from worker.scanning.readiness import Readiness, summarize
from worker.scanning.submodules import empty_submodules
from worker.stages.hipify import options_from
from worker.stages.rocm_release import chosen_release
from worker.stages.torch_engine import EXTENSION_KINDS, torch_engine_problem
from worker.wording import counted

FINDINGS_IN_DATA = 2000  # compact rows (~250 bytes each) on the Stage row; the artifact keeps every finding
WAVEFRONT_IN_DATA = 2000
_KIND_WORDS = {"api": "API references", "inline-ptx": "inline PTX", "tensor-cores": "WMMA", "wavefront": "wave-size"}


def _compact(finding: Finding) -> ScanFindingData:
    return ScanFindingData(
        rule_id=finding.rule_id, severity=finding.severity, file=finding.file, line=finding.line,
        column=finding.column, text=finding.text[:200], replacement=finding.replacement,
        notebook_slug=finding.notebook_slug, fixable=finding.fixable)


def _summary(files: int, cuda_files: int, findings: list[Finding], readiness: Readiness,
             hazards: list[WavefrontHazardData]) -> str:
    by_severity = Counter(f.severity for f in findings)
    plural = {"error": "errors", "warning": "warnings", "info": "info"}
    counts = ", ".join(f"{by_severity[s]} {plural[s] if by_severity[s] != 1 else s}" for s in ("error", "warning", "info"))
    fixable = sum(1 for f in findings if f.fixable)
    if not readiness.engine_available:
        return f"{counted(files, 'file')} ({cuda_files} with CUDA); findings: {counts} ({fixable} fixable); " \
               "translation engine unavailable"
    left = ", ".join(f"{n} {_KIND_WORDS.get(kind, kind)}" for kind, n in readiness.hand_work_by_kind.items())
    share = (f"{readiness.translatable_share:.0%} of {counted(readiness.items_total, 'item')} translate automatically"
             f"; hand work {readiness.hand_work}{f' ({left})' if left else ''}")
    fixed = sum(1 for h in hazards if h["applied"])
    wave = f"; {counted(len(hazards), 'wavefront hazard')} ({fixed} fixed automatically)" if hazards else ""
    return f"{counted(files, 'file')} ({cuda_files} with CUDA); findings: {counts} ({fixable} fixable); {share}{wave}"


def _fixes_apply(ctx: StageContext, kind: str) -> bool:
    """Whether the hipify stage's builtin engine translates (and so applies the wavefront fixes)."""
    if ctx.settings.hipify_engine != "builtin":
        return False
    return kind not in EXTENSION_KINDS or bool(torch_engine_problem(ctx))  # PyTorch's hipify, when it can run


def _translation_left(ctx: StageContext) -> TreeAccount | None:
    try:
        return account_tree(ctx.workspace.source, options_from(ctx), is_cancelled=ctx.is_cancelled)
    except (ImportError, OSError, ValueError) as error:  # the engine or its data is broken: say so, go on
        ctx.log(f"scan: the in-memory translation failed ({error}); readiness from the mapping tables only\n")
        return None


def _hazard_rows(account: TreeAccount | None, fixes_apply: bool) -> list[WavefrontHazardData]:
    rows: list[WavefrontHazardData] = []
    for entry in account.files if account is not None else []:
        for hazard in entry.wavefront:
            rows.append(WavefrontHazardData(
                file=entry.path, line=hazard["line"], column=hazard["column"], kind=hazard["kind"],
                expression=hazard["expression"], why=hazard["why"], wave32=hazard["wave32"], rule=hazard["rule"],
                fix=hazard["fix"], applied=fixes_apply and hazard["applied"]))
    return rows


def run(ctx: StageContext) -> StageResult:
    source = ctx.workspace.source
    if not source.is_dir():
        return StageResult.failed("the source tree is missing or not a directory; did the fetch stage run?")
    try:
        next(source.iterdir(), None)
    except OSError as error:
        return StageResult.failed(f"cannot read the source tree: {error.strerror or error}")
    globs = ctx.settings.exclude_globs
    ctx.log("scan: building the inventory\n")
    inventory = build_inventory(source, globs, on_progress=lambda done: ctx.check_cancelled())
    ctx.progress(1, 4)
    ctx.log(f"scan: {inventory.files_total} files, {len(inventory.cuda_files)} with CUDA; checking build files\n")
    findings = scan_build_files(source, globs, ctx.settings.offload_archs, chosen_release(ctx.settings.toolchain))
    ctx.check_cancelled()
    ctx.progress(2, 4)
    kind = detect_kind(source, globs)
    submodules = [s.to_dict() for s in empty_submodules(source)]
    for entry in submodules:
        ctx.log(f"scan: {entry['message']}\n")
    ctx.log("scan: translating in memory to see what the translation leaves (API names, inline PTX, WMMA, "
            "code that assumes 32-lane warps)\n")
    account = _translation_left(ctx)
    ctx.check_cancelled()
    fixes_apply = _fixes_apply(ctx, kind.kind)
    readiness = summarize(inventory, account, fixes_apply)
    hazards = _hazard_rows(account, fixes_apply)
    ctx.progress(3, 4)
    ctx.log(f"scan: project kind {kind.kind}: {kind.reason}\n")
    if kind.kind in PYTHON_KINDS:
        ctx.log("scan: Python touchpoints, and the install sets' ROCm side (resolved afterwards on the deps queue)\n")
    python = pytorch_scan(source, globs, kind, resolve_options_from_env(), rocm_version_for(
        ctx.settings.target_hip_version))
    ctx.check_cancelled()
    if python:
        ctx.log(f"scan: dependencies: {python.get('dependencies_summary', '')}\n")
    artifact = ctx.workspace.records / "scan.json"
    inventory_data, readiness_data, kind_data = inventory.to_dict(), readiness.to_dict(), kind.to_dict()
    full = {"inventory": inventory_data, "readiness": readiness_data, "project_kind": kind_data, **python,
            "findings": [f.to_dict() for f in findings], "wavefront_hazards": hazards}
    write_record(artifact, json.dumps(full, indent=1))
    ctx.progress(4, 4)
    summary = _summary(inventory.files_total, len(inventory.cuda_files), findings, readiness, hazards)
    if python:  # a PyTorch project: its Python touchpoints and dependencies count, not only C++ references
        parts = summary.split("; ")
        if kind.kind == "python-app":
            parts = parts[:-1]  # the share of C++ CUDA references says nothing about a Python application
        summary = "; ".join([kind.kind, *parts, python.get("python_summary", ""),
                             f"dependencies: {python.get('dependencies_summary', '')}"])
    if submodules:
        summary += f"; {len(submodules)} empty submodule {'directory' if len(submodules) == 1 else 'directories'}"
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
        "wavefront_hazards": hazards[:WAVEFRONT_IN_DATA],
        "wavefront_total": len(hazards),
        "wavefront_by_kind": dict(Counter(h["kind"] for h in hazards).most_common()),
        "artifact": artifact.relative_to(ctx.workspace.root).as_posix(),
        "empty_submodules": submodules,
    }
    return StageResult.passed(summary, **data)
