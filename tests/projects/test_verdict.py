"""A run passes only when every stage that applies passed; otherwise it is partial and says why."""
from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from migrator.accounts.models import Team
from migrator.api.cli import EXIT_PARTIAL
from migrator.pipeline import orchestrator
from migrator.pipeline.orchestrator import run_sync
from migrator.projects import actions, transitions
from migrator.projects.constants import RunState, StageState
from migrator.projects.models import Run, Stage
from migrator.projects.verdict import NO_ROCM_RUNNER, NO_SMOKE_COMMAND, NOT_AVAILABLE_HERE, run_verdict, verdict_of
from worker.context import StageResult

pytestmark = pytest.mark.django_db


def _row(name: str, state: str, summary: str = "", **data: object) -> SimpleNamespace:
    return SimpleNamespace(name=name, state=state, summary=summary, data=data)


def test_a_run_where_only_fetch_ran_is_partial_and_names_every_stage_not_checked(
    team_user: tuple[User, Team], only_stages: Callable[..., None], cuda_archive: bytes
) -> None:
    only_stages("fetch")
    project = actions.create_project(team_user[1], "demo", user=None)
    archive = actions.store_archive(project, io.BytesIO(cuda_archive), "demo.tar.gz", None)
    run = run_sync(actions.create_run(project, user=None, archive=archive))
    assert run.state == RunState.PARTIAL
    verdict = run_verdict(run)
    assert [(u.stage, u.reason) for u in verdict.unchecked] == [
        (name, NOT_AVAILABLE_HERE) for name in ("scan", "hipify", "compile", "link", "smoke")
    ]


def test_a_real_translation_without_a_smoke_command_is_partial_on_smoke(
    team_user: tuple[User, Team], only_stages: Callable[..., None], cuda_archive: bytes
) -> None:
    only_stages("fetch", "scan", "hipify", "smoke")
    project = actions.create_project(team_user[1], "demo", user=None)
    archive = actions.store_archive(project, io.BytesIO(cuda_archive), "demo.tar.gz", None)
    run = run_sync(actions.create_run(project, user=None, archive=archive))
    smoke = run.stages.get(name="smoke")
    assert smoke.state == StageState.SKIPPED and smoke.data == {"no_smoke_command": True}
    assert run.state == RunState.PARTIAL
    assert ("smoke", NO_SMOKE_COMMAND) in [(u.stage, u.reason) for u in run_verdict(run).unchecked]


def test_only_a_run_whose_stages_all_passed_for_real_passes() -> None:
    names = ("fetch", "scan", "hipify", "compile", "link", "smoke")
    assert verdict_of([_row(n, "passed") for n in names]).state == RunState.PASSED
    fake = [_row(n, "passed") for n in names[:-1]] + [_row("smoke", "passed", "ran", fake_gpu=True)]
    verdict = verdict_of(fake)
    assert verdict.state == RunState.PARTIAL and verdict.fake_gpu and verdict.unchecked[0].stage == "smoke"
    failed = [_row("fetch", "passed"), _row("scan", "failed"), *(_row(n, "skipped", "skipped: scan failed") for n in names[2:])]
    assert verdict_of(failed).state == RunState.FAILED
    assert verdict_of([_row("fetch", "passed"), _row("scan", "running")]).state == "running"
    assert verdict_of([_row("fetch", "passed")], cancel_requested=True).state == RunState.CANCELLED


def test_a_not_applicable_stage_makes_the_run_partial_never_failed(
    team_user: tuple[User, Team],
    only_stages: Callable[..., None],
    cuda_archive: bytes,
    monkeypatch: pytest.MonkeyPatch,
    client: Client,
) -> None:
    only_stages("fetch", "scan", "hipify", "compile")
    real_load = orchestrator.load_stage_module

    def load(name: str) -> object:
        if name == "compile":  # what a stage returns for a project with nothing to compile
            return SimpleNamespace(run=lambda ctx: StageResult.not_applicable("a Python-only project has no translation units"))
        return real_load(name)

    monkeypatch.setattr(orchestrator, "load_stage_module", load)
    project = actions.create_project(team_user[1], "py", user=None)
    archive = actions.store_archive(project, io.BytesIO(cuda_archive), "demo.tar.gz", None)
    run = run_sync(actions.create_run(project, user=None, archive=archive))
    compile_stage = run.stages.get(name="compile")
    assert compile_stage.state == StageState.NOT_APPLICABLE and run.state == RunState.PARTIAL
    client.force_login(team_user[0])
    page = client.get(f"/runs/{run.pk}/?stage=compile").content.decode()
    assert "not applicable: a Python-only project has no translation units" in page
    assert "<strong>compile</strong> (not applicable)" in page
    rerun = actions.create_rerun(run, user=None, from_stage="link")  # not applicable counts as done
    assert rerun.stages.get(name="compile").state == StageState.NOT_APPLICABLE


def test_a_smoke_stage_no_runner_took_is_skipped_and_the_run_partial(team_user: tuple[User, Team]) -> None:
    project = actions.create_project(team_user[1], "demo", user=None, git_url="https://example.com/demo.git")
    run = actions.create_run(project, user=None)
    for stage in run.stages.exclude(name="smoke"):
        transitions.claim_stage(stage.pk, "w")
        transitions.finish_stage(stage.pk, StageState.PASSED, "ok")
    smoke = Stage.objects.get(run=run, name="smoke")
    transitions.skip_waiting_stage(smoke, "no ROCm runner with a suitable GPU came online within 60 s", {"no_runner": True})
    run.refresh_from_db()
    assert run.state == RunState.PARTIAL
    assert [(u.stage, u.reason) for u in run_verdict(run).unchecked] == [("smoke", NO_ROCM_RUNNER)]


def test_migrate_repo_exits_with_the_partial_code_and_reports_the_verdict(
    only_stages: Callable[..., None], tmp_path: Path, cuda_files: dict[str, str]
) -> None:
    only_stages("fetch", "scan")
    src = tmp_path / "proj"
    for name, text in cuda_files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    out, report, markdown = io.StringIO(), tmp_path / "r.json", tmp_path / "r.md"
    with pytest.raises(SystemExit) as exit_info:
        call_command("migrate_repo", str(src), "--team", "cli", "--report", str(report), stdout=out, stderr=io.StringIO())
    assert exit_info.value.code == EXIT_PARTIAL == 3
    assert "partial: not checked: hipify (not available on this installation)" in out.getvalue()
    data = json.loads(report.read_text())
    assert data["state"] == "partial" and data["verdict"]["state"] == "partial"
    assert {u["stage"] for u in data["verdict"]["unchecked"]} == {"hipify", "compile", "link", "smoke"}
    run = Run.objects.get()
    from migrator.reports.build import build_report, render_markdown

    markdown.write_text(render_markdown(build_report(run)))
    assert "**Verdict:** partial, not checked: hipify: not available on this installation" in markdown.read_text()
