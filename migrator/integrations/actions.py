"""Start runs from webhook deliveries, each delivery at most once."""
from __future__ import annotations

from dataclasses import dataclass

from django.db import connection, transaction
from django.utils import timezone

from migrator.integrations.events import RunRequest
from migrator.integrations.models import WebhookDelivery
from migrator.projects.actions import create_run
from migrator.projects.constants import Trigger
from migrator.projects.models import Project, Run
from worker.dispatch import start_run


@dataclass(frozen=True)
class DeliveryOutcome:
    created: bool  # False: a replay of a delivery already seen
    run: Run | None


def _claim(project: Project, provider: str, delivery_id: str, wanted: RunRequest) -> bool:
    """Insert the delivery row unless it exists: one statement instead of get_or_create's four.

    A concurrent duplicate blocks on the unique index until the first transaction ends, then
    inserts nothing (first committed) or inserts (first rolled back).
    """
    table = WebhookDelivery._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (provider, delivery_id, project_id, event, action, received_at) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (provider, delivery_id) DO NOTHING RETURNING id",
            [provider, delivery_id, project.pk, wanted.event[:50], wanted.action[:50], timezone.now()],
        )
        return cursor.fetchone() is not None


def accept_delivery(project: Project, provider: str, delivery_id: str, wanted: RunRequest) -> DeliveryOutcome:
    """Record the delivery and start its run in one transaction; a replayed delivery starts nothing.

    If creating the run fails, the delivery row goes too, so a retry by the host can succeed.
    """
    with transaction.atomic():
        if not _claim(project, provider, delivery_id, wanted):
            seen = WebhookDelivery.objects.select_related("run").filter(provider=provider, delivery_id=delivery_id).first()
            return DeliveryOutcome(False, seen.run if seen else None)
        run = create_run(
            project, user=None, trigger=Trigger.WEBHOOK, ref=wanted.sha, pr_url=wanted.pr_url, commit_sha=wanted.sha
        )
        WebhookDelivery.objects.filter(provider=provider, delivery_id=delivery_id).update(run=run)
        start_run(run)  # queues the first stage once this transaction commits
    return DeliveryOutcome(True, run)
