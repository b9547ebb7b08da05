"""Review pages and downloads of a run whose files the retention sweep removed answer "expired" (410)."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

from django.http import HttpRequest, HttpResponseBase
from django.shortcuts import render

from migrator.projects.access import get_run_or_404

View = TypeVar("View", bound=Callable[..., HttpResponseBase])


def unless_expired(view: View) -> View:
    """The view (taking ``run_id``), or the "expired" page for a run the user may see whose files are gone."""
    @functools.wraps(view)
    def checked(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponseBase:
        run_id = kwargs.get("run_id", args[0] if args else None)
        run = get_run_or_404(request.user, int(str(run_id)))
        if run.files_expired_at is not None:
            return render(request, "review/expired.html", {"run": run}, status=410)
        return view(request, *args, **kwargs)
    return checked  # type: ignore[return-value]  # same signature as ``view``
