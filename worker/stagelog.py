"""Buffered, thread-safe stage log writer with a heartbeat thread.

Stages log line by line; writing each line as a row would hammer the database, so text is
buffered and flushed every ``FLUSH_S`` seconds or ``FLUSH_BYTES`` bytes. A background thread
flushes and touches the stage heartbeat even while a stage waits on a long subprocess, so the
sweep can tell a slow stage from a dead worker.
"""
from __future__ import annotations

import logging
import threading
import time

from django.db import close_old_connections, connection

from migrator.projects import transitions

log = logging.getLogger(__name__)
FLUSH_S = 0.5
FLUSH_BYTES = 16 * 1024
HEARTBEAT_S = 5.0


class StageLog:
    def __init__(self, stage_id: int, run_id: int) -> None:
        self.stage_id = stage_id
        self.run_id = run_id
        self._buffer: list[str] = []
        self._size = 0
        self._last_flush = time.monotonic()
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
            due = self._size >= FLUSH_BYTES or time.monotonic() - self._last_flush >= FLUSH_S
        if due:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            text = "".join(self._buffer)
            self._buffer.clear()
            self._size = 0
            self._last_flush = time.monotonic()
        if text:
            transitions.append_log(self.stage_id, self.run_id, text)

    def _beat(self) -> None:
        try:
            while not self._stop.wait(min(FLUSH_S * 2, HEARTBEAT_S)):
                try:
                    self.flush()
                    transitions.touch_heartbeat(self.stage_id)
                except Exception:  # a failed beat must not end the thread; the next one retries
                    log.exception("stage %s: heartbeat or log flush failed", self.stage_id)
        finally:
            connection.close()
            close_old_connections()
