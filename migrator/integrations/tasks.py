"""Celery wrappers for webhook deliveries."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="integrations.start_delivery_run", acks_late=True, ignore_result=True)
def start_delivery_run(delivery_pk: int) -> None:
    from migrator.integrations import actions

    actions.start_delivery_run(delivery_pk)
