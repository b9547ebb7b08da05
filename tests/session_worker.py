"""One real Celery worker shared by the tests that need one, on a private broker, for the whole session.

Starting a worker and stopping it warmly take seconds each, longer than most of the tests that use it. So
the worker is started on first use and kept, and between two tests it is brought back to a clean state:

- **Its own broker.** A private redis-server (``tests/brokerhost.py``) that only the tests using this
  worker publish to, while they run (``celery_app_on``). Other tests publish to the suite's test broker
  with nobody consuming, as before, so a long-lived worker never takes one of their messages.
- **Idle and empty between tests.** After each test the worker's queues are purged until the worker has
  no task running or reserved and nothing is left to purge, twice in a row (a task that ends may publish
  the next stage): no message of one test reaches the next. The queues are purged again before a test.
- **The test's settings per task.** The stages the test allows and its own workspace and cache folders
  are written to a file the worker reads before each task (``tests/worker_app.py``).
- **The test database**, known once ``django_db_setup`` ran, is in the worker's environment from its start.

A test may kill the worker (one does, to leave a stage without one): it is noticed after the test, and
the next test that needs a worker gets a fresh one. A worker that does not become idle in time is stopped
the same way, and the test's teardown reports it.
"""
from __future__ import annotations

import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from tests.brokerhost import (
    RedisServer,
    drop_unacked,
    kill_worker,
    node_name,
    purge_queues,
    start_worker,
    wait_for_worker,
    worker_env,
)
from tests.worker_settings import SETTINGS_FILE_ENV, WorkerSettings

CONSUMES = ("cpu", "hooks")  # the queues of a CPU worker (a ROCm runner a test starts beside it takes rocm.*)
IDLE_TIMEOUT_S = 90.0


class WorkerNotIdle(RuntimeError):
    """The shared worker still had work after a test; it was stopped so that work cannot reach the next test."""


class SessionWorker:
    def __init__(self, folder: Path, db_name: str) -> None:
        self.folder = folder
        self.db_name = db_name
        self.broker = RedisServer(folder / "redis")
        self.settings_file = folder / "test-settings.json"
        self.proc: subprocess.Popen[bytes] | None = None
        self.name = ""
        self.started = 0

    @property
    def broker_url(self) -> str:
        return self.broker.url

    @property
    def log_path(self) -> Path:
        return self.folder / f"{self.name}.log"

    def start_broker(self) -> None:
        self.broker.start()

    def serve(self, settings: WorkerSettings, queues: Iterable[str]) -> subprocess.Popen[bytes]:
        """The worker, running under ``settings`` from now on, with ``queues`` empty (the caller publishes
        to ``broker_url``)."""
        purge_queues(queues)
        settings.write(self.settings_file)
        if self.proc is None or self.proc.poll() is not None:
            self._start(settings)
        assert self.proc is not None
        return self.proc

    def settle(self, queues: Iterable[str], timeout: float = IDLE_TIMEOUT_S) -> None:
        """Wait until the worker is idle, purging ``queues`` meanwhile; stop it if it will not be."""
        queues = set(queues)
        deadline = time.monotonic() + timeout
        quiet = 0
        while quiet < 2:
            if self.proc is None or self.proc.poll() is not None:
                self._reset(queues)  # killed by the test: the next one gets a fresh worker
                return
            purged = purge_queues(queues)
            busy = self._busy()
            quiet = quiet + 1 if purged == 0 and busy is False else 0
            if quiet < 2 and time.monotonic() > deadline:
                self._reset(queues)
                raise WorkerNotIdle(f"the shared test worker was still busy {timeout:.0f} s after the test; "
                                    f"it was stopped (log: {self.log_path})")
            if busy:
                time.sleep(0.1)

    def stop(self) -> None:
        self._discard()
        self.broker.kill()

    def _reset(self, queues: set[str]) -> None:
        """No worker and an empty broker: what the dead worker held is not delivered to the next one."""
        self._discard()
        purge_queues(queues)
        drop_unacked()

    def _start(self, settings: WorkerSettings) -> None:
        self._discard()
        self.started += 1
        self.name = f"test-worker-{self.started}"
        env = worker_env(
            broker_url=self.broker_url, db_name=self.db_name, workspace=Path(settings.workspace_root),
            cache=Path(settings.cache_root), disabled=list(settings.disabled_stages),
            extra={SETTINGS_FILE_ENV: str(self.settings_file)},
        )
        self.proc = start_worker(env, self.log_path, name=self.name, beat=False, queues=",".join(CONSUMES),
                                 app="tests.worker_app")
        try:
            wait_for_worker(self.proc, self.name, timeout=90)
        except RuntimeError as exc:
            self._discard()
            raise RuntimeError(f"{exc}; see {self.log_path}") from exc

    def _busy(self) -> bool | None:
        """Whether the worker has a task running or taken from its queues; None when it did not answer."""
        from migrator.celery import app

        node = node_name(self.name)
        inspect = app.control.inspect(destination=[node], timeout=1.0, limit=1)
        active, reserved = inspect.active(), inspect.reserved()
        if not active or not reserved:
            return None
        return bool(active.get(node) or reserved.get(node))

    def _discard(self) -> None:
        """Kill the worker and its pool (its whole process group, also when a test killed the main process
        alone). It is idle or beyond help when this is called, so there is nothing to finish warmly."""
        if self.proc is not None:
            kill_worker(self.proc)
        self.proc = None
