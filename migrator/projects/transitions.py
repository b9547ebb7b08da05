"""Every state change of runs and stages goes through this module.

Every transition states the state it expects and is a conditional UPDATE on (id, expected state), like
a claim: when two parties race for the same stage (a redelivered message, a worker claiming a stage
just as the sweep gives up on it), exactly one change happens and the other finds no row changed.
Transitions that can lose such a race return None then, and their callers leave the stage alone.

Locks are always taken in one order, the run's row first and then its stages, so that a claim, a
finish, a cancel and the sweep never wait on each other in a circle.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Case, F, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from migrator.projects.constants import (
    FINAL_STAGE_STATES,
    LOG_CHUNK_BYTES,
    MAX_LOG_BYTES,
    RunState,
    StageState,
)
from migrator.projects.models import LogChunk, ReferenceRun, Run, Stage
from migrator.projects.verdict import verdict_of


def bump(run_id: int) -> None:
    Run.objects.filter(pk=run_id).update(version=F("version") + 1)


def _lock_run(run_id: int) -> None:
    """Lock the run's row for the rest of the transaction (always before any of its stages)."""
    list(Run.objects.select_for_update().filter(pk=run_id).values_list("pk", flat=True))


def _run_of(stage_id: int) -> int | None:
    return Stage.objects.filter(pk=stage_id).values_list("run_id", flat=True).first()


def mark_enqueued(stage: Stage, task_id: str, queue: str) -> None:
    with transaction.atomic():  # one commit for both rows; the run's row first
        bump(stage.run_id)
        Stage.objects.filter(pk=stage.pk, state=StageState.QUEUED).update(
            task_id=task_id, queue=queue, queued_at=timezone.now()
        )


def claim_stage(stage_id: int, worker: str) -> bool:
    """QUEUED -> RUNNING; False when another worker already took it or it was skipped/cancelled/failed."""
    run_id = _run_of(stage_id)
    if run_id is None:
        return False
    now = timezone.now()
    with transaction.atomic():
        _lock_run(run_id)
        claimed = Stage.objects.filter(pk=stage_id, state=StageState.QUEUED).update(
            state=StageState.RUNNING, started_at=now, heartbeat_at=now, worker=worker[:200],
            progress_done=0, progress_total=0, summary="", data={}, log_size=0,
        )
        if not claimed:
            return False
        # A redelivered stage starts from a clean log.
        LogChunk.objects.filter(stage_id=stage_id).delete()
        Run.objects.filter(pk=run_id, state=RunState.QUEUED).update(state=RunState.RUNNING, started_at=now)
        bump(run_id)
    return True


def touch_heartbeat(stage_id: int) -> None:
    Stage.objects.filter(pk=stage_id, state=StageState.RUNNING).update(heartbeat_at=timezone.now())


def record_progress(stage_id: int, run_id: int, done: int, total: int) -> None:
    Stage.objects.filter(pk=stage_id, state=StageState.RUNNING).update(
        progress_done=max(0, done), progress_total=max(0, total), heartbeat_at=timezone.now()
    )
    bump(run_id)


def append_log(stage_id: int, run_id: int, text: str) -> None:
    """Append text to a stage log in chunks of at most LOG_CHUNK_BYTES; stops at MAX_LOG_BYTES."""
    if not text:
        return
    with transaction.atomic():
        stage = Stage.objects.select_for_update().only("log_size").filter(pk=stage_id).first()
        if stage is None:  # deleted with its run, or not visible to this connection yet
            return
        offset = stage.log_size
        if offset >= MAX_LOG_BYTES:
            return
        data = text.encode("utf-8", "replace").replace(b"\x00", b"\\0")
        if offset + len(data) > MAX_LOG_BYTES:
            data = data[: MAX_LOG_BYTES - offset].decode("utf-8", "ignore").encode("utf-8")
            data += b"\n[... log truncated at the size limit ...]\n"
        chunks = [
            LogChunk(stage_id=stage_id, offset=offset + start, text=piece.decode("utf-8"))
            for start, piece in _utf8_pieces(data, LOG_CHUNK_BYTES)
        ]
        LogChunk.objects.bulk_create(chunks)
        Stage.objects.filter(pk=stage_id).update(log_size=offset + len(data), heartbeat_at=timezone.now())
    bump(run_id)


