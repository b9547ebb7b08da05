"""Cancelling a run stops a running stage at its next check, and the run ends cancelled."""
from __future__ import annotations

import threading
import time
import types

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from migrator.pipeline import orchestrator
from migrator.projects import actions, transitions
from migrator.projects.constants import RunState, StageState
from worker.context import StageResult


@pytest.mark.django_db(transaction=True)
def test_a_running_stage_stops_when_the_run_is_cancelled(team_user, cuda_archive, only_stages, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    only_stages("fetch", "scan")
    user, team = team_user
    project = actions.create_project(team, "cancel", user=user)
    actions.store_archive(project, SimpleUploadedFile("c.tgz", cuda_archive), "c.tgz", user)
    run = actions.create_run(project, user=user)
    checks: list[float] = []

    def slow_scan(ctx):  # type: ignore[no-untyped-def]
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            checks.append(time.monotonic())
            ctx.progress(len(checks), 1000)
            ctx.check_cancelled()
            time.sleep(0.05)
        return StageResult.passed("never cancelled")

    real_loader = orchestrator.load_stage_module
    monkeypatch.setattr(orchestrator, "load_stage_module",
                        lambda name: types.SimpleNamespace(run=slow_scan) if name == "scan" else real_loader(name))

    def cancel_soon() -> None:
        time.sleep(1.0)
        transitions.request_cancel(run)
        connection.close()

    canceller = threading.Thread(target=cancel_soon)
    canceller.start()
    started = time.monotonic()
    done = orchestrator.run_sync(run)
    canceller.join()
    scan = done.stages.get(name="scan")
    assert scan.state == StageState.CANCELLED and done.state == RunState.CANCELLED
    assert time.monotonic() - started < 10  # stopped within a couple of cancel checks, not at the 20 s end
    assert done.stages.get(name="compile").state == StageState.CANCELLED
    assert scan.progress_total == 1000 and 0 < scan.progress_done < 1000  # progress reached the row; it stays where it stopped
