"""The periodic sweep: no stage may stay running or waiting forever.

- a running stage whose heartbeat is older than MIGRATOR_HEARTBEAT_STALE_S failed: its worker died,
  and its task is revoked so a late redelivery does not start it again;
- a smoke stage waiting for a ROCm runner longer than the project's ``smoke_wait_timeout_s`` is
  skipped: "not run: no ROCm runner within 30 min" (the run is then partial: nothing failed, but smoke
  was not checked); a PyTorch extension's link or smoke waiting on ``rocm.pytorch`` likewise, "not run:
  no ROCm PyTorch runner within 30 min";
- the CUDA reference row is swept like a stage: running with a stale heartbeat, failed ("worker lost");
  queued on ``cuda`` longer than ``smoke_wait_timeout_s``, skipped ("not run: no CUDA runner within
  30 min"); either way smoke is handed out next and the run says the comparison did not happen;
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
from typing import TypeVar

from django.conf import settings as django_settings
from django.db.models import QuerySet
from django.utils import timezone

from migrator.pipeline import orchestrator, redelivery, references
from migrator.projects import transitions
from migrator.projects.constants import PYTORCH_QUEUE, StageState
from migrator.projects.models import ReferenceRun, Stage
from migrator.projects.queues import rocm_queues
from worker.project_settings import ProjectSettings
from worker.wording import wait_text

log = logging.getLogger(__name__)
SWEEP_BATCH = 200
Revoker = Callable[[list[str]], None]
Row = TypeVar("Row", Stage, ReferenceRun)


def sweep(
    dispatch: orchestrator.Dispatcher, republish: redelivery.Republisher | None = None,
    revoke: Revoker | None = None, *, send_reference: references.ReferenceDispatcher | None = None,
    republish_reference: redelivery.ReferenceRepublisher | None = None,
) -> list[Stage]:
    """One pass; ``republish`` re-sends stages whose message was lost, ``revoke`` cancels the tasks of
    the stages it fails, ``send_reference`` and ``republish_reference`` hand out CUDA reference runs
    (all given by the periodic task). Returns the stages it changed."""
    now = timezone.now()
    changed = _each(_stale(now), transitions.fail_stale_stage)
    references = _each(_stale_references(now), transitions.fail_stale_reference)
    if revoke is not None:
        revoke([s.task_id for s in changed if s.task_id] + [r.task_id for r in references if r.task_id])
    changed += _each(_smoke_waiting_too_long(now), _skip_smoke_waiting)
    changed += _each(_unclaimed_cpu_stages(now), _fail_unclaimed)
    references += _each(_references_waiting_too_long(now), _skip_reference_waiting)
    for run_id in dict.fromkeys([s.run_id for s in changed] + [r.run_id for r in references]):
        _advance_and_announce(run_id, dispatch, send_reference)
    if republish is not None:
        redelivery.resend_lost_stages(now, dispatch, republish, send_reference)
    if republish_reference is not None:
        redelivery.resend_lost_references(now, republish_reference)
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


def no_rocm_runner_within(limit_s: int) -> str:
    """What a smoke stage that no ROCm runner took says, on the run page, in the report and the README."""
    return f"not run: no ROCm runner within {wait_text(limit_s)}"


def _skip_smoke_waiting(stage: Stage) -> Stage | None:
    limit = ProjectSettings.stored_or_default(stage.run.settings_used).smoke_wait_timeout_s
    if stage.queue == PYTORCH_QUEUE:  # a PyTorch extension's link or smoke, whose runner went away
        return transitions.skip_waiting_stage(stage, f"not run: no ROCm PyTorch runner within {wait_text(limit)}",
                                              {"no_pytorch_runner": True, "wait_limit_s": limit})
    return transitions.skip_waiting_stage(stage, no_rocm_runner_within(limit), {"no_runner": True, "wait_limit_s": limit})


def _stale_references(now: datetime) -> QuerySet[ReferenceRun]:
    stale_after = timedelta(seconds=django_settings.MIGRATOR_HEARTBEAT_STALE_S)
    stale = ReferenceRun.objects.filter(state=StageState.RUNNING, heartbeat_at__lt=now - stale_after)
    return stale.order_by("heartbeat_at")[:SWEEP_BATCH]


def _references_waiting_too_long(now: datetime) -> Iterable[ReferenceRun]:
    waiting = ReferenceRun.objects.filter(state=StageState.QUEUED, queued_at__isnull=False)
    for reference in waiting.select_related("run").order_by("queued_at")[:SWEEP_BATCH]:
        limit = ProjectSettings.stored_or_default(reference.run.settings_used).smoke_wait_timeout_s
        if reference.queued_at and reference.queued_at < now - timedelta(seconds=limit):
            yield reference


def _skip_reference_waiting(reference: ReferenceRun) -> ReferenceRun | None:
    settings = ProjectSettings.stored_or_default(reference.run.settings_used)
    return transitions.skip_reference(reference, references.no_cuda_runner_within(settings),
                                      {"no_runner": True, "wait_limit_s": settings.smoke_wait_timeout_s})


def _unclaimed_cpu_stages(now: datetime) -> Iterable[Stage]:
    waited = timedelta(seconds=django_settings.MIGRATOR_QUEUE_TIMEOUT_S)
    stuck = Stage.objects.filter(state=StageState.QUEUED, queue="cpu", queued_at__lt=now - waited)
    return (stage for stage in stuck.order_by("queued_at")[:SWEEP_BATCH] if transitions.earlier_stages_final(stage))


def _fail_unclaimed(stage: Stage) -> Stage | None:
    return transitions.fail_queued_stage(
        stage, "no worker picked this stage up in time (is a worker for the cpu queue running?)"
    )


def _each(rows: Iterable[Row], change: Callable[[Row], Row | None]) -> list[Row]:
    """Apply ``change`` to each of ``rows`` (a query of at most SWEEP_BATCH stages or references); the
    rows it changed. A row whose change raises is skipped, and so is one that changed meanwhile (claimed,
    finished, a fresh heartbeat): its transition found it no longer as expected."""
    changed: list[Row] = []
    for row in rows:
        result = _guarded(row, change)
        if result is not None:
            changed.append(result)
    return changed


def _guarded(row: Row, action: Callable[[Row], Row | None]) -> Row | None:
    try:
        return action(row)
    except Exception:  # one broken row must not keep the sweep from the others
        log.exception("sweep: %s %s of run %s could not be handled; the next pass tries again", row.name, row.pk,
                      row.run_id)
        return None


def _advance_and_announce(run_id: int, dispatch: orchestrator.Dispatcher,
                          send_reference: references.ReferenceDispatcher | None) -> None:
    """Hand out what can still run in a run the sweep changed; tell the listeners if it ended."""
    try:
        orchestrator.advance(run_id, dispatch, send_reference)
        orchestrator.announce_if_finished(run_id)
    except Exception:  # one broken run must not keep the sweep from the others
        log.exception("sweep: run %s could not be advanced; the next pass tries again", run_id)
