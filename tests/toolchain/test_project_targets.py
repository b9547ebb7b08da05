"""Per-target results of a project's own build: a CMake and a Makefile project of our own (one kernel
file written for 64-lane wavefronts, guarded by an ``#error`` on RDNA targets; one that builds for every
GPU) through scan, hipify and compile with default settings (gfx90a, gfx942, gfx1100) in the sandbox
over the default root. The outputs say which targets their device code holds; the failing unit is
compiled again per target with the build's own command (compile_commands.json, make's dry run), so the
matrix shows exactly: vote.cu passes for gfx90a and gfx942 and fails for gfx1100 on its wave-size error.
"""
from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.toolchain.test_make_projects import Piped
from worker.context import StageContext, Workspace
from worker.project_settings import ProjectSettings
from worker.stages import compile as compile_stage
from worker.stages import hipify, scan

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "targets"
ARCHS = ["gfx90a", "gfx942", "gfx1100"]


def run_pipeline(name: str, root: Path) -> Piped:
    workspace = Workspace(root)
    shutil.copytree(FIXTURES / name, workspace.source)
    piped = Piped(workspace)
    previous: dict[str, dict[str, Any]] = {}
    for stage_name, stage in (("scan", scan), ("hipify", hipify), ("compile", compile_stage)):
        ctx = StageContext(1, 1, workspace, ProjectSettings(), root / "cache", {"kind": "archive"},
                           previous=dict(previous), log=piped.log.append)
        piped.results[stage_name] = stage.run(ctx)
        previous[stage_name] = piped.results[stage_name].data
    return piped


@pytest.fixture(scope="module")
def piped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Piped]]:
    base = tmp_path_factory.mktemp("targets")
    yield {name: run_pipeline(name, base / name) for name in ("cmake_vote", "make_vote")}


def _by_target(unit: dict[str, Any]) -> list[str]:
    return [t["status"] for t in unit["targets"]]


@pytest.mark.parametrize(("name", "system", "source", "prefix", "outputs"), [
    ("cmake_vote", "cmake", "compile_commands.json", "src/", {"scale_app"}),
    ("make_vote", "make", "make's dry run", "", {"scale_app", "scale.o"}),
])
def test_a_project_build_shows_which_targets_each_unit_and_output_is_built_for(
    piped: dict[str, Piped], name: str, system: str, source: str, prefix: str, outputs: set[str],
) -> None:
    run = piped[name]
    result = run.results["compile"]
    data = result.data
    assert data["mode"] == "project" and data["project_build"]["system"] == system, run.text[-3000:]
    assert result.outcome == "failed" and result.summary.endswith("(failing for gfx1100)"), result.summary
    assert data["offload_archs"] == ARCHS and data["failed_targets"] == ["gfx1100"]
    targets = data["project_targets"]
    assert targets["commands_from"] == source and targets["failed_targets"] == ["gfx1100"]
    units = {u["path"]: u for u in targets["units"]}
    assert sorted(units) == [f"{prefix}scale.cu", f"{prefix}vote.cu"]
    assert _by_target(units[f"{prefix}scale.cu"]) == ["passed"] * 3 and units[f"{prefix}scale.cu"]["status"] == "passed"
    vote = units[f"{prefix}vote.cu"]
    assert vote["status"] == "failed" and _by_target(vote) == ["passed", "passed", "failed"]
    wrong = vote["targets"][2]
    assert "vote kernels need a wavefront size of 64" in wrong["message"] and wrong["wave_size"] is True
    assert (wrong["original_file"], wrong["original_line"]) == (f"{prefix}vote.cu", 8)
    held = {o["path"].rsplit("/", 1)[-1]: o for o in targets["outputs"]}
    assert set(held) == outputs  # vote_app was never linked
    assert all(o["targets"] == sorted(ARCHS) and o["missing"] == [] for o in held.values())
    assert f"{prefix}vote.cu per target: gfx90a passed, gfx942 passed, gfx1100 failed" in run.text
