"""The periodic sweep: no stage may stay running or waiting forever.

- a running stage whose heartbeat is older than MIGRATOR_HEARTBEAT_STALE_S failed: its worker died,
  and its task is revoked so a late redelivery does not start it again;
- a smoke stage waiting for a ROCm runner longer than the project's ``smoke_wait_timeout_s`` is
  skipped with "no ROCm runner" (the run is then partial: nothing failed, but smoke was not checked);
- a CPU stage nobody picked up within MIGRATOR_QUEUE_TIMEOUT_S fails with "no worker";
- a run's next stage whose message the broker no longer holds (a Redis restart without
  persistence, a publish that failed while the broker was down) is published again; see
  ``migrator.pipeline.redelivery``.
After each failure the run settles (later stages skipped) and, if anything can still run, advances.

Each query takes at most ``SWEEP_BATCH`` rows (the next pass takes the rest), and a stage whose
handling raises is logged and left for the next pass: one bad row never stops the sweep.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from django.conf import settings as django_settings
from django.db.models import QuerySet
from django.utils import timezone

from migrator.pipeline import orchestrator, redelivery
from migrator.projects import transitions
from migrator.projects.constants import StageState
from migrator.projects.models import Stage
from migrator.projects.queues import rocm_queues
from worker.project_settings import ProjectSettings

log = logging.getLogger(__name__)
SWEEP_BATCH = 200
Revoker = Callable[[list[str]], None]


def sweep(
    dispatch: orchestrator.Dispatcher, republish: redelivery.Republisher | None = None,
    revoke: Revoker | None = None,
) -> list[Stage]:
    """One pass; ``republish`` re-sends stages whose message was lost, ``revoke`` cancels the tasks of
    the stages it fails (both given by the periodic task)."""
    now = timezone.now()
    changed = _each(_stale(now), transitions.fail_stale_stage)
    if revoke is not None:
        revoke([stage.task_id for stage in changed if stage.task_id])
    changed += _each(_smoke_waiting_too_long(now), _skip_smoke_waiting)
    changed += _each(_unclaimed_cpu_stages(now), _fail_unclaimed)
    for stage in changed:
        _guarded(stage, lambda s: _advance_and_announce(s, dispatch))
    if republish is not None:
        redelivery.resend_lost_stages(now, dispatch, republish)
    return changed


def _stale(now: datetime) -> QuerySet[Stage]:
    stale_after = timedelta(seconds=django_settings.MIGRATOR_HEARTBEAT_STALE_S)
    stale = Stage.objects.filter(state=StageState.RUNNING, heartbeat_at__lt=now - stale_after)
    return stale.order_by("heartbeat_at")[:SWEEP_BATCH]


def _smoke_waiting_too_long(now: datetime) -> Iterable[Stage]:
    waiting = Stage.objects.filter(rocm_queues(), state=StageState.QUEUED, queued_at__isnull=False)
    for stage in waiting.select_related("run__project").order_by("queued_at")[:SWEEP_BATCH]:
        limit = ProjectSettings.stored_or_default(stage.run.settings_used).smoke_wait_timeout_s
        if stage.queued_at and stage.queued_at < now - timedelta(seconds=limit):
            yield stage


def _skip_smoke_waiting(stage: Stage) -> Stage | None:
    limit = ProjectSettings.stored_or_default(stage.run.settings_used).smoke_wait_timeout_s
    reason = f"no ROCm runner with a suitable GPU came online within {limit} s"
    return transitions.skip_waiting_stage(stage, reason, {"no_runner": True})


def _unclaimed_cpu_stages(now: datetime) -> Iterable[Stage]:
    waited = timedelta(seconds=django_settings.MIGRATOR_QUEUE_TIMEOUT_S)
    stuck = Stage.objects.filter(state=StageState.QUEUED, queue="cpu", queued_at__lt=now - waited)
    return (stage for stage in stuck.order_by("queued_at")[:SWEEP_BATCH] if transitions.earlier_stages_final(stage))


def _fail_unclaimed(stage: Stage) -> Stage | None:
    return transitions.fail_queued_stage(
        stage, "no worker picked this stage up in time (is a worker for the cpu queue running?)"
    )


def _each(stages: Iterable[Stage], change: Callable[[Stage], Stage | None]) -> list[Stage]:
    """Apply ``change`` to each of ``stages`` (a query of at most SWEEP_BATCH rows); the stages it changed.
    A stage whose change raises is skipped, and so is one that changed meanwhile (claimed, finished,
    a fresh heartbeat): its transition found it no longer as expected."""
    changed: list[Stage] = []
    for stage in stages:
        result = _guarded(stage, change)
        if result is not None:
            changed.append(result)
    return changed


def _guarded(stage: Stage, action: Callable[[Stage], Stage | None]) -> Stage | None:
    try:
        return action(stage)
    except Exception:  # one broken row must not keep the sweep from the others
        log.exception("sweep: stage %s of run %s could not be handled; the next pass tries again", stage.pk,
                      stage.run_id)
        return None


def _advance_and_announce(stage: Stage, dispatch: orchestrator.Dispatcher) -> None:
    """Hand out what can still run after ``stage`` changed; tell the listeners if its run ended."""
    orchestrator.advance(stage.run_id, dispatch)
    orchestrator.announce_if_finished(stage.run_id)
