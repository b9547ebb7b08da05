"""Publish again the next stage of runs whose broker message is gone.

A stage row is written (``task_id``, ``queued_at``) before its message is published, so the
database always knows what should be waiting in the broker. When Redis restarts without
persistence, or a publish fails because the broker is down, the row stays queued and nothing
would ever deliver it. Each sweep compares the next stage of every active run with what the broker
holds (``migrator.pipeline.broker.pending_task_ids``: queued, or taken by a worker within the last minute)
and publishes the missing ones again under the same task id. A message that was in fact still on its way is harmless: the claim is a conditional
UPDATE, so only one delivery runs the stage.

The CUDA reference rows are handled the same way (``resend_lost_references``). A smoke stage waiting
for its run's reference (not handed out on purpose) is not a lost stage.

Runs of the command line (``migrate_repo``) run in their own process and are never touched.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings as django_settings
from django.db.models import Max

from migrator.pipeline import orchestrator, references
from migrator.pipeline.broker import BROKER_ERRORS, BrokerUnavailable, pending_task_ids
from migrator.projects.constants import FINAL_STAGE_STATES, STAGE_NAMES, RunState, StageState, Trigger
from migrator.projects.models import ReferenceRun, Stage

log = logging.getLogger(__name__)
Republisher = Callable[[Stage], None]
ReferenceRepublisher = Callable[[ReferenceRun], None]
# A worker takes a stage message only when a process is free for it (prefetch 1, acks_late) and
# claims the stage at once; a message taken longer ago whose stage is still queued was held by a
# worker that died before claiming it.
TAKEN_CLAIM_S = 60.0
MAX_RUNS = 200


@dataclass(frozen=True)
class Resent:
    republished: list[int]  # stage ids published again under their task id
    dispatched: list[int]  # stage ids that had never been handed out


def next_stages(now: datetime, grace: timedelta) -> list[Stage]:
    """The next stage of each active (non-CLI) run, when it is queued and has waited past ``grace``.

    Bounded: the unfinished stages of at most ``MAX_RUNS`` runs a pass, oldest runs first."""
    active = (
        Stage.objects.filter(run__state__in=(RunState.QUEUED, RunState.RUNNING), run__cancel_requested=False)
        .exclude(run__trigger=Trigger.CLI)
        .exclude(state__in=FINAL_STAGE_STATES)
        # smoke waiting for a reference that is handed out: the reference is what may be lost
        .exclude(run__reference__state__in=(StageState.QUEUED, StageState.RUNNING), run__reference__task_id__gt="")
        .select_related("run")
        .order_by("run_id", "position")[: MAX_RUNS * len(STAGE_NAMES)]
    )
    first: dict[int, Stage] = {}
    for stage in active:
        first.setdefault(stage.run_id, stage)
    waiting = [s for s in first.values() if s.state == StageState.QUEUED]
    settled = _last_settled(waiting)
    return [s for s in waiting if _waiting_since(s, settled) < now - grace]


def _last_settled(stages: list[Stage]) -> dict[int, datetime]:
    """When each run's latest earlier stage finished (a stage becomes next at that moment)."""
    rows = (
        Stage.objects.filter(run_id__in=[s.run_id for s in stages], state__in=FINAL_STAGE_STATES)
        .values("run_id").annotate(last=Max("finished_at"))
    )
    return {row["run_id"]: row["last"] for row in rows if row["last"] is not None}


def _waiting_since(stage: Stage, settled: dict[int, datetime]) -> datetime:
    if stage.task_id and stage.queued_at:
        return stage.queued_at
    return max(filter(None, (stage.run.created_at, settled.get(stage.run_id))))


def resend_lost_stages(now: datetime, dispatch: orchestrator.Dispatcher, republish: Republisher,
                       send_reference: references.ReferenceDispatcher | None = None) -> Resent:
    grace = timedelta(seconds=django_settings.MIGRATOR_REPUBLISH_GRACE_S)
    stages = next_stages(now, grace)
    handed_out = [s for s in stages if s.task_id]
    try:
        queues = {s.queue for s in handed_out}
        pending = pending_task_ids(queues, taken_within_s=TAKEN_CLAIM_S) if handed_out else set()
    except BrokerUnavailable as exc:
        log.warning("sweep: cannot read the broker (%s); lost stages are re-sent on a later pass", exc)
        return Resent([], [])
    resent = Resent([], [])
    for stage in stages:
        try:
            if not stage.task_id:
                orchestrator.advance(stage.run_id, dispatch, send_reference)
                resent.dispatched.append(stage.pk)
            elif stage.task_id not in pending:
                republish(stage)
                resent.republished.append(stage.pk)
        except BROKER_ERRORS as exc:
            log.warning("sweep: broker lost again while re-sending (%s); next pass retries", exc)
            break
        except Exception:  # one broken row must not keep the others from being re-sent
            log.exception("sweep: stage %s of run %s could not be re-sent; next pass retries", stage.pk, stage.run_id)
    if resent.republished or resent.dispatched:
        log.warning("sweep: re-sent %d lost stage message(s), dispatched %d stage(s) never handed out",
                    len(resent.republished), len(resent.dispatched))
    return resent


def resend_lost_references(now: datetime, republish: ReferenceRepublisher) -> list[int]:
    """Publish again the queued CUDA references (handed out, of active non-CLI runs) whose message the
    broker no longer holds; the ids of those re-sent."""
    grace = timedelta(seconds=django_settings.MIGRATOR_REPUBLISH_GRACE_S)
    waiting = list(
        ReferenceRun.objects.filter(state=StageState.QUEUED, queued_at__lt=now - grace, run__cancel_requested=False,
                                    run__state__in=(RunState.QUEUED, RunState.RUNNING))
        .exclude(task_id="").exclude(run__trigger=Trigger.CLI).order_by("queued_at")[:MAX_RUNS]
    )
    if not waiting:
        return []
    try:
        pending = pending_task_ids({r.queue for r in waiting}, taken_within_s=TAKEN_CLAIM_S)
    except BrokerUnavailable as exc:
        log.warning("sweep: cannot read the broker (%s); lost references are re-sent on a later pass", exc)
        return []
    resent: list[int] = []
    for reference in waiting:
        if reference.task_id in pending:
            continue
        try:
            republish(reference)
        except BROKER_ERRORS as exc:
            log.warning("sweep: broker lost again while re-sending (%s); next pass retries", exc)
            break
        resent.append(reference.pk)
    if resent:
        log.warning("sweep: re-sent %d lost CUDA reference message(s)", len(resent))
    return resent
