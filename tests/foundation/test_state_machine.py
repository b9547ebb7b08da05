"""Runs and stages move only through migrator.projects.transitions; the pipeline records outcomes."""
from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from migrator.pipeline import orchestrator, sweep
from migrator.projects import actions, transitions
from migrator.projects.constants import STAGE_NAMES, RunState, StageState
from migrator.projects.models import Run, Stage
from migrator.projects.workspaces import workspace_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(team_user, cuda_archive):  # type: ignore[no-untyped-def]
    user, team = team_user
    project = actions.create_project(team, "demo", user=user)
    actions.store_archive(project, SimpleUploadedFile("demo.tgz", cuda_archive), "demo.tgz", user)
    return project


def _run(project) -> Run:  # type: ignore[no-untyped-def]
    return actions.create_run(project, user=None)


def _stage(run: Run, name: str) -> Stage:
    return run.stages.get(name=name)


def test_a_new_run_has_six_queued_stages_in_order(project) -> None:  # type: ignore[no-untyped-def]
    run = _run(project)
    assert [(s.name, s.state) for s in run.stages.all()] == [(n, StageState.QUEUED) for n in STAGE_NAMES]
    assert run.state == RunState.QUEUED and run.number == 1
    assert _run(project).number == 2


def test_a_stage_is_claimed_once(project) -> None:  # type: ignore[no-untyped-def]
    run = _run(project)
    fetch = _stage(run, "fetch")
    assert transitions.claim_stage(fetch.pk, "w1") is True
    assert transitions.claim_stage(fetch.pk, "w2") is False
    fetch.refresh_from_db()
    run.refresh_from_db()
    assert fetch.state == StageState.RUNNING and fetch.worker == "w1"
    assert run.state == RunState.RUNNING and run.started_at is not None


def test_a_failed_stage_skips_the_later_ones_with_the_reason(project) -> None:  # type: ignore[no-untyped-def]
    run = _run(project)
    scan = _stage(run, "scan")
    for name in ("fetch", "scan"):
        transitions.claim_stage(_stage(run, name).pk, "w")
    transitions.finish_stage(_stage(run, "fetch").pk, StageState.PASSED, "ok")
    transitions.finish_stage(scan.pk, StageState.FAILED, "boom")
    run.refresh_from_db()
    later = list(run.stages.filter(position__gt=scan.position))
    assert all(s.state == StageState.SKIPPED and s.summary == "skipped: scan failed" for s in later)
    assert run.state == RunState.FAILED and run.finished_at is not None


def test_finishing_twice_keeps_the_first_outcome(project) -> None:  # type: ignore[no-untyped-def]
    run = _run(project)
    fetch = _stage(run, "fetch")
    transitions.claim_stage(fetch.pk, "w")
    transitions.finish_stage(fetch.pk, StageState.FAILED, "worker lost")
    transitions.finish_stage(fetch.pk, StageState.PASSED, "late result")
    fetch.refresh_from_db()
    assert fetch.state == StageState.FAILED and fetch.summary == "worker lost"


def test_logs_stream_in_chunks_with_byte_offsets(project) -> None:  # type: ignore[no-untyped-def]
    from migrator.projects.logs import read_log_from

    run = _run(project)
    fetch = _stage(run, "fetch")
    transitions.claim_stage(fetch.pk, "w")
    transitions.append_log(fetch.pk, run.pk, "héllo\n")
    transitions.append_log(fetch.pk, run.pk, "x" * 200_000)
    fetch.refresh_from_db()
    assert fetch.log_size == len("héllo\n".encode()) + 200_000
    assert fetch.log_chunks.count() >= 4
    text, end = read_log_from(fetch, 0, limit=10**9)
    assert text.startswith("héllo\n") and end == fetch.log_size
    tail, end2 = read_log_from(fetch, fetch.log_size - 5)
    assert tail == "xxxxx" and end2 == fetch.log_size


def test_the_pipeline_records_not_available_stages_as_skipped(project, only_stages) -> None:  # type: ignore[no-untyped-def]
    only_stages("fetch")
    run = orchestrator.run_sync(_run(project))
    states = {s.name: (s.state, s.summary) for s in run.stages.all()}
    assert states["fetch"][0] == StageState.PASSED
    assert states["scan"] == (StageState.SKIPPED, "scan: not available on this installation")
    assert run.state == RunState.PARTIAL  # nothing failed, but most stages were not checked
    assert _stage(run, "fetch").log_size > 0


