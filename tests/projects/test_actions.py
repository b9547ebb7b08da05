"""Runs are created and re-run through migrator.projects.actions: queued stages in order, reused results."""
from __future__ import annotations

from collections.abc import Callable

import pytest

from migrator.pipeline import orchestrator
from migrator.projects import actions, transitions
from migrator.projects.constants import STAGE_NAMES, RunState, StageState
from migrator.projects.models import Project
from migrator.projects.workspaces import workspace_for
from tests.projects.conftest import new_run, stage_of
from worker.context import StageContext, StageResult

pytestmark = pytest.mark.django_db


def test_a_new_run_has_six_queued_stages_in_order(archive_project: Project) -> None:
    run = new_run(archive_project)
    assert [(s.name, s.state) for s in run.stages.all()] == [(n, StageState.QUEUED) for n in STAGE_NAMES]
    assert run.state == RunState.QUEUED and run.number == 1
    assert new_run(archive_project).number == 2


def test_rerun_from_a_stage_reuses_earlier_results(
    archive_project: Project, only_stages: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    import types

    only_stages("fetch")
    first = orchestrator.run_sync(new_run(archive_project))
    second = actions.create_rerun(first, user=None, from_stage="scan")
    fetch = stage_of(second, "fetch")
    assert second.parent_id == first.pk and fetch.state == StageState.PASSED
    assert fetch.summary.startswith(f"reused from run #{first.number}")
    assert stage_of(second, "scan").state == StageState.QUEUED

    def count_sources(ctx: StageContext) -> StageResult:
        return StageResult.passed("counted", files=sorted(str(p.relative_to(ctx.workspace.source))
                                                          for p in ctx.workspace.source.rglob("*.cu")))

    real_loader = orchestrator.load_stage_module
    scan = types.SimpleNamespace(run=count_sources)
    monkeypatch.setattr(orchestrator, "load_stage_module", lambda name: scan if name == "scan" else real_loader(name))
    done = orchestrator.run_sync(second)
    assert done.state == RunState.PARTIAL
    assert stage_of(done, "scan").data == {"files": ["src/vadd.cu"]}
    assert workspace_for(first.pk).source.joinpath("src/vadd.cu").exists()


def test_rerun_refuses_to_start_after_a_failed_stage(
    archive_project: Project, only_stages: Callable[..., None]
) -> None:
    run = new_run(archive_project)
    transitions.claim_stage(stage_of(run, "fetch").pk, "w")
    transitions.finish_stage(stage_of(run, "fetch").pk, StageState.FAILED, "x")
    with pytest.raises(actions.ActionError, match="did not pass"):
        actions.create_rerun(run, user=None, from_stage="scan")
    assert actions.create_rerun(run, user=None, from_stage="fetch").number == 2

