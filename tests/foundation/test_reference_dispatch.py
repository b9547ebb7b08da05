"""The CUDA reference run: dispatched beside smoke when a CUDA runner is online, built with real nvcc."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from migrator.pipeline import orchestrator
from migrator.pipeline.dispatch import send_stage
from migrator.projects import actions, transitions
from migrator.projects.constants import StageState
from migrator.projects.workspaces import workspace_for
from migrator.runners import presence
from tests.markers import requires_nvcc
from worker.stages.smoke import REFERENCE_ARTIFACT, REFERENCE_PENDING

pytestmark = pytest.mark.django_db


@pytest.fixture
def fetched_run(team_user, cuda_archive, only_stages):  # type: ignore[no-untyped-def]
    only_stages("fetch")
    user, team = team_user
    project = actions.create_project(team, "ref", user=user, settings={"smoke_command": "./vadd"})
    actions.store_archive(project, SimpleUploadedFile("r.tgz", cuda_archive), "r.tgz", user)
    return orchestrator.run_sync(actions.create_run(project, user=user))


def _reopen_smoke(run):  # type: ignore[no-untyped-def]
    from migrator.projects.models import Stage

    Stage.objects.filter(run=run, name="smoke").update(state=StageState.QUEUED, summary="", task_id="")
    return run.stages.get(name="smoke")


def test_no_reference_is_wanted_without_an_online_cuda_runner(fetched_run) -> None:  # type: ignore[no-untyped-def]
    smoke = _reopen_smoke(fetched_run)
    assert not orchestrator.wants_reference(smoke, orchestrator.ProjectSettings.from_dict(fetched_run.project.settings))


def test_a_reference_run_is_sent_beside_smoke_when_a_cuda_runner_is_online(fetched_run) -> None:  # type: ignore[no-untyped-def]
    presence.register("cuda-box@h", "cuda", ["cuda"], {"gpus": [{"arch": "sm_90"}]})
    smoke = _reopen_smoke(fetched_run)
    send_stage(smoke, "rocm.gfx90a")
    smoke.refresh_from_db()
    marker = workspace_for(fetched_run.pk).artifacts / REFERENCE_PENDING
    assert marker.exists() and smoke.queue == "rocm.gfx90a" and smoke.task_id


@requires_nvcc
def test_the_reference_build_uses_nvcc_and_reports_the_missing_gpu(fetched_run, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "sm_90")
    artifacts = workspace_for(fetched_run.pk).artifacts
    (artifacts / REFERENCE_PENDING).write_text("x")
    result = orchestrator.execute_reference(fetched_run.pk)
    saved = json.loads((artifacts / REFERENCE_ARTIFACT).read_text())
    assert saved["build"]["ok"] is True  # real nvcc compiled and linked the original CUDA code
    assert result["ok"] is False  # no NVIDIA driver here: the program cannot run
    assert not (artifacts / REFERENCE_PENDING).exists()
    assert (artifacts / "reference.log").read_text()


def test_the_smoke_stage_waits_for_a_pending_reference_then_goes_on(fetched_run, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from worker.stages import smoke as smoke_module

    stage = _reopen_smoke(fetched_run)
    transitions.claim_stage(stage.pk, "w")
    ctx = orchestrator.build_context(stage, orchestrator.StageLog(stage.pk, fetched_run.pk))
    pending = ctx.workspace.artifacts / REFERENCE_PENDING
    pending.write_text("x")
    ticks: list[int] = []

    def sleep(seconds: float) -> None:
        ticks.append(1)
        if len(ticks) == 3:
            pending.unlink()

    monkeypatch.setattr(smoke_module.time, "sleep", sleep)
    assert smoke_module.await_reference(ctx, poll_s=0.0) is False  # finished, but wrote no result
    assert len(ticks) == 3
