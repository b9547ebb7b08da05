"""Defensive readers of the stage data the review needs (a stage may have been skipped or failed).

Keys, as the stages write them (typed in worker/payloads.py):
- hipify (worker/stages/hipify.py, translator/account.py): ``renames`` {original: translated},
  ``files`` [{path, unconverted: [{name, line, column, reason}], unconverted_total, deprecated, ...}]
  (at most 20 findings a file; the whole account is JSON at ``artifacts/<account_artifact>``),
  ``build_fixes`` [{rule_id, file, line, before, after}] with translated paths and lines.
- compile (worker/toolchain/stage_data.py): ``diagnostics`` [{file, line, column, severity, message,
  original_file, original_line, ...}] with translated tree-relative paths (capped; all of them in
  ``artifacts/compile.json``), ``summary`` {translated path: {errors, warnings}} over all of them.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import TypedDict

from migrator.projects.models import Run

JsonDict = dict[str, object]
COMPILE_ARTIFACT = "compile.json"


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


def read_artifact(artifacts: Path, name: object) -> JsonDict:
    """A JSON artifact of the run by its relative name; {} when absent, unreadable or outside."""
    if not isinstance(name, str) or not name or ".." in PurePosixPath(name).parts or name.startswith("/"):
        return {}
    path = artifacts / name
    try:
        stat = path.stat()
    except OSError:
        return {}
    return _parsed(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=8)
def _parsed(path: str, mtime_ns: int, size: int) -> JsonDict:
    """A parsed artifact, kept per process while the file is unchanged: a large project's account is
    megabytes of JSON, and each file page of the run needs it once. Callers must not modify it."""
    try:
        loaded = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def account_entries(run: Run, artifacts: Path, *, full: bool) -> list[JsonDict]:
    """Per-file translation entries: the whole account when `full` and readable, else the stage data's."""
    data = hipify_data(run)
    if full:
        account = read_artifact(artifacts, data.get("account_artifact"))
        if account:
            return dict_items(account.get("files"))
    return dict_items(data.get("files"))


def diagnostics(run: Run, artifacts: Path) -> list[JsonDict]:
    """All compile diagnostics (artifacts/compile.json), or the capped list on the stage row."""
    data = compile_data(run)
    if not data:
        return []
    full = read_artifact(artifacts, COMPILE_ARTIFACT)
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
