"""A rejected upload leaves nothing behind: project, archive and run are created in one transaction
on the web form and the API, so retrying with the same name works."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from migrator.accounts.models import Team
from migrator.api.models import create_token
from migrator.projects.models import Project, Run, SourceArchive

pytestmark = pytest.mark.django_db


def _not_an_archive() -> SimpleUploadedFile:
    return SimpleUploadedFile("code.tar.gz", b"this is not an archive at all\n" * 10)


def test_the_form_leaves_no_orphan_project_and_the_name_can_be_reused(
    alice_client: Client, team_user: tuple[User, Team], cuda_archive: bytes
) -> None:
    team = team_user[1]
    rejected = alice_client.post("/projects/new", {"name": "demo", "team": team.pk, "archive": _not_an_archive()})
    assert rejected.status_code == 400 and "code.tar.gz" in rejected.content.decode()
    assert not Project.objects.exists() and not SourceArchive.objects.exists() and not Run.objects.exists()
    accepted = alice_client.post(
        "/projects/new", {"name": "demo", "team": team.pk, "archive": SimpleUploadedFile("c.tgz", cuda_archive)}
    )
    assert accepted.status_code == 302
    project = Project.objects.get(team=team, name="demo")
    assert project.archives.count() == 1 and project.runs.get().archive == project.archives.get()


def test_the_api_leaves_no_orphan_project_and_the_name_can_be_reused(
    client: Client, team_user: tuple[User, Team], cuda_archive: bytes
) -> None:
    auth = {"Authorization": f"Bearer {create_token(team_user[1], 'ci')[1]}"}
    rejected = client.post("/api/v1/projects", {"name": "demo", "archive": _not_an_archive()}, headers=auth)
    assert rejected.status_code == 400 and "code.tar.gz" in rejected.json()["detail"]
    assert not Project.objects.exists() and not SourceArchive.objects.exists()
    accepted = client.post("/api/v1/projects", {"name": "demo", "archive": SimpleUploadedFile("c.tgz", cuda_archive)}, headers=auth)
    assert accepted.status_code == 201 and Project.objects.get(name="demo").archives.count() == 1


def test_a_rejected_upload_for_a_new_run_records_no_run(
    alice_client: Client, team_user: tuple[User, Team], cuda_archive: bytes
) -> None:
    alice_client.post("/projects/new", {"name": "demo", "team": team_user[1].pk, "archive": SimpleUploadedFile("c.tgz", cuda_archive)})
    project = Project.objects.get(name="demo")
    response = alice_client.post(f"/projects/{project.pk}/runs/new", {"archive": _not_an_archive()})
    assert response.status_code == 302 and project.runs.count() == 1 and project.archives.count() == 1
