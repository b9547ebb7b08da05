"""API endpoints for cancel, re-run, stage logs and project settings, scoped to the token's team."""
from __future__ import annotations

import io
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.api.models import create_token
from migrator.pipeline.orchestrator import run_sync
from migrator.projects import actions
from migrator.projects.models import Project, Run
from tests.conftest import VADD_CU, make_tar_gz

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(client: Client, team_user: tuple[User, Team]) -> Client:
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {create_token(team_user[1], 'ci')[1]}"
    return client


@pytest.fixture
def project(team_user: tuple[User, Team]) -> Project:
    project = actions.create_project(team_user[1], "demo", user=None)
    actions.store_archive(project, io.BytesIO(make_tar_gz({"src/vadd.cu": VADD_CU})), "demo.tar.gz", None)
    return project


def test_cancel_a_queued_run_and_refuse_a_finished_one(
    api: Client, project: Project, only_stages: Callable[..., None]
) -> None:
    run = actions.create_run(project, user=None)
    answer = api.post(f"/api/v1/runs/{run.pk}/cancel")
    assert answer.status_code == 202 and answer.json()["state"] == "cancelled"
    assert api.post(f"/api/v1/runs/{run.pk}/cancel").status_code == 409


def test_rerun_defaults_to_the_first_stage_that_did_not_pass(
    api: Client, project: Project, only_stages: Callable[..., None], settings: Settings
) -> None:
    only_stages("fetch", "scan")
    settings.CELERY_TASK_ALWAYS_EAGER = False
    run = run_sync(actions.create_run(project, user=None))
    answer = api.post(f"/api/v1/runs/{run.pk}/rerun", {}, content_type="application/json")
    assert answer.status_code == 201, answer.content
    new = Run.objects.get(pk=answer.json()["id"])
    states = {s.name: s.state for s in new.stages.all()}
    assert new.parent_id == run.pk and states["fetch"] == states["scan"] == "passed" and states["hipify"] == "queued"
    bad = api.post(f"/api/v1/runs/{run.pk}/rerun", {"from_stage": "deploy"}, content_type="application/json")
    assert bad.status_code == 400 and "unknown stage" in bad.json()["detail"]


def test_stage_logs_come_in_pieces_by_byte_offset(
    api: Client, project: Project, only_stages: Callable[..., None]
) -> None:
    only_stages("fetch")
    run = run_sync(actions.create_run(project, user=None))
    first = api.get(f"/api/v1/runs/{run.pk}/stages/fetch/log").json()
    assert first["final"] and first["next_offset"] == first["size"] > 0 and "unpacked" in first["text"]
    tail = api.get(f"/api/v1/runs/{run.pk}/stages/fetch/log?offset={first['size'] - 5}").json()
    assert tail["text"] == first["text"][-5:]
    assert api.get(f"/api/v1/runs/{run.pk}/stages/nope/log").status_code == 404


def test_settings_are_read_and_replaced_with_validation(api: Client, project: Project) -> None:
    got = api.get(f"/api/v1/projects/{project.pk}/settings").json()
    assert got["stored"] == {} and got["effective"]["offload_archs"] == ["gfx90a", "gfx942", "gfx1100"]
    put = api.put(f"/api/v1/projects/{project.pk}/settings", {"offload_archs": ["gfx942"], "smoke_command": ""},
                  content_type="application/json")
    assert put.status_code == 200 and put.json()["stored"] == {"offload_archs": ["gfx942"]}
    bad = api.put(f"/api/v1/projects/{project.pk}/settings", {"offload_archs": ["sm_80"]}, content_type="application/json")
    assert bad.status_code == 400 and "offload_archs" in bad.json()["detail"]


def test_another_teams_token_sees_none_of_it(
    client: Client, project: Project, other_team_user: tuple[User, Team]
) -> None:
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {create_token(other_team_user[1], 'ci')[1]}"
    run = actions.create_run(project, user=None)
    assert client.post(f"/api/v1/runs/{run.pk}/cancel").status_code == 404
    assert client.get(f"/api/v1/projects/{project.pk}/settings").status_code == 404
