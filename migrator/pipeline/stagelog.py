"""Buffered, thread-safe stage log and progress writer with a heartbeat thread.

Stages log line by line, sometimes from worker threads of their own (parallel compiles). Writing
each line as a row would hammer the database, and a database call from a stage's pool thread
would open a connection that is never closed. So text and progress are only buffered by the
callers; the thread that owns the stage flushes when a buffer is due, and a background thread
flushes every ``FLUSH_S`` seconds, touches the stage heartbeat (so the sweep can tell a slow stage
from a dead worker) and refreshes the run's cancel flag. That thread closes its connection at exit.
"""
from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from django.db import connection

from migrator.projects import transitions
from migrator.projects.models import Run
from worker.contained import append_record

log = logging.getLogger(__name__)
FLUSH_S = 0.5
FLUSH_BYTES = 16 * 1024
CANCEL_CHECK_S = 1.0
HEARTBEAT_S = 5.0


class StageLog:
    def __init__(self, stage_id: int, run_id: int) -> None:
        self.stage_id = stage_id
        self.run_id = run_id
        self._owner = threading.get_ident()
        self._buffer: list[str] = []
        self._size = 0
        self._progress: tuple[int, int] | None = None
        self._last_flush = time.monotonic()
        self._cancelled = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"stage-{stage_id}-heartbeat", daemon=True)

    def __enter__(self) -> StageLog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.flush()

    def write(self, text: str) -> None:
        with self._lock:
            self._buffer.append(text)
            self._size += len(text)
        self._flush_if_due()

    def progress(self, done: int, total: int) -> None:
        with self._lock:
            self._progress = (done, total)
        self._flush_if_due()

    def is_cancelled(self) -> bool:
        """The run's cancel flag as last read by the heartbeat thread (at most CANCEL_CHECK_S old)."""
        return self._cancelled

    def _flush_if_due(self) -> None:
        if threading.get_ident() != self._owner:
            return  # other threads only buffer; the heartbeat thread flushes for them
        with self._lock:
            due = self._size >= FLUSH_BYTES or time.monotonic() - self._last_flush >= FLUSH_S
        if due:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            text = "".join(self._buffer)
            progress = self._progress
            self._buffer.clear()
            self._size = 0
            self._progress = None
            self._last_flush = time.monotonic()
        if text:
            transitions.append_log(self.stage_id, self.run_id, text)
        if progress is not None:
            transitions.record_progress(self.stage_id, self.run_id, *progress)

    def _beat(self) -> None:
        last_cancel_check = last_heartbeat = 0.0
        try:
            while not self._stop.wait(FLUSH_S):
                try:
                    self.flush()
                    if time.monotonic() - last_heartbeat >= HEARTBEAT_S:
                        last_heartbeat = time.monotonic()
                        transitions.touch_heartbeat(self.stage_id)
                    if time.monotonic() - last_cancel_check >= CANCEL_CHECK_S:
                        last_cancel_check = time.monotonic()
                        self._cancelled = Run.objects.filter(pk=self.run_id, cancel_requested=True).exists()
                except Exception:  # a failed beat must not end the thread; the next one retries
                    log.exception("stage %s: heartbeat or log flush failed", self.stage_id)
        finally:
            connection.close()


class ReferenceLog:
    """The CUDA reference run's log and heartbeat: text goes to its record (``records/reference.log``,
    appended by the root side), a background thread touches the reference row's heartbeat (so the sweep
    can tell a long nvcc build from a dead CUDA runner) and refreshes the run's cancel flag."""

    def __init__(self, reference_id: int, run_id: int, path: Path) -> None:
        self.reference_id = reference_id
        self.run_id = run_id
        self.path = path
        self._lock = threading.Lock()
        self._cancelled = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"reference-{reference_id}-heartbeat", daemon=True)

    def __enter__(self) -> ReferenceLog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def write(self, text: str) -> None:
        with self._lock:  # parallel writers append whole pieces
            append_record(self.path, text)

    def progress(self, done: int, total: int) -> None:
        """The reference run shows no progress bar."""

    def is_cancelled(self) -> bool:
        return self._cancelled

    def _beat(self) -> None:
        try:
            last_heartbeat = 0.0
            while not self._stop.wait(CANCEL_CHECK_S):
                try:
                    if time.monotonic() - last_heartbeat >= HEARTBEAT_S:
                        last_heartbeat = time.monotonic()
                        transitions.touch_reference_heartbeat(self.reference_id)
                    self._cancelled = Run.objects.filter(pk=self.run_id, cancel_requested=True).exists()
                except Exception:  # a failed beat must not end the thread; the next one retries
                    log.exception("reference %s: heartbeat failed", self.reference_id)
        finally:
            connection.close()
