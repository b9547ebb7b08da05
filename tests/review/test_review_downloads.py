"""Downloads (a patch that `git apply` accepts, the translated tree) and access to every review view."""
from __future__ import annotations

import html as html_lib
import io
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from migrator.accounts.models import Team
from migrator.projects.models import Run
from migrator.projects.workspaces import workspace_for
from tests.downloads import downloaded
from tests.review.conftest import HOSTILE_NAME

pytestmark = pytest.mark.django_db


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def test_the_patch_applies_with_git_onto_the_original_tree(
    alice_client: Client, translated_run: Run, tmp_path: Path
) -> None:
    response = alice_client.get(reverse("review:patch", args=[translated_run.pk]))
    assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    patch = tmp_path / "run.patch"
    patch.write_bytes(downloaded(response))
    workspace = workspace_for(translated_run.pk)
    repo = tmp_path / "repo"
    shutil.copytree(workspace.source, repo)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "apply", "--check", str(patch)], check=True)
    subprocess.run(["git", "-C", str(repo), "apply", str(patch)], check=True)
    assert tree_bytes(repo) == tree_bytes(workspace.hip)
    assert tree_bytes(repo) != tree_bytes(workspace.source)


def test_the_archive_holds_the_translated_tree(alice_client: Client, translated_run: Run) -> None:
    response = alice_client.get(reverse("review:archive", args=[translated_run.pk]))
    assert response.status_code == 200 and response["Content-Type"] == "application/gzip"
    top = f"run-{translated_run.pk}-hip"
    assert f'filename="{top}.tar.gz"' in response["Content-Disposition"]
    with tarfile.open(fileobj=io.BytesIO(downloaded(response)), mode="r:gz") as archive:
        files = {m.name: archive.extractfile(m).read() for m in archive.getmembers() if m.isfile()}  # type: ignore[union-attr]
        assert all(m.uname == "" and m.uid == 0 for m in archive.getmembers())
    expected = tree_bytes(workspace_for(translated_run.pk).hip)
    assert files == {f"{top}/{name}": data for name, data in expected.items()}
    assert b"hipMalloc" in files[f"{top}/src/vadd.cu"] and f"{top}/{HOSTILE_NAME}" in files


def review_urls(client: Client, run: Run) -> list[str]:
    """Every review URL of `run`; the fold URL as the file page (seen by `client`) links it."""
    page = client.get(reverse("review:file", args=[run.pk, "src/long.cu"])).content.decode()
    fold_url = html_lib.unescape(re.findall(r'hx-get="([^"]*fold=\d+&amp;start=0)"', page)[0])
    return [
        reverse("review:files", args=[run.pk]),
        reverse("review:file", args=[run.pk, "src/vadd.cu"]),
        reverse("review:chunk", args=[run.pk, "src/vadd.cu"]) + "?start=0",
        fold_url,
        reverse("review:patch", args=[run.pk]),
        reverse("review:archive", args=[run.pk]),
    ]


def test_every_view_is_404_for_another_team_and_asks_strangers_to_log_in(
    alice_client: Client, other_team_user: tuple[User, Team], translated_run: Run
) -> None:
    urls = review_urls(alice_client, translated_run)
    assert [alice_client.get(url).status_code for url in urls] == [200] * len(urls)
    stranger = Client()
    assert all(stranger.get(url).status_code == 302 for url in urls)
    bob = Client()
    bob.force_login(other_team_user[0])
    assert [bob.get(url).status_code for url in urls] == [404] * len(urls)


def test_the_views_answer_get_only(alice_client: Client, translated_run: Run) -> None:
    assert all(alice_client.post(url).status_code == 405 for url in review_urls(alice_client, translated_run))


def test_the_token_stylesheet_is_served(client: Client) -> None:
    response = client.get(reverse("review:pygments-css"))
    css = response.content.decode()
    assert response.status_code == 200 and response["Content-Type"].startswith("text/css")
    assert ".diff-code .k " in css and ".diff-code .wd" in css
