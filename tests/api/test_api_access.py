"""The JSON API: bearer tokens, team scoping, projects, runs, reports, notebook search."""
from __future__ import annotations

import io
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from pytest_django import DjangoCaptureOnCommitCallbacks

from migrator.accounts.models import Team
from migrator.api.models import ApiToken, create_token, hash_token
from migrator.pipeline.orchestrator import run_sync
from migrator.projects import actions
from migrator.projects.models import Project, Run
from tests.conftest import make_tar_gz

pytestmark = pytest.mark.django_db


@pytest.fixture
def token(team_user: tuple[User, Team]) -> str:
    return create_token(team_user[1], "ci")[1]


@pytest.fixture
def api(client: Client, token: str) -> Client:
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return client


@pytest.fixture
def project(team_user: tuple[User, Team]) -> Project:
    return actions.create_project(team_user[1], "demo", user=None, git_url="https://github.com/acme/demo.git")


def test_requests_without_a_valid_token_get_401(client: Client, project: Project, token: str) -> None:
    assert client.get("/api/v1/projects").status_code == 401
    assert client.get("/api/v1/projects", HTTP_AUTHORIZATION="Bearer mgr_wrong").status_code == 401
    assert client.get("/api/v1/projects", HTTP_AUTHORIZATION=f"Token {token}").status_code == 401
    ApiToken.objects.update(revoked=True)
    assert client.get("/api/v1/projects", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 401


def test_a_token_sees_only_its_teams_projects_and_runs(
    api: Client, project: Project, other_team_user: tuple[User, Team]
) -> None:
    foreign = actions.create_project(other_team_user[1], "theirs", user=None, git_url="https://github.com/b/theirs.git")
    foreign_run = actions.create_run(foreign, user=None, ref="main")
    assert [p["name"] for p in api.get("/api/v1/projects").json()] == ["demo"]
    assert api.get(f"/api/v1/projects/{project.pk}").json()["team"] == "Alpha"
    for path in (f"/api/v1/projects/{foreign.pk}", f"/api/v1/projects/{foreign.pk}/runs", f"/api/v1/runs/{foreign_run.pk}",
                 f"/api/v1/runs/{foreign_run.pk}/stages", f"/api/v1/runs/{foreign_run.pk}/report",
                 f"/api/v1/runs/{foreign_run.pk}/report.md"):
        assert api.get(path).status_code == 404, path
    assert api.post(f"/api/v1/projects/{foreign.pk}/runs", {"ref": "main"}).status_code == 404
    assert Run.objects.filter(project=foreign).count() == 1


def test_it_creates_git_and_archive_projects(api: Client, cuda_archive: bytes) -> None:
    created = api.post("/api/v1/projects", {"name": "from-git", "git_url": "https://github.com/acme/x.git", "git_ref": "main"})
    assert created.status_code == 201 and created.json()["source_kind"] == "git"
    upload = io.BytesIO(cuda_archive)
    upload.name = "code.tar.gz"
    archived = api.post("/api/v1/projects", {"name": "from-archive", "archive": upload})
    assert archived.status_code == 201 and archived.json()["source_kind"] == "archive"
    assert Project.objects.get(name="from-archive").archives.get().original_name == "code.tar.gz"


@pytest.mark.parametrize("form,message", [
    ({"name": "x"}, "either git_url or an archive"),
    ({"name": "x", "git_url": "file:///etc"}, "git"),
    ({"name": " ", "git_url": "https://github.com/a/b.git"}, "name"),
    ({"name": "demo", "git_url": "https://github.com/a/b.git"}, "already has a project"),
])
def test_bad_project_input_gets_400(api: Client, project: Project, form: dict[str, str], message: str) -> None:
    response = api.post("/api/v1/projects", form)
    assert response.status_code == 400 and message in response.json()["detail"]


def test_it_starts_a_git_run_with_a_pr_url(
    api: Client, project: Project, django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks
) -> None:
    with django_capture_on_commit_callbacks() as callbacks:
        response = api.post(f"/api/v1/projects/{project.pk}/runs", {"ref": "v1.2", "pr_url": "https://github.com/acme/demo/pull/3"})
    assert response.status_code == 201 and len(callbacks) == 1
    body = response.json()
    assert (body["number"], body["ref"], body["trigger"], body["state"]) == (1, "v1.2", "api", "queued")
    assert [s["name"] for s in body["stages"]] == ["fetch", "scan", "hipify", "compile", "link", "smoke"]
    assert api.post(f"/api/v1/projects/{project.pk}/runs", {"ref": "--upload-pack=x"}).status_code == 400
    assert api.post(f"/api/v1/projects/{project.pk}/runs", {"pr_url": "javascript:alert(1)"}).status_code == 400


def test_it_runs_an_uploaded_archive_and_serves_its_report(
    api: Client, team_user: tuple[User, Team], only_stages: Callable[..., None]
) -> None:
    only_stages("fetch")
    project = actions.create_project(team_user[1], "upload", user=None)
    upload = io.BytesIO(make_tar_gz({"a.cu": "__global__ void k() {}\n"}))
    upload.name = "a.tar.gz"
    created = api.post(f"/api/v1/projects/{project.pk}/runs", {"archive": upload})
    assert created.status_code == 201 and created.json()["archive_sha256"]
    run = run_sync(Run.objects.get(pk=created.json()["id"]))
    listed = api.get(f"/api/v1/projects/{project.pk}/runs").json()
    assert [r["id"] for r in listed] == [run.pk] and listed[0]["state"] == "partial"
    stages = api.get(f"/api/v1/runs/{run.pk}/stages").json()
    assert stages[0]["name"] == "fetch" and stages[0]["state"] == "passed" and stages[0]["duration_s"] is not None
    assert api.get(f"/api/v1/runs/{run.pk}").json()["stages"][1]["state"] == "skipped"
    report = api.get(f"/api/v1/runs/{run.pk}/report").json()
    assert run.archive is not None
    assert report["run"]["number"] == 1 and report["source"]["archive_sha256"] == run.archive.sha256
    markdown = api.get(f"/api/v1/runs/{run.pk}/report.md")
    assert markdown["Content-Type"].startswith("text/markdown") and b"Migrator: upload run #1 partial" in markdown.content


def test_notebook_search_answers_with_the_matching_entries(api: Client) -> None:
    from migrator.notebook.actions import load_seed

    load_seed()
    response = api.get("/api/v1/notebook/search", {"q": "fatal error: 'cuda_runtime.h' file not found"})
    assert response.status_code == 200
    hits = response.json()
    assert hits and all(hit["url"].startswith("http") and hit["slug"] for hit in hits)
    assert any("cuda_runtime" in hit["title"].lower() or "header" in hit["title"].lower() for hit in hits)


def test_the_command_prints_a_token_once_and_stores_its_hash(team_user: tuple[User, Team], client: Client) -> None:
    out = io.StringIO()
    call_command("create_api_token", "Alpha", "--name", "deploy", stdout=out)
    value = out.getvalue().strip()
    stored = ApiToken.objects.get(name="deploy")
    assert stored.token_hash == hash_token(value) and value not in (stored.token_hash, stored.hint)
    assert client.get("/api/v1/projects", HTTP_AUTHORIZATION=f"Bearer {value}").status_code == 200
