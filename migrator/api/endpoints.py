"""The JSON API at /api/v1/: projects, runs, stages, reports and notebook search.

Every request carries ``Authorization: Bearer <token>``; a token sees only its team's projects
and runs (anything else is 404). Endpoints parse, check the team, and call the same actions
as the web pages (``create_project``, ``store_archive``, ``create_run`` + ``start_run``).
"""
from __future__ import annotations

from typing import Any

from django.conf import settings as django_settings
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from ninja import Body, Form, NinjaAPI, Query, Schema, Status
from ninja.files import UploadedFile
from ninja.params.functions import File

from migrator.accounts.models import Team
from migrator.api.auth import Throttled, TokenAuth
from migrator.api.models import ApiToken
from migrator.api.schemas import (
    DeliverIn,
    DeliveryOut,
    ErrorOut,
    NotebookHit,
    ProjectIn,
    ProjectOut,
    RerunIn,
    RunDetailOut,
    RunIn,
    RunOut,
    SettingsOut,
    StageLogOut,
    StageOut,
)
from migrator.notebook.search import search_entries
from migrator.pipeline.dispatch import start_run
from migrator.projects import actions
from migrator.projects.access import get_stage_or_404, get_team_project_or_404, get_team_run_or_404
from migrator.projects.constants import FINAL_STAGE_STATES
from migrator.projects.forms import default_rerun_stage, git_url_policy
from migrator.projects.logs import read_log_from
from migrator.projects.models import Project, Run
from migrator.projects.queueing import queue_down_message, queue_is_down, retry_after_s
from migrator.reports.build import build_report
from migrator.reports.delivery_views import queue_delivery
from migrator.reports.links import absolute_url
from migrator.reports.markdown import export_markdown
from migrator.reports.models import PortAttempt
from worker.delivery.model import MODES
from worker.project_settings import ProjectSettings, SettingsError
from worker.sources.gitsource import GitSourceError, check_git_url, check_ref

api = NinjaAPI(
    title="Migrator API", version="1", urls_namespace="api-v1", auth=TokenAuth(),
    description="Token-authenticated access to Migrator projects, runs and reports.",
)
MAX_LISTED = 200


@api.exception_handler(Throttled)
def throttled(request: HttpRequest, exc: Throttled) -> HttpResponse:
    response = api.create_response(request, {"detail": str(exc)}, status=429)
    response["Retry-After"] = str(exc.wait_s)
    return response


class ListQuery(Schema):
    limit: int = 50
    offset: int = 0


class SearchQuery(Schema):
    q: str
    limit: int = 20


def _team(request: HttpRequest) -> Team:
    token: ApiToken = request.auth  # type: ignore[attr-defined]
    return token.team


def _projects(request: HttpRequest) -> QuerySet[Project]:
    return Project.objects.filter(team=_team(request)).select_related("team")


def _project(request: HttpRequest, project_id: int) -> Project:
    return get_team_project_or_404(_team(request), project_id)


def _run(request: HttpRequest, run_id: int) -> Run:
    return get_team_run_or_404(_team(request), run_id)


def _checked_git(git_url: str, ref: str) -> tuple[str, str]:
    """The same checks as the web forms; raises ActionError with the user-facing reason."""
    try:
        url = check_git_url(git_url, allow_local=django_settings.MIGRATOR_ALLOW_LOCAL_GIT,
                            policy=git_url_policy()) if git_url else ""
        return url, check_ref(ref) if ref else ""
    except GitSourceError as exc:
        raise actions.ActionError(str(exc)) from exc


def _checked_pr_url(pr_url: str) -> str:
    if pr_url and (not pr_url.startswith(("https://", "http://")) or len(pr_url) > 500 or any(c.isspace() for c in pr_url)):
        raise actions.ActionError("pr_url must be an http(s) URL of at most 500 characters")
    return pr_url


def _window(query: ListQuery) -> slice:
    offset = max(0, query.offset)
    return slice(offset, offset + max(1, min(query.limit, MAX_LISTED)))


@api.get("/projects", response=list[ProjectOut], tags=["projects"])
def list_projects(request: HttpRequest, query: Query[ListQuery]) -> list[Project]:
    return list(_projects(request).order_by("name")[_window(query)])


