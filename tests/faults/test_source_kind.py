"""A run fetches exactly the source it recorded: an archive run whose archive is missing fails
with that reason (never a git fetch of an empty URL), concurrent ``migrate_repo`` calls on one
directory each get their own archive, and a real git failure reads well."""
from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import IntegrityError, connection, transaction
from django.test import Client

from migrator.accounts.models import Team
from migrator.api.cli import migrate_repo
from migrator.pipeline.orchestrator import run_sync
from migrator.projects import actions
from migrator.projects.constants import RunState, SourceKind, StageState, Trigger
from migrator.projects.models import Run
from tests.conftest import make_tar_gz


@pytest.mark.django_db
def test_the_database_refuses_a_run_without_the_source_it_fetches(team_user: tuple[User, Team]) -> None:
    project = actions.create_project(team_user[1], "no-source", user=None)
    with pytest.raises(IntegrityError, match="archive_run_has_archive"), transaction.atomic():
        Run.objects.create(project=project, number=1, source_kind=SourceKind.ARCHIVE, archive=None)
    with pytest.raises(IntegrityError, match="git_run_has_url"), transaction.atomic():
        Run.objects.create(project=project, number=1, source_kind=SourceKind.GIT, git_url="")


@pytest.mark.django_db
def test_an_archive_run_left_without_its_archive_fails_fetch_with_that_reason(
    team_user: tuple[User, Team], only_stages: Callable[..., None]
) -> None:
    only_stages("fetch")
    project = actions.create_project(team_user[1], "lost-archive", user=None)
    # A row an earlier version may have left (the check is NOT VALID for old rows): recreate one
    # inside this test's transaction, which rolls back with the constraint in place again.
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {Run._meta.db_table} DROP CONSTRAINT archive_run_has_archive")
    run = Run.objects.create(project=project, number=1, source_kind=SourceKind.ARCHIVE, archive=None)
    for index, name in enumerate(("fetch", "scan", "hipify", "compile", "link", "smoke")):
        run.stages.create(name=name, position=index)
    run = run_sync(run)
    fetch = run.stages.get(name="fetch")
    assert fetch.state == StageState.FAILED and run.state == RunState.FAILED
    assert fetch.summary == "this run's archive is missing (archive id none is not in the database)"
    assert "git" not in fetch.summary and fetch.data == {"missing_source": True}


@pytest.mark.django_db
def test_a_run_cannot_be_recorded_with_another_projects_archive(team_user: tuple[User, Team]) -> None:
    mine = actions.create_project(team_user[1], "mine", user=None)
    theirs = actions.create_project(team_user[1], "theirs", user=None)
    archive = actions.store_archive(theirs, SimpleUploadedFile("t.tgz", make_tar_gz({"a.cu": "int a;\n"})), "t.tgz", None)
    with pytest.raises(actions.ActionError, match="this project has no uploaded archive yet"):
        actions.create_run(mine, user=None)
    with pytest.raises(actions.ActionError, match="belongs to another project"):
        actions.create_run(mine, user=None, archive=archive)


@pytest.mark.django_db
def test_a_missing_repository_fails_with_a_readable_summary(
    alice_client: Client, team_user: tuple[User, Team], only_stages: Callable[..., None], tmp_path: Path
) -> None:
    only_stages("fetch")
    missing = tmp_path / "no-such-repo"
    project = actions.create_project(team_user[1], "gone", user=None, git_url=str(missing))
    run = run_sync(actions.create_run(project, user=None, trigger=Trigger.CLI))
    fetch = run.stages.get(name="fetch")
    assert fetch.state == StageState.FAILED
    assert fetch.summary == f"repository not found: {missing}"
    panel = alice_client.get(f"/runs/{run.pk}/?stage=fetch").content.decode()
    assert "Commit" not in panel and "()" not in panel and "Repository" in panel


@pytest.mark.django_db(transaction=True)
def test_concurrent_migrate_repo_calls_on_one_directory_each_fetch_their_archive(
    only_stages: Callable[..., None], tmp_path: Path
) -> None:
    only_stages("fetch")
    source = tmp_path / "kernels"
    (source / "src").mkdir(parents=True)
    (source / "src" / "k.cu").write_text("__global__ void k() {}\n")
    team = Team.objects.create(name="cli", slug="cli")
    runs: list[Run] = []
    errors: list[BaseException] = []

    def one() -> None:
        from django.db import connection

        try:
            runs.append(migrate_repo(str(source), team=team))
        except BaseException as exc:  # reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == [] and len(runs) == 4
    for run in runs:
        fetch = run.stages.get(name="fetch")
        assert run.archive_id is not None and run.source_kind == SourceKind.ARCHIVE
        assert fetch.state == StageState.PASSED and fetch.data["kind"] == "archive", fetch.summary
