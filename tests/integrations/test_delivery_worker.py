"""Deliveries are recorded by the endpoint and turned into exactly one run by a real worker."""
from __future__ import annotations

import json
import subprocess
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from migrator.accounts.models import Team
from migrator.integrations import actions as delivery_actions
from migrator.integrations.models import ProjectIntegration, WebhookDelivery
from migrator.integrations.verify import github_signature
from migrator.projects import actions
from migrator.projects.models import Run
from tests.conftest import wait_for

SHA = "89abcdef0123456789abcdef0123456789abcdef"


def _deliver(client: Client, project_pk: int, delivery: str, sha: str = SHA) -> int:
    payload = {"action": "opened", "pull_request": {"html_url": "https://github.com/a/b/pull/3", "head": {"sha": sha}}}
    body = json.dumps(payload).encode()
    response = client.post(f"/hooks/github/{project_pk}", body, content_type="application/json",
                           HTTP_X_GITHUB_EVENT="pull_request", HTTP_X_GITHUB_DELIVERY=delivery,
                           HTTP_X_HUB_SIGNATURE_256=github_signature("k", body))
    return response.status_code


@pytest.mark.real_broker
@pytest.mark.django_db(transaction=True)
@pytest.mark.worker_stages()
def test_a_real_worker_turns_each_delivery_into_one_run(
    celery_worker_process: subprocess.Popen[bytes], team_user: tuple[User, Team]
) -> None:
    project = actions.create_project(team_user[1], "hooked", user=None, git_url="https://github.com/a/b.git")
    ProjectIntegration.objects.create(project=project, webhook_secret="k")
    client = Client()
    commits = [f"{i:x}" * 40 for i in range(3)]  # three pushes to the pull request, each delivered twice
    statuses = [_deliver(client, project.pk, f"d-{i % 3}", commits[i % 3]) for i in range(6)]
    assert statuses == [202, 202, 202, 200, 200, 200]
    wait_for(lambda: WebhookDelivery.objects.filter(run__isnull=False).count() == 3, timeout=60)
    assert Run.objects.filter(project=project).count() == 3
    assert set(Run.objects.values_list("commit_sha", flat=True)) == set(commits)


@pytest.mark.real_broker
@pytest.mark.django_db
def test_the_sweep_requeues_a_delivery_whose_task_was_lost(
    team_user: tuple[User, Team], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = actions.create_project(team_user[1], "lost", user=None, git_url="https://github.com/a/b.git")
    delivery = WebhookDelivery.objects.create(provider="github", delivery_id="lost-1", project=project,
                                              event="push", head_sha=SHA)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(received_at=timezone.now() - timedelta(minutes=5))
    queued: list[int] = []
    monkeypatch.setattr(delivery_actions, "queue_delivery", queued.append)
    assert delivery_actions.requeue_stale_deliveries() == 1 and queued == [delivery.pk]
    assert delivery_actions.start_delivery_run(delivery.pk) is not None
    assert delivery_actions.start_delivery_run(delivery.pk) is None  # a second hand-off starts nothing
    assert Run.objects.filter(project=project).count() == 1
