"""Private redis-servers and real Celery worker processes: for the fault tests, the session's shared
worker (tests/session_worker.py) and the broker benchmark.

Nothing here touches the shared Redis: each ``RedisServer`` runs on a free port of its own,
without persistence (``--save '' --appendonly no``), so a restart loses every message, as a
production Redis configured that way does.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.workdir), "--daemonize", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                if redis.Redis(port=self.port, socket_timeout=0.5).ping():
                    return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError(f"redis-server on port {self.port} did not start")

    def kill(self) -> None:
        """SIGKILL: everything in memory is gone, as after a crash or a restart without persistence."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)
        self.proc = None

    def restart(self) -> None:
        self.kill()
        self.start()


def worker_env(*, broker_url: str, db_name: str, workspace: Path, cache: Path, disabled: list[str],
               extra: dict[str, str] | None = None) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "migrator.test_settings",
        "MIGRATOR_TEST_REDIS_URL": broker_url,
        "MIGRATOR_DB_NAME": db_name,
        "MIGRATOR_DISABLED_STAGES": ",".join(disabled),
        "MIGRATOR_WORKSPACE_ROOT": str(workspace),
        "MIGRATOR_CACHE_ROOT": str(cache),
        "MIGRATOR_ALLOW_LOCAL_GIT": "true",
        "PYTHONUNBUFFERED": "1",
        **(extra or {}),
    }


def node_name(name: str) -> str:
    """The Celery node name ``start_worker`` gives the worker called ``name`` (unique to this test process)."""
    return f"{name}-{os.getpid()}@{socket.gethostname()}"


def start_worker(env: dict[str, str], log_path: Path, *, name: str, beat: bool, concurrency: int = 1,
                 queues: str = "cpu,hooks", app: str = "migrator") -> subprocess.Popen[bytes]:
    """A real Celery worker in its own process group (so a SIGKILL takes its children too)."""
    args = [sys.executable, "-m", "celery", "-A", app, "worker", "-Q", queues, "-P", "prefork",
            "-c", str(concurrency), "-l", "INFO", "-n", node_name(name), "--without-mingle",
            "--without-gossip"]
    if beat:
        args += ["-B", "-s", str(log_path.parent / f"{name}-beat-schedule")]
    log = open(log_path, "ab")
    try:
        return subprocess.Popen(args, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    finally:
        log.close()


def kill_worker(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the worker's whole process group: no chance to finish, ack or say goodbye. Its pool
    processes go too, even when the main process was killed alone before."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # the group is gone already
    proc.wait(timeout=10)


def stop_worker(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        kill_worker(proc)


@contextmanager
def celery_app_on(broker_url: str) -> Iterator[None]:
    """Point this process's Celery app (publishing, pings, the sweep's broker reads) at ``broker_url``."""
    from migrator.celery import app

    saved = app.conf.broker_url
    _switch(app, broker_url)
    try:
        yield
    finally:
        _switch(app, saved)


def _switch(app: object, url: str) -> None:
    from kombu import pools

    # kombu keeps connection pools in a process-wide registry keyed by broker URL: a pool closed here would
    # be handed back, closed, the next time that URL is used ("Acquire on closed pool"). Reset them all.
    pools.reset()  # type: ignore[no-untyped-call]  # kombu leaves it unannotated
    app.conf.broker_url = url  # type: ignore[attr-defined]
    app._pool = None  # type: ignore[attr-defined]
    app.amqp._producer_pool = None  # type: ignore[attr-defined]


def wait_for_worker(proc: subprocess.Popen[bytes], name: str, timeout: float = 60) -> None:
    """Until the worker named ``name`` (as given to ``start_worker``) answers a ping.

    The ping names that one worker and wants one reply, so it returns the moment the worker answers.
    """
    from migrator.celery import app

    node = node_name(name)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("celery worker exited at start")
        if app.control.ping(destination=[node], timeout=0.5, limit=1):
            return
    raise RuntimeError("celery worker did not answer a ping")


def drop_unacked() -> None:
    """Forget the messages dead workers took but never acknowledged on the broker this process publishes to
    (Redis would deliver them again after the visibility timeout). Only for a private broker no live
    worker uses."""
    from migrator.celery import app

    with app.connection_for_write() as conn:
        channel = conn.default_channel
        channel.client.delete(channel.unacked_key, channel.unacked_index_key)


def purge_queues(queues: Iterable[str]) -> int:
    """Drop every message waiting in ``queues`` on the broker this process publishes to; how many there were."""
    from migrator.celery import app

    with app.connection_for_write() as conn:
        channel = conn.default_channel
        return sum(int(channel.queue_purge(queue) or 0) for queue in sorted(set(queues)))
