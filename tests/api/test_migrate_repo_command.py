"""``manage.py migrate_repo`` runs the same pipeline synchronously and prints per-stage results."""
from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from migrator.accounts.models import Team
from migrator.projects.models import Run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("team_user")]


def _call(*args: str, err: io.StringIO | None = None) -> tuple[str, int]:
    out = io.StringIO()
    try:
        call_command("migrate_repo", *args, stdout=out, stderr=err or io.StringIO())
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return out.getvalue(), code


def test_it_migrates_a_directory_and_writes_a_json_report(
    only_stages: Callable[..., None], tmp_path: Path, cuda_files: dict[str, str]
) -> None:
    only_stages("fetch")
    src = tmp_path / "myproj"
    for name, text in cuda_files.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    report = tmp_path / "report.json"
    output, code = _call(str(src), "--report", str(report))
    assert code == 3  # partial: only fetch ran here
    lines = output.splitlines()
    assert lines[0].startswith("fetch") and "passed" in lines[0] and "unpacked 2 files" in lines[0]
    assert any(line.startswith("smoke") and "not available" in line for line in lines)
    data = json.loads(report.read_text())
    assert data["state"] == "partial" and [s["name"] for s in data["stages"]][:2] == ["fetch", "scan"]
    assert len(data["source"]["archive_sha256"]) == 64


def test_the_same_directory_packs_to_the_same_checksum(only_stages: Callable[..., None], tmp_path: Path) -> None:
    only_stages("fetch")
    src = tmp_path / "p"
    src.mkdir()
    (src / "a.cu").write_text("__global__ void k() {}\n")
    _call(str(src))
    _call(str(src))
    first, second = Run.objects.order_by("number")
    assert first.archive is not None and second.archive is not None
    assert first.archive.sha256 == second.archive.sha256


def test_it_migrates_a_git_checkout_at_a_ref(only_stages: Callable[..., None], git_repo: Path) -> None:
    only_stages("fetch")
    output, code = _call(str(git_repo), "--ref", "v1")
    run = Run.objects.get()
    assert code == 3 and len(run.commit_sha) == 40 and run.ref == "v1"
    assert f"cloned v1 at {run.commit_sha[:12]}" in output


def test_a_failing_run_exits_non_zero(only_stages: Callable[..., None], git_repo: Path) -> None:
    only_stages("fetch")
    output, code = _call(str(git_repo), "--ref", "no-such-ref")
    assert code == 1 and "unknown ref" in output and "failed" in output


def test_a_malformed_url_is_a_command_error() -> None:
    with pytest.raises(CommandError, match="unsupported git URL"):
        call_command("migrate_repo", "ftp://example.com/x")


def _small_tree(tmp_path: Path) -> Path:
    src = tmp_path / "kernels"
    src.mkdir()
    (src / "a.cu").write_text("__global__ void k() {}\n")
    return src


def _report_path(output: str) -> str:
    link = next(line for line in output.splitlines() if line.startswith("report: "))
    return urlsplit(link.removeprefix("report: ")).path


def test_by_default_the_run_is_the_first_users_and_its_report_link_opens_for_them(
    only_stages: Callable[..., None],
    tmp_path: Path,
    client: Client,
    team_user: tuple[User, Team],
    other_team_user: tuple[User, Team],
) -> None:
    only_stages("fetch")
    output, code = _call(str(_small_tree(tmp_path)))
    run = Run.objects.get()
    assert code == 3 and run.project.team == team_user[1] and "(team Alpha)" in output
    path = _report_path(output)
    assert path == f"/runs/{run.pk}/report"
    client.force_login(team_user[0])
    assert client.get(path).status_code == 200
    client.force_login(other_team_user[0])  # a later user in another team does not see it
    assert client.get(path).status_code == 404


def test_team_chooses_the_team(
    only_stages: Callable[..., None], tmp_path: Path, other_team_user: tuple[User, Team]
) -> None:
    only_stages("fetch")
    err = io.StringIO()
    output, code = _call(str(_small_tree(tmp_path)), "--team", "Beta", err=err)
    assert code == 3 and Run.objects.get().project.team == other_team_user[1] and err.getvalue() == ""


def test_a_new_team_is_created_with_a_warning_that_nobody_is_in_it(
    only_stages: Callable[..., None], tmp_path: Path
) -> None:
    only_stages("fetch")
    err = io.StringIO()
    _, code = _call(str(_small_tree(tmp_path)), "--team", "Nightly builds", err=err)
    team = Team.objects.get(name="Nightly builds")
    assert code == 3 and Run.objects.get().project.team == team and team.slug == "nightly-builds"
    assert "team 'Nightly builds' has no members" in err.getvalue()


def test_without_any_user_the_default_team_is_a_clear_error(tmp_path: Path) -> None:
    get_user_model().objects.all().delete()
    with pytest.raises(CommandError, match="no user belongs to a team yet"):
        call_command("migrate_repo", str(_small_tree(tmp_path)))
    assert not Run.objects.exists()