@api.post("/projects", response={201: ProjectOut, 400: ErrorOut}, tags=["projects"])
def create_project(
    request: HttpRequest, payload: Form[ProjectIn], archive: UploadedFile | None = File(None)
) -> Status[object]:
    """A project from a git URL, or from an uploaded archive (multipart field ``archive``)."""
    if bool(payload.git_url) == bool(archive):
        return Status(400, {"detail": "give either git_url or an archive upload"})
    if not payload.name.strip() or len(payload.name) > 120:
        return Status(400, {"detail": "name must have 1 to 120 characters"})
    try:
        git_url, git_ref = _checked_git(payload.git_url, payload.git_ref)
        settings = {"source_subdir": payload.source_subdir.strip()} if payload.source_subdir.strip() else {}
        project = actions.create_project_from_source(
            _team(request), payload.name.strip(), user=None, git_url=git_url, git_ref=git_ref,
            upload=archive, upload_name=archive.name or "upload" if archive else "", settings=settings,
        )
    except (actions.ActionError, SettingsError) as exc:
        return Status(400, {"detail": str(exc)})
    return Status(201, project)


@api.get("/projects/{project_id}", response=ProjectOut, tags=["projects"])
def get_project(request: HttpRequest, project_id: int) -> Project:
    return _project(request, project_id)


@api.get("/projects/{project_id}/runs", response=list[RunOut], tags=["runs"])
def list_runs(request: HttpRequest, project_id: int, query: Query[ListQuery]) -> list[Run]:
    project = _project(request, project_id)
    return list(project.runs.select_related("archive").order_by("-number")[_window(query)])


@api.post(
    "/projects/{project_id}/runs", response={201: RunDetailOut, 400: ErrorOut, 503: ErrorOut}, tags=["runs"]
)
def start_project_run(
    request: HttpRequest, project_id: int, response: HttpResponse, payload: Form[RunIn],
    archive: UploadedFile | None = File(None),
) -> Status[object]:
    """Start a run at a git ref, or of a new archive upload (default: the project's latest archive).

    503 with ``Retry-After`` while the work queue is down; nothing is recorded then, so retry."""
    project = _project(request, project_id)
    try:
        _, ref = _checked_git("", payload.ref)
        pr_url = _checked_pr_url(payload.pr_url)
    except actions.ActionError as exc:
        return Status(400, {"detail": str(exc)})
    if queue_is_down():
        response["Retry-After"] = str(retry_after_s())
        return Status(503, {"detail": queue_down_message()})
    try:
        run = actions.store_archive_and_create_run(
            project, user=None, trigger="api", upload=archive, ref=ref, pr_url=pr_url
        )
    except actions.ActionError as exc:
        return Status(400, {"detail": str(exc)})
    start_run(run)
    return Status(201, run)


@api.get("/runs/{run_id}", response=RunDetailOut, tags=["runs"])
def get_run(request: HttpRequest, run_id: int) -> Run:
    return _run(request, run_id)


@api.get("/runs/{run_id}/stages", response=list[StageOut], tags=["runs"])
def list_stages(request: HttpRequest, run_id: int) -> list[object]:
    return list(_run(request, run_id).stages.all())


@api.post("/runs/{run_id}/cancel", response={202: RunOut, 409: ErrorOut}, tags=["runs"])
def cancel_run(request: HttpRequest, run_id: int) -> Status[object]:
    """Cancel queued stages now; a running stage stops at its next check."""
    run = _run(request, run_id)
    if run.is_final:
        return Status(409, {"detail": f"run #{run.number} has already finished ({run.state})"})
    actions.cancel_run(run)
    run.refresh_from_db()
    return Status(202, run)


@api.post("/runs/{run_id}/rerun", response={201: RunDetailOut, 400: ErrorOut}, tags=["runs"])
def rerun(request: HttpRequest, run_id: int, payload: RerunIn) -> Status[object]:
    """A new run of the same pinned source, reusing the stages before ``from_stage``."""
    run = _run(request, run_id)
    from_stage = payload.from_stage or default_rerun_stage(list(run.stages.all()))
    try:
        new = actions.create_rerun(run, user=None, from_stage=from_stage)
    except actions.ActionError as exc:
        return Status(400, {"detail": str(exc)})
    start_run(new)
    return Status(201, new)


class LogQuery(Schema):
    offset: int = 0


@api.get("/runs/{run_id}/stages/{stage_name}/log", response=StageLogOut, tags=["runs"])
def stage_log(request: HttpRequest, run_id: int, stage_name: str, query: Query[LogQuery]) -> dict[str, object]:
    """A piece of the stage's log from byte ``offset``; call again with ``next_offset`` until ``final``."""
    stage = get_stage_or_404(_run(request, run_id), stage_name)
    offset = max(0, min(query.offset, stage.log_size))
    text, next_offset = read_log_from(stage, offset)
    final = stage.state in FINAL_STAGE_STATES and next_offset >= stage.log_size
    return {"stage": stage.name, "state": stage.state, "offset": offset, "next_offset": next_offset,
            "size": stage.log_size, "final": final, "text": text}


