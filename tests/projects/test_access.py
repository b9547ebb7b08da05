"""Only members of the owning team see a project or its runs; everyone else gets 404."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from migrator.accounts.models import Team
from migrator.projects import actions
from migrator.projects.models import Run

pytestmark = pytest.mark.django_db


@pytest.fixture
def alpha_run(team_user: tuple[User, Team], cuda_archive: bytes) -> Run:
    user, team = team_user
    project = actions.create_project(team, "secret", user=user)
    actions.store_archive(project, SimpleUploadedFile("s.tgz", cuda_archive), "s.tgz", user)
    return actions.create_run(project, user=user)


def _urls(run: Run) -> list[tuple[str, str]]:
    p = run.project_id
    return [
        ("get", reverse("projects:detail", args=[p])),
        ("get", reverse("projects:settings", args=[p])),
        ("post", reverse("projects:run-start", args=[p])),
        ("get", reverse("projects:run", args=[run.pk])),
        ("get", reverse("projects:run-status", args=[run.pk])),
        ("get", reverse("projects:stage-log", args=[run.pk, "fetch"])),
        ("get", reverse("projects:stage-log-raw", args=[run.pk, "fetch"])),
        ("post", reverse("projects:run-cancel", args=[run.pk])),
        ("post", reverse("projects:run-rerun", args=[run.pk])),
    ]


def test_a_non_member_gets_404_everywhere(client: Client, alpha_run: Run, other_team_user: tuple[User, Team]) -> None:
    client.force_login(other_team_user[0])
    for method, url in _urls(alpha_run):
        response = getattr(client, method)(url)
        assert response.status_code == 404, url
    alpha_run.refresh_from_db()
    assert not alpha_run.cancel_requested


def test_a_non_member_does_not_see_the_project_in_lists(
    client: Client, alpha_run: Run, other_team_user: tuple[User, Team]
) -> None:
    client.force_login(other_team_user[0])
    assert b"secret" not in client.get(reverse("projects:list")).content


def test_a_member_sees_everything(alice_client: Client, alpha_run: Run) -> None:
    for method, url in _urls(alpha_run):
        if method == "get":
            assert alice_client.get(url).status_code in (200, 204), url


def test_a_new_member_gains_access(client: Client, alpha_run: Run, other_team_user: tuple[User, Team]) -> None:
    from migrator.accounts.actions import add_member

    add_member(alpha_run.project.team, other_team_user[0])
    client.force_login(other_team_user[0])
    assert client.get(reverse("projects:run", args=[alpha_run.pk])).status_code == 200


def test_anonymous_requests_never_reach_data(client: Client, alpha_run: Run) -> None:
    for method, url in _urls(alpha_run):
        assert getattr(client, method)(url).status_code in (302, 404), url
