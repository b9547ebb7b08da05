"""A real Redis restarted (without persistence) under a running pipeline, and runs started while
it is down: no run may stay stuck, and every run moves on within two sweep intervals."""
from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.pipeline.broker import BrokerUnavailable, pending_task_ids
from migrator.pipeline.dispatch import dispatch_recorded_run, start_run
from migrator.projects import actions
from migrator.projects.constants import FINAL_RUN_STATES, FINAL_STAGE_STATES, RunState, StageState
from migrator.projects.models import Project, Run, Stage
from tests.brokerhost import RedisServer
from tests.conftest import make_tar_gz, wait_for
from tests.faults.conftest import SWEEP_S

pytestmark = pytest.mark.django_db(transaction=True)


def _archive_project(team: Team, name: str) -> Project:
    project = actions.create_project(team, name, user=None)
    files = {f"src/k{i}.cu": f"__global__ void k{i}(float* x) {{ x[threadIdx.x] += {i}; }}\n" for i in range(40)}
    actions.store_archive(project, SimpleUploadedFile("p.tgz", make_tar_gz(files)), "p.tgz", None)
    return project


def _stuck_stages() -> list[Stage]:
    """Each active run's next queued stage whose message the broker does not hold."""
    waiting = []
    for run in Run.objects.exclude(state__in=FINAL_RUN_STATES):
        stage = run.stages.exclude(state__in=FINAL_STAGE_STATES).order_by("position").first()
        if stage is not None and stage.state == StageState.QUEUED:
            waiting.append(stage)
    try:
        pending = pending_task_ids({s.queue for s in waiting})
    except BrokerUnavailable:
        return waiting
    return [s for s in waiting if s.task_id not in pending]


def _all_final(runs: list[Run]) -> bool:
    # Only fetch and scan run here: nothing fails, the rest is not checked, so each run ends partial.
    return Run.objects.filter(pk__in=[r.pk for r in runs], state=RunState.PARTIAL).count() == len(runs)


def test_runs_whose_messages_a_restart_lost_move_on_within_two_sweeps(
    fault_worker: Callable[..., subprocess.Popen[bytes]], own_broker: RedisServer, team_user: tuple[User, Team]
) -> None:
    fault_worker("restart", beat=True)
    runs = []
    for i in range(6):
        run = actions.create_run(_archive_project(team_user[1], f"restart-{i}"), user=None)
        start_run(run)  # published at once (no transaction open)
        runs.append(run)
    wait_for(lambda: Stage.objects.filter(state__in=(StageState.RUNNING, StageState.PASSED)).exists(), timeout=30)
    assert not _all_final(runs)  # work was still queued when the broker went away

    own_broker.restart()
    restarted = time.monotonic()
    lost = _stuck_stages()
    assert lost, "the restart should have lost queued messages"
    wait_for(lambda: not _stuck_stages(), timeout=2 * SWEEP_S + 10, interval=0.1)
    moved_on_s = time.monotonic() - restarted
    wait_for(lambda: _all_final(runs), timeout=120)
    assert moved_on_s <= 2 * SWEEP_S + 3, moved_on_s  # two sweeps, plus the worker's reconnect
    for run in runs:
        run.refresh_from_db()
        assert run.state == RunState.PARTIAL
        assert [s.state for s in run.stages.filter(name__in=("fetch", "scan"))] == [StageState.PASSED] * 2


def test_a_run_recorded_while_the_broker_is_down_starts_when_it_returns(
    fault_worker: Callable[..., subprocess.Popen[bytes]], own_broker: RedisServer, team_user: tuple[User, Team]
) -> None:
    fault_worker("outage", beat=True)
    own_broker.kill()
    run = actions.create_run(_archive_project(team_user[1], "outage"), user=None)
    assert dispatch_recorded_run(run.pk) is False  # recorded, the publish failed, nothing raised
    fetch = run.stages.get(name="fetch")
    assert fetch.state == StageState.QUEUED and fetch.task_id
    time.sleep(SWEEP_S)
    own_broker.start()
    run = wait_for(lambda: Run.objects.filter(pk=run.pk, state=RunState.PARTIAL).first(), timeout=60)
    assert run.stages.get(name="fetch").task_id == fetch.task_id  # the same message, sent again


