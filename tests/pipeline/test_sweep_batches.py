"""The sweep works in bounded batches, revokes what it fails, survives a bad row, and announces
runs it ends."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from migrator.pipeline import sweep
from migrator.projects import actions, transitions
from migrator.projects.constants import RunState, StageState
from migrator.projects.models import Project, Run, Stage
from migrator.projects.signals import run_finished

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(team_user, cuda_archive) -> Project:  # type: ignore[no-untyped-def]
    user, team = team_user
    project = actions.create_project(team, "sweepy", user=user)
    actions.store_archive(project, SimpleUploadedFile("demo.tgz", cuda_archive), "demo.tgz", user)
    return project


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


def test_it_revokes_the_tasks_of_the_stages_it_fails(project: Project) -> None:
    _dead_fetch(project, "task-a")
    _dead_fetch(project, "task-b")
    revoked: list[list[str]] = []
    sweep.sweep(_nothing, revoke=revoked.append)
    assert [sorted(ids) for ids in revoked] == [["task-a", "task-b"]]


def test_it_takes_at_most_a_batch_a_pass_and_the_rest_on_the_next(project: Project, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sweep, "SWEEP_BATCH", 2)
    stages = [_dead_fetch(project, f"task-{n}") for n in range(3)]
    assert len(sweep.sweep(_nothing)) == 2
    assert Stage.objects.filter(pk__in=[s.pk for s in stages], state=StageState.RUNNING).count() == 1
    assert len(sweep.sweep(_nothing)) == 1
    assert not Stage.objects.filter(pk__in=[s.pk for s in stages], state=StageState.RUNNING).exists()


def test_a_stage_that_cannot_be_handled_is_logged_and_the_others_still_are(project: Project, monkeypatch, caplog) -> None:  # type: ignore[no-untyped-def]
    broken, fine = _dead_fetch(project, "task-broken"), _dead_fetch(project, "task-fine")
    real = transitions.fail_stale_stage

    def fail_stale_stage(stage: Stage) -> Stage:
        if stage.pk == broken.pk:
            raise RuntimeError("a row the sweep cannot handle")
        return real(stage)

    monkeypatch.setattr(transitions, "fail_stale_stage", fail_stale_stage)
    changed = sweep.sweep(_nothing)
    assert [s.pk for s in changed] == [fine.pk]
    broken.refresh_from_db()
    assert broken.state == StageState.RUNNING  # left for the next pass
    assert "could not be handled" in caplog.text


def test_it_announces_the_runs_it_ends(project: Project) -> None:
    fetch = _dead_fetch(project, "task-x")
    ended: list[Run] = []

    def on_finished(sender: Any, run: Run, **_: Any) -> None:
        ended.append(run)

    run_finished.connect(on_finished, dispatch_uid="test-sweep-announces")
    try:
        sweep.sweep(_nothing)
    finally:
        run_finished.disconnect(dispatch_uid="test-sweep-announces")
    assert [(r.pk, r.state) for r in ended] == [(fetch.run_id, RunState.FAILED)]
