"""Extra context for the run page's per-stage result panels.

The stage rows keep compact data; a few panels need a little more: scan findings grouped by
severity and file with their explanations (from ``artifacts/scan.json``), compile diagnostics
grouped by original file with links into the diff view, and the smoke run beside the CUDA
reference run (``artifacts/reference.json``). Artifacts are read only when the panel shows.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TypedDict

from django.urls import NoReverseMatch, reverse

from migrator.lib.sidebyside import compute_side_by_side
from migrator.lib.diff_models import Row
from migrator.projects.models import Run, Stage
from worker.pipeline import workspace_for

SEVERITY_ORDER = ("fatal", "error", "warning", "note", "info", "remark")
MAX_OUTPUT_ROWS = 400  # side-by-side rows of stdout shown; the artifacts keep everything
ARTIFACT_READ_LIMIT = 50 * 1024 * 1024

Item = dict[str, object]


class FileGroup(TypedDict):
    file: str
    items: list[Item]


class SeverityGroup(TypedDict):
    severity: str
    count: int
    files: list[FileGroup]


def review_url(run_id: int, path: str, line: int, side: str = "o") -> str:
    """Link to ``path`` at ``line`` in the diff view; "" while the review app is not installed."""
    if not path:
        return ""
    try:
        url = reverse("review:file", args=[run_id, path])
    except NoReverseMatch:
        return ""
    return f"{url}#{side}{line}" if line else url


def _read_artifact(run: Run, relative: str) -> dict[str, object] | None:
    root = workspace_for(run.pk).root
    path = (root / relative).resolve()
    if not path.is_relative_to(root.resolve()) or not path.is_file() or path.stat().st_size > ARTIFACT_READ_LIMIT:
        return None
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


def group_by_severity(items: Iterable[Item], file_key: str = "file") -> list[SeverityGroup]:
    """Items grouped by severity (most severe first), then by file (sorted), keeping their order."""
    by_severity: dict[str, dict[str, list[Item]]] = {}
    for item in items:
        severity = str(item.get("severity") or "info")
        file = str(item.get(file_key) or item.get("file") or "")
        by_severity.setdefault(severity, {}).setdefault(file, []).append(item)
    rank = {name: index for index, name in enumerate(SEVERITY_ORDER)}
    groups: list[SeverityGroup] = []
    for severity in sorted(by_severity, key=lambda s: (rank.get(s, len(rank)), s)):
        files = by_severity[severity]
        groups.append(SeverityGroup(
            severity=severity, count=sum(len(v) for v in files.values()),
            files=[FileGroup(file=name, items=files[name]) for name in sorted(files)],
        ))
    return groups


def _finding_key(finding: Mapping[str, object]) -> tuple[object, ...]:
    return finding.get("rule_id"), finding.get("file"), finding.get("line"), finding.get("column")


def scan_context(run: Run, data: Mapping[str, object]) -> dict[str, object]:
    compact = [dict(f) for f in data.get("findings") or [] if isinstance(f, dict)]
    artifact = _read_artifact(run, str(data.get("artifact") or "")) if data.get("artifact") else None
    full = artifact.get("findings") if artifact else None
    if isinstance(full, list):
        details = {_finding_key(f): f for f in full if isinstance(f, dict)}
        for finding in compact:
            extra = details.get(_finding_key(finding), {})
            finding["explanation"] = extra.get("explanation", "")
            finding["suggestion"] = extra.get("suggestion") or ""
    return {"finding_groups": group_by_severity(compact)}


def compile_context(run: Run, data: Mapping[str, object]) -> dict[str, object]:
    diagnostics = [dict(d) for d in data.get("diagnostics") or [] if isinstance(d, dict)]
    by_file: dict[str, list[Item]] = {}
    for diagnostic in diagnostics:
        original = str(diagnostic.get("original_file") or "")
        line = diagnostic.get("original_line")
        diagnostic["review_url"] = review_url(run.pk, original, line if isinstance(line, int) else 0)
        by_file.setdefault(original or str(diagnostic.get("file") or diagnostic.get("tu") or "(driver)"), []).append(diagnostic)
    groups = [FileGroup(file=name, items=items) for name, items in sorted(by_file.items())]
    toolchain = data.get("toolchain")
    libraries = toolchain.get("libraries") if isinstance(toolchain, dict) else None
    missing = [lib for lib in libraries or [] if isinstance(lib, dict) and not lib.get("installed")]
    return {"diagnostic_groups": groups, "missing_libraries": missing}


def link_context(run: Run, data: Mapping[str, object]) -> dict[str, object]:
    problems = [p for p in data.get("problems") or [] if isinstance(p, dict)]
    return {
        "undefined_references": [p for p in problems if p.get("kind") == "undefined_reference"],
        "missing_libraries": [p for p in problems if p.get("kind") == "missing_library"],
        "other_problems": [p for p in problems if p.get("kind") not in ("undefined_reference", "missing_library")],
    }


def _stdout(payload: Mapping[str, object] | None) -> str | None:
    execution = payload.get("execution") if payload else None
    return str(execution.get("stdout") or "") if isinstance(execution, dict) else None


def output_rows(cuda_stdout: str, rocm_stdout: str) -> tuple[list[Row], bool]:
    """The two outputs aligned line by line (escaped HTML cells), and whether rows were cut."""
    diff = compute_side_by_side(cuda_stdout, rocm_stdout, context=None)
    page = diff.page(0, MAX_OUTPUT_ROWS)
    return page.rows, page.has_more


def smoke_context(run: Run, data: Mapping[str, object]) -> dict[str, object]:
    reference = _read_artifact(run, "artifacts/reference.json")
    cuda_stdout, rocm_stdout = _stdout(reference), _stdout(data)
    context: dict[str, object] = {"reference_run": reference, "output_rows": [], "output_rows_cut": False}
    if cuda_stdout is not None and rocm_stdout is not None:
        rows, cut = output_rows(cuda_stdout, rocm_stdout)
        context.update(output_rows=rows, output_rows_cut=cut)
    return context


_BUILDERS = {"scan": scan_context, "compile": compile_context, "link": link_context, "smoke": smoke_context}


def panel_context(run: Run, stage: Stage) -> dict[str, object]:
    """Context the stage's panel template needs beyond ``data``; empty until the stage is final."""
    builder = _BUILDERS.get(stage.name)
    if builder is None or not stage.is_final or not isinstance(stage.data, dict) or not stage.data:
        return {}
    return builder(run, stage.data)
