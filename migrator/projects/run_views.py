"""Run pages: the stage strip and logs, updated live by htmx polling small partials.

Polling protocol: the status partial carries the run's ``version``; a poll with an unchanged version
gets 204 (htmx swaps nothing), a finished run answers 286 so htmx stops polling. A run with work
waiting in a queue is rendered on every poll, since its place in the queue moves with other runs'
work, not with its own version. Timers keep counting between polls in the browser
(``static/js/elapsed.js``). Logs are appended with a byte-offset cursor, so each poll sends only new text.
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect, HttpResponseStopPolling

from migrator.accounts.requests import AuthenticatedRequest
from migrator.pipeline.dispatch import start_run
from migrator.projects import actions
from migrator.projects.access import get_run_or_404, get_stage_or_404, teams_for
from migrator.projects.causes import run_causes
from migrator.projects.constants import FINAL_STAGE_STATES, MAX_LOG_BYTES, StageState
from migrator.projects.errorlines import failing_lines
from migrator.projects.forms import LiveForm, LogForm, RerunForm, StageChoiceForm
from migrator.projects.logs import log_tail, read_log_from, stream_log
from migrator.projects.models import ReferenceRun, Run, Stage
from migrator.projects.nextsteps import run_next_steps
from migrator.projects.queueing import queue_down_message, queue_is_down, with_retry_after
from migrator.projects.stage_panels import panel_context as stage_panel_context
from migrator.projects.verdict import verdict_of
from migrator.projects.waiting import reference_waiting, stage_waiting
from migrator.projects.workspaces import workspace_for
from worker.contained import ContainedFileError, read_text_beneath
from worker.project_settings import ProjectSettings
from worker.wording import wait_text

LOG_TAIL_BYTES = 256 * 1024


def _selected_stage(run: Run, stages: list[Stage], requested: str) -> Stage:
    by_name = {s.name: s for s in stages}
    if requested in by_name:
        return by_name[requested]
    for state in (StageState.RUNNING, StageState.FAILED):
        for stage in stages:
            if stage.state == state:
                return stage
    started = [s for s in stages if s.started_at]
    return started[-1] if started else stages[0]


def _status_context(run: Run, requested: str, teams: list[int]) -> dict[str, object]:
    """``teams``: the viewer's teams, whose runs ahead in a shared queue may be named."""
    stages = list(run.stages.all())
    reference = ReferenceRun.objects.filter(run=run).first()
    selected = _selected_stage(run, stages, requested)
    matches = list(selected.notebook_matches.select_related("entry")) if selected.is_final else []
    error_lines = failing_lines(selected) if selected.state == StageState.FAILED else None
    verdict = verdict_of(stages, run.cancel_requested, reference)
    causes = run_causes(run, stages)
    return {
        "run": run, "stages": stages, "selected": selected, "explicit_stage": requested,
        "matches": matches, "error_lines": error_lines,
        "stage_templates": [f"projects/stages/_{selected.name}.html", "projects/stages/_generic.html"],
        "panel": stage_panel_context(run, selected),
        "verdict": verdict, "causes": causes,
        "next_steps": run_next_steps(run, stages, causes.groups, verdict) if run.is_final else [],
        "waiting": stage_waiting(selected, teams),
        "reference": reference,
        "reference_waiting": reference_waiting(reference, teams) if reference else None,
        "wait_limit": wait_text(ProjectSettings.stored_or_default(run.settings_used).smoke_wait_timeout_s),
    }


def _in_a_queue(run: Run) -> bool:
    """Work of the run handed out and waiting for a worker: its place moves with other runs."""
    queued = {"state": StageState.QUEUED, "queued_at__isnull": False}
    return run.stages.filter(**queued).exists() or ReferenceRun.objects.filter(run=run, **queued).exists()


def _teams(request: AuthenticatedRequest) -> list[int]:
    return list(teams_for(request.user).values_list("pk", flat=True))


def _log_context(stage: Stage) -> dict[str, object]:
    tail, offset, truncated = log_tail(stage, LOG_TAIL_BYTES)
    return {"log_text": tail, "log_offset": offset, "log_truncated": truncated}


@login_required
@require_GET
def run_detail(request: AuthenticatedRequest, run_id: int) -> HttpResponse:
    run = get_run_or_404(request.user, run_id)
    choice = StageChoiceForm(request.GET)
    requested = choice.cleaned_data["stage"] if choice.is_valid() else ""
    context = _status_context(run, requested or "", _teams(request))
    selected: Stage = context["selected"]  # type: ignore[assignment]
    context |= _log_context(selected) | {"rerun_form": RerunForm.for_run(context["stages"])}  # type: ignore[arg-type]
    return render(request, "projects/run.html", context)


