"""GitHub webhooks: signatures, events, replayed and concurrent duplicate deliveries."""
from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from pytest_django import DjangoCaptureOnCommitCallbacks

from migrator.accounts.models import Team
from migrator.integrations.models import ProjectIntegration, WebhookDelivery
from migrator.integrations.verify import github_signature
from migrator.projects import actions
from migrator.projects.models import Project, Run

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse as TestResponse  # what Client's methods return

SECRET = "s3cret-hook"
SHA = "0123456789abcdef0123456789abcdef01234567"
PR_URL = "https://github.com/acme/demo/pull/12"


def pr_payload(action: str = "opened", sha: str = SHA) -> dict[str, object]:
    return {"action": action, "number": 12, "pull_request": {"html_url": PR_URL, "head": {"sha": sha, "ref": "feature"}}}


def post(client: Client, project: Project, event: str, payload: object, *, delivery: str | None = None,
         secret: str | None = SECRET, signature: str | None = None) -> TestResponse:
    body = json.dumps(payload).encode()
    headers = {"X-GitHub-Event": event, "X-GitHub-Delivery": delivery or str(uuid.uuid4())}
    if signature is not None or secret is not None:
        headers["X-Hub-Signature-256"] = signature or github_signature(secret or "", body)
    return client.post(f"/hooks/github/{project.pk}", body, content_type="application/json", headers=headers)


@pytest.fixture
def project(team_user: tuple[User, Team]) -> Project:
    project = actions.create_project(team_user[1], "demo", user=None, git_url="https://github.com/acme/demo.git")
    ProjectIntegration.objects.create(project=project, webhook_secret=SECRET)
    return project


@pytest.mark.django_db
def test_a_signed_pull_request_starts_one_run_at_the_head_commit(
    client: Client, project: Project, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    with django_capture_on_commit_callbacks() as callbacks:
        response = post(client, project, "pull_request", pr_payload(), delivery="d-1")
    assert response.status_code == 202
    run = Run.objects.get()
    assert (run.ref, run.commit_sha, run.pr_url, run.trigger) == (SHA, SHA, PR_URL, "webhook")
    delivery = WebhookDelivery.objects.get()
    assert response.json() == {"queued": True, "delivery": delivery.pk} and len(callbacks) == 1  # start_run
    assert delivery.run == run and delivery.processed_at is not None


@pytest.mark.django_db
@pytest.mark.parametrize("action", ["synchronize", "reopened"])
def test_new_commits_and_reopening_start_runs(client: Client, project: Project, action: str) -> None:
    assert post(client, project, "pull_request", pr_payload(action)).status_code == 202


@pytest.mark.django_db
def test_a_replayed_delivery_starts_nothing(client: Client, project: Project) -> None:
    first = post(client, project, "pull_request", pr_payload(), delivery="same-id")
    again = post(client, project, "pull_request", pr_payload(), delivery="same-id")
    assert (first.status_code, again.status_code) == (202, 200)
    run = Run.objects.get()
    assert again.json() == {"duplicate": True, "delivery": first.json()["delivery"], "run": run.pk}


@pytest.mark.django_db
@pytest.mark.parametrize("signature", ["sha256=" + "0" * 64, "sha1=abc", "garbage"])
def test_a_bad_signature_is_refused_without_side_effects(client: Client, project: Project, signature: str) -> None:
    response = post(client, project, "pull_request", pr_payload(), signature=signature)
    assert response.status_code == 401 and Run.objects.count() == 0 and WebhookDelivery.objects.count() == 0


@pytest.mark.django_db
def test_an_unsigned_delivery_or_a_wrong_secret_is_refused(client: Client, project: Project) -> None:
    assert post(client, project, "pull_request", pr_payload(), secret=None).status_code == 401
    assert post(client, project, "pull_request", pr_payload(), secret="other").status_code == 401
    assert Run.objects.count() == 0 and WebhookDelivery.objects.count() == 0


@pytest.mark.django_db
def test_a_signature_over_another_body_is_refused(client: Client, project: Project) -> None:
    forged = github_signature(SECRET, json.dumps(pr_payload(sha="f" * 40)).encode())
    assert post(client, project, "pull_request", pr_payload(), signature=forged).status_code == 401


@pytest.mark.django_db
def test_ping_answers_200(client: Client, project: Project) -> None:
    response = post(client, project, "ping", {"zen": "Keep it logically awesome."})
    assert response.status_code == 200 and Run.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("event,payload", [
    ("issues", {"action": "opened"}),
    ("pull_request", {"action": "opened", "pull_request": {"html_url": PR_URL, "head": {"sha": "nope"}}}),
    ("pull_request", {"action": "opened"}),
    ("push", {"after": "not-a-sha"}),
    ("push", ["not", "an", "object"]),
])
def test_unknown_or_malformed_payloads_get_400_without_side_effects(
    client: Client, project: Project, event: str, payload: object
) -> None:
    assert post(client, project, event, payload).status_code == 400
    assert Run.objects.count() == 0 and WebhookDelivery.objects.count() == 0


@pytest.mark.django_db
def test_a_closed_pull_request_is_acknowledged_without_a_run(client: Client, project: Project) -> None:
    assert post(client, project, "pull_request", pr_payload("closed")).status_code == 202
    assert Run.objects.count() == 0 and WebhookDelivery.objects.count() == 0


@pytest.mark.django_db
def test_a_push_starts_a_run_at_the_pushed_commit(client: Client, project: Project) -> None:
    assert post(client, project, "push", {"ref": "refs/heads/main", "after": SHA}).status_code == 202
    run = Run.objects.get()
    assert run.ref == SHA and run.pr_url == ""
    assert post(client, project, "push", {"ref": "refs/heads/gone", "after": "0" * 40, "deleted": True}).status_code == 202


@pytest.mark.django_db
def test_unknown_projects_and_projects_without_integration_get_404(
    client: Client, project: Project, team_user: tuple[User, Team]
) -> None:
    other = actions.create_project(team_user[1], "other", user=None, git_url="https://github.com/acme/other.git")
    assert post(client, other, "pull_request", pr_payload()).status_code == 404
    missing = Project(pk=999_999)
    assert post(client, missing, "pull_request", pr_payload()).status_code == 404
    assert client.get(f"/hooks/github/{project.pk}").status_code == 405


@pytest.mark.django_db
def test_an_archive_project_refuses_webhook_runs(client: Client, team_user: tuple[User, Team]) -> None:
    project = actions.create_project(team_user[1], "upload", user=None)
    ProjectIntegration.objects.create(project=project, webhook_secret=SECRET)
    assert post(client, project, "pull_request", pr_payload()).status_code == 409
    assert WebhookDelivery.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_concurrent_duplicate_deliveries_start_one_run(project: Project, only_stages: Callable[..., None]) -> None:
    only_stages()  # start_run then records every stage as not available: nothing goes to the broker
    statuses: list[int] = []
    barrier = threading.Barrier(6)

    def deliver() -> None:
        try:
            barrier.wait()
            statuses.append(post(Client(), project, "pull_request", pr_payload(), delivery="race").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=deliver) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [200] * 5 + [202]
    assert Run.objects.count() == 1 and WebhookDelivery.objects.count() == 1