def _utf8_pieces(data: bytes, size: int) -> list[tuple[int, bytes]]:
    """Split UTF-8 bytes into pieces of at most ``size`` bytes without cutting a character."""
    pieces, start = [], 0
    while start < len(data):
        end = min(len(data), start + size)
        while end < len(data) and end > start + 1 and (data[end] & 0xC0) == 0x80:
            end -= 1
        pieces.append((start, data[start:end]))
        start = end
    return pieces


def finish_stage(stage_id: int, state: StageState, summary: str, data: dict[str, Any] | None = None) -> Stage | None:
    """RUNNING -> final state; a failure or cancellation skips or cancels every later stage.

    None when the stage was not running (already final: the first outcome stays)."""
    return _close(stage_id, {"state": StageState.RUNNING}, state, summary, data)


def skip_stage(stage_id: int, reason: str, data: dict[str, Any] | None = None) -> Stage | None:
    """QUEUED -> SKIPPED without running (e.g. nothing to do); later stages go on. None when not queued."""
    return _close(stage_id, {"state": StageState.QUEUED}, StageState.SKIPPED, reason, data)


def _close(stage_id: int, expected: dict[str, object], state: StageState, summary: str,
           data: dict[str, Any] | None, started_at: datetime | None = None) -> Stage | None:
    """The stage, now in final ``state``, if it was as ``expected``; else None and nothing changed.
    ``started_at``: when a stage that never started counts as started (default: now)."""
    run_id = _run_of(stage_id)
    if run_id is None:
        return None
    now = timezone.now()
    done = Case(When(progress_total__gt=0, then=F("progress_total")), default=F("progress_done"))
    with transaction.atomic():
        _lock_run(run_id)
        changed = Stage.objects.filter(pk=stage_id, **expected).update(
            state=state, summary=summary[:500], data=data or {}, finished_at=now,
            started_at=Coalesce(F("started_at"), started_at or now),
            **({"progress_done": done} if state == StageState.PASSED else {}),
        )
        if not changed:
            return None
        stage = Stage.objects.get(pk=stage_id)
        if state == StageState.FAILED:
            _close_later_stages(stage, StageState.SKIPPED, f"skipped: {stage.name} failed")
        elif state == StageState.CANCELLED:
            _close_later_stages(stage, StageState.CANCELLED, "cancelled with the run")
        _settle_run(run_id)
    return stage


def _close_later_stages(stage: Stage, state: StageState, reason: str) -> None:
    now = timezone.now()
    Stage.objects.filter(run_id=stage.run_id, position__gt=stage.position).exclude(
        state__in=FINAL_STAGE_STATES
    ).update(state=state, summary=reason, finished_at=now)


def _settle_run(run_id: int) -> None:
    """Derive the run's state from its stages once every stage is final (the run's row is locked)."""
    run = Run.objects.select_for_update().get(pk=run_id)
    stages = list(Stage.objects.filter(run_id=run_id).only("name", "state", "summary", "data").order_by("position"))
    if any(stage.state not in FINAL_STAGE_STATES for stage in stages):
        bump(run_id)
        return
    reference = ReferenceRun.objects.filter(run_id=run_id).first()
    final = verdict_of(stages, run.cancel_requested, reference).state
    Run.objects.filter(pk=run_id).update(
        state=final, finished_at=timezone.now(), started_at=run.started_at or timezone.now(), version=F("version") + 1
    )


