"""Composing the port branch over the CUDA branch: hand edits kept round after round, conflicts recorded,
never a commit that does not descend from the port branch's head."""
from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Collection
from pathlib import Path

from migrator.reports.delivery_text import apply_commands
from tests.reports.team_repo import TeamRepo, git, team_repo
from worker.delivery.compose import Composed, Previous, compose
from worker.delivery.gitrepo import PortRepo, RemoteSpec
from worker.delivery.model import Change, FileChange
from worker.sources.hostguard import HostPolicy


def _change(tree: Path, only: Collection[str] | None) -> Change:
    """A stand-in engine: config.mk gets a guarded line derived from the CUDA side's flags."""
    flags = (tree / "config.mk").read_text().strip()
    files: tuple[FileChange, ...] = (FileChange("rocm/part.mk", b"HIPCC ?= hipcc\n", "added"),)
    if only is None or "config.mk" in only:
        files += (FileChange("config.mk", f"{flags}\nifeq ($(GPU_PLATFORM),amd)\nNVCC := hipcc\nendif\n".encode(), ""),)
    return Change("single-source", "make", files, examined=("config.mk",) if only is None or "config.mk" in only else ())


def _deliver(team: TeamRepo, folder: Path, previous: Previous | None) -> tuple[Composed, Previous]:
    repo = PortRepo(folder, RemoteSpec(team.url), allow_local=True, policy=HostPolicy(bases=()), log=lambda _: None)
    head, port = repo.fetch("main", "port")
    composed = compose(repo, head, port, previous, _change, "port")
    if composed.commit:
        repo.push(composed.head, "port")
    return composed, Previous(composed.head, head, composed.generated)


def _team(tmp_path: Path) -> TeamRepo:
    source = tmp_path / "src"
    source.mkdir()
    (source / "config.mk").write_text("FLAGS = -O2\n")
    (source / "kernel.cu").write_text("__global__ void k() {}\n")
    return team_repo(tmp_path / "team", source)


def _hand_commit(team: TeamRepo, edits: dict[str, str]) -> str:
    git(team.clone, "fetch", "-q", "origin")
    git(team.clone, "checkout", "-q", "-B", "port", "origin/port")
    for path, text in edits.items():
        (team.clone / path).write_text(text)
    sha = team.commit_all("hand")
    git(team.clone, "push", "-q", "origin", "port")
    return sha


def _cuda_commit(team: TeamRepo, edits: dict[str, str]) -> str:
    git(team.clone, "checkout", "-q", "main")
    for path, text in edits.items():
        (team.clone / path).write_text(text)
    sha = team.commit_all("cuda")
    git(team.clone, "push", "-q", "origin", "main")
    return sha


def test_hand_edits_survive_every_later_delivery_and_conflicts_keep_theirs(tmp_path: Path) -> None:
    team = _team(tmp_path)
    first, previous = _deliver(team, tmp_path / "d1", None)
    assert first.commit and first.parents == [team.head("main")] and not first.conflicts
    assert "NVCC := hipcc" in team.show("port", "config.mk")

    hand = _hand_commit(team, {"rocm/part.mk": "HIPCC ?= /opt/rocm/bin/hipcc\n", "kernel.cu": "// tuned\n"})
    _cuda_commit(team, {"README": "docs\n"})  # nothing the engine reads changed
    second, previous = _deliver(team, tmp_path / "d2", previous)
    assert second.examined == [] and not second.conflicts
    assert sorted(second.kept_hand) == ["kernel.cu", "rocm/part.mk"]
    assert team.show("port", "rocm/part.mk") == "HIPCC ?= /opt/rocm/bin/hipcc"
    git(team.bare, "merge-base", "--is-ancestor", hand, "port")

    _cuda_commit(team, {"README": "more docs\n"})
    third, previous = _deliver(team, tmp_path / "d3", previous)  # a round later the hand edits are still theirs
    assert team.show("port", "kernel.cu") == "// tuned" and team.show("port", "rocm/part.mk").endswith("bin/hipcc")
    assert not third.conflicts

    _cuda_commit(team, {"config.mk": "FLAGS = -O3\n", "kernel.cu": "__global__ void k2() {}\n"})
    _hand_commit(team, {"config.mk": "FLAGS = -O2 -g\n"})
    fourth, _ = _deliver(team, tmp_path / "d4", previous)
    assert fourth.examined == ["config.mk"]
    conflicts = {c.path: c for c in fourth.conflicts}
    assert conflicts["config.mk"].against == "regenerated edit" and "-O3" in conflicts["config.mk"].regenerated
    assert conflicts["config.mk"].hand == "FLAGS = -O2 -g\n"
    assert conflicts["kernel.cu"].against == "CUDA branch" and "k2" in conflicts["kernel.cu"].regenerated
    assert team.show("port", "config.mk") == "FLAGS = -O2 -g"  # never overwritten


def test_a_delivery_with_nothing_new_makes_no_commit(tmp_path: Path) -> None:
    team = _team(tmp_path)
    _first, previous = _deliver(team, tmp_path / "d1", None)
    again, _ = _deliver(team, tmp_path / "d2", previous)
    assert again.commit is None and again.head == team.head("port")


def test_a_bundle_applies_with_the_commands_it_comes_with(tmp_path: Path) -> None:
    team = _team(tmp_path)
    repo = PortRepo(tmp_path / "d", RemoteSpec(team.url), allow_local=True, policy=HostPolicy(bases=()),
                    log=lambda _: None)
    head, port = repo.fetch("main", "port/amd")
    composed = compose(repo, head, port, None, _change, "port")
    bundle = repo.bundle(composed.head, "port/amd", tmp_path / "port-amd.bundle")
    shutil.copy(bundle, team.clone / bundle.name)
    for command in apply_commands(bundle.name, "port/amd", "main").splitlines()[:2]:  # the push needs no test
        subprocess.run(shlex.split(command), cwd=team.clone, check=True, capture_output=True)
    assert git(team.clone, "rev-parse", "port/amd") == composed.head
