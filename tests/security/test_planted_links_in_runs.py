"""Whole runs whose own build plants links: nothing of the host is written (the pipeline's records, the
reference's log included), no page, report or download of the attacker's run shows another team's run
through a link, and no stage summary, log or sandbox environment shows a host path."""
from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from migrator.accounts.models import Team
from migrator.projects import actions
from migrator.projects.models import Project, Run
from migrator.projects.workspaces import workspace_for
from tests.conftest import VADD_CU, pipeline_run, run_reference_here
from tests.downloads import downloaded
from tests.markers import requires_nvcc
from tests.security.planted import Canaries, plant_script
from worker.toolchain.roots import select_root, toolchain_store
from worker.toolchain.work import open_work

pytestmark = pytest.mark.django_db

MAKEFILE = """CUDA_PATH ?= /usr/local/cuda
NVCC := $(CUDA_PATH)/bin/nvcc

app: src/app.cu
\tsh plant.sh
\t$(NVCC) -O2 -o $@ $<
"""
# Another team's kernel: an unconverted call (a note of its translation account) and an undeclared
# identifier (a diagnostic of its compile record); the attacker's file has the same path.
VICTIM_CU = VADD_CU.replace("c[i] = a[i] + b[i];", "c[i] = __shfl_sync(0xffffffff, a[i], 0) + cudaVictimSecret42(b[i]);")
VICTIM_MARKERS = ("__shfl_sync", "cudaVictimSecret42")


@pytest.fixture(autouse=True)
def _fake_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIGRATOR_GPU_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "gfx90a")


def shown_to_users(run: Run) -> str:
    """Every stage summary and log line of the run, as the run page and the API show them."""
    return "".join(stage.summary + "".join(chunk.text for chunk in stage.log_chunks.all())
                   for stage in run.stages.all())


