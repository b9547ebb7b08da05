"""The delivery page of a run: both modes' changes, past deliveries (both builds, conflicts with both
versions), the form that delivers, and the bundle download where nothing could be pushed."""
from __future__ import annotations

import logging

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from migrator.projects.access import get_run_or_404
from migrator.projects.workspaces import workspace_for
from migrator.reports.models import PortAttempt
from migrator.reports.tasks import deliver_port
from migrator.review.delivery_modes import preview_modes
from worker.delivery.model import MODES
from worker.sources.gitsource import GitSourceError, check_ref

log = logging.getLogger(__name__)


class DeliverForm(forms.Form):
    branch = forms.CharField(max_length=200, initial="port/rocm")
    mode = forms.ChoiceField(choices=[(m, m) for m in MODES], initial="single-source")

    def clean_branch(self) -> str:
        try:
            branch = check_ref(self.cleaned_data["branch"])
        except GitSourceError as exc:
            raise forms.ValidationError(str(exc)) from exc
        if not branch:
            raise forms.ValidationError("name the port branch")
        return branch


def queue_delivery(run_id: int, branch: str, mode: str) -> None:
    deliver_port.apply_async(args=[run_id, branch, mode], queue="cpu")


@login_required
@require_GET
def run_delivery(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_run_or_404(request.user, run_id)
    attempts = PortAttempt.objects.filter(run__project=run.project).select_related("delivery", "run")[:20]
    deliverable = run.is_final and run.source_kind == "git"
    return render(request, "reports/delivery.html", {
        "run": run, "previews": preview_modes(run), "attempts": attempts, "form": DeliverForm(),
        "deliverable": deliverable})


@login_required
@require_POST
def deliver(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_run_or_404(request.user, run_id)
    form = DeliverForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(str(e) for errors in form.errors.values() for e in errors))
    elif not run.is_final or run.source_kind != "git":
        messages.error(request, "only a finished run fetched from a git repository can be delivered")
    else:
        queue_delivery(run.pk, form.cleaned_data["branch"], form.cleaned_data["mode"])
        messages.info(request, f"delivering {form.cleaned_data['mode']} as {form.cleaned_data['branch']}: "
                               "both builds run first; this page shows the result")
    return redirect("reports:delivery", run_id=run.pk)


@login_required
@require_GET
def delivery_bundle(request: HttpRequest, run_id: int, attempt_id: int) -> FileResponse:
    run = get_run_or_404(request.user, run_id)
    attempt = PortAttempt.objects.filter(pk=attempt_id, run=run).exclude(bundle="").first()
    folder = workspace_for(run.pk).root / "delivery"
    if attempt is None:
        raise Http404("no bundle")
    path = folder / attempt.delivery.mode / attempt.bundle.rsplit("/", 1)[-1]
    if not path.is_file():
        raise Http404("the bundle is gone")
    return FileResponse(path.open("rb"), as_attachment=True, filename=path.name)
