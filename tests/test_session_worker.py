"""The session's shared Celery worker (tests/session_worker.py): each test's tasks run under that test's
stages and folders, and after a test the worker is idle and its broker empty."""
from __future__ import annotations

import subprocess

import pytest
from pytest_django import Settings

from migrator.pipeline.broker import pending_task_ids
from migrator.pipeline.dispatch import start_run
from migrator.projects import actions
from migrator.projects.constants import StageState
from migrator.projects.models import Project, Run
from migrator.projects.workspaces import workspace_for
from tests.conftest import wait_for
from tests.session_worker import CONSUMES, SessionWorker

pytestmark = pytest.mark.django_db(transaction=True)


def _finished(run: Run) -> Run | None:
    run.refresh_from_db()
    return run if run.is_final else None


# Two tests in a row on the one worker: the second must not run under the first one's stage set.
@pytest.mark.parametrize("allowed", [
    pytest.param(("fetch",), marks=pytest.mark.worker_stages("fetch"), id="fetch"),
    pytest.param(("fetch", "scan"), marks=pytest.mark.worker_stages("fetch", "scan"), id="fetch-scan"),
])
def test_each_test_gets_its_own_stages_and_workspace(
    celery_worker_process: subprocess.Popen[bytes],
    archive_project: Project,
    settings: Settings,
    allowed: tuple[str, ...],
) -> None:
    run = actions.create_run(archive_project, user=None)
    start_run(run)
    run = wait_for(lambda: _finished(run), timeout=60)
    states = {s.name: s.state for s in run.stages.all()}
    assert all(states[name] == StageState.PASSED for name in allowed), states
    assert run.stages.get(name="hipify").summary == "hipify: not available on this installation"
    source = workspace_for(run.pk).source
    assert source.is_relative_to(settings.MIGRATOR_WORKSPACE_ROOT) and (source / "src/vadd.cu").exists()


@pytest.mark.worker_stages("fetch")
def test_after_settling_the_worker_is_idle_and_its_queues_empty(
    celery_worker_process: subprocess.Popen[bytes], session_worker: SessionWorker, archive_project: Project
) -> None:
    runs = [actions.create_run(archive_project, user=None) for _ in range(3)]
    for run in runs:
        start_run(run)
    session_worker.settle(set(CONSUMES))
    assert pending_task_ids(CONSUMES) == set()  # neither waiting nor taken
    assert session_worker.proc is celery_worker_process and celery_worker_process.poll() is None