@requires_nvcc
def test_a_run_whose_build_plants_links_writes_nothing_outside(
    team_user: tuple[User, Team], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canaries = Canaries(tmp_path / "host")
    user, team = team_user
    project = actions.create_project(team, "planted", user=user, settings={
        "smoke_command": "sh /workspace/source/plant.sh; ./app", "smoke_wait_timeout_s": 30})
    run = pipeline_run(project, {"Makefile": MAKEFILE, "src/app.cu": VADD_CU, "plant.sh": plant_script(canaries.host)})
    states = {stage.name: stage.state for stage in run.stages.all()}
    assert states["compile"] == "passed" and states["smoke"] in ("passed", "failed"), states
    canaries.check("pipeline")
    monkeypatch.setenv("MIGRATOR_FAKE_GPUS", "sm_90")
    reference = run_reference_here(run)  # appends to the reference log as it goes
    canaries.check("CUDA reference")
    build = reference.get("build")
    assert isinstance(build, dict) and build.get("ok"), reference
    assert canaries.changed == {}, "the root side wrote through links the build planted"

    workspace = workspace_for(run.pk)
    for name in ("scan.json", "translation.json", "compile.json", "smoke.json", "reference.json", "reference.log"):
        assert (workspace.records / name).is_file() and not (workspace.records / name).is_symlink(), name
    assert "GPU probe" in (workspace.records / "reference.log").read_text()
    with open_work(workspace):  # the build did plant them, in work/ (its volume)
        assert (workspace.work / "artifacts" / "compile.json").is_symlink()
    assert "planted links to the host" in shown_to_users(run)


@pytest.mark.django_db(transaction=True)  # the log lines the heartbeat thread flushes are committed and seen
def test_no_summary_log_or_sandbox_environment_shows_a_host_path(
    team_user: tuple[User, Team], tmp_path: Path
) -> None:
    user, team = team_user
    project = actions.create_project(team, "paths", user=user, settings={"smoke_command": "env; pwd; ./vadd"})
    run = pipeline_run(project, {"src/vadd.cu": VADD_CU})
    assert [s.state for s in run.stages.order_by("position")][:5] == ["passed"] * 5, shown_to_users(run)[-3000:]
    shown = shown_to_users(run)
    assert "HOME=/workspace/.home" in shown and "/workspace/build/bin" in shown  # the smoke command's own output
    assert "toolchain rocm-" in shown  # the compile stage names its toolchain
    root = select_root().path
    for host_path in (settings.MIGRATOR_WORKSPACE_ROOT, toolchain_store(), root, root.resolve(), tmp_path):
        assert str(host_path) not in shown, f"a host path reaches the user: {host_path}"


def victim_run(other_team_user: tuple[User, Team], only_stages: Callable[..., None]) -> Run:
    only_stages("fetch", "scan", "hipify", "compile")
    user, team = other_team_user
    project = actions.create_project(team, "victim", user=user)
    run = pipeline_run(project, {"src/kernel.cu": VICTIM_CU})
    records = workspace_for(run.pk).artifacts  # the records folder (its older name also names main's)
    assert "__shfl_sync" in (records / "translation.json").read_text()
    assert "cudaVictimSecret42" in (records / "compile.json").read_text()
    return run


def link_to_victim(victim: Path) -> str:
    """A build step that points the attacker's record and tree names at the victim's files."""
    lines = ["#!/bin/sh"]
    for name in ("translation.json", "compile.json", "scan.json"):
        for folder in ("artifacts", "records"):
            lines += [f"mkdir -p /workspace/{folder}", f"rm -f /workspace/{folder}/{name}",
                      f"ln -s {victim}/{folder}/{name} /workspace/{folder}/{name}"]
    lines += ["rm -f /workspace/hip/src/kernel.cu", f"ln -s {victim}/hip/src/kernel.cu /workspace/hip/src/kernel.cu",
              f"ln -s {victim}/hip/src/kernel.cu /workspace/hip/src/stolen.cu", "echo linked"]
    return "\n".join(lines) + "\n"


def attacker_pages(client: Client, run: Run) -> Iterator[tuple[str, bytes]]:
    """Every page, report and download of the run that shows its files or records."""
    review: list[tuple[str, list[object]]] = [
        ("review:file", [run.pk, "src/kernel.cu"]), ("review:file", [run.pk, "src/stolen.cu"]),
        ("review:files", [run.pk]), ("reports:run", [run.pk]), ("reports:run-markdown", [run.pk]),
        ("reports:run-json", [run.pk])]
    for name, args in review:
        response = client.get(reverse(name, args=args), {"full": "1"} if name == "review:file" else {})
        yield " ".join([name, *map(str, args[1:])]), response.content if response.status_code == 200 else b""
    for stage in ("scan", "hipify", "compile"):
        yield f"run page {stage}", client.get(reverse("projects:run", args=[run.pk]), {"stage": stage}).content
    yield "patch", downloaded(client.get(reverse("review:patch", args=[run.pk])))
    archive = downloaded(client.get(reverse("review:archive", args=[run.pk])))
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        for member in tar.getmembers():
            extracted = tar.extractfile(member) if member.isfile() else None
            yield f"archive {member.name}", extracted.read() if extracted else member.linkname.encode()


def assert_nothing_of_the_victim(client: Client, run: Run) -> None:
    seen = {name: body for name, body in attacker_pages(client, run)}
    assert seen["review:file src/kernel.cu"], "the attacker's own file page was not served"
    leaked = [name for name, body in seen.items() if any(marker.encode() in body for marker in VICTIM_MARKERS)]
    assert leaked == [], f"another team's run shows through the attacker's run on: {leaked}"


def test_links_a_build_plants_to_another_teams_run_are_never_read(
    alice_client: Client, team_user: tuple[User, Team], other_team_user: tuple[User, Team],
    only_stages: Callable[..., None],
) -> None:
    victim = victim_run(other_team_user, only_stages)
    user, team = team_user
    project = actions.create_project(team, "attacker", user=user, settings={"build_mode": "project"})
    # The build writes one file besides the links: a make build that made nothing at all fails as "nothing built".
    run = pipeline_run(project, {"src/kernel.cu": VADD_CU, "Makefile": "all:\n\tsh link.sh\n\techo built > built.txt\n",
                                 "link.sh": link_to_victim(workspace_for(victim.pk).root)})
    assert run.stages.get(name="compile").state == "passed", shown_to_users(run)[-2000:]
    assert_nothing_of_the_victim(alice_client, run)


def test_readers_refuse_links_to_another_run_even_inside_the_records_and_trees(
    alice_client: Client, team_user: tuple[User, Team], other_team_user: tuple[User, Team],
    only_stages: Callable[..., None],
) -> None:
    """However a link got into the folders the readers read (the sandbox never writes them), no reader
    follows it out: records, the translated tree and the source."""
    victim = workspace_for(victim_run(other_team_user, only_stages).pk)
    user, team = team_user
    project: Project = actions.create_project(team, "attacker", user=user)
    run = pipeline_run(project, {"src/kernel.cu": VADD_CU})
    mine = workspace_for(run.pk)
    for name in ("translation.json", "compile.json", "scan.json"):
        (mine.artifacts / name).unlink()
        os.symlink(os.path.relpath(victim.artifacts / name, mine.artifacts), mine.artifacts / name)
    for tree, other in ((mine.hip, victim.hip), (mine.source, victim.source)):
        os.symlink(other / "src" / "kernel.cu", tree / "src" / "stolen.cu")
        os.symlink(os.path.relpath(other / "src", tree), tree / "linked-src")
    (mine.hip / "src" / "kernel.cu").unlink()
    os.symlink(victim.hip / "src" / "kernel.cu", mine.hip / "src" / "kernel.cu")
    assert_nothing_of_the_victim(alice_client, run)
