"""Celery wrappers: each task takes an id and calls the app's actions; no logic lives here."""
from __future__ import annotations

from celery import current_task, shared_task
from django.conf import settings as django_settings

from migrator.dependencies import actions
from migrator.dependencies import sweep as sweeping
from migrator.dependencies.constants import RESOLVE_TASK, SWEEP_TASK


# Bounded: pip itself stops at MIGRATOR_DEPS_TIMEOUT_S - 15 s; the soft limit is the backstop, the hard one kills.
@shared_task(name=RESOLVE_TASK, acks_late=True, reject_on_worker_lost=True, ignore_result=True,
             soft_time_limit=django_settings.MIGRATOR_DEPS_TIMEOUT_S,
             time_limit=django_settings.MIGRATOR_DEPS_TIMEOUT_S + 30)
def resolve(resolve_id: int) -> None:
    hostname = getattr(current_task.request, "hostname", "") or ""
    actions.execute_resolve(resolve_id, worker=hostname)


@shared_task(name=SWEEP_TASK, ignore_result=True)
def sweep() -> None:
    sweeping.sweep()
