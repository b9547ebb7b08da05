"""Fault fixtures: real Celery workers on the test's private broker (``own_broker``, restartable)."""
from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pytest_django import Settings

from tests.brokerhost import RedisServer, kill_worker, start_worker, wait_for_worker, worker_env

FAULT_STAGES = ("fetch", "scan")
SWEEP_S = 2  # the workers' sweep interval in these tests (production: 30 s)
STALE_S = 5  # heartbeat limit (production: 120 s)


@pytest.fixture
def fault_stages(settings: Settings) -> Settings:
    from migrator.projects.constants import STAGE_NAMES

    settings.MIGRATOR_DISABLED_STAGES = [n for n in STAGE_NAMES if n not in FAULT_STAGES]
    settings.MIGRATOR_SWEEP_INTERVAL_S = SWEEP_S
    settings.MIGRATOR_HEARTBEAT_STALE_S = STALE_S
    settings.MIGRATOR_REPUBLISH_GRACE_S = 1
    return settings


@pytest.fixture
def fault_worker(
    transactional_db: None, own_broker: RedisServer, fault_stages: Settings, tmp_path: Path
) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """Starts real workers on the private broker: ``fault_worker(name, beat=True)``; all stopped at the end."""
    from django.db import connection

    started: list[subprocess.Popen[bytes]] = []
    env = worker_env(
        broker_url=own_broker.url, db_name=connection.settings_dict["NAME"],
        workspace=Path(fault_stages.MIGRATOR_WORKSPACE_ROOT), cache=Path(fault_stages.MIGRATOR_CACHE_ROOT),
        disabled=list(fault_stages.MIGRATOR_DISABLED_STAGES),
        extra={"MIGRATOR_SWEEP_INTERVAL_S": str(SWEEP_S), "MIGRATOR_HEARTBEAT_STALE_S": str(STALE_S),
               "MIGRATOR_REPUBLISH_GRACE_S": "1"},
    )
    Path(fault_stages.MIGRATOR_WORKSPACE_ROOT).mkdir(parents=True, exist_ok=True)

    def start(name: str, *, beat: bool, concurrency: int = 1) -> subprocess.Popen[bytes]:
        proc = start_worker(env, tmp_path / f"{name}.log", name=name, beat=beat, concurrency=concurrency)
        started.append(proc)
        wait_for_worker(proc, name)
        return proc

    launcher: Callable[..., subprocess.Popen[bytes]] = start
    yield launcher
    # Killed, not stopped warmly: the test is over and its broker goes next, so a warm shutdown (seconds
    # each) would finish work nobody reads; a kill also ends any task before the database is emptied.
    for proc in started:
        kill_worker(proc)
