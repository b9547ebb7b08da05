"""Creating projects from uploads and git URLs through the web UI; limits and bad input."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.projects.models import Project, Run, SourceArchive

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_dispatch(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """These tests check the web side; the queueing of stages is covered by the Celery tests."""
    started: list[int] = []
    monkeypatch.setattr("migrator.projects.views.start_run", lambda run: started.append(run.pk))
    return started


def test_anonymous_users_are_sent_to_login(client: Client) -> None:
    response = client.get(reverse("projects:list"))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_uploading_an_archive_creates_a_project_and_a_run(
    alice_client: Client, team_user: tuple[User, Team], cuda_archive: bytes, _no_dispatch: list[int]
) -> None:
    _, team = team_user
    upload = SimpleUploadedFile("demo.tar.gz", cuda_archive, content_type="application/gzip")
    response = alice_client.post(reverse("projects:create"), {"name": "demo", "team": team.pk, "archive": upload})
    run = Run.objects.get()
    assert response.status_code == 302 and response["Location"] == run.get_absolute_url()
    archive = SourceArchive.objects.get()
    assert run.archive == archive and len(archive.sha256) == 64 and Path(archive.path).read_bytes() == cuda_archive
    assert run.pinned_source == f"sha256:{archive.sha256}"
    assert _no_dispatch == [run.pk]


def test_linking_a_git_repository_creates_a_project(
    alice_client: Client, team_user: tuple[User, Team], settings: Settings
) -> None:
    _, team = team_user
    data = {"name": "gitproj", "team": team.pk, "git_url": "https://example.com/org/repo.git", "git_ref": "main"}
    assert alice_client.post(reverse("projects:create"), data).status_code == 302
    project = Project.objects.get()
    assert project.git_url == data["git_url"] and project.runs.get().ref == "main"


def test_a_local_git_path_is_refused_by_default(
    alice_client: Client, team_user: tuple[User, Team], git_repo: Path
) -> None:
    _, team = team_user
    data = {"name": "local", "team": team.pk, "git_url": str(git_repo)}
    response = alice_client.post(reverse("projects:create"), data)
    assert response.status_code == 400
    assert b"disabled on this installation" in response.content
    assert not Project.objects.exists()


def test_an_archive_over_the_limit_is_refused_and_nothing_stored(
    alice_client: Client, team_user: tuple[User, Team], settings: Settings
) -> None:
    settings.MIGRATOR_MAX_UPLOAD_BYTES = 4096
    _, team = team_user
    upload = SimpleUploadedFile("big.zip", b"PK\x03\x04" + b"0" * 10_000)
    response = alice_client.post(reverse("projects:create"), {"name": "big", "team": team.pk, "archive": upload})
    assert response.status_code == 400
    assert not SourceArchive.objects.exists() and not Project.objects.exists()
    assert not list(Path(settings.MEDIA_ROOT).glob("archives/*"))


def test_a_file_that_is_not_an_archive_is_refused(alice_client: Client, team_user: tuple[User, Team]) -> None:
    _, team = team_user
    upload = SimpleUploadedFile("notes.zip", b"hello, I am text")
    response = alice_client.post(reverse("projects:create"), {"name": "txt", "team": team.pk, "archive": upload})
    assert response.status_code == 400 and b"not a zip, tar or tar.gz" in response.content
    assert not Run.objects.exists()


def test_exactly_one_source_is_required(alice_client: Client, team_user: tuple[User, Team]) -> None:
    _, team = team_user
    response = alice_client.post(reverse("projects:create"), {"name": "x", "team": team.pk})
    assert response.status_code == 400 and b"one of the two" in response.content


def test_a_project_cannot_be_created_for_another_team(alice_client: Client, other_team_user: tuple[User, Team]) -> None:
    _, beta = other_team_user
    data = {"name": "sneaky", "team": beta.pk, "git_url": "https://example.com/r.git"}
    assert alice_client.post(reverse("projects:create"), data).status_code == 400
    assert not Project.objects.exists()


def test_settings_are_validated_and_only_differences_stored(alice_client: Client, team_user: tuple[User, Team]) -> None:
    from migrator.projects import actions

    project = actions.create_project(team_user[1], "p", user=None, git_url="https://example.com/r.git")
    url = reverse("projects:settings", args=[project.pk])
    bad = alice_client.post(url, {"settings_json": '{"offload_archs": ["sm_90"]}'})
    assert bad.status_code == 200 and b"not an AMD GPU target" in bad.content
    assert alice_client.post(url, {"settings_json": '{"offload_archs": ["gfx942"], "cxx_std": ""}'}).status_code == 302
    project.refresh_from_db()
    assert project.settings == {"offload_archs": ["gfx942"]}


def test_starting_a_run_with_a_ref_and_pr(
    alice_client: Client, team_user: tuple[User, Team], _no_dispatch: list[int]
) -> None:
    from migrator.projects import actions

    project = actions.create_project(team_user[1], "p", user=None, git_url="https://example.com/r.git")
    data = {"ref": "v2.0", "pr_url": "https://github.com/o/r/pull/7"}
    response = alice_client.post(reverse("projects:run-start", args=[project.pk]), data)
    run = project.runs.get()
    assert response.status_code == 302 and run.ref == "v2.0" and run.pr_url.endswith("/pull/7")
    page = alice_client.get(reverse("projects:detail", args=[project.pk]))
    assert b"#1" in page.content and b"pull/7" in page.content
