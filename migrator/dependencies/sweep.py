"""The dependencies app's periodic sweep: no resolve stays running or queued forever.

- a running resolve whose heartbeat is older than ``MIGRATOR_HEARTBEAT_STALE_S`` lost its worker:
  it is queued once more (``MAX_ATTEMPTS``), then failed with "worker lost";
- a queued resolve whose message the broker no longer holds is published again under its task id
  (``migrator.pipeline.broker.pending_task_ids``; the claim is conditional, so a duplicate is harmless);
- a queued resolve no worker took within ``MIGRATOR_QUEUE_TIMEOUT_S`` fails with "no worker on the deps queue".
Each query takes at most ``SWEEP_BATCH`` rows.
"""
from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings as django_settings
from django.utils import timezone

from migrator.dependencies import actions
from migrator.dependencies.constants import DEPS_QUEUE, MAX_ATTEMPTS, ResolveState
from migrator.dependencies.models import DependencyResolve
from migrator.pipeline.broker import BROKER_ERRORS, BrokerUnavailable, pending_task_ids

log = logging.getLogger(__name__)
SWEEP_BATCH = 200
TAKEN_CLAIM_S = 60.0
_BROKER_DOWN: tuple[type[BaseException], ...] = (BrokerUnavailable, *BROKER_ERRORS)


def sweep(now: datetime | None = None) -> list[int]:
    """One pass; the ids of the resolves it changed or published again."""
    now = now or timezone.now()
    changed = _stale(now) + _unclaimed(now)
    try:
        changed += _lost(now)
    except _BROKER_DOWN as exc:
        log.warning("dependencies sweep: cannot reach the broker (%s); the next pass retries", exc)
    return changed


def _stale(now: datetime) -> list[int]:
    stale_after = timedelta(seconds=django_settings.MIGRATOR_HEARTBEAT_STALE_S)
    changed = []
    rows = DependencyResolve.objects.filter(state=ResolveState.RUNNING, heartbeat_at__lt=now - stale_after)
    for row in rows.order_by("heartbeat_at")[:SWEEP_BATCH]:
        same = DependencyResolve.objects.filter(pk=row.pk, state=ResolveState.RUNNING, heartbeat_at=row.heartbeat_at)
        if row.attempts < MAX_ATTEMPTS:
            if same.update(state=ResolveState.QUEUED, worker="", task_id=""):
                actions.publish(row.pk)
                changed.append(row.pk)
        elif same.update(state=ResolveState.FAILED, finished_at=now,
                         summary="worker lost: the deps worker stopped answering while it resolved",
                         result={"status": "failed", "message": "worker lost"}):
            changed.append(row.pk)
    return changed


def _unclaimed(now: datetime) -> list[int]:
    waited = timedelta(seconds=django_settings.MIGRATOR_QUEUE_TIMEOUT_S)
    rows = DependencyResolve.objects.filter(state=ResolveState.QUEUED, queued_at__lt=now - waited)
    changed = []
    for row in rows.order_by("queued_at")[:SWEEP_BATCH]:
        if DependencyResolve.objects.filter(pk=row.pk, state=ResolveState.QUEUED).update(
                state=ResolveState.FAILED, finished_at=now,
                summary=f"no worker took this resolve in time (is a worker for the {DEPS_QUEUE} queue running?)",
                result={"status": "failed", "message": "no worker"}):
            changed.append(row.pk)
    return changed


def _lost(now: datetime) -> list[int]:
    grace = timedelta(seconds=django_settings.MIGRATOR_REPUBLISH_GRACE_S)
    waiting = list(DependencyResolve.objects.filter(state=ResolveState.QUEUED)
                   .exclude(queued_at__gte=now - grace).order_by("requested_at")[:SWEEP_BATCH])
    if not waiting:
        return []
    pending = pending_task_ids([DEPS_QUEUE], taken_within_s=TAKEN_CLAIM_S)
    resent = []
    for row in waiting:
        if not row.task_id or row.task_id not in pending:
            actions.publish(row.pk, row.task_id)
            resent.append(row.pk)
    if resent:
        log.warning("dependencies sweep: published %d resolve(s) again", len(resent))
    return resent
