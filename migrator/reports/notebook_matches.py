"""The error-notebook entries matched against a run's stages, as the report lists them.

The notebook is part of every installation, so this reads its models directly: a change there
that breaks this query fails loudly (and in the tests) instead of reports quietly showing none.
"""
from __future__ import annotations

from migrator.notebook.models import StageMatch
from migrator.projects.models import Run
from migrator.reports.jsondata import JsonDict, as_list, as_str
from migrator.reports.links import absolute_url

MAX_MATCHES = 50


def notebook_matches(run: Run) -> list[JsonDict]:
    """Notebook entries matched against this run's stages: stage, slug, title, url, line."""
    found = StageMatch.objects.filter(stage__run=run).select_related("stage", "entry")[:MAX_MATCHES]
    return [
        {"stage": m.stage.name, "slug": as_str(m.entry.slug, 120), "title": as_str(m.entry.title, 200),
         "url": absolute_url(m.entry.get_absolute_url()), "line": as_str((as_list(m.lines) or [""])[0], 300)}
        for m in found
    ]
