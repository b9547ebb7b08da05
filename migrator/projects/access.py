"""One place that decides what a user may see: members of the owning team, everyone else gets 404."""
from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet
from django.http import Http404

from migrator.accounts.models import Team
from migrator.projects.models import Project, Run

AnyUser = AbstractBaseUser | AnonymousUser


def teams_for(user: AnyUser) -> QuerySet[Team]:
    if not user.is_authenticated:
        return Team.objects.none()
    return Team.objects.filter(memberships__user=user)


def projects_for(user: AnyUser) -> QuerySet[Project]:
    if not user.is_authenticated:
        return Project.objects.none()
    return Project.objects.filter(team__memberships__user=user)


def get_project_or_404(user: AnyUser, project_id: int) -> Project:
    try:
        return projects_for(user).select_related("team").get(pk=project_id)
    except Project.DoesNotExist as exc:
        raise Http404("No such project") from exc


def get_run_or_404(user: AnyUser, run_id: int) -> Run:
    if not user.is_authenticated:
        raise Http404("No such run")
    try:
        return (
            Run.objects.select_related("project", "project__team", "archive")
            .filter(project__team__memberships__user=user)
            .get(pk=run_id)
        )
    except Run.DoesNotExist as exc:
        raise Http404("No such run") from exc
