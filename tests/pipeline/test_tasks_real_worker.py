"""The stage chain on the real Redis broker with a real Celery worker process."""
from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.pipeline.dispatch import start_run
from migrator.projects import actions
from migrator.projects.constants import RunState, StageState
from migrator.projects.models import Project, Run
from tests.conftest import wait_for


def _finished(run: Run) -> Run | None:
    run.refresh_from_db()
    return run if run.is_final else None


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker_stages("fetch")
def test_a_run_goes_through_the_chain_on_a_real_worker(
    celery_worker_process: subprocess.Popen[bytes], archive_project: Project
) -> None:
    run = actions.create_run(archive_project, user=None)
    start_run(run)  # on_commit runs at once outside a transaction
    run = wait_for(lambda: _finished(run), timeout=60)
    stages = {s.name: s for s in run.stages.all()}
    assert run.state == RunState.PARTIAL  # only fetch is installed for this worker
    assert stages["fetch"].state == StageState.PASSED and stages["fetch"].worker.startswith("test-worker")
    assert stages["fetch"].task_id and stages["fetch"].log_size > 0
    assert stages["compile"].summary == "compile: not available on this installation"


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker_stages("fetch")
def test_a_git_run_pins_the_commit_on_a_real_worker(
    celery_worker_process: subprocess.Popen[bytes], team_user: tuple[User, Team], git_repo: Path
) -> None:
    import subprocess

    project = actions.create_project(team_user[1], "gitrun", user=None, git_url=str(git_repo))
    run = actions.create_run(project, user=None, ref="v1")
    start_run(run)
    run = wait_for(lambda: _finished(run), timeout=60)
    tag_commit = subprocess.run(["git", "-C", str(git_repo), "rev-parse", "v1^{commit}"], capture_output=True,
                                text=True, check=True).stdout.strip()
    assert run.state == RunState.PARTIAL and run.commit_sha == tag_commit
    assert run.pinned_source == tag_commit


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker_stages("fetch")
def test_an_unreachable_repository_fails_fetch_clearly(
    celery_worker_process: subprocess.Popen[bytes], team_user: tuple[User, Team]
) -> None:
    project = actions.create_project(team_user[1], "gone", user=None, git_url="https://nonexistent.invalid/x.git")
    run = actions.create_run(project, user=None, ref="main")
    start_run(run)
    run = wait_for(lambda: _finished(run), timeout=60)
    assert run.state == RunState.FAILED
    assert run.stages.get(name="fetch").summary.startswith("repository unreachable")
    assert run.stages.get(name="scan").summary == "skipped: fetch failed"


@pytest.mark.django_db(transaction=True)
@pytest.mark.worker_stages("fetch")
def test_a_killed_worker_leaves_a_stage_the_sweep_fails(
    archive_project: Project, settings: Settings, celery_worker_process: subprocess.Popen[bytes]
) -> None:
    """SIGKILL the worker while a stage is running; the sweep must fail it (no stage stays running)."""
    from datetime import timedelta

    from django.utils import timezone

    from migrator.pipeline import sweep
    from migrator.projects import transitions
    from migrator.projects.models import Stage

    run = actions.create_run(archive_project, user=None)
    fetch = run.stages.get(name="fetch")
    transitions.claim_stage(fetch.pk, "doomed-worker")  # as a worker does when it starts the stage
    os.kill(celery_worker_process.pid, signal.SIGKILL)
    celery_worker_process.wait(timeout=10)
    Stage.objects.filter(pk=fetch.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=settings.MIGRATOR_HEARTBEAT_STALE_S + 1))
    sweep.sweep(lambda stage, queue: None)
    fetch.refresh_from_db()
    run.refresh_from_db()
    assert fetch.state == StageState.FAILED and "worker lost" in fetch.summary
    assert run.state == RunState.FAILED
