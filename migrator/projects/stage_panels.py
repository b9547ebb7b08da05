"""Extra context for the run page's per-stage result panels.

The stage rows keep compact data; a few panels need a little more: scan findings grouped by
severity and file with their explanations (from ``records/scan.json``), compile diagnostics
grouped by original file with links into the diff view, and the smoke run beside the CUDA
reference run (``records/reference.json``). Records are read only when the panel shows, through
``worker.contained`` (beneath the run's ``records/``, regular files only, size-capped).
"""
from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from typing import TypedDict

from django.urls import NoReverseMatch, reverse

from migrator.lib.diffview.models import Row
from migrator.lib.diffview.sidebyside import compute_side_by_side
from migrator.projects.causes import causes_from_data, run_reference_build, user_include_dirs
from migrator.projects.models import Run, Stage
from migrator.projects.target_matrix import target_matrix
from migrator.projects.workspaces import workspace_for
from worker.contained import ContainedFileError, clean_relative, load_json_beneath
from worker.project_settings import ProjectSettings, SettingsError

SEVERITY_ORDER = ("fatal", "error", "warning", "note", "info", "remark")
MAX_OUTPUT_ROWS = 400  # side-by-side rows of stdout shown; the artifacts keep everything
ARTIFACT_READ_LIMIT = 50 * 1024 * 1024
ALL_FILES_OPEN_LIMIT = 12  # more translation units than this: the full table starts folded

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
    """A record of the run by its path in the run's folder (``records/scan.json``); None unless it is
    a JSON object in ``records/`` (parsed once per version of the file: the live page re-renders a
    panel every second; callers must not modify it)."""
    try:
        name = clean_relative(relative)
    except ContainedFileError:
        return None
    if not name.startswith("records/"):
        return None
    return load_json_beneath(workspace_for(run.pk).records, name.removeprefix("records/"), limit=ARTIFACT_READ_LIMIT)


def group_by_severity(items: Iterable[Item], file_key: str = "file") -> list[SeverityGroup]:
    """Items grouped by severity (most severe first), then by file (sorted), keeping their order."""
    by_severity: dict[str, dict[str, list[Item]]] = {}
    for item in items:
        severity = str(item.get("severity") or "info")
        file = str(item.get(file_key) or item.get("file") or "")
        by_severity.setdefault(severity, {}).setdefault(file, []).append(item)
    groups: list[SeverityGroup] = []
    for severity in sorted(by_severity, key=_severity_rank):
        files = by_severity[severity]
        groups.append(SeverityGroup(
            severity=severity, count=sum(len(v) for v in files.values()),
            files=[FileGroup(file=name, items=files[name]) for name in sorted(files)],
        ))
    return groups


def _dicts(value: object) -> list[Item]:
    """The dict entries of a JSON list (copies, so the panel can annotate them)."""
    return [dict(entry) for entry in value if isinstance(entry, dict)] if isinstance(value, list) else []


def _finding_key(finding: Mapping[str, object]) -> tuple[object, ...]:
    return finding.get("rule_id"), finding.get("file"), finding.get("line"), finding.get("column")


def scan_context(run: Run, data: Mapping[str, object]) -> dict[str, object]:
    compact = _dicts(data.get("findings"))
    artifact = _read_artifact(run, str(data.get("artifact") or "")) if data.get("artifact") else None
    if artifact:
        details = {_finding_key(f): f for f in _dicts(artifact.get("findings"))}
        for finding in compact:
            extra = details.get(_finding_key(finding), {})
            finding["explanation"] = extra.get("explanation", "")
            finding["suggestion"] = extra.get("suggestion") or ""
    counts = data.get("findings_by_severity")
    ordered = sorted(counts.items(), key=lambda kv: _severity_rank(str(kv[0]))) if isinstance(counts, dict) else []
    return {"finding_groups": group_by_severity(compact), "severity_counts": ordered}


def _severity_rank(severity: str) -> tuple[int, str]:
    return (SEVERITY_ORDER.index(severity) if severity in SEVERITY_ORDER else len(SEVERITY_ORDER), severity)