def test_a_rejected_archive_fails_fetch_with_the_reason_in_log(team_user, only_stages, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
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


def test_a_crashing_stage_is_a_visible_failure(project, only_stages, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    only_stages("fetch")
    import worker.stages.fetch as fetch_module

    def explode(ctx):  # type: ignore[no-untyped-def]
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(fetch_module, "run", explode)
    run = orchestrator.run_sync(_run(project))
    fetch = _stage(run, "fetch")
    assert fetch.state == StageState.FAILED and "disk on fire" in fetch.summary
    assert "Traceback" in "".join(c.text for c in fetch.log_chunks.all())


def test_cancel_cancels_queued_stages_and_the_run(project) -> None:  # type: ignore[no-untyped-def]
    run = _run(project)
    transitions.claim_stage(_stage(run, "fetch").pk, "w")
    transitions.request_cancel(run)
    assert _stage(run, "scan").state == StageState.CANCELLED
    transitions.finish_stage(_stage(run, "fetch").pk, StageState.CANCELLED, "cancelled by user")
    run.refresh_from_db()
    assert run.state == RunState.CANCELLED


def test_the_sweep_fails_stages_whose_worker_died(project) -> None:  # type: ignore[no-untyped-def]
    run = _run(project)
    fetch = _stage(run, "fetch")
    transitions.claim_stage(fetch.pk, "dead-worker")
    Stage.objects.filter(pk=fetch.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    dispatched: list[str] = []
    sweep.sweep(lambda stage, queue: dispatched.append(stage.name))
    fetch.refresh_from_db()
    run.refresh_from_db()
    assert fetch.state == StageState.FAILED and fetch.summary.startswith("worker lost")
    assert run.state == RunState.FAILED and dispatched == []


def test_the_sweep_leaves_live_stages_alone(project) -> None:  # type: ignore[no-untyped-def]
    run = _run(project)
    fetch = _stage(run, "fetch")
    transitions.claim_stage(fetch.pk, "live-worker")
    sweep.sweep(lambda stage, queue: None)
    fetch.refresh_from_db()
    assert fetch.state == StageState.RUNNING


def test_a_smoke_stage_waiting_for_a_rocm_runner_times_out(project, alice_client) -> None:  # type: ignore[no-untyped-def]
    project.settings = {"smoke_command": "./app", "smoke_wait_timeout_s": 60}
    project.save()
    run = _run(project)
    for stage in run.stages.exclude(name="smoke"):
        transitions.claim_stage(stage.pk, "w")
        transitions.finish_stage(stage.pk, StageState.PASSED, "ok")
    smoke = _stage(run, "smoke")
    transitions.mark_enqueued(smoke, "task-1", "rocm.gfx90a")  # routed to runners owning a gfx90a
    sweep.sweep(lambda stage, queue: None)
    assert _stage(run, "smoke").state == StageState.QUEUED  # not yet past the limit
    page = alice_client.get(f"/runs/{run.pk}/?stage=smoke").content.decode()
    assert "waiting for a ROCm runner" in page
    Stage.objects.filter(pk=smoke.pk).update(queued_at=timezone.now() - timedelta(seconds=61))
    sweep.sweep(lambda stage, queue: None)
    smoke.refresh_from_db()
    run.refresh_from_db()
    assert smoke.state == StageState.SKIPPED and smoke.data == {"no_runner": True}
    assert smoke.summary == "no ROCm runner with a suitable GPU came online within 60 s"
    assert run.state == RunState.PARTIAL


def test_rerun_from_a_stage_reuses_earlier_results(project, only_stages, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import types

    from worker.context import StageResult

    only_stages("fetch")
    first = orchestrator.run_sync(_run(project))
    second = actions.create_rerun(first, user=None, from_stage="scan")
    fetch = _stage(second, "fetch")
    assert second.parent_id == first.pk and fetch.state == StageState.PASSED
    assert fetch.summary.startswith(f"reused from run #{first.number}")
    assert _stage(second, "scan").state == StageState.QUEUED

    def count_sources(ctx):  # type: ignore[no-untyped-def]
        return StageResult.passed("counted", files=sorted(str(p.relative_to(ctx.workspace.source))
                                                          for p in ctx.workspace.source.rglob("*.cu")))

    real_loader = orchestrator.load_stage_module
    scan = types.SimpleNamespace(run=count_sources)
    monkeypatch.setattr(orchestrator, "load_stage_module", lambda name: scan if name == "scan" else real_loader(name))
    done = orchestrator.run_sync(second)
    assert done.state == RunState.PARTIAL
    assert _stage(done, "scan").data == {"files": ["src/vadd.cu"]}
    assert workspace_for(first.pk).source.joinpath("src/vadd.cu").exists()


def test_rerun_refuses_to_start_after_a_failed_stage(project, only_stages) -> None:  # type: ignore[no-untyped-def]
    run = _run(project)
    transitions.claim_stage(_stage(run, "fetch").pk, "w")
    transitions.finish_stage(_stage(run, "fetch").pk, StageState.FAILED, "x")
    with pytest.raises(actions.ActionError, match="did not pass"):
        actions.create_rerun(run, user=None, from_stage="scan")
    assert actions.create_rerun(run, user=None, from_stage="fetch").number == 2
