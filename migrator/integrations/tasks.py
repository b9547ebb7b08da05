"""Celery wrappers for webhook deliveries: the hand-off of one delivery, and the periodic re-queue
of deliveries whose hand-off message was lost (scheduled in ``CELERY_BEAT_SCHEDULE``)."""
from __future__ import annotations

from celery import shared_task

from migrator.integrations import actions


@shared_task(name=actions.START_DELIVERY_RUN_TASK, acks_late=True, ignore_result=True)
def start_delivery_run(delivery_pk: int) -> None:
    actions.start_delivery_run(delivery_pk)


@shared_task(name="integrations.requeue_stale_deliveries", ignore_result=True)
def requeue_stale_deliveries() -> None:
    actions.requeue_stale_deliveries()
