"""A real worker killed with SIGKILL mid-stage: the stage fails with "worker lost" within the
heartbeat limit plus one sweep interval (the runners page states that delay: tests/runners/test_runners_page.py)."""
from __future__ import annotations

import subprocess
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from migrator.accounts.models import Team
from migrator.pipeline.dispatch import start_run
from migrator.projects import actions
from migrator.projects.constants import RunState, StageState
from migrator.projects.models import Run, Stage
from tests.brokerhost import kill_worker
from tests.conftest import make_tar_gz, wait_for
from tests.faults.conftest import STALE_S, SWEEP_S


@pytest.mark.django_db(transaction=True)
def test_a_stage_of_a_worker_killed_with_sigkill_fails_within_the_expected_time(
    fault_worker: Callable[..., subprocess.Popen[bytes]], team_user: tuple[User, Team]
) -> None:
    project = actions.create_project(team_user[1], "doomed", user=None)
    files = {f"src/d{i // 100}/k{i}.cu": f"__global__ void k{i}(float* x) {{ x[0] = {i}; }}\n" for i in range(3000)}
    actions.store_archive(project, SimpleUploadedFile("big.tgz", make_tar_gz(files)), "big.tgz", None)
    doomed = fault_worker("doomed", beat=False)
    run = actions.create_run(project, user=None)
    start_run(run)
    running = wait_for(lambda: Stage.objects.filter(run=run, state=StageState.RUNNING).first(), timeout=60, interval=0.02)
    kill_worker(doomed)
    killed_at = timezone.now()
    last_beat = Stage.objects.get(pk=running.pk).heartbeat_at  # the failure's log line touches it again
    assert last_beat is not None and last_beat <= killed_at

    fault_worker("rescuer", beat=True)  # the sweep runs here from now on
    rescuer_ready = timezone.now()
    stage = wait_for(lambda: Stage.objects.filter(pk=running.pk, state=StageState.FAILED).first(), timeout=60)
    assert stage.summary.startswith("worker lost: no heartbeat since")
    assert stage.finished_at is not None
    # Due once the heartbeat is STALE_S old (and a sweeping worker exists), caught by the next sweep.
    due = max(last_beat + timedelta(seconds=STALE_S), rescuer_ready)
    assert stage.finished_at <= due + timedelta(seconds=SWEEP_S + 1.5), (stage.finished_at - due).total_seconds()
    assert Run.objects.get(pk=run.pk).state == RunState.FAILED
