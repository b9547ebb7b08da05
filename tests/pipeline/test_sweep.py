"""The periodic sweep: stages whose worker died are failed and their tasks revoked, in bounded batches;
a smoke stage no runner takes times out; and, on a broker of the test's own, a queued stage whose message is
gone is published again under its task id, while one still in the broker, a command-line run, a
cancelled run or a stage queued only a moment ago is left alone."""
from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import redis
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.pipeline import sweep
from migrator.pipeline.broker import pending_task_ids
from migrator.projects import actions, transitions
from migrator.projects.constants import RunState, StageState, Trigger
from migrator.projects.models import Project, Run, Stage
from migrator.projects.signals import run_finished
from tests.brokerhost import RedisServer
from tests.conftest import make_tar_gz

pytestmark = pytest.mark.django_db


def _run(project: Project) -> Run:
    return actions.create_run(project, user=None)


def _stage(run: Run, name: str) -> Stage:
    return run.stages.get(name=name)


def _dead_fetch(project: Project, task_id: str) -> Stage:
    """A run whose fetch stage was taken by a worker that died an hour ago."""
    run = actions.create_run(project, user=None)
    fetch = run.stages.get(name="fetch")
    transitions.mark_enqueued(fetch, task_id, "cpu")
    transitions.claim_stage(fetch.pk, "dead-worker")
    Stage.objects.filter(pk=fetch.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    return fetch


def _nothing(stage: Stage, queue: str) -> None:
    return None


def test_the_sweep_fails_stages_whose_worker_died(archive_project: Project) -> None:
    run = _run(archive_project)
    fetch = _stage(run, "fetch")
    transitions.claim_stage(fetch.pk, "dead-worker")
    Stage.objects.filter(pk=fetch.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    dispatched: list[str] = []
    sweep.sweep(lambda stage, queue: dispatched.append(stage.name))
    fetch.refresh_from_db()
    run.refresh_from_db()
    assert fetch.state == StageState.FAILED and fetch.summary.startswith("worker lost")
    assert run.state == RunState.FAILED and dispatched == []


def test_the_sweep_leaves_live_stages_alone(archive_project: Project) -> None:
    run = _run(archive_project)
    fetch = _stage(run, "fetch")
    transitions.claim_stage(fetch.pk, "live-worker")
    sweep.sweep(lambda stage, queue: None)
    fetch.refresh_from_db()
    assert fetch.state == StageState.RUNNING


def test_it_revokes_the_tasks_of_the_stages_it_fails(archive_project: Project) -> None:
    _dead_fetch(archive_project, "task-a")
    _dead_fetch(archive_project, "task-b")
    revoked: list[list[str]] = []
    sweep.sweep(_nothing, revoke=revoked.append)
    assert [sorted(ids) for ids in revoked] == [["task-a", "task-b"]]


def test_it_takes_at_most_a_batch_a_pass_and_the_rest_on_the_next(
    archive_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sweep, "SWEEP_BATCH", 2)
    stages = [_dead_fetch(archive_project, f"task-{n}") for n in range(3)]
    assert len(sweep.sweep(_nothing)) == 2
    assert Stage.objects.filter(pk__in=[s.pk for s in stages], state=StageState.RUNNING).count() == 1
    assert len(sweep.sweep(_nothing)) == 1
    assert not Stage.objects.filter(pk__in=[s.pk for s in stages], state=StageState.RUNNING).exists()


def test_a_stage_that_cannot_be_handled_is_logged_and_the_others_still_are(
    archive_project: Project, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    broken, fine = _dead_fetch(archive_project, "task-broken"), _dead_fetch(archive_project, "task-fine")
    real = transitions.fail_stale_stage

    def fail_stale_stage(stage: Stage) -> Stage | None:
        if stage.pk == broken.pk:
            raise RuntimeError("a row the sweep cannot handle")
        return real(stage)

    monkeypatch.setattr(transitions, "fail_stale_stage", fail_stale_stage)
    changed = sweep.sweep(_nothing)
    assert [s.pk for s in changed] == [fine.pk]
    broken.refresh_from_db()
    assert broken.state == StageState.RUNNING  # left for the next pass
    assert "could not be handled" in caplog.text


def test_it_announces_the_runs_it_ends(archive_project: Project) -> None:
    fetch = _dead_fetch(archive_project, "task-x")
    ended: list[Run] = []

    def on_finished(sender: Any, run: Run, **_: Any) -> None:
        ended.append(run)

    run_finished.connect(on_finished, dispatch_uid="test-sweep-announces")
    try:
        sweep.sweep(_nothing)
    finally:
        run_finished.disconnect(dispatch_uid="test-sweep-announces")
    assert [(r.pk, r.state) for r in ended] == [(fetch.run_id, RunState.FAILED)]


def test_a_smoke_stage_waiting_for_a_rocm_runner_times_out(archive_project: Project, alice_client: Client) -> None:
    archive_project.settings = {"smoke_command": "./app", "smoke_wait_timeout_s": 60}
    archive_project.save()
    run = _run(archive_project)
    for stage in run.stages.exclude(name="smoke"):
        transitions.claim_stage(stage.pk, "w")
        transitions.finish_stage(stage.pk, StageState.PASSED, "ok")
    smoke = _stage(run, "smoke")
    transitions.mark_enqueued(smoke, "task-1", "rocm.gfx90a")  # routed to runners owning a gfx90a
    sweep.sweep(lambda stage, queue: None)
    assert _stage(run, "smoke").state == StageState.QUEUED  # not yet past the limit
    page = alice_client.get(f"/runs/{run.pk}/?stage=smoke").content.decode()
    assert "waiting for a ROCm runner" in page
    Stage.objects.filter(pk=smoke.pk).update(queued_at=timezone.now() - timedelta(seconds=61))
    sweep.sweep(lambda stage, queue: None)
    smoke.refresh_from_db()
    run.refresh_from_db()
    assert smoke.state == StageState.SKIPPED and smoke.data == {"no_runner": True, "wait_limit_s": 60}
    assert smoke.summary == "not run: no ROCm runner within 1 min"
    assert run.state == RunState.PARTIAL


# Lost messages: the sweep's re-send rules, on a broker of the test's own.


@pytest.fixture
def empty_broker(own_broker: RedisServer) -> RedisServer:
    """A broker of the test's own: what the suite's test broker holds depends on every other test."""
    return own_broker


def _web_run(team: Team, name: str, trigger: str = Trigger.WEB) -> Run:
    project = actions.create_project(team, name, user=None)
    actions.store_archive(project, SimpleUploadedFile("c.tgz", make_tar_gz({"a.cu": "int x;\n"})), "c.tgz", None)
    return actions.create_run(project, user=None, trigger=trigger)


def _enqueued_long_ago(run: Run, task_id: str) -> Stage:
    fetch = run.stages.get(name="fetch")
    transitions.mark_enqueued(fetch, task_id, "cpu")
    Stage.objects.filter(pk=fetch.pk).update(queued_at=timezone.now() - timedelta(minutes=5))
    return Stage.objects.get(pk=fetch.pk)


def _sweep() -> tuple[list[int], list[str]]:
    republished: list[int] = []
    dispatched: list[str] = []
    sweep.sweep(lambda stage, queue: dispatched.append(stage.name), lambda stage: republished.append(stage.pk))
    return republished, dispatched


def test_a_stage_whose_message_is_gone_is_published_again(
    team_user: tuple[User, Team], empty_broker: RedisServer
) -> None:
    lost = _enqueued_long_ago(_web_run(team_user[1], "lost"), "task-lost")
    assert _sweep() == ([lost.pk], [])


def test_a_stage_whose_message_is_still_waiting_is_left_alone(
    team_user: tuple[User, Team], empty_broker: RedisServer
) -> None:
    from migrator.pipeline.dispatch import republish_stage

    waiting = _enqueued_long_ago(_web_run(team_user[1], "waiting"), "task-waiting")
    republish_stage(waiting)  # really in the broker's cpu list now
    assert "task-waiting" in pending_task_ids({"cpu"})
    assert _sweep() == ([], [])


def test_runs_never_handed_out_are_dispatched_after_the_grace_period(
    team_user: tuple[User, Team], empty_broker: RedisServer, settings: Settings
) -> None:
    run = _web_run(team_user[1], "never")
    assert _sweep() == ([], [])  # just created: its own on_commit publish may still be on its way
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(seconds=settings.MIGRATOR_REPUBLISH_GRACE_S + 1))
    assert _sweep() == ([], ["fetch"])


def test_command_line_and_cancelled_runs_are_not_touched(
    team_user: tuple[User, Team], empty_broker: RedisServer
) -> None:
    cli = _web_run(team_user[1], "cli", trigger=Trigger.CLI)  # run in its own process, stage by stage
    Run.objects.filter(pk=cli.pk).update(created_at=timezone.now() - timedelta(hours=1))
    cancelled = _web_run(team_user[1], "cancelled")
    _enqueued_long_ago(cancelled, "task-cancelled")
    Run.objects.filter(pk=cancelled.pk).update(cancel_requested=True)
    assert _sweep() == ([], [])


def test_only_the_next_stage_of_a_run_is_considered(team_user: tuple[User, Team], empty_broker: RedisServer) -> None:
    run = _web_run(team_user[1], "next")
    fetch = run.stages.get(name="fetch")
    transitions.claim_stage(fetch.pk, "w")  # running: its message was taken, nothing to re-send
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(hours=1))
    assert _sweep() == ([], [])


BrokerKeys = tuple[redis.Redis, str, str]  # kombu's Redis client, its unacked hash and its unacked index


@pytest.fixture
def broker_client(empty_broker: RedisServer) -> Iterator[BrokerKeys]:
    """The test broker's Redis client and kombu's key names, to place messages as a worker holds them."""
    from migrator.celery import app

    with app.connection_for_write() as conn:
        channel = conn.default_channel
        yield channel.client, channel.unacked_key, channel.unacked_index_key
        channel.client.delete(channel.unacked_key, channel.unacked_index_key)


def _held_by_a_worker(broker_client: BrokerKeys, task_id: str, taken_s_ago: float) -> None:
    import json
    import time

    client, unacked, index = broker_client
    tag = f"tag-{task_id}"
    client.hset(unacked, tag, json.dumps([{"headers": {"id": task_id}, "body": ""}, "", "cpu"]))
    client.zadd(index, {tag: time.time() - taken_s_ago})


def test_a_message_a_worker_took_a_moment_ago_is_left_to_it(
    team_user: tuple[User, Team], empty_broker: RedisServer, broker_client: BrokerKeys
) -> None:
    _enqueued_long_ago(_web_run(team_user[1], "taken"), "task-taken")
    _held_by_a_worker(broker_client, "task-taken", taken_s_ago=2)
    assert _sweep() == ([], [])


def test_a_message_held_unclaimed_for_long_belonged_to_a_dead_worker_and_is_sent_again(
    team_user: tuple[User, Team], empty_broker: RedisServer, broker_client: BrokerKeys
) -> None:
    held = _enqueued_long_ago(_web_run(team_user[1], "held"), "task-held")
    _held_by_a_worker(broker_client, "task-held", taken_s_ago=600)  # Redis would return it after 75 min
    assert _sweep() == ([held.pk], [])
