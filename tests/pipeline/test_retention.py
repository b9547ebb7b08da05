"""The retention sweep: work areas of runs finished a while ago and whole workspaces of old runs are removed,
recorded on the run, and their pages say so; recent, unfinished runs and everything outside are kept."""
from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.pipeline import retention
from migrator.projects import actions
from migrator.projects.constants import RunState, StageState
from migrator.projects.models import Project, Run
from migrator.projects.workspaces import workspace_for
from worker.toolchain import volume
from worker.toolchain.work import open_work, work_paths

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(team_user: tuple[User, Team]) -> Project:
    return actions.create_project(team_user[1], "kept", user=None, git_url="https://example.com/r.git")


def finished_run(project: Project, finished: datetime, state: str = RunState.PASSED) -> Run:
    run = actions.create_run(project, user=None)
    Run.objects.filter(pk=run.pk).update(state=state, finished_at=finished)
    workspace = workspace_for(run.pk)
    for tree in (workspace.source, workspace.hip):
        tree.mkdir(parents=True)
        (tree / "kernel.cu").write_text("__global__ void k() {}\n")
    with open_work(workspace, size_mb=64) as work:  # a real work volume where loop mounts can be had
        (work / "kernel.o").write_bytes(b"\x7fELF")
    run.refresh_from_db()
    return run


def test_it_removes_old_work_areas_and_expires_old_workspaces_and_keeps_the_rest(
    project: Project, settings: Settings, tmp_path: Path, alice_client: Client
) -> None:
    settings.MIGRATOR_WORK_RETENTION_H, settings.MIGRATOR_RUN_RETENTION_DAYS = 24, 30
    now = timezone.now()
    old, days_ago, recent = (finished_run(project, now - age) for age in
                             (timedelta(days=40), timedelta(days=2), timedelta(hours=1)))
    unfinished = finished_run(project, now - timedelta(days=40), state=RunState.RUNNING)
    canary = tmp_path / "canary"
    canary.write_text("outside")
    (workspace_for(old.pk).hip / "planted").symlink_to(canary)

    done = retention.sweep_retention(now)

    assert done.files_expired == [old.pk] and done.work_removed == [days_ago.pk]
    assert not workspace_for(old.pk).root.exists() and canary.read_text() == "outside"
    folder, image = work_paths(workspace_for(days_ago.pk).root)
    assert not folder.exists() and not image.exists()
    assert (workspace_for(days_ago.pk).hip / "kernel.cu").is_file()
    for kept in (recent, unfinished):
        assert work_paths(workspace_for(kept.pk).root)[1].is_file() or volume.loop_problem()
        assert (workspace_for(kept.pk).hip / "kernel.cu").is_file()
    old.refresh_from_db()
    days_ago.refresh_from_db()
    recent.refresh_from_db()
    assert old.files_expired_at == now and old.work_removed_at == now
    assert days_ago.work_removed_at == now and days_ago.files_expired_at is None
    assert recent.work_removed_at is None and recent.files_expired_at is None
    assert retention.sweep_retention(now) == retention.RetentionPass([], [])  # nothing left to do

    page = alice_client.get(old.get_absolute_url()).content.decode()
    assert 'id="run-files-expired"' in page
    assert 'id="run-work-removed"' in alice_client.get(days_ago.get_absolute_url()).content.decode()
    for url in (reverse("review:files", args=[old.pk]), reverse("review:patch", args=[old.pk]),
                reverse("review:file", args=[old.pk, "kernel.cu"])):
        answer = alice_client.get(url)
        assert answer.status_code == 410 and "Files expired" in answer.content.decode()
    assert alice_client.get(reverse("review:files", args=[days_ago.pk])).status_code == 200


def test_zero_keeps_files_forever(project: Project, settings: Settings) -> None:
    settings.MIGRATOR_WORK_RETENTION_H, settings.MIGRATOR_RUN_RETENTION_DAYS = 0, 0
    run = finished_run(project, timezone.now() - timedelta(days=400))
    assert retention.sweep_retention() == retention.RetentionPass([], [])
    assert (workspace_for(run.pk).hip / "kernel.cu").is_file()


def test_a_rerun_of_an_expired_run_is_refused_past_fetch_saying_its_files_expired(
    project: Project, settings: Settings
) -> None:
    settings.MIGRATOR_RUN_RETENTION_DAYS = 30
    old = finished_run(project, timezone.now() - timedelta(days=40))
    old.stages.filter(name__in=["fetch", "scan", "hipify"]).update(state=StageState.PASSED)
    retention.sweep_retention()
    with pytest.raises(actions.ActionError, match=f"the files of run #{old.number} expired on .*: re-run from fetch"):
        actions.create_rerun(old, user=None, from_stage="compile")
    assert actions.create_rerun(old, user=None, from_stage="fetch").parent_id == old.pk
