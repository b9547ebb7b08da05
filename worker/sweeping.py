"""The periodic sweep: no stage may stay running or waiting forever.

- a running stage whose heartbeat is older than MIGRATOR_HEARTBEAT_STALE_S failed: its worker died;
- a smoke stage waiting for a ROCm runner longer than the project's ``smoke_wait_timeout_s`` is
  skipped with "no ROCm runner" (the run is then partial: nothing failed, but smoke was not checked);
- a CPU stage nobody picked up within MIGRATOR_QUEUE_TIMEOUT_S fails with "no worker";
- a run's next stage whose message the broker no longer holds (a Redis restart without
  persistence, a publish that failed while the broker was down) is published again; see
  ``worker.redelivery``.
After each failure the run settles (later stages skipped) and, if anything can still run, advances.
"""
from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings as django_settings
from django.utils import timezone

from migrator.projects import transitions
from migrator.projects.constants import StageState
from migrator.projects.models import Stage
from migrator.projects.queues import rocm_queues
from worker import pipeline, redelivery
from worker.project_settings import ProjectSettings


def sweep(dispatch: pipeline.Dispatcher, republish: redelivery.Republisher | None = None) -> list[Stage]:
    """One pass; ``republish`` (given by the periodic task) re-sends stages whose message was lost."""
    now = timezone.now()
    changed = transitions.fail_stale_stages(now, timedelta(seconds=django_settings.MIGRATOR_HEARTBEAT_STALE_S))
    changed += _fail_smoke_waiting_too_long(now)
    changed += transitions.fail_unclaimed_stages(
        now, "cpu", timedelta(seconds=django_settings.MIGRATOR_QUEUE_TIMEOUT_S),
        "no worker picked this stage up in time (is a worker for the cpu queue running?)",
    )
    for stage in changed:
        pipeline.advance(stage.run_id, dispatch)
    if republish is not None:
        redelivery.resend_lost_stages(now, dispatch, republish)
    _requeue_lost_deliveries()
    return changed


def _requeue_lost_deliveries() -> None:
    try:
        from migrator.integrations.actions import requeue_stale_deliveries
    except ModuleNotFoundError:
        return
    requeue_stale_deliveries()


def _fail_smoke_waiting_too_long(now: datetime) -> list[Stage]:
    failed = []
    waiting = Stage.objects.filter(rocm_queues(), state=StageState.QUEUED, queued_at__isnull=False)
    for stage in waiting.select_related("run__project"):
        limit = ProjectSettings.stored_or_default(stage.run.project.settings).smoke_wait_timeout_s
        if stage.queued_at and stage.queued_at < now - timedelta(seconds=limit):
            reason = f"no ROCm runner with a suitable GPU came online within {limit} s"
            failed.append(transitions.skip_waiting_stage(stage, reason, {"no_runner": True}))
    return failed
