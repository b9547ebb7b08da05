"""Optional access to the error notebook (``migrator.notebook``), which another area provides.

The notebook app may be absent, not in INSTALLED_APPS, or differ from what this expects, so
every call is guarded: without it, reports show no matches and the API's search says it is
not available. Expected: ``migrator.notebook.models.StageMatch`` (stage, entry, lines) and
``migrator.notebook.search.search_entries(text, limit=...)`` returning hits with ``entry``
and ``rank``.
"""
from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from types import ModuleType

from django.apps import apps

from migrator.projects.models import Run
from migrator.reports.jsondata import JsonDict, as_list, as_str

log = logging.getLogger(__name__)
NOTEBOOK_APP = "migrator.notebook"
MAX_MATCHES = 50


def _notebook_module(name: str) -> ModuleType | None:
    if not apps.is_installed(NOTEBOOK_APP):
        return None
    try:
        return importlib.import_module(f"{NOTEBOOK_APP}.{name}")
    except ImportError:
        return None


def _entry_url(entry: object) -> str:
    from migrator.reports.build import absolute_url

    get_url = getattr(entry, "get_absolute_url", None)
    return absolute_url(str(get_url())) if callable(get_url) else ""


def notebook_matches(run: Run) -> list[JsonDict]:
    """Notebook entries matched against this run's stages: stage, slug, title, url, line."""
    models = _notebook_module("models")
    stage_match = getattr(models, "StageMatch", None)
    if stage_match is None:
        return []
    try:
        found = list(stage_match.objects.filter(stage__run=run).select_related("stage", "entry")[:MAX_MATCHES])
        return [
            {"stage": m.stage.name, "slug": as_str(m.entry.slug, 120), "title": as_str(m.entry.title, 200),
             "url": _entry_url(m.entry), "line": as_str((as_list(m.lines) or [""])[0], 300)}
            for m in found
        ]
    except Exception:  # a notebook change must not break reports
        log.exception("reading notebook matches of run %s failed", run.pk)
        return []


def search_function() -> Callable[[str, int], list[JsonDict]] | None:
    """``search(text, limit) -> [{slug, title, url, score}]``, or None when the notebook is not installed."""
    module = _notebook_module("search")
    search_entries = getattr(module, "search_entries", None)
    if not callable(search_entries):
        return None

    def search(text: str, limit: int) -> list[JsonDict]:
        hits = search_entries(text, limit=limit)
        return [
            {"slug": str(hit.entry.slug), "title": str(hit.entry.title), "url": _entry_url(hit.entry),
             "score": float(getattr(hit, "rank", 0.0) or 0.0)}
            for hit in hits
        ]

    return search
