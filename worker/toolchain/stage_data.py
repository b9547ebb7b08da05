"""JSON payloads the compile and link stages store (kept here so stage modules stay thin; typed in
``worker/payloads.py``).

``diagnostics`` entries are the hook for the error notebook: each names the
translated file/line and, mapped back through ``TreeLineMap``, the original
file/line, with severity, warning flag and message for later matching.
"""
from __future__ import annotations

import json
from pathlib import Path

from worker.contained import write_record
from worker.payloads import CompileData, DiagnosticData, FileData, LinkData, LinkTargetData, TargetData
from worker.toolchain.compile import CompileReport, FileResult
from worker.toolchain.diagnostics import Diagnostic
from worker.toolchain.linemap import TreeLineMap
from worker.toolchain.link import LinkReport
from worker.toolchain.targets import TargetResult, failed_targets, project_place

MAX_STORED_DIAGNOSTICS = 2000  # the stage row keeps this many; artifacts/compile.json keeps all


def diagnostic_data(tu: str, diagnostic: Diagnostic, line_map: TreeLineMap) -> DiagnosticData:
    """``original_file``/``original_line``: where the error is in the original tree; for an error inside a ROCm
    header (the warp-sync builtins' ``static_assert`` on a 32-bit mask) the project's line that led there."""
    file, line = project_place(diagnostic.file, diagnostic.line, diagnostic.notes)
    original_file, original_line = line_map.map(file, line) if file else ("", 0)
    return DiagnosticData(
        tu=tu, file=diagnostic.file, line=diagnostic.line, column=diagnostic.column,
        original_file=original_file, original_line=original_line, severity=diagnostic.severity,
        flag=diagnostic.flag, message=diagnostic.message, notes=list(diagnostic.notes),
        include_stack=list(diagnostic.include_stack),
    )


def file_data(result: FileResult, line_map: TreeLineMap) -> FileData:
    return FileData(
        path=result.path, original_path=line_map.original_path(result.path), status=result.status,
        duration_s=round(result.duration_s, 3), object_size=result.object_size, object_path=result.object_path,
        cached=result.cached, errors=result.errors, warnings=result.warnings, command=list(result.command),
        targets=[target_data(t, line_map) for t in result.targets],
    )


def target_data(target: TargetResult, line_map: TreeLineMap) -> TargetData:
    original_file, original_line = line_map.map(target.file, target.line) if target.file else ("", 0)
    return TargetData(arch=target.arch, status=target.status, message=target.message, original_file=original_file,
                      original_line=original_line, wave_size=target.wave_size)


def summary_by_file(diagnostics: list[DiagnosticData]) -> dict[str, dict[str, int]]:
    summary: dict[str, dict[str, int]] = {}
    for entry in diagnostics:
        counts = summary.setdefault(entry["file"] or entry["tu"] or "(driver)", {"errors": 0, "warnings": 0})
        if entry["severity"] in ("error", "fatal"):
            counts["errors"] += 1
        elif entry["severity"] == "warning":
            counts["warnings"] += 1
    return summary


def compile_payload(report: CompileReport, line_map: TreeLineMap) -> CompileData:
    diagnostics = [diagnostic_data(tu, d, line_map) for tu, d in report.diagnostics]
    files = [file_data(result, line_map) for result in report.files]
    return CompileData(
        mode="per_tu",
        files=files,
        offload_archs=list(report.offload_archs),
        failed_targets=failed_targets([f["targets"] for f in files], report.offload_archs),
        hip_defines=[{**d.to_dict()} for d in report.defines],
        diagnostics=diagnostics,
        summary=summary_by_file(diagnostics),
        cache={"hits": report.cache_hits, "misses": report.cache_misses},
        cxx_std=report.cxx_std,
        include_dirs=report.include_dirs,
        duration_s=round(report.duration_s, 3),
    )


def link_payload(report: LinkReport) -> LinkData:
    return LinkData(
        targets=[
            LinkTargetData(name=t.name, kind=t.kind, output_path=t.output_path, units=t.units, status=t.status,
                           duration_s=round(t.duration_s, 3), command=t.command)
            for t in report.targets
        ],
        libraries=report.libraries,
        inferred_libraries=report.inferred_libraries,
        problems=[p.to_dict() for p in report.problems],
        error=report.error,
    )


def store_compile_record(records: Path, payload: CompileData) -> None:
    """Full payload to records/compile.json; the stage row keeps at most MAX_STORED_DIAGNOSTICS."""
    write_record(records / "compile.json", json.dumps(payload, indent=1))
    diagnostics = payload.get("diagnostics", [])
    if len(diagnostics) > MAX_STORED_DIAGNOSTICS:
        payload["diagnostics"] = diagnostics[:MAX_STORED_DIAGNOSTICS]
        payload["diagnostics_truncated"] = len(diagnostics)
