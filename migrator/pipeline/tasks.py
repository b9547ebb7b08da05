"""Celery wrappers: each task takes ids and calls the pipeline; no logic lives here.

The registered names keep their first spelling (``worker.tasks.*``) so messages queued by an
earlier version are still understood by the workers after an upgrade.
"""
from __future__ import annotations

from celery import current_task, shared_task

from migrator.pipeline import dispatch, orchestrator, references, retention
from migrator.pipeline import sweep as sweeping
from migrator.projects.models import Stage


@shared_task(name=dispatch.RUN_STAGE_TASK, acks_late=True, reject_on_worker_lost=True)
def run_stage(stage_id: int) -> None:
    hostname = getattr(current_task.request, "hostname", "") or ""
    orchestrator.execute_stage(stage_id, worker=hostname)
    run_id = Stage.objects.values_list("run_id", flat=True).get(pk=stage_id)
    orchestrator.advance(run_id, dispatch.send_stage, dispatch.send_reference)


@shared_task(name=dispatch.SWEEP_TASK)
def sweep() -> None:
    sweeping.sweep(dispatch.send_stage, dispatch.republish_stage, dispatch.revoke_tasks,
                   send_reference=dispatch.send_reference, republish_reference=dispatch.republish_reference)


@shared_task(name=dispatch.RETENTION_TASK, ignore_result=True)
def sweep_retention() -> None:
    retention.sweep_retention()


@shared_task(name=dispatch.REFERENCE_RUN_TASK, acks_late=True, reject_on_worker_lost=True)
def reference_run(run_id: int) -> None:
    """The run's CUDA reference (one per run, so the run id names it); then smoke can be handed out."""
    hostname = getattr(current_task.request, "hostname", "") or ""
    references.execute_reference(run_id, worker=hostname)
    orchestrator.advance(run_id, dispatch.send_stage, dispatch.send_reference)
