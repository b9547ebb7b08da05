"""Match a finished stage's log and diagnostics against every notebook signature.

The compiled matcher is cached per process and rebuilt only when signatures or entries change
(a fingerprint query decides). Results are stored as StageMatch rows, best first.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

from django.core.cache import cache
from django.db import transaction
from django.db.models import Count, F, Max

from migrator.lib.signatures.failure_lines import own_error_lines
from migrator.lib.signatures.matcher import Matcher, MatchResults, SignatureSpec, compile_signatures
from migrator.notebook.learning import record_unmatched, uncovered_lines
from migrator.notebook.models import Entry, Signature, StageMatch
from migrator.projects.constants import StageState
from migrator.projects.models import LogChunk, Stage

MAX_MATCHES = 10
_cache_lock = threading.Lock()
_cache: dict[str, Any] = {"fingerprint": None, "matcher": None, "generation": None, "checked": 0.0}
GENERATION_KEY = "notebook:generation"
# Edits through our actions bump the generation at once; anything else (the admin, another
# installation's import) is noticed by the fingerprint check at most this many seconds later.
FINGERPRINT_TTL_S = 10.0


def bump_generation() -> None:
    """Tell every process that the notebook changed (its matcher and search statistics are stale)."""
    try:
        cache.incr(GENERATION_KEY)
    except ValueError:
        cache.set(GENERATION_KEY, 1, timeout=None)


def generation() -> tuple[object, ...]:
    """Changes whenever the notebook's entries or signatures change."""
    with _cache_lock:
        current = cache.get(GENERATION_KEY, 0)
        fresh = _cache["generation"] == current and time.monotonic() - _cache["checked"] < FINGERPRINT_TTL_S
        if not fresh:
            _cache["generation"], _cache["checked"] = current, time.monotonic()
            _cache["fingerprint"] = (current, *_fingerprint())
        return _cache["fingerprint"]  # type: ignore[no-any-return]


def _fingerprint() -> tuple[object, ...]:
    sigs = Signature.objects.aggregate(n=Count("pk"), last=Max("pk"))
    entries = Entry.objects.aggregate(n=Count("pk"), changed=Max("updated_at"))
    return (sigs["n"], sigs["last"], entries["n"], entries["changed"])


_compiled: dict[str, Any] = {"key": None, "matcher": None}


def current_matcher() -> Matcher:
    key = generation()
    with _cache_lock:
        if _compiled["key"] != key:
            specs = [SignatureSpec(e, s, k, p) for s, e, k, p in Signature.objects.values_list("pk", "entry_id", "kind", "pattern")]
            _compiled["matcher"] = compile_signatures(specs)
            _compiled["key"] = key
        return _compiled["matcher"]  # type: ignore[no-any-return]


def structured_problems(data: dict[str, Any]) -> list[list[Any]]:
    """Where the stages keep structured problems (worker/payloads.py): compile's ``diagnostics``, link's
    ``problems``, and the link problems of a project's own build, which compile keeps in ``project_build``."""
    build = data.get("project_build")
    nested = build.get("link_problems") if isinstance(build, dict) else None
    return [items for items in (data.get("diagnostics"), data.get("problems"), nested) if isinstance(items, list)]


def diagnostic_lines(data: dict[str, Any], errors_only: bool = False) -> list[str]:
    """Structured problems of a stage as log-like lines (file:line:col: severity: message);
    ``errors_only`` leaves out warnings and notes."""
    lines: list[str] = []
    for items in structured_problems(data):
        for item in items[:5000]:
            if errors_only and isinstance(item, dict) and item.get("severity") not in (None, "", "error", "fatal"):
                continue
            if isinstance(item, dict):
                where = ":".join(str(item[k]) for k in ("file", "line", "column") if item.get(k) not in (None, ""))
                what = item.get("message") or item.get("symbol") or item.get("library") or ""
                severity = item.get("severity", "")
                lines.append(f"{where}: {severity}: {what}".strip(": "))
            else:
                lines.append(str(item))
    classification = data.get("classification")
    if isinstance(classification, dict) and classification.get("evidence"):
        lines.append(str(classification["evidence"]))
    return lines


