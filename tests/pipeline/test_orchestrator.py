"""The orchestrator runs stages and records their outcomes: stages not installed, rejected sources,
crashes, cancels mid-stage (the CUDA reference run: tests/pipeline/test_reference_runs.py)."""
from __future__ import annotations

import threading
import time
import types
from collections.abc import Callable
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.urls import reverse

from migrator.accounts.models import Team
from migrator.pipeline import orchestrator, stagecontext
from migrator.pipeline.stagelog import StageLog
from migrator.projects import actions, transitions
from migrator.projects.constants import RunState, StageState
from migrator.projects.models import Project, Run, Stage
from worker.context import StageContext, StageResult

pytestmark = pytest.mark.django_db


def _run(project: Project) -> Run:
    return actions.create_run(project, user=None)


def _stage(run: Run, name: str) -> Stage:
    return run.stages.get(name=name)


def test_the_pipeline_records_not_available_stages_as_skipped(
    archive_project: Project, only_stages: Callable[..., None]
) -> None:
    only_stages("fetch")
    run = orchestrator.run_sync(_run(archive_project))
    states = {s.name: (s.state, s.summary) for s in run.stages.all()}
    assert states["fetch"][0] == StageState.PASSED
    assert states["scan"] == (StageState.SKIPPED, "scan: not available on this installation")
    assert run.state == RunState.PARTIAL  # nothing failed, but most stages were not checked
    assert _stage(run, "fetch").log_size > 0


def test_a_rejected_archive_fails_fetch_with_the_reason_in_log(
    team_user: tuple[User, Team], only_stages: Callable[..., None], tmp_path: Path
) -> None:
    import io
    import zipfile

    only_stages("fetch")
    user, team = team_user
    project = actions.create_project(team, "evil", user=user)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("../../escape.txt", "x")
    actions.store_archive(project, io.BytesIO(buffer.getvalue()), "evil.zip", user)
    run = orchestrator.run_sync(actions.create_run(project, user=user))
    fetch = _stage(run, "fetch")
    assert fetch.state == StageState.FAILED and "escapes the workspace" in fetch.summary
    assert "rejected" in "".join(c.text for c in fetch.log_chunks.all())
    assert run.state == RunState.FAILED
    assert _stage(run, "scan").summary == "skipped: fetch failed"


def test_a_crashing_stage_is_a_visible_failure_whose_traceback_only_the_operator_sees(
    archive_project: Project, only_stages: Callable[..., None], monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    only_stages("fetch")
    import worker.stages.fetch as fetch_module

    def explode(ctx: StageContext) -> StageResult:
        raise RuntimeError(f"disk on fire at {ctx.workspace.root}")

    monkeypatch.setattr(fetch_module, "run", explode)
    run = orchestrator.run_sync(_run(archive_project))
    fetch = _stage(run, "fetch")
    shown = fetch.summary + "".join(c.text for c in fetch.log_chunks.all())
    assert fetch.state == StageState.FAILED and fetch.summary.startswith("internal error (reference id ")
    reference = fetch.summary.removeprefix("internal error (reference id ").removesuffix(")")
    assert reference in shown and "Traceback" not in shown and "disk on fire" not in shown
    assert str(settings.MIGRATOR_WORKSPACE_ROOT) not in shown  # no host path reaches the user
    [record] = [r for r in caplog.records if reference in r.getMessage()]
    assert record.exc_info is not None and "disk on fire" in str(record.exc_info[1])  # the operator's log has it



@pytest.mark.django_db(transaction=True)
def test_a_running_stage_stops_when_the_run_is_cancelled(
    team_user: tuple[User, Team], cuda_archive: bytes, only_stages: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    only_stages("fetch", "scan")
    user, team = team_user
    project = actions.create_project(team, "cancel", user=user)
    actions.store_archive(project, SimpleUploadedFile("c.tgz", cuda_archive), "c.tgz", user)
    run = actions.create_run(project, user=user)
    checks: list[float] = []

    def slow_scan(ctx: StageContext) -> StageResult:
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



def test_a_settings_change_during_a_run_does_not_apply_to_it(
    archive_project: Project, alice_client: Client
) -> None:
    archive_project.settings = {"offload_archs": ["gfx942"]}
    archive_project.save()
    run = _run(archive_project)
    archive_project.settings = {"offload_archs": ["gfx1100"], "build_mode": "per_tu"}  # changed while it runs
    archive_project.save()
    stage = _stage(run, "compile")
    ctx = stagecontext.build_context(stage, StageLog(stage.pk, run.pk))
    assert ctx.settings.offload_archs == ("gfx942",) and ctx.settings.build_mode == "auto"
    page = alice_client.get(reverse("projects:run", args=[run.pk])).content.decode()
    assert "<code>offload_archs</code> = <code>[&#x27;gfx942&#x27;]</code>" in page
