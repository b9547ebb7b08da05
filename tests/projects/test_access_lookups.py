"""The lookups every view and endpoint starts with: by user or by team, a run's stage, 404 otherwise."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.http import Http404
from django.test import Client
from django.urls import reverse
from pytest_django import DjangoAssertNumQueries

from migrator.accounts.models import Team
from migrator.api.models import create_token
from migrator.projects import access
from migrator.projects.models import Run

pytestmark = pytest.mark.django_db



def test_members_and_their_team_find_the_run_with_its_project_loaded(
    run: Run, team_user: tuple[User, Team], django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    user, team = team_user
    with django_assert_num_queries(1):
        by_user = access.get_run_or_404(user, run.pk)
        assert (by_user.project.name, by_user.project.team.name) == ("demo", team.name)
    with django_assert_num_queries(1):
        assert access.get_team_run_or_404(team, run.pk).project.team == team
    assert access.get_project_or_404(user, run.project_id) == access.get_team_project_or_404(team, run.project_id)


def test_another_team_and_anonymous_users_get_404(run: Run, other_team_user: tuple[User, Team]) -> None:
    user, team = other_team_user
    lookups: list[Callable[[], object]] = [
        lambda: access.get_run_or_404(user, run.pk), lambda: access.get_team_run_or_404(team, run.pk),
        lambda: access.get_project_or_404(user, run.project_id), lambda: access.get_team_project_or_404(team, run.project_id),
        lambda: access.get_run_or_404(AnonymousUser(), run.pk),
    ]
    for lookup in lookups:
        with pytest.raises(Http404):
            lookup()


def test_a_stage_comes_with_its_run_and_an_unknown_one_is_404(
    run: Run, django_assert_num_queries: DjangoAssertNumQueries
) -> None:
    with django_assert_num_queries(1):
        stage = access.get_stage_or_404(run, "compile")
        assert stage.run is run
    with pytest.raises(Http404):
        access.get_stage_or_404(run, "deploy")


def test_the_log_of_an_unknown_stage_is_404_on_the_page_and_in_the_api(
    alice_client: Client, run: Run, team_user: tuple[User, Team]
) -> None:
    assert alice_client.get(reverse("projects:stage-log", args=[run.pk, "deploy"])).status_code == 404
    assert alice_client.get(reverse("projects:stage-log-raw", args=[run.pk, "deploy"])).status_code == 404
    token = create_token(team_user[1], "ci")[1]
    response = alice_client.get(f"/api/v1/runs/{run.pk}/stages/deploy/log", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 404