@login_required
@require_GET
def run_status(request: AuthenticatedRequest, run_id: int) -> HttpResponse:
    run = get_run_or_404(request.user, run_id)
    live = LiveForm(request.GET)
    seen = live.cleaned_data.get("v") if live.is_valid() else None
    if seen is not None and seen == run.version and not run.is_final and not _in_a_queue(run):
        return HttpResponse(status=204)
    choice = StageChoiceForm(request.GET)
    requested = choice.cleaned_data["stage"] if choice.is_valid() else ""
    context = _status_context(run, requested or "", _teams(request))
    selected: Stage = context["selected"]  # type: ignore[assignment]
    if request.GET.get("log", selected.name) != selected.name:
        # Following the run: the selected stage moved on, so swap the log pane to it (out of band).
        context |= _log_context(selected) | {"log_switch": True}
    if run.is_final:
        context["rerun_form"] = RerunForm.for_run(context["stages"])  # type: ignore[arg-type]  # "cancel" becomes "re-run"
    if run.is_final:
        return HttpResponseStopPolling(render_to_string("projects/run.html#status", context, request))
    return render(request, "projects/run.html#status", context)


@login_required
@require_GET
def stage_log(request: AuthenticatedRequest, run_id: int, stage_name: str) -> HttpResponse:
    run = get_run_or_404(request.user, run_id)
    stage = get_stage_or_404(run, stage_name)
    form = LogForm(request.GET)
    if not form.is_valid():
        return HttpResponse("bad request", status=400)
    offset = form.cleaned_data.get("offset") or 0
    text, new_offset = read_log_from(stage, offset)
    final = stage.state in FINAL_STAGE_STATES
    if not text and not final:
        return HttpResponse(status=204)
    context = {"run": run, "stage": stage, "text": text, "offset": new_offset, "live": not final or new_offset < stage.log_size}
    return render(request, "projects/run.html#log-append", context)


@login_required
@require_GET
def stage_log_raw(request: AuthenticatedRequest, run_id: int, stage_name: str) -> StreamingHttpResponse:
    run = get_run_or_404(request.user, run_id)
    stage = get_stage_or_404(run, stage_name)
    response = StreamingHttpResponse(stream_log(stage), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="run-{run.pk}-{stage.name}.log"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


@login_required
@require_POST
def run_cancel(request: AuthenticatedRequest, run_id: int) -> HttpResponse:
    run = get_run_or_404(request.user, run_id)
    if run.is_final:
        messages.info(request, "The run had already finished.")
    else:
        actions.cancel_run(run)
        messages.success(request, "Cancel requested: queued stages are cancelled, a running stage stops at its next check.")
    if getattr(request, "htmx", False):  # the confirmed htmx post (hx-confirm): reload the run page
        return HttpResponseClientRedirect(run.get_absolute_url())
    return redirect(run)


@login_required
@require_POST
def run_rerun(request: AuthenticatedRequest, run_id: int) -> HttpResponse:
    run = get_run_or_404(request.user, run_id)
    form = RerunForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose a stage to re-run from.")
        return redirect(run)
    if queue_is_down():
        page = render(request, "projects/queue_down.html", {"message": queue_down_message(), "back": run.get_absolute_url()})
        return with_retry_after(page)
    try:
        new = actions.create_rerun(run, user=request.user, from_stage=form.cleaned_data["from_stage"])
    except actions.ActionError as exc:
        messages.error(request, str(exc))
        return redirect(run)
    start_run(new)
    return redirect(new)


@login_required
@require_GET
def reference_log_raw(request: AuthenticatedRequest, run_id: int) -> HttpResponse:
    """The CUDA reference run's log (``records/reference.log``, written by the root side), as plain text."""
    run = get_run_or_404(request.user, run_id)
    if not ReferenceRun.objects.filter(run=run).exists():
        raise Http404("This run has no CUDA reference run")
    try:
        text = read_text_beneath(workspace_for(run.pk).records, "reference.log", limit=MAX_LOG_BYTES)
    except ContainedFileError:
        text = "(no log yet)\n"
    response = HttpResponse(text, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="run-{run.pk}-cuda-reference.log"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
