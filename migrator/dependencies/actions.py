"""Every state change of a dependency resolve: request (from a finished scan), claim, heartbeat, finish.

Requesting is idempotent: a row per key, created once; a run asking for a key that is queued,
running, or done within ``MIGRATOR_DEPS_CACHE_DAYS`` gets that row (the cache). A failed row (no
answer from the index, a time limit, a lost worker) and an expired one are queued again. The row
is committed with its task id before the message is published; the claim is a conditional UPDATE,
so a message delivered twice resolves once.
"""
from __future__ import annotations

import dataclasses
import logging
import socket
import time
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta

from celery import current_app
from django.conf import settings as django_settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from migrator.dependencies.constants import DEPS_QUEUE, RESOLVE_TASK, ResolveState
from migrator.dependencies.models import DependencyResolve
from migrator.pipeline.broker import BROKER_ERRORS
from worker.scanning.dep_check import check_resolution
from worker.scanning.dep_resolve import Resolution, ResolveOptions, ResolveRequest, resolve_request
from worker.scanning.pytorch_scan import resolve_options_from_env

log = logging.getLogger(__name__)
HEARTBEAT_EVERY_S = 5.0
_NO_ANSWER = ("unreachable", "timeout", "cancelled", "failed")


def request_resolves(requests: Mapping[str, object], *, inline: bool = False) -> list[DependencyResolve]:
    """Rows for each ``key -> request`` of a scan; the new, failed and expired ones queued (or, ``inline``,
    resolved right here: ``migrate_repo`` runs everything in its own process)."""
    now = timezone.now()
    rows = []
    for key, request in list(requests.items())[:200]:
        if not isinstance(request, dict) or len(key) != 64:
            continue
        row, created = DependencyResolve.objects.get_or_create(
            key=key, defaults={"request": request, "requested_at": now, "state": ResolveState.QUEUED})
        if not created:
            DependencyResolve.objects.filter(pk=row.pk).update(requested_at=now)
            if not _wants_requeue(row, now) or not _requeue(row):
                rows.append(row)
                continue
        rows.append(row)
        if inline:
            execute_resolve(row.pk, worker=f"{socket.gethostname()} (inline)")
        else:
            publish(row.pk)
    return rows


def _wants_requeue(row: DependencyResolve, now: datetime) -> bool:
    if row.state == ResolveState.FAILED:
        return True
    expiry = timedelta(days=django_settings.MIGRATOR_DEPS_CACHE_DAYS)
    return row.state == ResolveState.DONE and row.finished_at is not None and row.finished_at < now - expiry


def _requeue(row: DependencyResolve) -> bool:
    return bool(DependencyResolve.objects.filter(pk=row.pk, state=row.state).update(
        state=ResolveState.QUEUED, task_id="", attempts=0, worker="", started_at=None, heartbeat_at=None))


def publish(resolve_id: int, task_id: str = "") -> None:
    """Record the task id, then publish after commit; a broker that is down leaves the row for the sweep."""
    task_id = task_id or str(uuid.uuid4())
    DependencyResolve.objects.filter(pk=resolve_id, state=ResolveState.QUEUED).update(
        task_id=task_id, queued_at=timezone.now())

    def send() -> None:
        try:
            current_app.send_task(RESOLVE_TASK, args=[resolve_id], queue=DEPS_QUEUE, task_id=task_id)
        except BROKER_ERRORS as exc:
            log.warning("dependency resolve %s is recorded but not published (%s); the sweep will", resolve_id, exc)

    transaction.on_commit(send)


def claim(resolve_id: int, worker: str) -> bool:
    now = timezone.now()
    return bool(DependencyResolve.objects.filter(pk=resolve_id, state=ResolveState.QUEUED).update(
        state=ResolveState.RUNNING, worker=worker[:200], started_at=now, heartbeat_at=now, finished_at=None,
        attempts=F("attempts") + 1))


def _still_ours(resolve_id: int, worker: str) -> Callable[[], bool]:
    """pip's cancel check: touches the heartbeat every few seconds; stops pip when the row is no longer ours
    (the sweep took it back)."""
    last = [0.0]

    def cancelled() -> bool:
        if time.monotonic() - last[0] < HEARTBEAT_EVERY_S:
            return False
        last[0] = time.monotonic()
        return not DependencyResolve.objects.filter(pk=resolve_id, state=ResolveState.RUNNING, worker=worker[:200]) \
            .update(heartbeat_at=timezone.now())

    return cancelled


def options() -> ResolveOptions:
    base = resolve_options_from_env() or ResolveOptions()
    limit = max(5.0, django_settings.MIGRATOR_DEPS_TIMEOUT_S - 15.0)
    return dataclasses.replace(base, timeout_s=min(base.timeout_s, limit))


def execute_resolve(resolve_id: int, *, worker: str = "") -> DependencyResolve | None:
    """Claim and run one resolve; None when another worker had it or it is gone."""
    worker = worker or socket.gethostname()
    if not claim(resolve_id, worker):
        return None
    row = DependencyResolve.objects.get(pk=resolve_id)
    try:
        request = ResolveRequest.from_dict(row.request)
        resolution = resolve_request(request, options(), cancel=_still_ours(resolve_id, worker))
        check = check_resolution(resolution, request.torch_build, request.triton_spec, request.rocm_version,
                                 request.image)
        result = {**resolution.to_dict(), "check": check.to_dict()}
    except Exception as exc:  # a bug must end as a visible failure, never a row left running
        log.exception("dependency resolve %s crashed", resolve_id)
        resolution = Resolution("failed", f"internal error: {type(exc).__name__}: {exc}"[:300])
        result = resolution.to_dict()
    state = ResolveState.FAILED if resolution.status in _NO_ANSWER else ResolveState.DONE
    finish(resolve_id, worker, state, result, _summary(resolution))
    return DependencyResolve.objects.get(pk=resolve_id)


def finish(resolve_id: int, worker: str, state: ResolveState, result: dict[str, object], summary: str) -> bool:
    return bool(DependencyResolve.objects.filter(pk=resolve_id, state=ResolveState.RUNNING, worker=worker[:200])
                .update(state=state, result=result, summary=summary[:500], finished_at=timezone.now()))


def _summary(resolution: Resolution) -> str:
    if resolution.status in ("resolved", "partial"):
        return f"{len(resolution.packages)} packages resolved in {resolution.duration_s:.1f} s" + (
            f"; {len(resolution.no_wheel)} without a wheel" if resolution.no_wheel else "")
    return f"{resolution.status}: {resolution.message}"
