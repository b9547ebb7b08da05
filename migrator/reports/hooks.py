"""The pipeline's one call into reports: queue status posting when a run starts or finishes."""
from __future__ import annotations

import logging

from django.db import transaction

from migrator.integrations.models import ProjectIntegration
from migrator.projects.constants import FINAL_RUN_STATES
from migrator.projects.models import Run, Stage
from migrator.reports.models import PostPhase

log = logging.getLogger(__name__)


def phase_after(stage: Stage) -> str | None:
    """FINAL once the run is final, START when its first stage just finished, else None."""
    state = Run.objects.values_list("state", flat=True).get(pk=stage.run_id)
    if state in FINAL_RUN_STATES:
        return PostPhase.FINAL
    return PostPhase.START if stage.position == 0 else None


def after_stage_finished(stage: Stage) -> None:
    """Queue ``reports.post_run_status``; does nothing when the project has no host token."""
    if not ProjectIntegration.objects.filter(project__runs=stage.run_id).exclude(host_token="").exists():
        return
    phase = phase_after(stage)
    if phase is None:
        return
    from migrator.reports.tasks import post_run_status

    def send() -> None:
        try:
            post_run_status.apply_async(args=[stage.run_id], kwargs={"phase": phase}, queue="cpu")
        except Exception:  # a broker hiccup must not fail the stage that just finished
            log.exception("could not queue status posting for run %s", stage.run_id)

    transaction.on_commit(send)