def request_cancel(run: Run) -> list[str]:
    """Cancel queued stages now; a running stage stops at its next check. Returns task ids to revoke."""
    with transaction.atomic():
        _lock_run(run.pk)
        Run.objects.filter(pk=run.pk).update(cancel_requested=True)
        queued = Stage.objects.filter(run_id=run.pk, state=StageState.QUEUED)
        task_ids = [tid for tid in queued.values_list("task_id", flat=True) if tid]
        queued.update(state=StageState.CANCELLED, summary="cancelled by user", finished_at=timezone.now())
        reference = ReferenceRun.objects.filter(run_id=run.pk, state=StageState.QUEUED)
        task_ids += [tid for tid in reference.values_list("task_id", flat=True) if tid]
        reference.update(state=StageState.CANCELLED, summary="cancelled by user", finished_at=timezone.now())
        _settle_run(run.pk)
    return task_ids


def fail_stale_stage(stage: Stage) -> Stage | None:
    """A running stage whose worker stopped sending heartbeats (the worker died): failed, or
    cancelled when its run was being cancelled. Expected: still running with the heartbeat the sweep
    saw; a heartbeat sent since (or a finish) wins, and None is returned."""
    last = stage.heartbeat_at.isoformat(timespec="seconds") if stage.heartbeat_at else "never"
    expected: dict[str, object] = {"state": StageState.RUNNING, "heartbeat_at": stage.heartbeat_at}
    if Run.objects.filter(pk=stage.run_id, cancel_requested=True).exists():
        return _close(stage.pk, expected, StageState.CANCELLED, "cancelled (worker stopped)", None)
    closed = _close(stage.pk, expected, StageState.FAILED, f"worker lost: no heartbeat since {last}", None)
    if closed is not None:
        append_log(stage.pk, stage.run_id, f"\n[migrator] worker lost: no heartbeat since {last}\n")
    return closed


def earlier_stages_final(stage: Stage) -> bool:
    return not (
        Stage.objects.filter(run_id=stage.run_id, position__lt=stage.position)
        .exclude(state__in=FINAL_STAGE_STATES).exists()
    )


def _still_waiting(stage: Stage) -> dict[str, object]:
    """What a stage the sweep found waiting must still be: queued since the same moment (not claimed,
    not queued again meanwhile)."""
    queued_at: datetime | None = stage.queued_at
    return {"state": StageState.QUEUED, "queued_at": queued_at}


def skip_waiting_stage(stage: Stage, reason: str, data: dict[str, Any]) -> Stage | None:
    """A queued stage no runner could take in time: not run, so not checked (the run is partial).
    None when it was claimed (or queued again) meanwhile."""
    closed = _close(stage.pk, _still_waiting(stage), StageState.SKIPPED, reason, data)
    if closed is not None:
        append_log(stage.pk, stage.run_id, f"[migrator] {reason}\n")
    return closed


def fail_queued_stage(stage: Stage, reason: str) -> Stage | None:
    """QUEUED -> FAILED for a stage nobody claimed in time. None when a worker claimed it meanwhile:
    the live stage is left alone."""
    closed = _close(stage.pk, _still_waiting(stage), StageState.FAILED, reason, None, started_at=stage.queued_at)
    if closed is not None:
        append_log(stage.pk, stage.run_id, f"[migrator] {reason}\n")
    return closed


# The CUDA reference run: a row with a state like a stage's (see ``ReferenceRun``). The same rules hold:
# each change names the state it expects, the run's row is locked first, and the run settles after.

def create_reference(run_id: int) -> ReferenceRun:
    """The run's reference row, queued (or the one already there: creating it twice is harmless)."""
    with transaction.atomic():
        _lock_run(run_id)
        reference, _ = ReferenceRun.objects.get_or_create(run_id=run_id)
        bump(run_id)
    return reference


