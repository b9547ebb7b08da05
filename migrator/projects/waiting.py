"""Why a queued stage (or CUDA reference run) waits: its queue, its place in it, what runs ahead, since when.

Read from the rows the pipeline keeps (a handed-out stage records its queue, task id and ``queued_at``;
``Runner`` rows say which queues have a worker online), never from the broker: the page shows what the
database knows, the same thing the sweep acts on. Work of other teams ahead in a shared queue is
counted, never named.
"""
from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q, QuerySet
from django.utils import timezone

from migrator.projects.constants import ROCM_QUEUE, StageState
from migrator.projects.models import ReferenceRun, Run, Stage
from migrator.projects.queues import is_rocm_queue
from migrator.runners.models import Runner
from migrator.runners.presence import online_runners

MAX_LISTED = 5  # runs of the viewer's teams named ahead; the rest counted


@dataclass(frozen=True)
class Ahead:
    """One piece of work ahead in the queue (running, or queued before this one)."""

    run: Run | None  # None for another team's run: counted, not shown
    what: str  # a stage name or "CUDA reference"
    state: str
    since: datetime | None


@dataclass(frozen=True)
class Waiting:
    reason: str  # one line: what it waits for
    queue: str  # "" when not handed out yet
    position: int | None  # 1 = next in its queue; None when not in a queue
    queued: int  # how many wait in that queue, this one included
    running: tuple[Ahead, ...]  # taken by a worker of that queue now
    queued_ahead: tuple[Ahead, ...]  # queued before this one
    others_ahead: int  # of these, work of other teams (not listed)
    runners_online: int  # workers online that take this queue
    since: datetime | None  # when it began to wait

    @property
    def wait_limit_s(self) -> float | None:
        return (timezone.now() - self.since).total_seconds() if self.since else None

    @property
    def listed(self) -> tuple[Ahead, ...]:
        return tuple(a for a in (*self.running, *self.queued_ahead) if a.run is not None)[:MAX_LISTED]


def _queue_label(queue: str) -> str:
    if queue == "cuda":
        return "a CUDA runner"
    if is_rocm_queue(queue):
        target = queue.removeprefix(f"{ROCM_QUEUE}.") if queue != ROCM_QUEUE else ""
        return f"a ROCm runner with a {target} GPU" if target else "a ROCm runner"
    return "a CPU worker" if queue == "cpu" else f"a worker on queue {queue}"


def _runners_for(queue: str) -> int:
    if queue == "cuda":
        return len(online_runners("cuda"))
    profile = Runner.Profile.ROCM if is_rocm_queue(queue) else Runner.Profile.CPU
    return sum(1 for runner in online_runners(profile) if queue in (runner.queues or ()))


def _ahead(rows: QuerySet[Stage] | QuerySet[ReferenceRun], teams: Collection[int]) -> list[Ahead]:
    items = []
    for row in rows.select_related("run__project"):
        visible = row.run.project.team_id in teams
        what = "CUDA reference" if isinstance(row, ReferenceRun) else row.name
        items.append(Ahead(row.run if visible else None, what, row.state, row.queued_at if row.state == "queued" else row.started_at))
    return items


def _in_queue(queue: str, since: datetime, rows: QuerySet[Stage] | QuerySet[ReferenceRun], own: Q, teams: Collection[int],
              reason: str) -> Waiting:
    queued = rows.filter(state=StageState.QUEUED, queue=queue).exclude(task_id="")
    before = queued.filter(queued_at__lt=since).exclude(own).order_by("queued_at")
    running = rows.filter(state=StageState.RUNNING, queue=queue).order_by("started_at")
    ahead_queued, ahead_running = _ahead(before, teams), _ahead(running, teams)
    others = sum(1 for a in (*ahead_queued, *ahead_running) if a.run is None)
    return Waiting(reason, queue, len(ahead_queued) + 1, queued.count(), tuple(ahead_running), tuple(ahead_queued),
                   others, _runners_for(queue), since)


def stage_waiting(stage: Stage, teams: Collection[int]) -> Waiting | None:
    """Why ``stage`` is queued; None when it is not. ``teams``: the viewer's teams (whose runs may be named)."""
    if stage.state != StageState.QUEUED:
        return None
    if stage.task_id and stage.queued_at:
        reason = f"waiting for {_queue_label(stage.queue)}"
        return _in_queue(stage.queue, stage.queued_at, Stage.objects.all(), Q(pk=stage.pk), teams, reason)
    reference = ReferenceRun.objects.filter(run_id=stage.run_id).first()
    if stage.name == "smoke" and reference is not None and not reference.is_final:
        return Waiting("waiting for the CUDA reference run to finish (the outputs are compared)", "", None, 0, (), (), 0, 0,
                       reference.created_at)
    earlier = Stage.objects.filter(run_id=stage.run_id, position__lt=stage.position).exclude(
        state__in=(StageState.PASSED, StageState.FAILED, StageState.SKIPPED, StageState.CANCELLED, StageState.NOT_APPLICABLE))
    first = earlier.order_by("position").first()
    if first is not None:
        return Waiting(f"waiting for {first.name} to finish", "", None, 0, (), (), 0, 0, None)
    return Waiting("about to be handed to a worker", "", None, 0, (), (), 0, 0, None)


def reference_waiting(reference: ReferenceRun, teams: Collection[int]) -> Waiting | None:
    """Why the CUDA reference run is queued; None when it is not."""
    if reference.state != StageState.QUEUED:
        return None
    if not (reference.task_id and reference.queued_at):
        return Waiting("about to be handed to a CUDA runner", "", None, 0, (), (), 0, 0, None)
    return _in_queue(reference.queue, reference.queued_at, ReferenceRun.objects.all(), Q(pk=reference.pk), teams,
                     f"waiting for {_queue_label(reference.queue)}")
