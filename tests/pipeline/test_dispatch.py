"""Dispatch publishes a stage to its queue and, beside smoke, the CUDA reference when a CUDA runner is online."""
from __future__ import annotations

import pytest

from migrator.pipeline.dispatch import send_stage
from migrator.projects.models import Run, Stage
from migrator.projects.workspaces import workspace_for
from migrator.runners import presence
from worker.stages.smoke import REFERENCE_PENDING

pytestmark = pytest.mark.django_db


def test_a_reference_run_is_sent_beside_smoke_when_a_cuda_runner_is_online(
    fetched_run: Run, queued_smoke: Stage
) -> None:
    presence.register("cuda-box@h", "cuda", ["cuda"], {"gpus": [{"arch": "sm_90"}]})
    smoke = queued_smoke
    send_stage(smoke, "rocm.gfx90a")
    smoke.refresh_from_db()
    marker = workspace_for(fetched_run.pk).artifacts / REFERENCE_PENDING
    assert marker.exists() and smoke.queue == "rocm.gfx90a" and smoke.task_id

