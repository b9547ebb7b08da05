"""Hand stages to Celery. Task ids are chosen before sending so a stage row always knows its task."""
from __future__ import annotations

import uuid

from django.db import transaction

from migrator.projects import transitions
from migrator.projects.models import Run, Stage
from worker import pipeline


def send_stage(stage: Stage, queue: str) -> None:
    from worker.tasks import run_stage

    task_id = str(uuid.uuid4())
    transitions.mark_enqueued(stage, task_id, queue)
    run_stage.apply_async(args=[stage.pk], queue=queue, task_id=task_id)


def start_run(run: Run) -> None:
    """Queue the run's first stage once the creating transaction has committed."""
    transaction.on_commit(lambda: pipeline.advance(run.pk, send_stage))


def revoke_tasks(task_ids: list[str]) -> None:
    if not task_ids:
        return
    from migrator.celery import app

    app.control.revoke(task_ids)
