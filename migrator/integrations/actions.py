"""Webhook deliveries: recorded at once (each at most once), turned into runs by a worker.

A delivery id seen before starts nothing. Neither does a fresh id asking for the same change (project,
event, commit, pull request) as a delivery within ``MIGRATOR_WEBHOOK_DEDUP_WINDOW_S`` (a replayed body
with a made-up id, or a host redelivering), nor one over the project's ``MIGRATOR_WEBHOOK_RUNS_PER_HOUR``:
both are recorded with the reason and answered 200. One project's deliveries are decided under a lock
on its row, so concurrent replays cannot slip past each other.

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

from django.conf import settings as django_settings
from django.contrib.postgres.aggregates import ArrayAgg
from django.db import connection, transaction
from django.db.models import CharField, Count, F, Func, Q, Value
from django.db.models.functions import Concat
from django.utils import timezone

from migrator.celery import app
from migrator.integrations.events import RunRequest
from migrator.integrations.models import Skipped, WebhookDelivery
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
    skipped: str = ""  # Skipped.DUPLICATE / RATE_LIMITED: recorded under a new id, starts nothing
    reason: str = ""


def _claim(project: Project, provider: str, delivery_id: str, wanted: RunRequest, skipped: str, reason: str) -> int | None:
    """Insert the delivery row unless it exists: one statement instead of get_or_create's four.

    A skipped delivery is recorded as already processed, so nothing ever hands it to a worker.
    """
    table = WebhookDelivery._meta.db_table
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (provider, delivery_id, project_id, event, action, head_sha, pr_url, error, "
            "skipped, skip_reason, received_at, processed_at) VALUES (%s, %s, %s, %s, %s, %s, %s, '', %s, %s, %s, %s) "
            "ON CONFLICT (project_id, provider, delivery_id) DO NOTHING RETURNING id",
            [provider, delivery_id, project.pk, wanted.event[:50], wanted.action[:50], wanted.sha[:64],
             wanted.pr_url[:500], skipped, reason[:300], now, now if skipped else None],
        )
        row = cursor.fetchone()
    return int(row[0]) if row else None


def _lock_project(project: Project) -> None:
    """One project's deliveries are decided one at a time: two replays racing under fresh ids see each other."""
    list(Project.objects.select_for_update().filter(pk=project.pk).values_list("pk", flat=True))


def _utc_text(field: str) -> Func:
    """A timestamp as text, to the second, in UTC (the connection's time zone)."""
    return Func(F(field), Value("YYYY-MM-DD HH24:MI:SS \"UTC\""), function="to_char", output_field=CharField())


def _why_skip(project: Project, wanted: RunRequest) -> tuple[str, str]:
    """(Skipped kind, reason) for a new delivery that must start nothing; ("", "") otherwise. One query
    over the project's recent deliveries that started (or will start) a run."""
    now = timezone.now()
    hour_ago = now - timedelta(hours=1)
    window_start = now - timedelta(seconds=django_settings.MIGRATOR_WEBHOOK_DEDUP_WINDOW_S)
    same = Q(event=wanted.event[:50], head_sha=wanted.sha[:64], pr_url=wanted.pr_url[:500],
             received_at__gte=window_start)
    recent = WebhookDelivery.objects.filter(
        project=project, skipped=Skipped.NO, error="", received_at__gte=min(hour_ago, window_start)
    ).aggregate(runs=Count("pk", filter=Q(received_at__gte=hour_ago)),
                same=ArrayAgg(Concat("delivery_id", Value(" received at "), _utc_text("received_at")),
                              filter=same, order_by="-received_at", default=[]))
    if recent["same"]:
        what = f"{wanted.event} of {wanted.sha[:12]}" + (f" for {wanted.pr_url}" if wanted.pr_url else "")
        return Skipped.DUPLICATE, f"the same {what} as delivery {recent['same'][0][:120]}"
    bound = django_settings.MIGRATOR_WEBHOOK_RUNS_PER_HOUR
    if recent["runs"] >= bound:
        return Skipped.RATE_LIMITED, f"this project's webhooks started {bound} runs within the last hour (the limit)"
    return Skipped.NO, ""


def accept_delivery(project: Project, provider: str, delivery_id: str, wanted: RunRequest) -> DeliveryOutcome:
    """Record a delivery and queue its run. A replayed delivery id queues nothing; neither does the same
    change under a fresh id within MIGRATOR_WEBHOOK_DEDUP_WINDOW_S, nor a delivery over the project's
    MIGRATOR_WEBHOOK_RUNS_PER_HOUR (both recorded with the reason). Three statements in one transaction:
    lock, look back, insert."""
    with transaction.atomic():
        _lock_project(project)
        skipped, reason = _why_skip(project, wanted)
        pk = _claim(project, provider, delivery_id, wanted, skipped, reason)
        if pk is None:  # a delivery id seen before
            seen = (
                WebhookDelivery.objects.filter(project=project, provider=provider, delivery_id=delivery_id)
                .only("pk", "run", "skipped", "skip_reason").first()
            )
            if seen is None:
                return DeliveryOutcome(False, 0, None)
            return DeliveryOutcome(False, seen.pk, seen.run, skipped=seen.skipped, reason=seen.skip_reason)
    if skipped:
        log.info("webhook delivery %s of project %s starts nothing: %s", delivery_id, project.pk, reason)
        return DeliveryOutcome(False, pk, None, skipped=skipped, reason=reason)
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