def _settings_out(project: Project) -> dict[str, object]:
    return {"stored": project.settings, "effective": ProjectSettings.stored_or_default(project.settings).to_dict()}


@api.get("/projects/{project_id}/settings", response=SettingsOut, tags=["projects"])
def get_settings(request: HttpRequest, project_id: int) -> dict[str, object]:
    return _settings_out(_project(request, project_id))


@api.put("/projects/{project_id}/settings", response={200: SettingsOut, 400: ErrorOut}, tags=["projects"])
def put_settings(request: HttpRequest, project_id: int, payload: Body[dict[str, Any]]) -> Status[object]:
    """Replace the settings with this whole object (validated; stored as differences from the defaults)."""
    project = _project(request, project_id)
    try:
        actions.update_settings(project, payload)
    except SettingsError as exc:
        return Status(400, {"detail": str(exc)})
    return Status(200, _settings_out(project))


@api.get("/runs/{run_id}/report", response=dict[str, object], tags=["reports"])
def get_report(request: HttpRequest, run_id: int) -> dict[str, object]:
    return build_report(_run(request, run_id))


@api.get("/runs/{run_id}/report.md", tags=["reports"], openapi_extra={
    "responses": {200: {"description": "The report as Markdown", "content": {"text/markdown": {"schema": {"type": "string"}}}}}
})
def get_report_markdown(request: HttpRequest, run_id: int) -> HttpResponse:
    text = export_markdown(build_report(_run(request, run_id)))
    return HttpResponse(text, content_type="text/markdown; charset=utf-8")


@api.post("/runs/{run_id}/deliver", response={202: ErrorOut, 400: ErrorOut}, tags=["deliveries"])
def deliver_run(request: HttpRequest, run_id: int, payload: DeliverIn) -> Status[object]:
    """Queue the delivery of a finished git run as ``branch`` (``mode``: single-source or copy); both
    builds run before anything is pushed. GET ``/runs/{run_id}/deliveries`` for the result."""
    run = _run(request, run_id)
    try:
        branch = check_ref(payload.branch)
    except GitSourceError as exc:
        return Status(400, {"detail": str(exc)})
    if not branch or payload.mode not in MODES:
        return Status(400, {"detail": "name the branch; mode is single-source or copy"})
    if not run.is_final or run.source_kind != "git":
        return Status(400, {"detail": "only a finished run fetched from a git repository can be delivered"})
    queue_delivery(run.pk, branch, payload.mode)
    return Status(202, {"detail": f"delivering {payload.mode} as {branch}"})


@api.get("/runs/{run_id}/deliveries", response=list[DeliveryOut], tags=["deliveries"])
def list_deliveries(request: HttpRequest, run_id: int) -> list[dict[str, object]]:
    """The deliveries of the run's project, newest first: both builds, branch, pull request, conflicts."""
    attempts = PortAttempt.objects.filter(run__project=_run(request, run_id).project).select_related("delivery")
    return [_delivery_out(attempt) for attempt in attempts[:50]]


def _delivery_out(attempt: PortAttempt) -> dict[str, object]:
    record = attempt.delivery
    return {"id": attempt.pk, "run_id": attempt.run_id, "state": attempt.state, "mode": record.mode,
            "branch": record.branch, "target_branch": record.target_branch, "commit": attempt.commit,
            "rocm": attempt.rocm, "cuda": attempt.cuda, "pr_url": record.pr_url if attempt.state == "proposed" else "",
            "conflicts": attempt.conflicts, "kept_hand": attempt.kept_hand, "lines": attempt.lines,
            "error": attempt.error, "commands": attempt.commands}


@api.get("/notebook/search", response=list[NotebookHit], tags=["notebook"])
def search_notebook(request: HttpRequest, query: Query[SearchQuery]) -> list[NotebookHit]:
    hits = search_entries(query.q, limit=max(1, min(query.limit, 100)))
    return [
        NotebookHit(slug=hit.entry.slug, title=hit.entry.title, url=absolute_url(hit.entry.get_absolute_url()),
                    score=float(hit.rank or 0.0))
        for hit in hits
    ]
