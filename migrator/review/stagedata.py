"""Defensive readers of the stage data the review needs (a stage may have been skipped or failed).

Keys, as the stages write them (typed in worker/payloads.py):
- hipify (worker/stages/hipify.py, translator/account.py): ``renames`` {original: translated},
  ``files`` [{path, unconverted: [{name, line, column, reason}], unconverted_total, deprecated, ...}]
  (at most 20 findings a file; the whole account is JSON at ``records/<account_artifact>``),
  ``build_fixes`` [{rule_id, file, line, before, after}] with translated paths and lines.
- compile (worker/toolchain/stage_data.py): ``diagnostics`` [{file, line, column, severity, message,
  original_file, original_line, ...}] with translated tree-relative paths (capped; all of them in
  ``records/compile.json``), ``summary`` {translated path: {errors, warnings}} over all of them.

Records are read through ``worker.contained`` (beneath the run's ``records/``, regular files only,
size-capped, parsed once per version of the file).
"""
from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from migrator.projects.models import Run
from worker.contained import ContainedFileError, clean_relative, load_json_beneath

JsonDict = dict[str, object]
COMPILE_ARTIFACT = "compile.json"
RECORD_READ_LIMIT = 256 * 1024 * 1024  # a large project's whole translation account is tens of megabytes


class FileCounts(TypedDict):
    errors: int
    warnings: int


def stage_data(run: Run, name: str) -> JsonDict:
    stage = next((s for s in run.stages.all() if s.name == name), None)
    data = stage.data if stage is not None else None
    return data if isinstance(data, dict) else {}


def hipify_data(run: Run) -> JsonDict:
    return stage_data(run, "hipify")


def compile_data(run: Run) -> JsonDict:
    return stage_data(run, "compile")


def dict_items(value: object) -> list[JsonDict]:
    """The dict entries of a JSON list (anything else is ignored)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def as_int(value: object, default: int = 0) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return default


def read_artifact(records: Path, name: object) -> JsonDict:
    """A JSON record of the run by its records-relative name; {} when absent, unreadable or outside."""
    if not isinstance(name, str):
        return {}
    try:
        relative = clean_relative(name)
    except ContainedFileError:
        return {}
    return load_json_beneath(records, relative, limit=RECORD_READ_LIMIT) or {}


def account_entries(run: Run, records: Path, *, full: bool) -> list[JsonDict]:
    """Per-file translation entries: the whole account when `full` and readable, else the stage data's."""
    data = hipify_data(run)
    if full:
        account = read_artifact(records, data.get("account_artifact"))
        if account:
            return dict_items(account.get("files"))
    return dict_items(data.get("files"))


def diagnostics(run: Run, records: Path) -> list[JsonDict]:
    """All compile diagnostics (records/compile.json), or the capped list on the stage row."""
    data = compile_data(run)
    if not data:
        return []
    full = read_artifact(records, COMPILE_ARTIFACT)
    return dict_items(full.get("diagnostics")) if full else dict_items(data.get("diagnostics"))


def build_fixes(run: Run) -> list[JsonDict]:
    return dict_items(hipify_data(run).get("build_fixes"))


def diagnostic_counts(run: Run) -> dict[str, FileCounts]:
    """Errors and warnings per translated path, from the compile stage's summary."""
    summary = compile_data(run).get("summary")
    if not isinstance(summary, dict):
        return {}
    counts: dict[str, FileCounts] = {}
    for path, value in summary.items():
        if isinstance(value, dict):
            counts[str(path)] = FileCounts(errors=as_int(value.get("errors")), warnings=as_int(value.get("warnings")))
    return counts
