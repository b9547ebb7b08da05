"""The run's dependency section as a live partial: polled while resolves are queued or running."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET
from django_htmx.http import HttpResponseStopPolling

from migrator.dependencies.section import dependency_section
from migrator.projects.access import get_run_or_404
from migrator.projects.models import Stage


def run_section(run_id: int) -> dict[str, object] | None:
    data = Stage.objects.filter(run_id=run_id, name="scan").values_list("data", flat=True).first()
    return dependency_section(data) if isinstance(data, dict) else None


@login_required
@require_GET
def run_dependencies(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_run_or_404(request.user, run_id)
    context = {"run": run, "deps": run_section(run.pk)}
    deps = context["deps"]
    if isinstance(deps, dict) and deps.get("state") == "resolving":
        return render(request, "dependencies/_run_dependencies.html", context)
    return HttpResponseStopPolling(render_to_string("dependencies/_run_dependencies.html", context, request))
