"""Runs of the demo archive project (tests/conftest.py's ``archive_project``) for the projects tests."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from migrator.accounts.models import Team
from migrator.projects import actions
from migrator.projects.models import Project, Run, Stage


def new_run(project: Project) -> Run:
    return actions.create_run(project, user=None)


def stage_of(run: Run, name: str) -> Stage:
    return run.stages.get(name=name)


@pytest.fixture
def run(archive_project: Project, team_user: tuple[User, Team]) -> Run:
    """A queued run of the demo project, started by the team's member."""
    return actions.create_run(archive_project, user=team_user[0])
