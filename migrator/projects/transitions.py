"""Every state change of runs and stages goes through this module.

Claims are conditional UPDATEs on (id, expected state): when two workers race for the same stage
(a redelivered message), exactly one wins and the other exits quietly.
"""
from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from migrator.projects.constants import (
    FINAL_STAGE_STATES,
    LOG_CHUNK_BYTES,
    MAX_LOG_BYTES,
    RunState,
    StageState,
)
from migrator.projects.models import LogChunk, Run, Stage
from migrator.projects.verdict import verdict_of


def bump(run_id: int) -> None:
    Run.objects.filter(pk=run_id).update(version=F("version") + 1)


def mark_enqueued(stage: Stage, task_id: str, queue: str) -> None:
    with transaction.atomic():  # one commit for both rows
        Stage.objects.filter(pk=stage.pk, state=StageState.QUEUED).update(
            task_id=task_id, queue=queue, queued_at=timezone.now()
        )
        bump(stage.run_id)


def claim_stage(stage_id: int, worker: str) -> bool:
    """QUEUED -> RUNNING; False when another worker already took it or it was skipped/cancelled."""
    now = timezone.now()
    with transaction.atomic():
        claimed = Stage.objects.filter(pk=stage_id, state=StageState.QUEUED).update(
            state=StageState.RUNNING, started_at=now, heartbeat_at=now, worker=worker[:200],
            progress_done=0, progress_total=0, summary="", data={}, log_size=0,
        )
        if not claimed:
            return False
        # A redelivered stage starts from a clean log.
        LogChunk.objects.filter(stage_id=stage_id).delete()
        stage = Stage.objects.only("run_id").get(pk=stage_id)
        Run.objects.filter(pk=stage.run_id, state=RunState.QUEUED).update(state=RunState.RUNNING, started_at=now)
        bump(stage.run_id)
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


def finish_stage(stage_id: int, state: StageState, summary: str, data: dict[str, Any] | None = None) -> Stage:
    """RUNNING -> final state; a failure or cancellation skips or cancels every later stage."""
    now = timezone.now()
    with transaction.atomic():
        stage = Stage.objects.select_for_update().get(pk=stage_id)
        if stage.state in FINAL_STAGE_STATES:
            return stage
        stage.state = state
        stage.summary = summary[:500]
        stage.data = data or {}
        stage.finished_at = now
        stage.started_at = stage.started_at or now
        if state == StageState.PASSED:
            stage.progress_done = stage.progress_total or stage.progress_done
        stage.save()
        if state == StageState.FAILED:
            _close_later_stages(stage, StageState.SKIPPED, f"skipped: {stage.name} failed")
        elif state == StageState.CANCELLED:
            _close_later_stages(stage, StageState.CANCELLED, "cancelled with the run")
        _settle_run(stage.run_id)
    return stage


def skip_stage(stage_id: int, reason: str, data: dict[str, Any] | None = None) -> Stage:
    """QUEUED -> SKIPPED without running (e.g. nothing to do); later stages go on."""
    now = timezone.now()
    with transaction.atomic():
        Stage.objects.filter(pk=stage_id, state=StageState.QUEUED).update(
            state=StageState.SKIPPED, summary=reason[:500], data=data or {}, started_at=now, finished_at=now
        )
        stage = Stage.objects.get(pk=stage_id)
        _settle_run(stage.run_id)
    return stage


def _close_later_stages(stage: Stage, state: StageState, reason: str) -> None:
    now = timezone.now()
    Stage.objects.filter(run_id=stage.run_id, position__gt=stage.position).exclude(
        state__in=FINAL_STAGE_STATES
    ).update(state=state, summary=reason, finished_at=now)


def _settle_run(run_id: int) -> None:
    """Derive the run's state from its stages once every stage is final."""
    stages = list(Stage.objects.filter(run_id=run_id).only("name", "state", "summary", "data").order_by("position"))
    run = Run.objects.select_for_update().get(pk=run_id)
    if any(stage.state not in FINAL_STAGE_STATES for stage in stages):
        bump(run_id)
        return
    final = verdict_of(stages, run.cancel_requested).state
    Run.objects.filter(pk=run_id).update(
        state=final, finished_at=timezone.now(), started_at=run.started_at or timezone.now(), version=F("version") + 1
    )


def request_cancel(run: Run) -> list[str]:
    """Cancel queued stages now; a running stage stops at its next check. Returns task ids to revoke."""
    with transaction.atomic():
        Run.objects.filter(pk=run.pk).update(cancel_requested=True)
        queued = Stage.objects.filter(run_id=run.pk, state=StageState.QUEUED)
        task_ids = [tid for tid in queued.values_list("task_id", flat=True) if tid]
        queued.update(state=StageState.CANCELLED, summary="cancelled by user", finished_at=timezone.now())
        Run.objects.select_for_update().filter(pk=run.pk)
        _settle_run(run.pk)
    return task_ids


def fail_stale_stage(stage: Stage) -> Stage:
    """A running stage whose worker stopped sending heartbeats (the worker died): failed, or
    cancelled when its run was being cancelled."""
    last = stage.heartbeat_at.isoformat(timespec="seconds") if stage.heartbeat_at else "never"
    if Run.objects.filter(pk=stage.run_id, cancel_requested=True).exists():
        return finish_stage(stage.pk, StageState.CANCELLED, "cancelled (worker stopped)")
    append_log(stage.pk, stage.run_id, f"\n[migrator] worker lost: no heartbeat since {last}\n")
    return finish_stage(stage.pk, StageState.FAILED, f"worker lost: no heartbeat since {last}")


def earlier_stages_final(stage: Stage) -> bool:
    return not (
        Stage.objects.filter(run_id=stage.run_id, position__lt=stage.position)
        .exclude(state__in=FINAL_STAGE_STATES).exists()
    )


def skip_waiting_stage(stage: Stage, reason: str, data: dict[str, Any]) -> Stage:
    """A queued stage no runner could take in time: not run, so not checked (the run is partial)."""
    append_log(stage.pk, stage.run_id, f"[migrator] {reason}\n")
    return skip_stage(stage.pk, reason, data)


def fail_queued_stage(stage: Stage, reason: str) -> Stage:
    now = timezone.now()
    Stage.objects.filter(pk=stage.pk, state=StageState.QUEUED).update(
        state=StageState.RUNNING, started_at=stage.queued_at or now, heartbeat_at=now
    )
    append_log(stage.pk, stage.run_id, f"[migrator] {reason}\n")
    return finish_stage(stage.pk, StageState.FAILED, reason)
