"""Webhook deliveries: ids scoped to the project they were sent to, and bodies bounded before parsing."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from django.contrib.auth.models import User
from django.test import Client

from migrator.accounts.models import Team
from migrator.integrations import actions as hook_actions
from migrator.integrations.models import ProjectIntegration, WebhookDelivery
from migrator.integrations.verify import github_signature
from migrator.projects import actions
from migrator.projects.models import Project, Run

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse as TestResponse  # what Client's methods return

pytestmark = pytest.mark.django_db
SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(autouse=True)
def deliveries_processed_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hook_actions, "queue_delivery", lambda pk: hook_actions.start_delivery_run(pk))


def _project(team: Team, name: str, secret: str) -> Project:
    project = actions.create_project(team, name, user=None, git_url=f"https://github.com/acme/{name}.git")
    ProjectIntegration.objects.create(project=project, webhook_secret=secret, gitlab_token=secret)
    return project


def github(
    client: Client, project: Project, secret: str, body: bytes, delivery: str, event: str = "pull_request"
) -> TestResponse:
    return client.post(f"/hooks/github/{project.pk}", body, content_type="application/json",
                       HTTP_X_GITHUB_EVENT=event, HTTP_X_GITHUB_DELIVERY=delivery,
                       HTTP_X_HUB_SIGNATURE_256=github_signature(secret, body))


def gitlab(client: Client, project: Project, token: str, body: bytes, uuid: str) -> TestResponse:
    return client.post(f"/hooks/gitlab/{project.pk}", body, content_type="application/json",
                       HTTP_X_GITLAB_EVENT="Merge Request Hook", HTTP_X_GITLAB_TOKEN=token, HTTP_X_GITLAB_EVENT_UUID=uuid)


def pr_body(name: str) -> bytes:
    url = f"https://github.com/acme/{name}/pull/3"
    return json.dumps({"action": "opened", "number": 3, "pull_request": {"html_url": url, "head": {"sha": SHA}}}).encode()


def mr_body(name: str) -> bytes:
    attributes = {"action": "open", "url": f"https://gitlab.com/acme/{name}/-/merge_requests/3", "iid": 3,
                  "last_commit": {"id": SHA}}
    return json.dumps({"object_kind": "merge_request", "object_attributes": attributes}).encode()


def test_a_github_delivery_reusing_another_projects_id_is_its_own(
    client: Client, team_user: tuple[User, Team], other_team_user: tuple[User, Team]
) -> None:
    p, q = _project(team_user[1], "p", "secret-p"), _project(other_team_user[1], "q", "secret-q")
    first = github(client, p, "secret-p", pr_body("p"), "shared-id")
    second = github(client, q, "secret-q", pr_body("q"), "shared-id")
    assert (first.status_code, second.status_code) == (202, 202)
    q_run = Run.objects.get(project=q)
    assert second.json() == {"queued": True, "delivery": WebhookDelivery.objects.get(project=q).pk}
    assert q_run.pr_url.endswith("/q/pull/3")
    again = github(client, q, "secret-q", pr_body("q"), "shared-id")
    assert again.status_code == 200 and again.json()["run"] == q_run.pk


def test_a_gitlab_delivery_reusing_another_projects_uuid_is_its_own(
    client: Client, team_user: tuple[User, Team], other_team_user: tuple[User, Team]
) -> None:
    p, q = _project(team_user[1], "p", "token-p"), _project(other_team_user[1], "q", "token-q")
    assert gitlab(client, p, "token-p", mr_body("p"), "uuid-1").status_code == 202
    second = gitlab(client, q, "token-q", mr_body("q"), "uuid-1")
    assert second.status_code == 202 and "duplicate" not in second.json()
    assert Run.objects.filter(project=q).count() == 1 and WebhookDelivery.objects.count() == 2


@pytest.mark.parametrize("opening,closing", [("[", "]"), ('{"a":', "}")])
def test_a_signed_body_of_100000_nested_brackets_answers_400(
    client: Client, team_user: tuple[User, Team], opening: str, closing: str
) -> None:
    p = _project(team_user[1], "p", "secret-p")
    body = (opening * 100_000 + "1" + closing * 100_000).encode()
    response = github(client, p, "secret-p", body, "deep-1")
    assert response.status_code == 400 and "nests more than 64 levels" in response.json()["error"]
    response = gitlab(client, p, "secret-p", body, "deep-2")
    assert response.status_code == 400 and WebhookDelivery.objects.count() == 0


def test_brackets_inside_strings_do_not_count_as_nesting(client: Client, team_user: tuple[User, Team]) -> None:
    p = _project(team_user[1], "p", "secret-p")
    payload = json.loads(pr_body("p"))
    payload["pull_request"]["title"] = '[[[[ "quoted" \\' + "[" * 5000
    assert github(client, p, "secret-p", json.dumps(payload).encode(), "strings-1").status_code == 202


def test_an_oversized_body_is_refused_before_it_is_read(client: Client, team_user: tuple[User, Team]) -> None:
    p = _project(team_user[1], "p", "secret-p")
    body = b'{"pad": "' + b"x" * (6 * 1024 * 1024) + b'"}'
    response = github(client, p, "secret-p", body, "big-1")
    assert response.status_code == 413 and "over the limit" in response.json()["error"]