def stage_text(stage: Stage) -> tuple[str, int]:
    """The stage's whole log followed by its diagnostics; also the number of log lines."""
    log = "".join(LogChunk.objects.filter(stage=stage).order_by("offset").values_list("text", flat=True))
    log_lines = log.count("\n") + (0 if log.endswith("\n") or not log else 1)
    extra = diagnostic_lines(stage.data or {})
    return (log + ("\n" if log and not log.endswith("\n") else "") + "\n".join(extra)), log_lines


def worth_matching(stage: Stage) -> bool:
    if stage.state == StageState.FAILED:
        return True
    if stage.state != StageState.PASSED:
        return False
    data = stage.data or {}
    totals = data.get("totals")  # hipify's AccountTotals
    unconverted = totals.get("unconverted_total") if isinstance(totals, dict) else 0
    return bool(data.get("diagnostics")) or bool(unconverted)


def match_text(text: str) -> MatchResults:
    return current_matcher().match(text)


@transaction.atomic
def record_matches(stage: Stage, results: Iterable[Any]) -> list[StageMatch]:
    # Entries this run already counted (this stage's earlier matching included): count a run once.
    earlier = set(StageMatch.objects.filter(stage__run_id=stage.run_id).values_list("entry_id", flat=True))
    StageMatch.objects.filter(stage=stage).delete()
    results = list(results)
    existing = set(Entry.objects.filter(pk__in=[m.entry_id for m in results]).values_list("pk", flat=True))
    rows = []
    for rank, match in enumerate([m for m in results if m.entry_id in existing][:MAX_MATCHES], start=1):
        rows.append(StageMatch(
            stage=stage, entry_id=match.entry_id, rank=rank, signature_count=len(match.signature_ids),
            line_count=match.line_count, line_numbers=match.line_numbers, lines=match.lines,
        ))
    StageMatch.objects.bulk_create(rows)
    new_for_run = [r.entry_id for r in rows if r.entry_id not in earlier]
    Entry.objects.filter(pk__in=new_for_run).update(matched_runs=F("matched_runs") + 1)
    return rows


def failure_lines(stage: Stage) -> tuple[list[str], dict[str, int]]:
    """A failed stage's own error lines (structured errors, then error lines of its log), and the
    log line number where each first appears (absent for structured diagnostics)."""
    log = "".join(LogChunk.objects.filter(stage=stage).order_by("offset").values_list("text", flat=True))
    data = stage.data if isinstance(stage.data, dict) else {}
    lines = own_error_lines(log, diagnostic_lines(data, errors_only=True), keep_tracebacks=stage.name == "smoke")
    wanted, positions = set(lines), {}
    for number, raw in enumerate(log.splitlines(), start=1):
        text = raw.strip()[:1000]
        if text in wanted and text not in positions:
            positions[text] = number
    return lines, positions


def for_stage(results: MatchResults, stage_name: str) -> MatchResults:
    """Drop entries written for other stages (an entry with no stages applies everywhere)."""
    stages = dict(Entry.objects.filter(pk__in=[m.entry_id for m in results]).values_list("pk", "stages"))
    return MatchResults([m for m in results if not stages.get(m.entry_id) or stage_name in stages[m.entry_id]], results.skipped)


def match_stage(stage: Stage) -> list[StageMatch]:
    """Match a finished stage and store the results. A failed stage is matched on its own error
    lines only, and those no entry explains are fingerprinted for the notebook to learn from;
    a passed stage with warnings or unconverted names is matched on its whole text."""
    if not worth_matching(stage):
        return []
    if stage.state != StageState.FAILED:
        text, _ = stage_text(stage)
        return record_matches(stage, for_stage(match_text(text), stage.name))
    lines, positions = failure_lines(stage)
    results = for_stage(match_text("\n".join(lines)), stage.name)
    record_unmatched(stage, uncovered_lines(lines, results, lambda text: for_stage(match_text(text), stage.name)))
    for match in results:  # from positions among the error lines to line numbers of the log
        match.line_numbers = [positions.get(lines[n - 1], 0) for n in match.line_numbers]
    return record_matches(stage, results)
