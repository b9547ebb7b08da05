"""Dispatch publishes a stage to its queue and a CUDA reference run to the cuda queue, each row first."""
from __future__ import annotations

import pytest

from migrator.pipeline.broker import pending_task_ids
from migrator.pipeline.dispatch import send_reference, send_stage
from migrator.projects import transitions
from migrator.projects.models import ReferenceRun, Run, Stage
from tests.brokerhost import RedisServer

pytestmark = pytest.mark.django_db


def test_a_stage_is_recorded_with_its_queue_and_task_before_it_is_published(
    fetched_run: Run, queued_smoke: Stage, own_broker: RedisServer
) -> None:
    smoke = queued_smoke
    send_stage(smoke, "rocm.gfx90a")
    smoke.refresh_from_db()
    assert smoke.queue == "rocm.gfx90a" and smoke.task_id
    assert smoke.task_id in pending_task_ids({"rocm.gfx90a"})


def test_a_reference_is_published_to_the_cuda_queue_under_the_task_id_its_row_records(
    fetched_run: Run, own_broker: RedisServer
) -> None:
    reference = transitions.create_reference(fetched_run.pk)
    send_reference(reference)
    reference.refresh_from_db()
    assert reference.queue == "cuda" and reference.task_id and reference.queued_at
    assert pending_task_ids({"cuda"}) == {reference.task_id}
    send_reference(ReferenceRun.objects.get(pk=reference.pk))  # already handed out: nothing more is sent
    assert pending_task_ids({"cuda"}) == {reference.task_id}
