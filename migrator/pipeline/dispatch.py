"""Hand stages to Celery. Task ids are chosen before sending so a stage row always knows its task.

The stage row is the outbox: its task id and queue are committed first and the message published
after. When publishing fails (the broker is down), the stage stays queued with its task id and the
sweep publishes it again once the broker is back (``migrator.pipeline.redelivery``); a message that
did go out is harmless twice, because the claim is a conditional UPDATE. Nothing here may leave a
recorded run without a way to start.

Tasks are looked up by their registered names in the Celery app rather than imported, so this
module and ``tasks`` (which calls it) do not import each other.
"""
from __future__ import annotations

import logging
import uuid

from celery import Task
from django.db import transaction

from migrator.celery import app
from migrator.pipeline import orchestrator, references
from migrator.pipeline.broker import BROKER_ERRORS
from migrator.projects import transitions
from migrator.projects.models import ReferenceRun, Run, Stage

log = logging.getLogger(__name__)
RUN_STAGE_TASK = "worker.tasks.run_stage"
REFERENCE_RUN_TASK = "worker.tasks.reference_run"
SWEEP_TASK = "worker.tasks.sweep"
RETENTION_TASK = "pipeline.sweep_retention"


def _task(name: str) -> Task:
    return app.tasks[name]


def send_stage(stage: Stage, queue: str) -> None:
    task_id = str(uuid.uuid4())
    transitions.mark_enqueued(stage, task_id, queue)
    _task(RUN_STAGE_TASK).apply_async(args=[stage.pk], queue=queue, task_id=task_id)


def send_reference(reference: ReferenceRun) -> None:
    """Publish the run's CUDA reference to the ``cuda`` queue (the row records its task id first, like a stage's)."""
    task_id = str(uuid.uuid4())
    if transitions.mark_reference_enqueued(reference, task_id, references.CUDA_QUEUE):
        _task(REFERENCE_RUN_TASK).apply_async(args=[reference.run_id], queue=references.CUDA_QUEUE, task_id=task_id)


def republish_reference(reference: ReferenceRun) -> None:
    """Publish a queued reference's message again under its recorded task id (its message was lost)."""
    _task(REFERENCE_RUN_TASK).apply_async(args=[reference.run_id], queue=reference.queue, task_id=reference.task_id)


def republish_stage(stage: Stage) -> None:
    """Publish a queued stage's message again under its recorded task id and queue (its message was lost)."""
    _task(RUN_STAGE_TASK).apply_async(args=[stage.pk], queue=stage.queue, task_id=stage.task_id)


def start_run(run: Run) -> None:
    """Queue the run's first stage once the creating transaction has committed.

    A broker failure at that moment is logged, not raised: the run is recorded and the sweep
    hands it out when the broker answers again.
    """
    run_id = run.pk
    transaction.on_commit(lambda: dispatch_recorded_run(run_id))


def dispatch_recorded_run(run_id: int) -> bool:
    """Hand out the run's next stage; False when the broker could not be reached (the sweep retries)."""
    try:
        orchestrator.advance(run_id, send_stage, send_reference)
    except BROKER_ERRORS as exc:
        log.warning("run %s is recorded but its first stage was not published (%s); the sweep will", run_id, exc)
        return False
    return True


def revoke_tasks(task_ids: list[str]) -> None:
    if not task_ids:
        return
    app.control.revoke(task_ids)
