"""Every later copy of a tree (translation, compile sources, review downloads) leaves out links that
point outside it and never reads through them, even if one got into the tree some other way."""
from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from migrator.accounts.models import Team
from migrator.lib.diffview.tree import archive_tree
from migrator.pipeline.orchestrator import run_sync
from migrator.projects import actions
from migrator.projects.workspaces import workspace_for
from tests.conftest import make_tar_gz
from tests.downloads import downloaded
from translator.tree import translate_tree
from worker.runner.reference import find_translation_units
from worker.toolchain.sources import scan_tree

SECRET = "SECRET-KEY-do-not-leak"


@pytest.fixture
def tree_with_links(tmp_path: Path) -> Path:
    (tmp_path / "secret.txt").write_text(SECRET + "\n")
    root = tmp_path / "tree"
    (root / "src").mkdir(parents=True)
    (root / "src/main.cu").write_text("__global__ void k() {}\nint main() { k<<<1, 1>>>(); }\n")
    (root / "CMakeLists.txt").write_text("project(demo LANGUAGES CXX CUDA)\n")
    os.symlink("../../secret.txt", root / "src/leak.cu")
    os.symlink(str(tmp_path / "secret.txt"), root / "Makefile")
    os.symlink("main.cu", root / "src/alias.cu")
    return root


def test_the_translated_tree_leaves_out_links_that_leave_it(tree_with_links: Path, tmp_path: Path) -> None:
    account = translate_tree(tree_with_links, tmp_path / "hip")
    by_path = {entry.path: entry for entry in account.files}
    assert by_path["src/leak.cu"].status == "skipped" and "leaves the tree" in by_path["src/leak.cu"].warnings[0]
    assert by_path["Makefile"].status == "skipped"
    assert not (tmp_path / "hip/src/leak.cu").is_symlink() and not (tmp_path / "hip/Makefile").is_symlink()
    assert os.readlink(tmp_path / "hip/src/alias.cu") == "main.cu"


def test_compile_sources_and_build_files_never_come_through_an_outside_link(tree_with_links: Path) -> None:
    tree = scan_tree(tree_with_links)
    assert tree.files == ["CMakeLists.txt", "src/alias.cu", "src/main.cu"]
    assert "src/leak.cu" not in tree.translation_units


def test_the_tree_archive_leaves_out_links_that_leave_it(tree_with_links: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(archive_tree(tree_with_links, prefix="hip")), mode="r:gz") as tar:
        names = {member.name: member for member in tar.getmembers()}
    assert "hip/src/leak.cu" not in names and "hip/Makefile" not in names
    assert names["hip/src/alias.cu"].issym() and names["hip/src/alias.cu"].linkname == "main.cu"


@pytest.mark.django_db
def test_review_downloads_never_follow_a_link_out_of_the_workspace(
    alice_client: Client, team_user: tuple[User, Team], only_stages: Callable[..., None]
) -> None:
    only_stages("fetch", "scan", "hipify")
    project = actions.create_project(team_user[1], "linked", user=team_user[0])
    archive = actions.store_archive(project, io.BytesIO(make_tar_gz({"src/a.cu": "__global__ void k() {}\n"})), "a.tgz", None)
    run = run_sync(actions.create_run(project, user=None, archive=archive))
    workspace = workspace_for(run.pk)
    (workspace.root.parent / "outside.txt").write_text(SECRET + "\n")
    for tree in (workspace.source, workspace.hip):  # as if a later step had planted them
        os.symlink("../../../outside.txt", tree / "src/leak.cu")
        os.symlink(str(workspace.root.parent / "outside.txt"), tree / "abs.h")
    tar_response = alice_client.get(reverse("review:archive", args=[run.pk]))
    data = downloaded(tar_response)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        names = tar.getnames()
    assert f"run-{run.pk}-hip/src/a.cu" in names and not any(n.endswith(("leak.cu", "abs.h")) for n in names)
    patch = downloaded(alice_client.get(reverse("review:patch", args=[run.pk])))
    assert SECRET.encode() not in patch and SECRET.encode() not in data and b"outside.txt" not in data


def test_reference_builds_never_compile_through_an_outside_link(tree_with_links: Path) -> None:
    units = find_translation_units(tree_with_links, ())
    assert [u.as_posix() for u in units] == ["src/alias.cu", "src/main.cu"]
