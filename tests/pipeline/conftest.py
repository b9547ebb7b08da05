"""Runs the pipeline tests start from: fetched for real, with a smoke command, so the reference can be sent."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile

from migrator.accounts.models import Team
from migrator.pipeline import orchestrator
from migrator.projects import actions
from migrator.projects.constants import StageState
from migrator.projects.models import Run, Stage


@pytest.fixture
def fetched_run(team_user: tuple[User, Team], cuda_archive: bytes, only_stages: Callable[..., None]) -> Run:
    only_stages("fetch")
    user, team = team_user
    project = actions.create_project(team, "ref", user=user, settings={"smoke_command": "./vadd"})
    actions.store_archive(project, SimpleUploadedFile("r.tgz", cuda_archive), "r.tgz", user)
    return orchestrator.run_sync(actions.create_run(project, user=user))


@pytest.fixture
def queued_smoke(fetched_run: Run) -> Stage:
    """The fetched run's smoke stage queued again, as when the pipeline reaches it."""
    Stage.objects.filter(run=fetched_run, name="smoke").update(state=StageState.QUEUED, summary="", task_id="")
    return fetched_run.stages.get(name="smoke")
