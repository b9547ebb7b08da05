"""A worker and the sweep racing for one stage, on two database connections: the sweep acts on what it
read, the worker changes the stage in between, and the live stage is never failed.

Barriers hold the sweep between its read and its change while the worker's thread claims the stage
(or sends a heartbeat); a last test lets both go at once, round after round, and checks that the
outcome is always one of the two consistent ones."""
from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from pytest_django import Settings

from migrator.pipeline import sweep
from migrator.projects import actions, transitions
from migrator.projects.constants import RunState, StageState
from migrator.projects.models import Project, Run, Stage

pytestmark = pytest.mark.django_db(transaction=True)
WAITED = timedelta(hours=7)  # over MIGRATOR_QUEUE_TIMEOUT_S (6 h)


def _nothing(stage: Stage, queue: str) -> None:
    pass


def _waiting_fetch(project: Project) -> Stage:
    """A run whose fetch has waited on the cpu queue past the queue timeout."""
    run = actions.create_run(project, user=None)
    fetch = run.stages.get(name="fetch")
    Stage.objects.filter(pk=fetch.pk).update(task_id="t-1", queue="cpu", queued_at=timezone.now() - WAITED)
    return Stage.objects.get(pk=fetch.pk)


def _in_thread(work: Callable[[], None], errors: list[BaseException]) -> threading.Thread:
    def body() -> None:
        try:
            work()
        except BaseException as exc:  # reported by the test, not lost in the thread
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=body)
    thread.start()
    return thread


def _race(sweep_side: Callable[[], None], worker_side: Callable[[], None]) -> None:
    errors: list[BaseException] = []
    threads = [_in_thread(sweep_side, errors), _in_thread(worker_side, errors)]
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors


def test_a_claim_between_the_sweeps_read_and_its_timeout_keeps_the_stage_alive(
    archive_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    fetch = _waiting_fetch(archive_project)
    read, claimed = threading.Barrier(2, timeout=30), threading.Barrier(2, timeout=30)
    real = transitions.earlier_stages_final

    def held_after_reading(stage: Stage) -> bool:  # the sweep has read the stage as queued
        read.wait()
        claimed.wait()
        return real(stage)

    monkeypatch.setattr(transitions, "earlier_stages_final", held_after_reading)
    won: list[bool] = []
    changed: list[Stage] = []

    def worker() -> None:
        read.wait()
        won.append(transitions.claim_stage(fetch.pk, "worker-1"))
        claimed.wait()

    _race(lambda: changed.extend(sweep.sweep(_nothing)), worker)
    fetch.refresh_from_db()
    run = Run.objects.get(pk=fetch.run_id)
    assert won == [True] and changed == []
    assert (fetch.state, fetch.worker, fetch.summary) == (StageState.RUNNING, "worker-1", "")
    assert run.state == RunState.RUNNING
    assert not run.stages.filter(state=StageState.SKIPPED).exists()


def test_a_timeout_between_the_workers_read_and_its_claim_wins_cleanly(archive_project: Project) -> None:
    fetch = _waiting_fetch(archive_project)
    failed = transitions.fail_queued_stage(fetch, "no worker picked this stage up in time")
    assert failed is not None and failed.state == StageState.FAILED
    assert transitions.claim_stage(fetch.pk, "late-worker") is False
    fetch.refresh_from_db()
    assert fetch.state == StageState.FAILED and fetch.worker == "" and fetch.started_at == fetch.queued_at


def test_a_heartbeat_between_the_sweeps_read_and_its_change_keeps_the_stage_alive(
    archive_project: Project, monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    run = actions.create_run(archive_project, user=None)
    fetch = run.stages.get(name="fetch")
    assert transitions.claim_stage(fetch.pk, "slow-worker")
    Stage.objects.filter(pk=fetch.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=10))
    read, beat = threading.Barrier(2, timeout=30), threading.Barrier(2, timeout=30)
    real = transitions.fail_stale_stage

    def held_after_reading(stage: Stage) -> Stage | None:
        read.wait()
        beat.wait()
        return real(stage)

    monkeypatch.setattr(transitions, "fail_stale_stage", held_after_reading)

    def worker() -> None:
        read.wait()
        transitions.touch_heartbeat(fetch.pk)
        beat.wait()

    changed: list[Stage] = []
    _race(lambda: changed.extend(sweep.sweep(_nothing)), worker)
    fetch.refresh_from_db()
    assert changed == [] and fetch.state == StageState.RUNNING and fetch.summary == ""
    assert "worker lost" not in "".join(fetch.log_chunks.values_list("text", flat=True))


def test_a_finish_after_the_sweep_failed_the_stage_keeps_the_sweeps_outcome(archive_project: Project) -> None:
    run = actions.create_run(archive_project, user=None)
    fetch = run.stages.get(name="fetch")
    assert transitions.claim_stage(fetch.pk, "w")
    fetch.refresh_from_db()
    assert transitions.fail_stale_stage(fetch) is not None
    assert transitions.finish_stage(fetch.pk, StageState.PASSED, "late result") is None
    fetch.refresh_from_db()
    assert fetch.state == StageState.FAILED and fetch.summary.startswith("worker lost")


def test_a_queued_stage_cannot_be_finished_without_being_claimed(archive_project: Project) -> None:
    run = actions.create_run(archive_project, user=None)
    fetch = run.stages.get(name="fetch")
    assert transitions.finish_stage(fetch.pk, StageState.FAILED, "never ran") is None
    fetch.refresh_from_db()
    assert fetch.state == StageState.QUEUED


def test_claims_and_timeouts_let_loose_together_always_agree(archive_project: Project) -> None:
    for _round in range(8):
        fetch = _waiting_fetch(archive_project)
        start = threading.Barrier(2, timeout=30)
        claimed: list[bool] = []
        failed: list[Stage | None] = []

        def worker(stage_id: int = fetch.pk, gate: threading.Barrier = start, out: list[bool] = claimed) -> None:
            gate.wait()
            out.append(transitions.claim_stage(stage_id, "w"))

        def timeout(stage: Stage = fetch, gate: threading.Barrier = start, out: list[Stage | None] = failed) -> None:
            gate.wait()
            out.append(transitions.fail_queued_stage(stage, "no worker picked this stage up in time"))

        _race(timeout, worker)
        fetch.refresh_from_db()
        if claimed == [True]:
            assert failed == [None] and fetch.state == StageState.RUNNING
        else:
            assert failed[0] is not None and fetch.state == StageState.FAILED