def compile_context(run: Run, data: Mapping[str, object]) -> dict[str, object]:
    diagnostics = _dicts(data.get("diagnostics"))
    by_file: dict[str, list[Item]] = {}
    for diagnostic in diagnostics:
        original = str(diagnostic.get("original_file") or "")
        line = diagnostic.get("original_line")
        diagnostic["review_url"] = review_url(run.pk, original, line if isinstance(line, int) else 0)
        translated_line = diagnostic.get("line")
        if original and isinstance(translated_line, int):
            diagnostic["translated_url"] = review_url(run.pk, original, translated_line, side="t")
        by_file.setdefault(original or str(diagnostic.get("file") or diagnostic.get("tu") or "(driver)"), []).append(diagnostic)
    groups = [FileGroup(file=name, items=items) for name, items in sorted(by_file.items())]
    causes = compile_cause_context(run, data)
    hipify = run.stages.filter(name="hipify").first()
    matrix = target_matrix(run.pk, data, hipify.data if hipify is not None and isinstance(hipify.data, dict) else {})
    return {"diagnostic_groups": groups, "missing_libraries": _missing_that_matter(data, causes), "targets": _offload_archs(run),
            "target_matrix": matrix, **causes}


def _missing_that_matter(data: Mapping[str, object], causes: Mapping[str, object]) -> list[Item]:
    """The toolchain's missing ROCm libraries that a failure here is caused by (none on a page no missing
    library explains: the full list is on the runners page, not repeated on every compile page)."""
    toolchain = data.get("toolchain")
    libraries = _dicts(toolchain.get("libraries")) if isinstance(toolchain, dict) else []
    groups = causes.get("cause_groups")
    named = {str(g.get("key", "")).removeprefix("missing-library:") for g in groups if isinstance(g, dict)} \
        if isinstance(groups, list) else set()
    return [lib for lib in libraries if not lib.get("installed") and lib.get("name") in named]


def _command_line(entry: Item) -> str:
    command = entry.get("command")
    return shlex.join(str(arg) for arg in command) if isinstance(command, list) else ""


def compile_cause_context(run: Run, data: Mapping[str, object]) -> dict[str, object]:
    """Failing files grouped by cause, each with its exact compile command and first error."""
    causes = causes_from_data(data, {}, user_include_dirs(run), reference=run_reference_build(run))
    files = {str(f.get("original_path") or f.get("path")): f for f in _dicts(data.get("files"))}
    first = _first_errors(run.pk, data)
    groups = []
    for group in causes.groups:
        rows = [{"file": name, **files.get(name, {}), "command_line": _command_line(files.get(name, {})),
                 "first_error": first.get(name.rsplit(":", 1)[0] if name not in first else name)} for name in group.files]
        groups.append({**group.to_dict(), "rows": rows})
    failed = sum(1 for f in files.values() if f.get("status") != "passed")
    return {"cause_groups": groups, "cause_summary": causes.summary, "failed_count": failed,
            "fold_all_files": len(files) > ALL_FILES_OPEN_LIMIT}


def _first_errors(run_id: int, data: Mapping[str, object]) -> dict[str, Item]:
    """Each file's first error (message, original line, a link to it in the diff): a project build lists
    its failing files by cause with no per-file command, so the row shows where each one fails."""
    found: dict[str, Item] = {}
    for item in _dicts(data.get("diagnostics")):
        file = str(item.get("original_file") or item.get("file") or "")
        if not file or file in found or item.get("severity") not in ("error", "fatal"):
            continue
        line = item.get("original_line") if item.get("original_file") else item.get("line")
        line = line if isinstance(line, int) else 0
        found[file] = {"message": str(item.get("message") or ""), "line": line,
                       "href": review_url(run_id, file, line) if item.get("original_file") else ""}
    return found


def _offload_archs(run: Run) -> tuple[str, ...]:
    try:
        return ProjectSettings.from_dict(run.settings_used).offload_archs
    except SettingsError:
        return ()


def link_context(run: Run, data: Mapping[str, object]) -> dict[str, object]:
    problems = _dicts(data.get("problems"))
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
    reference = _read_artifact(run, "records/reference.json")
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
