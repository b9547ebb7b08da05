"""Reports' reaction to a run's progress: post its commit status and report to the pull request.

A pending status once the first stage has finished, the final status and report comment once the
run is final, and again when a CUDA reference that finished after the run changed its causes. Nothing happens for a project without a host token. A webhook run of a project with
port branches updates them once it is final (``delivery.redeliver``). Posting runs as its own task
after the transaction commits, so a slow or failing code host never holds up a stage.
"""
from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.dispatch import receiver

from migrator.integrations.models import ProjectIntegration
from migrator.projects.constants import FINAL_RUN_STATES, Trigger
from migrator.projects.models import ReferenceRun, Run, Stage
from migrator.projects.signals import reference_finished, run_finished, stage_finished
from migrator.reports.models import PortDelivery, PostPhase
from migrator.reports.tasks import post_run_status, redeliver_port

log = logging.getLogger(__name__)


@receiver(stage_finished, dispatch_uid="reports.post_pending_status")
def post_pending_status(sender: type[Stage], stage: Stage, **_: Any) -> None:
    if stage.position != 0:
        return
    if Run.objects.values_list("state", flat=True).get(pk=stage.run_id) in FINAL_RUN_STATES:
        return  # run_finished posts the final status instead
    queue_status_post(stage.run_id, PostPhase.START)


@receiver(run_finished, dispatch_uid="reports.post_final_status")
def post_final_status(sender: type[Run], run: Run, **_: Any) -> None:
    queue_status_post(run.pk, PostPhase.FINAL)


@receiver(reference_finished, dispatch_uid="reports.post_status_after_reference")
def post_status_after_reference(sender: type[ReferenceRun], reference: ReferenceRun, **_: Any) -> None:
    """A reference that finished after its run (the build of a run whose compile failed) changed the run's
    causes: the final status and report comment are posted again (the comment is edited in place)."""
    if Run.objects.values_list("state", flat=True).get(pk=reference.run_id) in FINAL_RUN_STATES:
        queue_status_post(reference.run_id, PostPhase.FINAL)


def queue_status_post(run_id: int, phase: str) -> None:
    """Queue ``reports.post_run_status`` after commit; nothing when the project has no host token."""
    if not ProjectIntegration.objects.filter(project__runs=run_id).exclude(host_token="").exists():
        return

    def send() -> None:
        try:
            post_run_status.apply_async(args=[run_id], kwargs={"phase": phase}, queue="cpu")
        except Exception:  # a broker hiccup must not fail the stage that just finished
            log.exception("could not queue status posting for run %s", run_id)

    transaction.on_commit(send)


@receiver(run_finished, dispatch_uid="reports.redeliver_port")
def redeliver_port_branches(sender: type[Run], run: Run, **_: Any) -> None:
    """A webhook run of a project with port branches updates them (their pull requests) once it is final."""
    if run.trigger != Trigger.WEBHOOK or not PortDelivery.objects.filter(project_id=run.project_id).exists():
        return

    def send() -> None:
        try:
            redeliver_port.apply_async(args=[run.pk], queue="cpu")
        except Exception:  # a broker hiccup must not fail the stage that just finished
            log.exception("could not queue the port update for run %s", run.pk)

    transaction.on_commit(send)
