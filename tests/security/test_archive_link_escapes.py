"""Archives whose links climb out of the workspace, long names and file modes: unpacked directly,
uploaded through the web form and through the API, then fetched by the pipeline."""
from __future__ import annotations

import io
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from migrator.accounts.models import Team
from migrator.api.models import create_token
from migrator.pipeline.orchestrator import run_sync
from migrator.projects import actions
from migrator.projects.models import Run
from migrator.projects.workspaces import workspace_for
from tests.security.archive_builders import Entry, archive_bytes, chained_escape, tar_bytes, zip_bytes
from worker.sources.archives import ArchiveError, unpack_archive

KINDS = ["tar.gz", "zip"]


def _unpack(tmp_path: Path, data: bytes) -> Path:
    archive = tmp_path / "upload.bin"
    archive.write_bytes(data)
    unpack_archive(archive, tmp_path / "jail" / "out")
    return tmp_path / "jail" / "out"


@pytest.mark.parametrize("kind", KINDS)
def test_a_chain_of_links_that_climbs_out_is_refused(tmp_path: Path, kind: str) -> None:
    with pytest.raises(ArchiveError, match="writes through a symbolic link|points outside the workspace"):
        _unpack(tmp_path, archive_bytes(kind, chained_escape()))
    assert not (tmp_path / "jail" / "out").exists()


@pytest.mark.parametrize("kind", KINDS)
def test_a_link_made_harmful_by_a_later_link_is_refused(tmp_path: Path, kind: str) -> None:
    """``a -> b/../x`` looks inside while ``b`` is missing; ``b -> .`` later makes it ``../x``."""
    (tmp_path / "jail" / "x").parent.mkdir(parents=True)
    (tmp_path / "jail" / "x").write_text("secret outside the tree\n")
    entries = [Entry("a.cu", link="b/../x"), Entry("b", link="."), Entry("keep.cu", b"int x;\n")]
    with pytest.raises(ArchiveError, match="'a.cu' points outside the workspace"):
        _unpack(tmp_path, archive_bytes(kind, entries))


@pytest.mark.parametrize("kind", KINDS)
def test_a_link_inside_a_linked_folder_is_refused(tmp_path: Path, kind: str) -> None:
    entries = [Entry("inc", link="src"), Entry("src/a.h", b"int a;\n"), Entry("inc/alias.h", link="a.h")]
    with pytest.raises(ArchiveError, match="writes through a symbolic link: inc/alias.h"):
        _unpack(tmp_path, archive_bytes(kind, entries))


@pytest.mark.parametrize("kind", KINDS)
def test_links_that_stay_inside_are_kept(tmp_path: Path, kind: str) -> None:
    entries = [Entry("src/a.h", b"int a;\n"), Entry("inc/alias.h", link="../src/a.h"), Entry("top", link=".")]
    out = _unpack(tmp_path, archive_bytes(kind, entries))
    assert (out / "inc/alias.h").read_text() == "int a;\n" and os.readlink(out / "top") == "."


@pytest.mark.parametrize("kind", KINDS)
def test_a_300_character_name_is_named_as_too_long(tmp_path: Path, kind: str) -> None:
    name = "src/" + "k" * 297 + ".cu"
    with pytest.raises(ArchiveError) as caught:
        _unpack(tmp_path, archive_bytes(kind, [Entry("a.cu", b"1"), Entry(name, b"2")]))
    message = str(caught.value)
    assert "component of 300 bytes" in message and "longer than the 255 bytes file systems allow" in message
    assert "Errno" not in message and "corrupt" not in message


def test_a_link_target_with_a_300_character_component_is_named_as_too_long(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="longer than the 255 bytes"):
        _unpack(tmp_path, tar_bytes([Entry("a.cu", link="x" * 300)]))


@pytest.mark.parametrize("kind", KINDS)
def test_files_keep_their_executable_bit_and_nothing_more(tmp_path: Path, kind: str) -> None:
    entries = [Entry("configure", b"#!/bin/sh\n", mode=0o755), Entry("README", b"hi\n", mode=0o644),
               Entry("tools/setuid", b"#!/bin/sh\n", mode=0o6755), Entry("sticky.txt", b"x", mode=0o1777)]
    out = _unpack(tmp_path, archive_bytes(kind, entries))
    modes = {name: stat.S_IMODE((out / name).stat().st_mode) for name in ("configure", "README", "tools/setuid", "sticky.txt")}
    assert modes == {"configure": 0o755, "README": 0o644, "tools/setuid": 0o755, "sticky.txt": 0o755}


def _fetch_summary(run: Run) -> str:
    run = run_sync(run)
    fetch = run.stages.get(name="fetch")
    assert run.state == "failed" and fetch.state == "failed"
    source = workspace_for(run.pk).source
    assert not source.exists() or not any(p.is_symlink() for p in source.rglob("*"))
    return fetch.summary


@pytest.mark.django_db
@pytest.mark.parametrize("kind", KINDS)
def test_the_web_form_upload_fails_fetch_with_the_reason(
    alice_client: Client,
    team_user: tuple[User, Team],
    only_stages: Callable[..., None],
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
) -> None:
    only_stages("fetch")
    monkeypatch.setattr("migrator.projects.views.start_run", lambda run: None)
    upload = SimpleUploadedFile(f"leak.{kind}", archive_bytes(kind, chained_escape()))
    response = alice_client.post(reverse("projects:create"), {"name": "leaky", "team": team_user[1].pk, "archive": upload})
    assert response.status_code == 302
    summary = _fetch_summary(Run.objects.get())
    assert summary.startswith("archive rejected: archive writes through a symbolic link: p1/p2/")


@pytest.mark.django_db
@pytest.mark.parametrize("kind", KINDS)
def test_the_api_upload_fails_fetch_with_the_reason(
    client: Client, team_user: tuple[User, Team], only_stages: Callable[..., None], kind: str
) -> None:
    only_stages("fetch")
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {create_token(team_user[1], 'ci')[1]}"
    project = actions.create_project(team_user[1], "leaky", user=None)
    upload = io.BytesIO(archive_bytes(kind, chained_escape()))
    upload.name = f"leak.{kind}"
    created = client.post(f"/api/v1/projects/{project.pk}/runs", {"archive": upload})
    assert created.status_code == 201
    summary = _fetch_summary(Run.objects.get(pk=created.json()["id"]))
    assert summary.startswith("archive rejected: archive writes through a symbolic link: p1/p2/")


@pytest.mark.django_db
def test_the_api_upload_of_a_long_name_fails_fetch_without_errno(
    client: Client, team_user: tuple[User, Team], only_stages: Callable[..., None]
) -> None:
    only_stages("fetch")
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {create_token(team_user[1], 'ci')[1]}"
    project = actions.create_project(team_user[1], "long", user=None)
    upload = io.BytesIO(zip_bytes([Entry("n" * 300 + ".cu", b"x")]))
    upload.name = "long.zip"
    created = client.post(f"/api/v1/projects/{project.pk}/runs", {"archive": upload})
    summary = _fetch_summary(Run.objects.get(pk=created.json()["id"]))
    assert "longer than the 255 bytes" in summary and "Errno" not in summary


def test_a_zip_link_with_a_huge_target_is_refused_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(ArchiveError, match="has a target over 4095 bytes"):
        _unpack(tmp_path, zip_bytes([Entry("a.cu", link="../" * 1_000_000)]))
