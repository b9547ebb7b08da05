"""The whole pipeline on real Celery workers: a CPU worker and a ROCm runner (fake GPU list, real process).

The CUDA program is fetched, scanned, translated, compiled and linked with the real hipcc for gfx90a,
then the smoke stage is routed to the runner's rocm.gfx90a queue. This machine has no AMD GPU, so the
binary reports hipErrorInvalidDevice: the stage must fail, classified as "no device", and the
notebook entry for that case must be matched.
"""
from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.notebook.actions import load_seed
from migrator.pipeline.dispatch import start_run
from migrator.projects import actions
from migrator.projects.constants import RunState, StageState
from migrator.runners.models import Runner
from tests.brokerhost import kill_worker, node_name, start_worker, worker_env
from tests.conftest import VADD_CU, _test_db_name, make_tar_gz, wait_for
from tests.session_worker import SessionWorker

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def rocm_runner(
    celery_worker_process: subprocess.Popen[bytes], session_worker: SessionWorker, settings: Settings, tmp_path: Path
) -> Iterator[Runner]:
    """A ROCm runner process (fake gfx90a) on the shared worker's broker, for this test alone."""
    env = worker_env(
        broker_url=session_worker.broker_url, db_name=_test_db_name(), workspace=Path(settings.MIGRATOR_WORKSPACE_ROOT),
        cache=Path(settings.MIGRATOR_CACHE_ROOT), disabled=list(settings.MIGRATOR_DISABLED_STAGES),
        extra={"MIGRATOR_RUNNER_PROFILE": "rocm", "MIGRATOR_FAKE_GPUS": "gfx90a",
               "MIGRATOR_GPU_LOCK_DIR": str(tmp_path / "gpu-locks")},
    )
    proc = start_worker(env, tmp_path / "rocm-worker.log", name="rocm-e2e", beat=False, queues="rocm")
    try:
        yield wait_for(lambda: Runner.objects.filter(name=node_name("rocm-e2e")).first(), timeout=60)
    finally:
        kill_worker(proc)  # the run is final by then: nothing to finish, and no warm shutdown to wait for


def test_a_cuda_project_goes_through_every_stage_on_real_workers(
    rocm_runner: Runner, team_user: tuple[User, Team]
) -> None:
    load_seed()
    user, team = team_user
    project = actions.create_project(team, "e2e", user=user, settings={"smoke_command": "./vadd", "smoke_timeout_s": 60})
    archive = make_tar_gz({"src/vadd.cu": VADD_CU, "Makefile": "vadd: src/vadd.cu\n\tnvcc -arch=sm_80 -o vadd src/vadd.cu -lcudart\n"})
    actions.store_archive(project, SimpleUploadedFile("e2e.tgz", archive), "e2e.tgz", user)
    run = actions.create_run(project, user=user)
    start_run(run)

    def finished() -> bool:
        run.refresh_from_db()
        return run.is_final

    wait_for(finished, timeout=240, interval=0.5)
    stages = {s.name: s for s in run.stages.all()}
    assert [stages[n].state for n in ("fetch", "scan", "hipify", "compile", "link")] == [StageState.PASSED] * 5
    assert "rocm.gfx90a" in rocm_runner.queues and stages["smoke"].queue == "rocm.gfx90a"
    smoke = stages["smoke"]
    assert smoke.worker == rocm_runner.name
    assert run.state == RunState.FAILED and smoke.state == StageState.FAILED
    assert smoke.data["classification"]["kind"] == "no-device"
    log = "".join(c.text for c in smoke.log_chunks.all())
    assert "no ROCm-capable device is detected" in log, log  # HIP 6.4's hipErrorNoDevice text
    # Matching runs right after the stage is recorded, so it may land a moment after the run is final.
    first_match = wait_for(lambda: smoke.notebook_matches.first(), timeout=30)
    assert first_match.entry.slug == "no-amd-gpu-visible"
    assert stages["hipify"].data["build_fixes"]  # the Makefile's nvcc line was fixed in the translated copy
