"""Celery wrappers: each task takes ids and calls the pipeline; no logic lives here."""
from __future__ import annotations

from celery import shared_task

from worker import dispatch, pipeline, signals, sweeping  # noqa: F401  (signals: runner heartbeats)


@shared_task(name="worker.tasks.run_stage", acks_late=True, reject_on_worker_lost=True)
def run_stage(stage_id: int) -> None:
    from celery import current_task

    from migrator.projects.models import Stage

    hostname = getattr(current_task.request, "hostname", "") or ""
    pipeline.execute_stage(stage_id, worker=hostname)
    run_id = Stage.objects.values_list("run_id", flat=True).get(pk=stage_id)
    pipeline.advance(run_id, dispatch.send_stage)


@shared_task(name="worker.tasks.sweep")
def sweep() -> None:
    sweeping.sweep(dispatch.send_stage, dispatch.republish_stage)


@shared_task(name="worker.tasks.reference_run", acks_late=True, reject_on_worker_lost=True)
def reference_run(run_id: int) -> None:
    pipeline.execute_reference(run_id)
