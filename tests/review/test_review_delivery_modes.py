"""Both delivery modes inside the run's diff view: a switch between the translation file by file, the
single-source change and the converted copy, each mode listing its own files against the CUDA tree."""
from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from pytest_django import Settings

from migrator.accounts.models import Team
from migrator.projects.models import Run
from tests.reports.team_repo import team_repo

FIXTURES = Path(__file__).parent.parent / "fixtures" / "delivery"
pytestmark = pytest.mark.django_db


def translated_run(tmp_path: Path, team: Team, settings: Settings, only_stages: Callable[..., None],
                   fixture: str = "make_histogram") -> Run:
    """A finished run of a delivery fixture from a local repository, translated (fetch, scan, hipify)."""
    settings.MIGRATOR_ALLOW_LOCAL_GIT = True
    only_stages("fetch", "scan", "hipify")
    repo = team_repo(tmp_path, FIXTURES / fixture)
    try:
        call_command("migrate_repo", repo.url, "--ref", "main", "--project", fixture, "--team", team.name,
                     stdout=io.StringIO(), stderr=io.StringIO())
    except SystemExit:
        pass
    return Run.objects.get()


def _files(page: str) -> list[str]:
    return [part.split('"', 1)[0] for part in page.split('<tr class="delivery-file" data-path="')[1:]]


def test_the_switch_shows_each_mode_s_own_files(tmp_path: Path, team_user: tuple[User, Team], settings: Settings,
                                                 only_stages: Callable[..., None], client: Client) -> None:
    run = translated_run(tmp_path, team_user[1], settings, only_stages)
    client.force_login(team_user[0])
    plain = client.get(f"/runs/{run.pk}/files/").content.decode()
    assert 'id="delivery-switch"' in plain and 'href="?delivery=single-source"' in plain
    assert 'id="file-tree"' in plain and 'id="delivery-mode"' not in plain

    single = client.get(f"/runs/{run.pk}/files/?delivery=single-source").content.decode()
    assert _files(single) == ["rocm/hipify_tree.py", "rocm/hip.mk", "rocm/nvcc_as_hipcc.py", "Makefile"]
    assert "Single source: CUDA stays the source" in single and 'id="file-tree"' not in single
    assert "+include rocm/hip.mk" in single  # the Makefile's diff, inline

    copy = client.get(f"/runs/{run.pk}/files/?delivery=copy").content.decode()
    assert _files(copy) == ["Makefile", "histogram.cu"] and "Converted copy: the translated tree" in copy
    assert "+#include &lt;hip/hip_runtime.h&gt;" in copy


def test_an_unknown_mode_shows_the_translation(tmp_path: Path, team_user: tuple[User, Team], settings: Settings,
                                               only_stages: Callable[..., None], client: Client) -> None:
    run = translated_run(tmp_path, team_user[1], settings, only_stages)
    client.force_login(team_user[0])
    page = client.get(f"/runs/{run.pk}/files/?delivery=fork").content.decode()
    assert 'id="file-tree"' in page and 'id="delivery-mode"' not in page
