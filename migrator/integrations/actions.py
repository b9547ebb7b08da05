"""Webhook deliveries: recorded at once (each at most once), turned into runs by a worker.

The endpoint only verifies, records the delivery and queues ``integrations.start_delivery_run``
on the ``hooks`` queue (so deliveries never wait behind hour-long stages on ``cpu``);
creating the run and queueing its first stage happen on a worker. That keeps the endpoint well
inside a host's response deadline under bursts, and the unique delivery row plus a locked,
idempotent hand-off make sure each delivery starts exactly one run. A periodic task of this app
(``integrations.requeue_stale_deliveries``) re-queues deliveries whose task was lost.

The hand-off task is looked up by its registered name, so this module and ``tasks`` (which calls
it) do not import each other.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from migrator.celery import app
from migrator.integrations.events import RunRequest
from migrator.integrations.models import WebhookDelivery
from migrator.pipeline.broker import BROKER_ERRORS
from migrator.pipeline.dispatch import start_run
from migrator.projects.actions import ActionError, create_run
from migrator.projects.constants import Trigger
from migrator.projects.models import Project, Run

log = logging.getLogger(__name__)
START_DELIVERY_RUN_TASK = "integrations.start_delivery_run"
STALE_AFTER = timedelta(seconds=60)


@dataclass(frozen=True)
class DeliveryOutcome:
    created: bool  # False: a replay of a delivery already seen
    delivery_id: int
    run: Run | None
    queued: bool = True  # False: recorded, but the broker was down (the sweep queues it later)


def _claim(project: Project, provider: str, delivery_id: str, wanted: RunRequest) -> int | None:
    """Insert the delivery row unless it exists: one statement instead of get_or_create's four.

    A concurrent duplicate blocks on the unique index until the first transaction ends, then
    inserts nothing (first committed) or inserts (first rolled back).
    """
    table = WebhookDelivery._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (provider, delivery_id, project_id, event, action, head_sha, pr_url, error, "
            "received_at) VALUES (%s, %s, %s, %s, %s, %s, %s, '', %s) "
            "ON CONFLICT (project_id, provider, delivery_id) DO NOTHING RETURNING id",
            [provider, delivery_id, project.pk, wanted.event[:50], wanted.action[:50], wanted.sha[:64],
             wanted.pr_url[:500], timezone.now()],
        )
        row = cursor.fetchone()
    return int(row[0]) if row else None


def accept_delivery(project: Project, provider: str, delivery_id: str, wanted: RunRequest) -> DeliveryOutcome:
    """Record a delivery and queue its run; a replayed delivery queues nothing."""
    pk = _claim(project, provider, delivery_id, wanted)
    if pk is None:
        seen = (
            WebhookDelivery.objects.filter(project=project, provider=provider, delivery_id=delivery_id)
            .only("pk", "run").first()
        )
        return DeliveryOutcome(False, seen.pk if seen else 0, seen.run if seen else None)
    return DeliveryOutcome(True, pk, None, queued=queue_delivery(pk))


def queue_delivery(pk: int) -> bool:
    """Queue the delivery's hand-off; False when the broker is down (the row stays for the sweep)."""
    try:
        app.tasks[START_DELIVERY_RUN_TASK].apply_async(args=[pk], queue="hooks")
    except BROKER_ERRORS as exc:
        log.warning("delivery %s is recorded but could not be queued (%s); the sweep will", pk, exc)
        return False
    return True


def start_delivery_run(pk: int) -> Run | None:
    """Create the delivery's run and queue its first stage, once: a second call finds the run set."""
    with transaction.atomic():
        delivery = WebhookDelivery.objects.select_for_update().select_related("project").filter(pk=pk).first()
        if delivery is None or delivery.run_id or delivery.processed_at:
            return None
        try:
            run = create_run(
                delivery.project, user=None, trigger=Trigger.WEBHOOK, ref=delivery.head_sha,
                pr_url=delivery.pr_url, commit_sha=delivery.head_sha,
            )
        except ActionError as exc:
            WebhookDelivery.objects.filter(pk=pk).update(error=str(exc)[:500], processed_at=timezone.now())
            return None
        WebhookDelivery.objects.filter(pk=pk).update(run=run, processed_at=timezone.now())
        start_run(run)  # queues the first stage once this transaction commits
    return run


def requeue_stale_deliveries(now: datetime | None = None) -> int:
    """Queue again deliveries nobody turned into a run (their task message was lost)."""
    cutoff = (now or timezone.now()) - STALE_AFTER
    stale = list(
        WebhookDelivery.objects.filter(run__isnull=True, processed_at__isnull=True, received_at__lt=cutoff)
        .values_list("pk", flat=True)[:500]
    )
    for pk in stale:
        if not queue_delivery(pk):
            break  # the broker is down again; the next sweep retries the rest
    return len(stale)
