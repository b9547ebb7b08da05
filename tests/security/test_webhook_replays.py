"""A signed webhook body replayed under fresh delivery ids starts one run, and a project's webhooks start a
bounded number of runs per hour: the rest answer 200, start nothing and are recorded with the reason."""
from __future__ import annotations

import json
import threading
import uuid
from datetime import timedelta
from typing import TYPE_CHECKING

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.utils import timezone
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.integrations import actions as delivery_actions
from migrator.integrations.models import ProjectIntegration, Skipped, WebhookDelivery
from migrator.integrations.verify import github_signature
from migrator.projects import actions
from migrator.projects.models import Project, Run

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse as TestResponse  # what Client's methods return

SECRET = "replayed-secret"
SHA = "4" * 40
PR_URL = "https://github.com/acme/demo/pull/7"


@pytest.fixture(autouse=True)
def deliveries_processed_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    def inline(pk: int) -> bool:
        delivery_actions.start_delivery_run(pk)
        return True

    monkeypatch.setattr(delivery_actions, "queue_delivery", inline)


@pytest.fixture
def project(team_user: tuple[User, Team]) -> Project:
    project = actions.create_project(team_user[1], "hooked", user=None, git_url="https://github.com/acme/demo.git")
    ProjectIntegration.objects.create(project=project, webhook_secret=SECRET, gitlab_token="gl-token")
    return project


def signed_pr(sha: str = SHA, pr_url: str = PR_URL) -> bytes:
    return json.dumps({"action": "synchronize", "pull_request": {"html_url": pr_url, "head": {"sha": sha}}}).encode()


def deliver(client: Client, project: Project, body: bytes, event: str = "pull_request",
            delivery: str | None = None) -> TestResponse:
    return client.post(f"/hooks/github/{project.pk}", body, content_type="application/json", headers={
        "X-GitHub-Event": event, "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "X-Hub-Signature-256": github_signature(SECRET, body)})


@pytest.mark.django_db
def test_one_signed_body_replayed_under_fresh_ids_starts_one_run(client: Client, project: Project) -> None:
    body = signed_pr()
    answers = [deliver(client, project, body) for _ in range(5)]
    assert [a.status_code for a in answers] == [202, 200, 200, 200, 200]
    assert Run.objects.count() == 1
    first = WebhookDelivery.objects.get(skipped=Skipped.NO)
    for answer in answers[1:]:
        assert answer.json()["skipped"] == "duplicate"
        assert answer.json()["reason"].startswith(
            f"the same pull_request of {SHA[:12]} for {PR_URL} as delivery {first.delivery_id} received at ")
    skipped = WebhookDelivery.objects.filter(skipped=Skipped.DUPLICATE)
    assert skipped.count() == 4 and all(d.run is None and d.processed_at and d.skip_reason for d in skipped)


@pytest.mark.django_db(transaction=True)
def test_concurrent_replays_under_fresh_ids_start_one_run(project: Project) -> None:
    body, statuses, barrier = signed_pr(), [], threading.Barrier(6)

    def replay() -> None:
        try:
            barrier.wait(timeout=30)
            statuses.append(deliver(Client(), project, body).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=replay) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(statuses) == [200] * 5 + [202]
    assert Run.objects.count() == 1 and WebhookDelivery.objects.filter(skipped=Skipped.DUPLICATE).count() == 5


@pytest.mark.django_db
def test_gitlab_replays_under_fresh_uuids_start_one_run(client: Client, project: Project) -> None:
    body = json.dumps({"checkout_sha": SHA, "ref": "refs/heads/main"}).encode()
    statuses = [client.post(f"/hooks/gitlab/{project.pk}", body, content_type="application/json", headers={
        "X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": "gl-token", "X-Gitlab-Event-UUID": str(uuid.uuid4()),
    }).status_code for _ in range(3)]
    assert statuses == [202, 200, 200] and Run.objects.count() == 1


@pytest.mark.django_db
def test_other_changes_still_start_their_runs(client: Client, project: Project) -> None:
    assert deliver(client, project, signed_pr()).status_code == 202
    assert deliver(client, project, signed_pr(sha="5" * 40)).status_code == 202  # a new commit
    assert deliver(client, project, signed_pr(pr_url=PR_URL.replace("/7", "/8"))).status_code == 202  # another PR
    assert deliver(client, project, json.dumps({"after": SHA}).encode(), event="push").status_code == 202
    assert Run.objects.count() == 4


@pytest.mark.django_db
def test_the_same_change_after_the_window_starts_a_run_again(
    client: Client, project: Project, settings: Settings
) -> None:
    settings.MIGRATOR_WEBHOOK_DEDUP_WINDOW_S = 600
    assert deliver(client, project, signed_pr()).status_code == 202
    WebhookDelivery.objects.update(received_at=timezone.now() - timedelta(seconds=601))
    assert deliver(client, project, signed_pr()).status_code == 202
    assert Run.objects.count() == 2


@pytest.mark.django_db
def test_a_delivery_whose_run_could_not_be_made_does_not_count(client: Client, project: Project) -> None:
    assert deliver(client, project, signed_pr()).status_code == 202
    WebhookDelivery.objects.update(error="the project was being deleted")
    assert deliver(client, project, signed_pr()).status_code == 202


@pytest.mark.django_db
def test_webhook_runs_per_project_and_hour_are_bounded(
    client: Client, project: Project, settings: Settings, team_user: tuple[User, Team]
) -> None:
    settings.MIGRATOR_WEBHOOK_RUNS_PER_HOUR = 3
    answers = [deliver(client, project, signed_pr(sha=f"{i}" * 40)) for i in range(1, 5)]
    assert [a.status_code for a in answers] == [202, 202, 202, 200]
    assert answers[-1].json()["skipped"] == "rate_limited"
    assert answers[-1].json()["reason"] == "this project's webhooks started 3 runs within the last hour (the limit)"
    assert Run.objects.count() == 3
    other = actions.create_project(team_user[1], "other", user=None, git_url="https://github.com/acme/other.git")
    ProjectIntegration.objects.create(project=other, webhook_secret=SECRET)
    assert deliver(client, other, signed_pr(sha="9" * 40)).status_code == 202  # the bound is per project
    WebhookDelivery.objects.filter(project=project).update(received_at=timezone.now() - timedelta(minutes=61))
    assert deliver(client, project, signed_pr(sha="8" * 40)).status_code == 202


@pytest.mark.django_db
def test_a_skipped_delivery_is_never_handed_to_a_worker(client: Client, project: Project) -> None:
    deliver(client, project, signed_pr())
    deliver(client, project, signed_pr())
    WebhookDelivery.objects.update(received_at=timezone.now() - timedelta(minutes=5))
    assert delivery_actions.requeue_stale_deliveries() == 0
    skipped = WebhookDelivery.objects.get(skipped=Skipped.DUPLICATE)
    assert delivery_actions.start_delivery_run(skipped.pk) is None and Run.objects.count() == 1
