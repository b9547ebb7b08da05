"""GitLab webhooks: the shared token, merge request and push hooks, deduplication."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from django.contrib.auth.models import User
from django.test import Client

from migrator.accounts.models import Team
from migrator.integrations.models import ProjectIntegration, WebhookDelivery
from migrator.projects import actions
from migrator.projects.models import Project, Run

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse as TestResponse  # what Client's methods return

pytestmark = pytest.mark.django_db
TOKEN = "gl-token-1"
SHA = "89abcdef0123456789abcdef0123456789abcdef"
MR_URL = "https://gitlab.example.com/group/demo/-/merge_requests/4"


def mr_payload(action: str = "open", **extra: object) -> dict[str, object]:
    attributes = {"action": action, "url": MR_URL, "iid": 4, "last_commit": {"id": SHA}, **extra}
    return {"object_kind": "merge_request", "object_attributes": attributes}


def post(client: Client, project: Project, event: str, payload: object, *, token: str | None = TOKEN,
         uuid: str | None = None) -> TestResponse:
    headers = {"X-Gitlab-Event": event}
    if token is not None:
        headers["X-Gitlab-Token"] = token
    if uuid is not None:
        headers["X-Gitlab-Event-UUID"] = uuid
    return client.post(f"/hooks/gitlab/{project.pk}", json.dumps(payload), content_type="application/json", headers=headers)


@pytest.fixture
def project(team_user: tuple[User, Team]) -> Project:
    project = actions.create_project(team_user[1], "demo", user=None, git_url="https://gitlab.example.com/group/demo.git")
    ProjectIntegration.objects.create(project=project, gitlab_token=TOKEN, host_kind="gitlab")
    return project


def test_an_opened_merge_request_starts_a_run(client: Client, project: Project) -> None:
    response = post(client, project, "Merge Request Hook", mr_payload(), uuid="u-1")
    assert response.status_code == 202
    run = Run.objects.get()
    assert (run.ref, run.pr_url, run.trigger) == (SHA, MR_URL, "webhook")


@pytest.mark.parametrize("token", [None, "", "wrong", TOKEN + "x"])
def test_a_missing_or_wrong_token_is_refused(client: Client, project: Project, token: str | None) -> None:
    assert post(client, project, "Merge Request Hook", mr_payload(), token=token).status_code == 401
    assert Run.objects.count() == 0 and WebhookDelivery.objects.count() == 0


def test_the_event_uuid_deduplicates(client: Client, project: Project) -> None:
    assert post(client, project, "Merge Request Hook", mr_payload(), uuid="u-2").status_code == 202
    assert post(client, project, "Merge Request Hook", mr_payload(), uuid="u-2").status_code == 200
    # A fresh uuid for the same change starts nothing either (tests/security/test_webhook_replays.py).
    assert post(client, project, "Merge Request Hook", mr_payload(), uuid="u-3").json()["skipped"] == "duplicate"
    newer = mr_payload("update", oldrev=SHA, last_commit={"id": "f" * 40})
    assert post(client, project, "Merge Request Hook", newer, uuid="u-4").status_code == 202
    assert Run.objects.count() == 2


def test_without_a_uuid_an_identical_body_is_a_replay(client: Client, project: Project) -> None:
    assert post(client, project, "Push Hook", {"checkout_sha": SHA, "ref": "refs/heads/main"}).status_code == 202
    assert post(client, project, "Push Hook", {"checkout_sha": SHA, "ref": "refs/heads/main"}).status_code == 200
    assert Run.objects.count() == 1 and Run.objects.get().pr_url == ""


def test_an_update_without_new_commits_needs_no_run(client: Client, project: Project) -> None:
    assert post(client, project, "Merge Request Hook", mr_payload("update")).status_code == 202
    assert post(client, project, "Merge Request Hook", mr_payload("update", oldrev="1" * 40)).status_code == 202
    assert post(client, project, "Merge Request Hook", mr_payload("merge")).status_code == 202
    assert Run.objects.count() == 1


def test_unknown_events_get_400(client: Client, project: Project) -> None:
    assert post(client, project, "Issue Hook", {"object_kind": "issue"}).status_code == 400
    assert post(client, project, "Merge Request Hook", {"object_attributes": "nope"}).status_code == 400
    assert Run.objects.count() == 0 and WebhookDelivery.objects.count() == 0