def test_starting_a_run_while_the_broker_is_down_answers_503_and_records_nothing(
    own_broker: RedisServer,
    fault_stages: Settings,
    alice_client: Client,
    team_user: tuple[User, Team],
    cuda_archive: bytes,
) -> None:
    from migrator.api.models import create_token

    project = _archive_project(team_user[1], "down")
    finished = actions.create_run(project, user=None)
    finished.stages.update(state=StageState.PASSED)
    Run.objects.filter(pk=finished.pk).update(state=RunState.PASSED)
    own_broker.kill()
    upload = SimpleUploadedFile("c.tgz", cuda_archive)
    page = alice_client.post("/projects/new", {"name": "fresh", "team": team_user[1].pk, "archive": upload})
    assert page.status_code == 503 and int(page["Retry-After"]) > 0
    assert "cannot be reached" in page.content.decode()
    rerun = alice_client.post(f"/projects/{project.pk}/runs/new", {"ref": ""})
    assert rerun.status_code == 503 and rerun["Retry-After"]
    token = create_token(team_user[1], "ci")[1]
    api = alice_client.post(f"/api/v1/projects/{project.pk}/runs", {}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert api.status_code == 503 and api["Retry-After"] and "cannot be reached" in api.json()["detail"]
    rerun_page = alice_client.post(f"/runs/{finished.pk}/rerun", {"from_stage": "fetch"})
    assert rerun_page.status_code == 503 and rerun_page["Retry-After"] and "Nothing was started" in rerun_page.content.decode()
    assert list(Run.objects.values_list("pk", flat=True)) == [finished.pk]
    assert not project.team.projects.filter(name="fresh").exists()
    own_broker.start()
    again = alice_client.post(f"/api/v1/projects/{project.pk}/runs", {}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert again.status_code == 201 and Run.objects.count() == 2


def test_a_webhook_while_the_broker_is_down_is_recorded_answered_503_and_run_later(
    fault_worker: Callable[..., subprocess.Popen[bytes]],
    own_broker: RedisServer,
    team_user: tuple[User, Team],
    client: Client,
) -> None:
    import json
    from datetime import timedelta

    from django.utils import timezone

    from migrator.integrations.actions import requeue_stale_deliveries
    from migrator.integrations.models import ProjectIntegration, WebhookDelivery
    from migrator.integrations.verify import github_signature

    fault_worker("hooks", beat=False)
    project = actions.create_project(team_user[1], "hooked", user=None, git_url="https://github.com/acme/demo.git")
    ProjectIntegration.objects.create(project=project, webhook_secret="s3cret")
    body = json.dumps({"action": "opened", "number": 1, "pull_request": {
        "html_url": "https://github.com/acme/demo/pull/1", "head": {"sha": "ab" * 20, "ref": "f"}}}).encode()
    headers = {"X-GitHub-Event": "pull_request", "X-GitHub-Delivery": "outage-1",
               "X-Hub-Signature-256": github_signature("s3cret", body)}
    own_broker.kill()
    down = client.post(f"/hooks/github/{project.pk}", body, content_type="application/json", headers=headers)
    assert down.status_code == 503 and int(down["Retry-After"]) > 0
    assert WebhookDelivery.objects.filter(run__isnull=True).count() == 1 and not Run.objects.exists()
    # The host redelivers the same delivery: recorded once, never a second run.
    again = client.post(f"/hooks/github/{project.pk}", body, content_type="application/json", headers=headers)
    assert again.status_code == 200 and again.json()["duplicate"] is True
    own_broker.start()
    requeue_stale_deliveries(now=timezone.now() + timedelta(minutes=5))  # what the integrations app's periodic task does a minute later
    run = wait_for(lambda: Run.objects.filter(project=project).first(), timeout=60)
    assert run.commit_sha == "ab" * 20 and Run.objects.count() == 1