def mark_reference_enqueued(reference: ReferenceRun, task_id: str, queue: str) -> bool:
    """Record the task id and queue of a reference about to be published; False when it was handed out
    (or ended) meanwhile, and then nothing may be published."""
    with transaction.atomic():
        _lock_run(reference.run_id)
        changed = ReferenceRun.objects.filter(pk=reference.pk, state=StageState.QUEUED, task_id="").update(
            task_id=task_id, queue=queue, queued_at=timezone.now())
        bump(reference.run_id)
    return bool(changed)


def claim_reference(run_id: int, worker: str) -> ReferenceRun | None:
    """QUEUED -> RUNNING; None when another worker took it, it ended, or the run has none."""
    now = timezone.now()
    with transaction.atomic():
        _lock_run(run_id)
        claimed = ReferenceRun.objects.filter(run_id=run_id, state=StageState.QUEUED).update(
            state=StageState.RUNNING, started_at=now, heartbeat_at=now, worker=worker[:200], summary="", data={})
        if not claimed:
            return None
        Run.objects.filter(pk=run_id, state=RunState.QUEUED).update(state=RunState.RUNNING, started_at=now)
        bump(run_id)
    return ReferenceRun.objects.get(run_id=run_id)


def touch_reference_heartbeat(reference_id: int) -> None:
    ReferenceRun.objects.filter(pk=reference_id, state=StageState.RUNNING).update(heartbeat_at=timezone.now())


def _close_reference(reference_id: int, expected: dict[str, object], state: StageState, summary: str,
                     data: dict[str, Any] | None) -> ReferenceRun | None:
    run_id = ReferenceRun.objects.filter(pk=reference_id).values_list("run_id", flat=True).first()
    if run_id is None:
        return None
    now = timezone.now()
    with transaction.atomic():
        _lock_run(run_id)
        changed = ReferenceRun.objects.filter(pk=reference_id, **expected).update(
            state=state, summary=summary[:500], data=data or {}, finished_at=now,
            started_at=Coalesce(F("started_at"), now))
        if not changed:
            return None
        _settle_run(run_id)
    return ReferenceRun.objects.get(pk=reference_id)


def finish_reference(reference_id: int, state: StageState, summary: str, data: dict[str, Any] | None = None
                     ) -> ReferenceRun | None:
    """RUNNING -> final; None when it was no longer running (the sweep ended it: the first outcome stays)."""
    return _close_reference(reference_id, {"state": StageState.RUNNING}, state, summary, data)


def skip_reference(reference: ReferenceRun, reason: str, data: dict[str, Any] | None = None) -> ReferenceRun | None:
    """A queued reference that will not run (no CUDA runner, or it waited too long): skipped, so the
    comparison is not checked. Expected: still queued since the same moment, so a claim meanwhile wins."""
    expected: dict[str, object] = {"state": StageState.QUEUED, "queued_at": reference.queued_at}
    return _close_reference(reference.pk, expected, StageState.SKIPPED, reason, data)


def reuse_reference(reference: ReferenceRun, summary: str, data: dict[str, Any]) -> ReferenceRun | None:
    """QUEUED (never handed out) -> PASSED with a parent run's reference result, without running it."""
    return _close_reference(reference.pk, {"state": StageState.QUEUED, "task_id": ""}, StageState.PASSED, summary, data)


def fail_stale_reference(reference: ReferenceRun) -> ReferenceRun | None:
    """A running reference whose worker stopped sending heartbeats: failed (cancelled with its run);
    a heartbeat or a finish since the sweep looked wins."""
    last = reference.heartbeat_at.isoformat(timespec="seconds") if reference.heartbeat_at else "never"
    expected: dict[str, object] = {"state": StageState.RUNNING, "heartbeat_at": reference.heartbeat_at}
    if Run.objects.filter(pk=reference.run_id, cancel_requested=True).exists():
        return _close_reference(reference.pk, expected, StageState.CANCELLED, "cancelled (worker stopped)", None)
    return _close_reference(reference.pk, expected, StageState.FAILED, f"worker lost: no heartbeat since {last}", None)
