"""One place that decides what a user or an API token's team may see; everything else gets 404.

Web views ask by user (members of the owning team), the token API by team. Both go through the
lookups here, so a project, run or stage is found the same way, related rows and all, behind every
page, download, report and endpoint, and a view's preamble is one call.
"""
from __future__ import annotations

from typing import TypeVar

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Model, QuerySet
from django.http import Http404

from migrator.accounts.models import Team
from migrator.projects.models import Project, Run, Stage

AnyUser = AbstractBaseUser | AnonymousUser
_Row = TypeVar("_Row", bound=Model)


def teams_for(user: AnyUser) -> QuerySet[Team]:
    if not user.is_authenticated:
        return Team.objects.none()
    return Team.objects.filter(memberships__user_id=user.pk)


def projects_for(user: AnyUser) -> QuerySet[Project]:
    if not user.is_authenticated:
        return Project.objects.none()
    return Project.objects.filter(team__memberships__user_id=user.pk)


def _one_or_404(rows: QuerySet[_Row], pk: int, what: str) -> _Row:
    found = rows.filter(pk=pk).first()
    if found is None:
        raise Http404(f"No such {what}")
    return found


def _runs() -> QuerySet[Run]:
    # Every run page shows its project, team and archive: one query instead of four.
    return Run.objects.select_related("project", "project__team", "archive")


def get_project_or_404(user: AnyUser, project_id: int) -> Project:
    return _one_or_404(projects_for(user).select_related("team"), project_id, "project")


def get_team_project_or_404(team: Team, project_id: int) -> Project:
    return _one_or_404(Project.objects.filter(team=team).select_related("team"), project_id, "project")


def get_run_or_404(user: AnyUser, run_id: int) -> Run:
    if not user.is_authenticated:
        raise Http404("No such run")
    return _one_or_404(_runs().filter(project__team__memberships__user_id=user.pk), run_id, "run")


def get_team_run_or_404(team: Team, run_id: int) -> Run:
    return _one_or_404(_runs().filter(project__team=team), run_id, "run")


def get_stage_or_404(run: Run, name: str) -> Stage:
    """A stage of a run already checked above; ``stage.run`` is that run, with no further query."""
    stage = run.stages.filter(name=name).first()
    if stage is None:
        raise Http404("No such stage")
    return stage
