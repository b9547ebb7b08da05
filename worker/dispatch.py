"""Hand stages to Celery. Task ids are chosen before sending so a stage row always knows its task."""
from __future__ import annotations

import uuid

from django.db import transaction

from migrator.projects import transitions
from migrator.projects.models import Run, Stage
from worker import pipeline
from worker.project_settings import ProjectSettings, SettingsError
from worker.stages.smoke import REFERENCE_PENDING


def send_stage(stage: Stage, queue: str) -> None:
    from worker.tasks import reference_run, run_stage

    task_id = str(uuid.uuid4())
    if queue.startswith("rocm") and _reference_wanted(stage):
        # The smoke stage waits (up to its wait limit) for this marker to go before comparing.
        marker = pipeline.workspace_for(stage.run_id).artifacts
        marker.mkdir(parents=True, exist_ok=True)
        (marker / REFERENCE_PENDING).write_text(task_id)
        reference_run.apply_async(args=[stage.run_id], queue="cuda")
    transitions.mark_enqueued(stage, task_id, queue)
    run_stage.apply_async(args=[stage.pk], queue=queue, task_id=task_id)


def _reference_wanted(stage: Stage) -> bool:
    try:
        settings = ProjectSettings.from_dict(stage.run.project.settings)
    except SettingsError:
        return False
    return pipeline.wants_reference(stage, settings)


def start_run(run: Run) -> None:
    """Queue the run's first stage once the creating transaction has committed."""
    transaction.on_commit(lambda: pipeline.advance(run.pk, send_stage))


def revoke_tasks(task_ids: list[str]) -> None:
    if not task_ids:
        return
    from migrator.celery import app

    app.control.revoke(task_ids)
