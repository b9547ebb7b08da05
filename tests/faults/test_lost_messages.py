"""The sweep's re-send rules, on the test broker: a queued stage whose message is gone is
published again under its task id; one still in the broker, a command-line run, a cancelled run
or a stage queued only a moment ago is left alone."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from migrator.pipeline import sweep
from migrator.pipeline.broker import pending_task_ids
from migrator.projects import actions, transitions
from migrator.projects.constants import Trigger
from migrator.projects.models import Run, Stage
from tests.conftest import make_tar_gz

pytestmark = pytest.mark.django_db


@pytest.fixture
def empty_broker():  # type: ignore[no-untyped-def]
    from migrator.celery import app

    app.control.purge()
    yield
    app.control.purge()


def _run(team, name: str, trigger: str = Trigger.WEB) -> Run:  # type: ignore[no-untyped-def]
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


def test_a_stage_whose_message_is_gone_is_published_again(team_user, empty_broker) -> None:  # type: ignore[no-untyped-def]
    lost = _enqueued_long_ago(_run(team_user[1], "lost"), "task-lost")
    assert _sweep() == ([lost.pk], [])


def test_a_stage_whose_message_is_still_waiting_is_left_alone(team_user, empty_broker) -> None:  # type: ignore[no-untyped-def]
    from migrator.pipeline.dispatch import republish_stage

    waiting = _enqueued_long_ago(_run(team_user[1], "waiting"), "task-waiting")
    republish_stage(waiting)  # really in the broker's cpu list now
    assert "task-waiting" in pending_task_ids({"cpu"})
    assert _sweep() == ([], [])


def test_runs_never_handed_out_are_dispatched_after_the_grace_period(team_user, empty_broker, settings) -> None:  # type: ignore[no-untyped-def]
    run = _run(team_user[1], "never")
    assert _sweep() == ([], [])  # just created: its own on_commit publish may still be on its way
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(seconds=settings.MIGRATOR_REPUBLISH_GRACE_S + 1))
    assert _sweep() == ([], ["fetch"])


def test_command_line_and_cancelled_runs_are_not_touched(team_user, empty_broker) -> None:  # type: ignore[no-untyped-def]
    cli = _run(team_user[1], "cli", trigger=Trigger.CLI)  # run in its own process, stage by stage
    Run.objects.filter(pk=cli.pk).update(created_at=timezone.now() - timedelta(hours=1))
    cancelled = _run(team_user[1], "cancelled")
    _enqueued_long_ago(cancelled, "task-cancelled")
    Run.objects.filter(pk=cancelled.pk).update(cancel_requested=True)
    assert _sweep() == ([], [])


def test_only_the_next_stage_of_a_run_is_considered(team_user, empty_broker) -> None:  # type: ignore[no-untyped-def]
    run = _run(team_user[1], "next")
    fetch = run.stages.get(name="fetch")
    transitions.claim_stage(fetch.pk, "w")  # running: its message was taken, nothing to re-send
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(hours=1))
    assert _sweep() == ([], [])


@pytest.fixture
def broker_client():  # type: ignore[no-untyped-def]
    """The test broker's Redis client and kombu's key names, to place messages as a worker holds them."""
    from migrator.celery import app

    with app.connection_for_write() as conn:
        channel = conn.default_channel
        yield channel.client, channel.unacked_key, channel.unacked_index_key
        channel.client.delete(channel.unacked_key, channel.unacked_index_key)


def _held_by_a_worker(broker_client, task_id: str, taken_s_ago: float) -> None:  # type: ignore[no-untyped-def]
    import json
    import time

    client, unacked, index = broker_client
    tag = f"tag-{task_id}"
    client.hset(unacked, tag, json.dumps([{"headers": {"id": task_id}, "body": ""}, "", "cpu"]))
    client.zadd(index, {tag: time.time() - taken_s_ago})


def test_a_message_a_worker_took_a_moment_ago_is_left_to_it(team_user, empty_broker, broker_client) -> None:  # type: ignore[no-untyped-def]
    _enqueued_long_ago(_run(team_user[1], "taken"), "task-taken")
    _held_by_a_worker(broker_client, "task-taken", taken_s_ago=2)
    assert _sweep() == ([], [])


def test_a_message_held_unclaimed_for_long_belonged_to_a_dead_worker_and_is_sent_again(team_user, empty_broker, broker_client) -> None:  # type: ignore[no-untyped-def]
    held = _enqueued_long_ago(_run(team_user[1], "held"), "task-held")
    _held_by_a_worker(broker_client, "task-held", taken_s_ago=600)  # Redis would return it after 75 min
    assert _sweep() == ([held.pk], [])
