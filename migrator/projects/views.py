"""Project pages: list, create, detail, settings, start a run. Views parse, check access, call one action."""
from __future__ import annotations

import json

from django.conf import settings as django_settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from migrator.accounts.requests import AuthenticatedRequest
from migrator.pipeline.dispatch import start_run
from migrator.projects import actions
from migrator.projects.access import get_project_or_404, projects_for, teams_for
from migrator.projects.constants import SourceKind
from migrator.projects.forms import NewProjectForm, SettingsForm, StartRunForm
from migrator.projects.models import Project
from migrator.projects.overview import project_rows, run_rows
from migrator.projects.progress import progress_chart
from migrator.projects.queueing import queue_down_message, queue_is_down, with_retry_after
from migrator.projects.settings_form import ProjectSettingsForm, initial_values
from migrator.projects.uploads import LimitedUploadHandler
from worker.project_settings import ProjectSettings


def _new_project_form(request: AuthenticatedRequest, data: object = None, files: object = None) -> NewProjectForm:
    return NewProjectForm(
        data, files, teams=teams_for(request.user), allow_local_git=django_settings.MIGRATOR_ALLOW_LOCAL_GIT
    )


def _upload_too_large(request: AuthenticatedRequest) -> bool:
    if getattr(request, "upload_too_large", False):
        limit_mb = django_settings.MIGRATOR_MAX_UPLOAD_BYTES // (1024 * 1024)
        messages.error(request, f"The archive is larger than the {limit_mb} MB limit; nothing was stored.")
        return True
    return False


@login_required
@require_GET
def project_list(request: AuthenticatedRequest) -> HttpResponse:
    projects = list(projects_for(request.user).select_related("team").order_by("team__name", "name"))
    context = {"projects": projects, "rows": project_rows(projects), "form": _new_project_form(request)}
    return render(request, "projects/list.html", context)


@csrf_exempt  # upload handlers must be set before the CSRF check reads the body; checked just below
@login_required
@require_POST
def project_create(request: AuthenticatedRequest) -> HttpResponse:
    request.upload_handlers = [LimitedUploadHandler(request)]
    return _project_create(request)


@csrf_protect
def _project_create(request: AuthenticatedRequest) -> HttpResponse:
    form = _new_project_form(request, request.POST, request.FILES)
    if _upload_too_large(request) or not form.is_valid():
        projects = projects_for(request.user).select_related("team")
        return render(request, "projects/list.html", {"projects": projects, "form": form}, status=400)
    data = form.cleaned_data
    if queue_is_down():
        form.add_error(None, queue_down_message())
        page = render(request, "projects/list.html", {"projects": projects_for(request.user), "form": form})
        return with_retry_after(page)
    try:
        upload = data["archive"] or None
        run = actions.create_project_and_run(
            data["team"], data["name"], user=request.user, git_url=data["git_url"], git_ref=data["git_ref"],
            upload=upload, upload_name=upload.name if upload else "", settings=form.project_settings(),
        )
    except actions.ActionError as exc:
        form.add_error(None, str(exc))
        return render(request, "projects/list.html", {"projects": projects_for(request.user), "form": form}, status=400)
    start_run(run)
    return redirect(run)


def _detail_page(request: AuthenticatedRequest, project: Project, form: StartRunForm | None = None) -> HttpResponse:
    runs = project.runs.select_related("archive").order_by("-number")
    page = Paginator(runs, 25).get_page(request.GET.get("page"))
    context = {
        "project": project, "page": page, "run_rows": run_rows(list(page)), "form": form or StartRunForm(initial={"ref": project.git_ref}),
        "archives": project.archives.all()[:5], "is_git": project.source_kind == SourceKind.GIT,
        "progress_chart": progress_chart(project),
    }
    return render(request, "projects/detail.html", context)


@login_required
@require_GET
def project_detail(request: AuthenticatedRequest, project_id: int) -> HttpResponse:
    return _detail_page(request, get_project_or_404(request.user, project_id))


@csrf_exempt  # see project_create
@login_required
@require_POST
def run_start(request: AuthenticatedRequest, project_id: int) -> HttpResponse:
    request.upload_handlers = [LimitedUploadHandler(request)]
    return _run_start(request, project_id)


@csrf_protect
def _run_start(request: AuthenticatedRequest, project_id: int) -> HttpResponse:
    project = get_project_or_404(request.user, project_id)
    form = StartRunForm(request.POST, request.FILES)
    if _upload_too_large(request) or not form.is_valid():
        messages.error(request, "; ".join(str(e) for errs in form.errors.values() for e in errs) or "invalid input")
        return redirect(project)
    if queue_is_down():
        messages.error(request, queue_down_message())
        return with_retry_after(_detail_page(request, project, form))
    data = form.cleaned_data
    try:
        run = actions.store_archive_and_create_run(
            project, user=request.user, upload=data["archive"] or None, ref=data["ref"], pr_url=data["pr_url"],
        )
    except actions.ActionError as exc:
        messages.error(request, str(exc))
        return redirect(project)
    start_run(run)
    return redirect(run)


@login_required
@require_http_methods(["GET", "POST"])
def project_settings(request: AuthenticatedRequest, project_id: int) -> HttpResponse:
    project = get_project_or_404(request.user, project_id)
    effective = ProjectSettings.stored_or_default(project.settings)
    fields = ProjectSettingsForm(initial=initial_values(effective))
    form = SettingsForm(initial={"settings_json": json.dumps(effective.to_dict(), indent=2)})
    if request.method == "POST":
        advanced = "settings_json" in request.POST  # the JSON form (advanced use, scripts)
        posted = SettingsForm(request.POST) if advanced else ProjectSettingsForm(request.POST)
        if posted.is_valid():
            project.settings = posted.cleaned_data["settings_json" if advanced else "settings"]
            project.save(update_fields=["settings"])
            messages.success(request, "Settings saved; they apply to the next run.")
            return redirect(project)
        form, fields = (posted, fields) if advanced else (form, posted)  # type: ignore[assignment]
    return render(request, "projects/settings.html", {"project": project, "form": form, "fields": fields})
